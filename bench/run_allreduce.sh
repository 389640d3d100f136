#!/usr/bin/env bash
# All-reduce bus bandwidth, weft vs OpenMPI and torch.distributed gloo, 2 processes on this machine
# (see bench/allreduce.cc). Installs Debian's OpenMPI when mpirun is missing and python3-torch when
# /usr/bin/python3 has no torch, builds bench_allreduce and bench_mpi_allreduce, and runs them
# interleaved with bench/gloo_allreduce.py.
#
#   bench/run_allreduce.sh [--reps 3] [--chunk BYTES]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"
if ! command -v mpirun > /dev/null || ! command -v mpicxx > /dev/null; then
  echo "[setup] apt-get install openmpi-bin libopenmpi-dev" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openmpi-bin libopenmpi-dev >&2; }
fi
if ! /usr/bin/python3 -c 'import torch.distributed' 2> /dev/null; then
  echo "[setup] apt-get install python3-torch" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >&2; }
fi
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" -Dnative=true -Dbuildtype=release >&2
else
  meson setup --reconfigure "$build" "$root" > /dev/null  # finds MPI if it was installed since
fi
ninja -C "$build" -j"${NINJA_JOBS:-2}" bench/bench_allreduce bench/bench_mpi_allreduce >&2
exec "$build/bench/bench_allreduce" --mpi "$build/bench/bench_mpi_allreduce" \
  --gloo "$here/gloo_allreduce.py" --python /usr/bin/python3 "$@"
