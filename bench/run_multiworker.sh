#!/usr/bin/env bash
# Step-time overhead of 2-worker training (MultiWorkerMirroredStrategy over UCX on loopback) vs 1
# worker at the same batch per worker, with and without all-reduce/backward overlap
# (see bench/drive_multiworker.py).
#
#   bench/run_multiworker.sh [--rounds 3] [--models mnist_cnn,mlp] [--batch 64] [--threads 1]
#                            [--overlap-bucket-bytes 0]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" -Dnative=true -Dbuildtype=release >&2
fi
ninja -C "$build" -j"${NINJA_JOBS:-2}" zoo/weft-zoo >&2
exec /usr/bin/python3 "$here/drive_multiworker.py" --weft "$build/zoo/weft-zoo" "$@"
