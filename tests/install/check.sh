#!/usr/bin/env bash
# The installs, checked from the tree build.sh built (no second compile; ./build.sh test runs this):
#  1. wheel: the wheel `pip install .` would install, packed by meson-python from BUILD_DIR, goes
#     into a fresh venv; from / (no PYTHONPATH) `import weft` fits a model, and `weft-zoo list`
#     runs from the venv's PATH. Its contents are checked: package, extension, libweft, the command.
#  2. C++: `meson install` into a staging directory; examples/cpp/standalone, copied out of the
#     source tree, is built with nothing but `pkg-config --cflags --libs weft` and run.
# usage: tests/install/check.sh BUILD_DIR PYTHON [-Csetup-args=... (BUILD_DIR's options, see build.sh)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=$1 python=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== wheel of $build_dir into a fresh venv"
"$python" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps . -w "$tmp/dist" \
  -Cbuild-dir="$build_dir" "$@"
wheel=$(echo "$tmp"/dist/weft-*.whl)
cuda=no
[ -e "$build_dir/libweft_cuda.so" ] && cuda=cuda  # built with the CUDA backend (meson option cuda)
"$python" - "$wheel" "$cuda" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
want = {"the package": "weft/__init__.py", "the Keras package": "weft/keras/__init__.py",
        "the extension": "weft/_weft.cpython-", "libweft": "libweft.so",
        "the AVX-512 kernels": "libweft_avx512.so", "weft-zoo": ".data/scripts/weft-zoo"}
if sys.argv[2] == "cuda":
    want["the CUDA backend"] = "libweft_cuda.so"
missing = [f"{what} ({name})" for what, name in want.items() if not any(name in n for n in names)]
# libweft loads libweft_avx512.so (ops/kernels/cpu/cpu_dispatch.h) and libweft_cuda.so (core/gpu.h)
# from its own directory.
modules = ["libweft_avx512.so"] + (["libweft_cuda.so"] if sys.argv[2] == "cuda" else [])
dirs = {lib: {n.rsplit("/", 1)[0] for n in names if n.endswith("/" + lib)} for lib in ["libweft.so"] + modules}
for m in modules:
    if not missing and dirs["libweft.so"] != dirs[m]:
        missing.append(f"{m} beside libweft.so ({dirs})")
extra = [n for n in names if n.endswith((".h", ".pc", "meson.build")) or "__pycache__" in n]
if missing or extra:
    sys.exit(f"check.sh: wheel {sys.argv[1]}: missing {missing}, unexpected {extra}")
print(f"   {len(names)} files, {sum(n.endswith('.py') for n in names)} Python sources")
PY
/usr/bin/python3 -m venv "$tmp/v"
# numpy as the README's venv pins it (a constraint: the wheel names only numpy >= 1.26).
"$tmp/v/bin/python" -m pip install -q --disable-pip-version-check -c python/requirements.txt "$wheel"
(
  cd /
  unset PYTHONPATH
  "$tmp/v/bin/python" - "$tmp/v" <<'PY'
import sys
import numpy as np
import weft as tf
assert tf.__file__.startswith(sys.argv[1]), f"weft imported from {tf.__file__}, not the venv {sys.argv[1]}"
x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
y = (x @ np.float32([[1], [-2], [3], [0.5]]))
model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
model.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.1))
loss = model.fit(x, y, batch_size=16, epochs=20, verbose=0).history["loss"]
assert loss[-1] < 0.1 * loss[0], loss
print(f"   import weft from / with numpy {np.__version__}: fit loss {loss[0]:.3f} -> {loss[-1]:.5f}")
PY
  models=$(PATH="$tmp/v/bin:$PATH" weft-zoo list)
  echo "   weft-zoo list (from the venv's bin/): $(echo "$models" | wc -l) models"
  grep -q '^mnist_cnn ' <<<"$models" || { echo "check.sh: weft-zoo list lacks mnist_cnn: $models" >&2; exit 1; }
)

echo "== C++: meson install + pkg-config weft"
meson install -C "$build_dir" --no-rebuild --quiet --destdir "$tmp/stage" --tags devel,runtime
pc=$(find "$tmp/stage" -name weft.pc)
[ -n "$pc" ] || { echo "check.sh: meson install wrote no weft.pc under $tmp/stage" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs weft)
case "$flags" in *"$PWD"*) echo "check.sh: pkg-config weft points into the source tree: $flags" >&2; exit 1 ;; esac
echo "   pkg-config --cflags --libs weft: $flags"
cp -r examples/cpp/standalone "$tmp/standalone"
make -s -C "$tmp/standalone" CXXFLAGS="-O1 -Wno-deprecated"  # Eigen 3.4 warns under C++20
"$tmp/standalone/standalone" | sed 's/^/   standalone: /'
echo "== install checks passed"
