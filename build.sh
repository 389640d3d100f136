#!/usr/bin/env bash
# weft's one set-up script. On a fresh Debian 12 machine (as root, or with sudo available):
#   ./build.sh run    install what is missing, build, run the main job
#   ./build.sh test   install what is missing, build, run every test (also under ASan + UBSan)
# Environment: BUILD_DIR (default build), JOBS (default: nproc).
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"

# Debian packages the build and the tests need (nothing else is installed by hand).
packages=(g++ meson ninja-build pkg-config libeigen3-dev libfmt-dev doctest-dev zlib1g-dev
          dataset-fashion-mnist graphviz libucx-dev ucx-utils)

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

build() {  # build DIR [meson options...]
  local dir="$1"; shift
  [ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
  ninja -C "$dir" -j "$JOBS"
}

install_missing
case "$mode" in
  run)
    build "$BUILD_DIR"
    # The talks' Keras CNN, one epoch on Fashion-MNIST, then evaluated on the test split.
    echo "== weft-zoo train mnist_cnn --epochs 1"
    "$BUILD_DIR/zoo/weft-zoo" train mnist_cnn --epochs 1
    ;;
  test)
    build "$BUILD_DIR"
    meson test -C "$BUILD_DIR" --print-errorlogs --num-processes "$JOBS"
    # The op, graph and core suites again under AddressSanitizer + UndefinedBehaviorSanitizer.
    build "$BUILD_DIR-asan" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debugoptimized -Dnative=true
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      meson test -C "$BUILD_DIR-asan" --print-errorlogs --num-processes "$JOBS" --timeout-multiplier 4
    ;;
  *)
    echo "usage: $0 run|test" >&2
    exit 2
    ;;
esac
