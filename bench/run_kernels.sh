#!/usr/bin/env bash
# Kernel benchmark: weft vs PyTorch vs TensorFlow on MatMul and Conv2D, 1 and 2 threads.
#
#   bench/run_kernels.sh [--rounds N] [--peak GFLOPS_PER_CORE] [--json FILE]
#
# 1. installs the peers if missing (bench/setup_peers.sh: apt python3-torch, OpenBLAS unpacked
#    into bench/.cache, tensorflow-cpu in the bench-only venv bench/.venv; the tests never need them),
# 2. builds bench_kernels in $BUILD (default build-bench, release, -march=native),
# 3. runs bench/drive_kernels.py, which interleaves the three implementations run by run and
#    prints the table (medians over rounds; ratios are weft over peer).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"

"$here/setup_peers.sh"

if [ ! -d "$build" ]; then
  meson setup "$build" "$root" -Dnative=true -Dbuildtype=release >&2
fi
ninja -C "$build" -j"${NINJA_JOBS:-2}" bench/bench_kernels >&2

export TF_CPP_MIN_LOG_LEVEL=2
exec /usr/bin/python3 "$here/drive_kernels.py" --weft "$build/bench/bench_kernels" \
  --openblas "$here/.cache/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp" "$@"
