#!/usr/bin/env bash
# weft's one set-up script. On a fresh Debian 12 machine (as root, or with sudo available):
#   ./build.sh run    install what is missing, build, run the main job
#   ./build.sh test   install what is missing, build, run every test, then the multi-process suites
#                     against UCX 1.22 (UCX122_SUITES below) and the memory suites under ASan + UBSan
#                     (ASAN_SUITES below)
#   ./build.sh fuzz [TARGET [SECONDS]]   build the ASan + UBSan tree's weft_fuzz and run one fuzz
#                     target (default: all) for SECONDS each (default 60) with a fresh seed
#                     (SEED=N repeats a run); crashes are saved in fuzz-crashes/ (docs/fuzzing.md)
# Both also make the Python set-up: a venv in .venv (Debian's python3) with the pinned packages of
# python/requirements.txt and python/requirements-build.txt, and weft installed into it as an
# editable meson-python install of the build directory (`pip install -e .`, no second compile), so
# `.venv/bin/python -c "import weft"` works from any directory and `weft-zoo` is .venv/bin's.
# `test` also runs tests/python again with numpy 1.26 (.venv-numpy1) and checks the installs:
# the wheel of the built tree in a fresh venv, and a C++ program built against `meson install`.
# Environment: BUILD_DIR (default build), JOBS (default: nproc).
# At exit, also on failure, it prints each phase's wall time: the CI budget (.ci/run) shows in every log.
set -euo pipefail
cd "$(dirname "$0")"
mode="${1:-run}"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"

# The meson suites that run again against UCX 1.22 (PyPI's libucx-cu13 wheel, python/requirements-ucx.txt)
# in a second tree, $BUILD_DIR-ucx122, that builds only their executables (docs/ucx.md, "Which UCX"):
# everything between processes (distributed: transport, servers, strategies; zoo: weft-zoo launch,
# multi-worker and parameter-server training, the elastic restart).
UCX122_SUITES=(distributed zoo)

# The meson suites that run again under ASan + UBSan: the code that owns and indexes memory (tensors,
# allocators, kernels, the executor, rendezvous and collectives, the input pipeline, the checkpoint
# reader (train: it decodes files a user hands it), the wire decoder, the fuzz targets of every
# decoder (fuzz: a bounded time per target, tests/fuzz/meson.build)). Only their executables and
# what they link (libweft, libweft_ucx's decoder objects) are built in the sanitizer tree: no zoo,
# examples, benchmarks, Python extension or libweft_ucx (its decoders' objects only: wire, fuzz).
ASAN_SUITES=(core ops graph collective data train wire fuzz)

# Phase timing: `phase NAME` ends the running phase and starts NAME; the EXIT trap ends the last one
# and prints the table, marking the phase a failure stopped in.
phase_names=() phase_secs=() phase_name="" phase_start=0
phase() {
  [ -z "$phase_name" ] || { phase_names+=("$phase_name"); phase_secs+=($((SECONDS - phase_start))); }
  phase_name="${1:-}" phase_start=$SECONDS
}
print_phases() {
  local rc=$? i
  [ -z "$phase_name" ] || { [ "$rc" -eq 0 ] || phase_name+=" (failed, exit $rc)"; phase; }
  [ ${#phase_names[@]} -gt 0 ] || return "$rc"
  echo "== wall time per phase (./build.sh $mode)"
  for i in "${!phase_names[@]}"; do
    printf '   %-28s %4d:%02d\n' "${phase_names[$i]}" $((phase_secs[i] / 60)) $((phase_secs[i] % 60))
  done
  printf '   %-28s %4d:%02d\n' total $((SECONDS / 60)) $((SECONDS % 60))
  return "$rc"
}
trap print_phases EXIT
# The CUDA toolkit (nvcc, cuBLAS, cuDNN) when the machine has one: meson's cuda=auto then builds the
# CUDA backend (docs/cuda.md), whether or not a GPU is present.
if [ -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# Debian packages the build and the tests need (nothing else is installed by hand).
packages=(g++ meson ninja-build pkg-config libeigen3-dev libfmt-dev doctest-dev zlib1g-dev
          dataset-fashion-mnist graphviz python3-dev python3-venv patchelf make
          libucx-dev ucx-utils libdnnl-dev fortunes)
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

# A venv with a requirements file's pins; re-installs when the file changes.
setup_venv() {  # setup_venv VENV REQUIREMENTS [pip options...]
  local venv="$1" req="$2" stamp; shift 2
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  stamp="$venv/.weft-$(basename "$req" .txt)"
  if ! cmp -s "$req" "$stamp"; then
    echo "== pip install -r $req (into $venv)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" -r "$req"
    cp "$req" "$stamp"
  fi
}

# .venv gets weft as an editable meson-python install of $BUILD_DIR: pip reconfigures the built tree
# (keeping its options: native and tests override pyproject.toml's settings for wheels) and writes a
# loader that imports python/weft/ and the built extension, rebuilding changed C++ first (ninja)
# as meson-python's editable installs do.
install_editable() {
  local site
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -f "$site/weft.pth"  # the hand-written path file of earlier set-ups
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
    -e . -Cbuild-dir="$BUILD_DIR" "${editable_args[@]}" -Ccompile-args=-j"$JOBS"
  # meson-python's editable installs leave out executables: weft-zoo goes on the venv's PATH here.
  ln -sf "$(cd "$BUILD_DIR" && pwd)/zoo/weft-zoo" .venv/bin/weft-zoo
}

configure() {  # configure DIR [meson options...]
  local dir="$1"; shift
  # An existing directory gets the options again (e.g. cuda=disabled for an older ASan build), set
  # with `meson configure`: meson 1.0's `setup --reconfigure -D...` drops some (b_ndebug).
  if [ -f "$dir/build.ninja" ]; then
    meson configure "$dir" "$@" >/dev/null && meson setup --reconfigure "$dir" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

build() {  # build DIR [meson options...]: every target
  configure "$@"
  ninja -C "$1" -j "$JOBS"
}

# The ninja targets (paths under DIR) that the tests of the given suites run and depend on. Fails
# naming a suite that has no test, so a renamed suite cannot silently drop out of a run.
suite_targets() {  # suite_targets DIR SUITE...
  python3 - "$@" <<'PY'
import json, os, subprocess, sys
d, want = sys.argv[1], sys.argv[2:]
intro = lambda what: json.loads(subprocess.check_output(['meson', 'introspect', d, what]))
files = {t['id']: t['filename'] for t in intro('--targets')}
out, found = set(), set()
for t in intro('--tests'):
    suites = {s.split(':', 1)[-1] for s in t['suite']}  # "weft:core" -> "core"
    if suites & set(want):
        found |= suites & set(want)
        out |= {os.path.relpath(f, d) for dep in t['depends'] for f in files[dep]}
missing = [s for s in want if s not in found]
if missing:
    sys.exit(f"build.sh: no test in suite(s) {', '.join(missing)} of {d} (renamed? update ASAN_SUITES / UCX122_SUITES)")
print('\n'.join(sorted(out)))
PY
}

# The ASan + UBSan tree (ASAN_SUITES): without CUDA, since the CUDA runtime and ASan's shadow memory
# do not mix (the caching allocator's host tests run in the release tree). -O1 -g1, asserts on:
# ASan's reports keep function names and lines, and the Eigen kernels compile in a fraction of
# -O2 -g's time, which dominated this phase (figures: bench/README.md, "CI budget").
asan_dir="$BUILD_DIR-asan"
configure_asan() {
  configure "$asan_dir" -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false -Db_ndebug=false \
    -Dcpp_args=-g1 -Dnative=true -Dpython=disabled -Dcuda=disabled
}
asan_env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)

case "$mode" in run|test|fuzz) ;; *) echo "usage: $0 run|test|fuzz [TARGET [SECONDS]]" >&2; exit 2 ;; esac
phase apt
install_missing
if [ "$mode" = fuzz ]; then
  phase "asan build"
  configure_asan
  ninja -C "$asan_dir" -j "$JOBS" tests/fuzz/weft_fuzz
  phase fuzz
  mkdir -p fuzz-crashes
  target_args=()
  [ -z "${2:-}" ] || target_args=(--target "$2")
  env "${asan_env[@]}" "$asan_dir/tests/fuzz/weft_fuzz" "${target_args[@]}" --seconds "${3:-60}" \
    --seed "${SEED:-$(date +%s)}" --regressions tests/fuzz/regressions --crash-dir fuzz-crashes
  exit 0
fi
phase pip
setup_venv .venv python/requirements.txt
# meson-python and PyPI's pybind11 without their dependencies: meson and ninja are Debian's.
setup_venv .venv python/requirements-build.txt --no-deps
[ "$mode" = test ] && setup_venv .venv python/requirements-test.txt
[ "$mode" = test ] && setup_venv .venv python/requirements-ucx.txt --no-deps
# The release tree's options, given again to pip's reconfigure (pyproject.toml's are for wheels).
tree_options=(-Dpython_exe="$PWD/.venv/bin/python" -Dnative=true -Dtests=auto -Dpkgconfig.relocatable=true)
editable_args=("${tree_options[@]/#/-Csetup-args=}")
case "$mode" in
  run)
    phase build
    build "$BUILD_DIR" "${tree_options[@]}"
    phase "pip install -e"
    install_editable
    # The talks' Keras CNN, one epoch on Fashion-MNIST, then evaluated on the test split.
    phase "weft-zoo train"
    echo "== weft-zoo train mnist_cnn --epochs 1"
    "$BUILD_DIR/zoo/weft-zoo" train mnist_cnn --epochs 1
    ;;
  test)
    phase build
    build "$BUILD_DIR" "${tree_options[@]}"
    phase "pip install -e"
    install_editable
    phase "meson test"
    meson test -C "$BUILD_DIR" --print-errorlogs --num-processes "$JOBS"
    # The Python package (tests/python), with the venv's interpreter (numpy 2).
    phase pytest
    .venv/bin/python -m pytest -q tests/python
    # All of it again with numpy 1.26 and the same extension (PYTHONPATH, no install there; the tests
    # that need pyspark, tensorboard or an installed weft skip, saying so).
    phase "pytest numpy 1"
    setup_venv .venv-numpy1 python/requirements-numpy1.txt
    .venv-numpy1/bin/python -c 'import numpy, sys; sys.exit(numpy.__version__.startswith("1.") == False)' ||
      { echo "build.sh: .venv-numpy1 does not hold numpy 1.x" >&2; exit 1; }
    PYTHONPATH="$PWD/python:$PWD/$BUILD_DIR/python" .venv-numpy1/bin/python -m pytest -q -rs tests/python
    # Where a GPU is usable the runs above placed the suites' ops on it (use_gpus is on by default):
    # run them again with no GPU visible to CUDA, as use_gpus off (docs/cuda.md, "Tests").
    if [ "$(.venv/bin/python -c 'import weft; print(weft.gpu_info()["count"])')" != 0 ]; then
      phase "meson test, no GPU"
      meson test -C "$BUILD_DIR" --no-rebuild --print-errorlogs --num-processes "$JOBS" --setup nogpu
      phase "pytest, no GPU"
      CUDA_VISIBLE_DEVICES= .venv/bin/python -m pytest -q tests/python
    fi
    # The installs: the built tree's wheel in a fresh venv (import from /, weft-zoo on PATH) and a C++
    # program built against `meson install` with pkg-config (tests/install/check.sh).
    phase "install checks"
    tests/install/check.sh "$BUILD_DIR" .venv/bin/python "${editable_args[@]}"
    # UCX122_SUITES again against UCX 1.22 (the wheel's tree: CUDA transports, no verbs) instead of
    # Debian's 1.13: the UCX-using executables only (-Ducx_prefix puts the wheel's lib/ in their
    # rpath), with the release tree's options so that everything not including UCX's headers is a
    # ccache hit. Bounded by the suites' meson timeouts.
    phase "ucx 1.22 build"
    ucx_dir="$BUILD_DIR-ucx122"
    ucx_prefix=$(.venv/bin/python -c 'import libucx, os; print(os.path.dirname(libucx.__file__))')
    configure "$ucx_dir" -Dnative=true -Dtests=auto -Dpython=disabled -Ducx=enabled -Ducx_prefix="$ucx_prefix"
    ucx_targets=$(suite_targets "$ucx_dir" "${UCX122_SUITES[@]}")
    # shellcheck disable=SC2086  # one target per line
    ninja -C "$ucx_dir" -j "$JOBS" $ucx_targets
    phase "ucx 1.22 test"
    meson test -C "$ucx_dir" --no-rebuild --print-errorlogs --num-processes "$JOBS" "${UCX122_SUITES[@]/#/--suite=}"
    # ASAN_SUITES again under AddressSanitizer + UndefinedBehaviorSanitizer, in a tree that builds
    # only their executables (configure_asan above).
    phase "asan build"
    configure_asan
    asan_targets=$(suite_targets "$asan_dir" "${ASAN_SUITES[@]}")
    # shellcheck disable=SC2086  # one target per line
    ninja -C "$asan_dir" -j "$JOBS" $asan_targets
    phase "asan test"
    env "${asan_env[@]}" meson test -C "$asan_dir" --no-rebuild --print-errorlogs --num-processes "$JOBS" --timeout-multiplier 4 \
        "${ASAN_SUITES[@]/#/--suite=}"
    ;;
esac
