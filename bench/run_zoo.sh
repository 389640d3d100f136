#!/usr/bin/env bash
# Model benchmark: steady-state training images/s of weft-zoo's models vs PyTorch, 1 and 2 threads.
#
#   bench/run_zoo.sh [--rounds N] [--models mnist_cnn,mlp] [--batches 64,256] [--threads 1,2] [--json FILE]
#
# 1. installs the peers if missing (bench/setup_peers.sh, run only when PyTorch or the OpenBLAS
#    it unpacks into bench/.cache is missing: this benchmark needs nothing else),
# 2. builds zoo/weft-zoo in $BUILD (default build-bench, release, -march=native) unless WEFT_CMD
#    names another weft command (it gets "MODEL --batch-size B --threads T --json" appended),
# 3. runs bench/drive_zoo.py, which interleaves `weft-zoo bench` and bench/peers_zoo.py run by
#    run and prints the table (medians over rounds; the ratio is weft over PyTorch).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"

# This benchmark needs only PyTorch and OpenBLAS: run setup_peers.sh (which also sets up
# TensorFlow for the kernel benchmark) only when one of them is missing.
openblas="$here/.cache/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null || [ ! -e "$openblas/libblas.so.3" ]; then
  "$here/setup_peers.sh"
fi

if [ -z "${WEFT_CMD:-}" ]; then
  if [ ! -d "$build" ]; then
    meson setup "$build" "$root" -Dnative=true -Dbuildtype=release >&2
  fi
  ninja -C "$build" -j"${NINJA_JOBS:-2}" zoo/weft-zoo >&2
  WEFT_CMD="$build/zoo/weft-zoo bench"
fi

exec /usr/bin/python3 "$here/drive_zoo.py" --weft-cmd "$WEFT_CMD" \
  --openblas "$openblas" "$@"
