#!/usr/bin/env bash
# Installs the benchmark peers (never needed by the tests):
#   - PyTorch: Debian's python3-torch 1.13 for /usr/bin/python3 (apt-get).
#   - OpenBLAS (OpenMP build) unpacked into bench/.cache/openblas: Debian's torch links netlib's
#     reference BLAS (~1.5 GFLOP/s), so the peer run points LD_LIBRARY_PATH at OpenBLAS instead.
#   - TensorFlow: PyPI tensorflow-cpu 2.21 in the bench-only venv bench/.venv.
#   - PyTorch 2.15 from PyPI (MKL + oneDNN; its wheel pulls ~4 GB of CUDA libraries and runs on the
#     CPU) in the bench-only venv bench/.venv-torch: the model benchmark's PyTorch peer.
# Idempotent: each step is skipped when its result is already present.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="$here/.cache"
mkdir -p "$cache"

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  echo "[setup] apt-get install python3-torch" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >&2 \
    || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch >&2; }
fi

if ! ls "$cache"/openblas/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3 >/dev/null 2>&1; then
  echo "[setup] unpacking libopenblas0-openmp into $cache/openblas" >&2
  # apt-get download writes to the current folder (as root it warns that _apt cannot access it).
  (cd "$cache" && rm -f libopenblas0-openmp_*.deb && apt-get download -q libopenblas0-openmp >&2 \
     && dpkg -x libopenblas0-openmp_*.deb openblas)
fi

if ! "$here/.venv/bin/python" -c 'import tensorflow' 2>/dev/null; then
  echo "[setup] creating $here/.venv with tensorflow-cpu" >&2
  /usr/bin/python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q tensorflow-cpu==2.21.0 >&2
fi
if ! "$here/.venv-torch/bin/python" -c 'import torch' 2>/dev/null; then
  echo "[setup] creating $here/.venv-torch with torch 2.15 (a ~4 GB download)" >&2
  /usr/bin/python3 -m venv "$here/.venv-torch"
  "$here/.venv-torch/bin/pip" install -q torch==2.15.0 numpy >&2
fi
echo "[setup] peers ready" >&2
