#!/usr/bin/env bash
# Strategy benchmark: MirroredStrategy and CentralStorageStrategy on 2 CPU devices vs one device,
# same total threads, training images/s of weft-zoo's models (no peers needed).
#
#   bench/run_strategy.sh [--rounds N] [--models mnist_cnn,mlp] [--batches 128,256] [--threads 2]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build-bench}"
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" -Dnative=true -Dbuildtype=release >&2
fi
ninja -C "$build" -j"${NINJA_JOBS:-2}" zoo/weft-zoo >&2
exec /usr/bin/python3 "$here/drive_strategy.py" --weft "$build/zoo/weft-zoo" "$@"
