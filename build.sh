#!/usr/bin/env bash
# weft's one set-up script. On a fresh Debian 12 machine (as root, or with sudo available):
#   ./build.sh run    install what is missing, build, run the main job
#   ./build.sh test   install what is missing, build, run every test (also under ASan + UBSan)
# Both also make the Python set-up: a venv in .venv (Debian's python3) with the pinned packages of
# python/requirements.txt, the weft extension built for it, and .venv/.../weft.pth so that
# `.venv/bin/python -c "import weft"` works from any directory.
# Environment: BUILD_DIR (default build), JOBS (default: nproc).
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
# The CUDA toolkit (nvcc, cuBLAS, cuDNN) when the machine has one: meson's cuda=auto then builds the
# CUDA backend (docs/cuda.md), whether or not a GPU is present.
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# Debian packages the build and the tests need (nothing else is installed by hand).
packages=(g++ meson ninja-build pkg-config libeigen3-dev libfmt-dev doctest-dev zlib1g-dev
          dataset-fashion-mnist graphviz pybind11-dev python3-dev python3-venv
          libucx-dev ucx-utils)
# The tests also start a local Spark (tests/python/test_spark.py): Java.
[ "${1:-run}" = test ] && packages+=(openjdk-17-jre-headless)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# The venv the Python package is built for and tested with; re-installs when requirements change.
setup_venv() {  # setup_venv [REQUIREMENTS...] (default: python/requirements.txt)
  [ -x .venv/bin/python ] || /usr/bin/python3 -m venv .venv
  local req stamp
  for req in "${@:-python/requirements.txt}"; do
    stamp=".venv/.weft-$(basename "$req" .txt)"
    if ! cmp -s "$req" "$stamp"; then
      echo "== pip install -r $req (into .venv)"
      .venv/bin/python -m pip install -q --disable-pip-version-check -r "$req"
      cp "$req" "$stamp"
    fi
  done
}

# Puts python/ (the package) and $BUILD_DIR/python (the extension) on the venv's path.
register_python() {
  compgen -G "$BUILD_DIR/python/weft/_weft*.so" >/dev/null || return 0
  local site
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf '%s\n%s\n' "$PWD/python" "$(cd "$BUILD_DIR" && pwd)/python" > "$site/weft.pth"
}

build() {  # build DIR [meson options...]
  local dir="$1"; shift
  # An existing directory gets the options again (e.g. cuda=disabled for an older ASan build).
  if [ -f "$dir/build.ninja" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null; else meson setup "$dir" "$@" >/dev/null; fi
  ninja -C "$dir" -j "$JOBS"
}

install_missing
setup_venv
[ "$mode" = test ] && setup_venv python/requirements-test.txt
case "$mode" in
  run)
    build "$BUILD_DIR" -Dpython_exe="$PWD/.venv/bin/python"
    register_python
    # The talks' Keras CNN, one epoch on Fashion-MNIST, then evaluated on the test split.
    echo "== weft-zoo train mnist_cnn --epochs 1"
    "$BUILD_DIR/zoo/weft-zoo" train mnist_cnn --epochs 1
    ;;
  test)
    build "$BUILD_DIR" -Dpython_exe="$PWD/.venv/bin/python"
    register_python
    meson test -C "$BUILD_DIR" --print-errorlogs --num-processes "$JOBS"
    # The Python package (tests/python), with the venv's interpreter.
    .venv/bin/python -m pytest -q tests/python
    # The op, graph and core suites again under AddressSanitizer + UndefinedBehaviorSanitizer (without
    # CUDA: the CUDA runtime and ASan's shadow memory do not mix; the caching allocator's host tests
    # still run here).
    build "$BUILD_DIR-asan" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized -Dnative=true \
      -Dpython=disabled -Dcuda=disabled
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C "$BUILD_DIR-asan" --print-errorlogs --num-processes "$JOBS" --timeout-multiplier 4
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
