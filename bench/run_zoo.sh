#!/usr/bin/env bash
# Model benchmark: steady-state training images/s of weft-zoo's models vs TensorFlow 2.21 CPU (every
# model) and PyTorch 2.15 from PyPI (MKL + oneDNN; mnist_cnn and mlp), 1 and 2 threads. Debian's
# torch 1.13 with OpenBLAS stays available as a historical row: --torch-python /usr/bin/python3.
#
#   bench/run_zoo.sh [--rounds N] [--models mlp,mnist_cnn,lenet5,resnet20,vgg_small] [--batches 64,256]
#                    [--threads 1,2] [--peers tf,torch] [--json FILE]
#
# 1. installs the peers if missing (bench/setup_peers.sh, run only when TensorFlow's bench venv,
#    PyTorch or the OpenBLAS it unpacks into bench/.cache is missing),
# 2. builds zoo/weft-zoo in $BUILD (default build-bench, release, -march=native) unless WEFT_CMD
#    names another weft command (it gets "MODEL --batch-size B --threads T --json" appended),
# 3. runs bench/drive_zoo.py, which interleaves `weft-zoo bench`, bench/peers_zoo_tf.py and
#    bench/peers_zoo.py run by run and prints the table (medians over rounds; ratios are weft over
#    each peer, above 1: weft is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"

openblas="$here/.cache/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp"
if ! "$here/.venv/bin/python" -c 'import tensorflow' 2>/dev/null \
   || ! "$here/.venv-torch/bin/python" -c 'import torch' 2>/dev/null || [ ! -e "$openblas/libblas.so.3" ]; then
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
  --torch-python "$here/.venv-torch/bin/python" --openblas "$openblas" "$@"
