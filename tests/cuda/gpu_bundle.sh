#!/usr/bin/env bash
# Packs a built tree for a GPU machine that has the CUDA driver, toolkit libraries and a Python
# with numpy and pytest, but not this machine's Debian packages or build (a lent test machine):
#
#   tests/cuda/gpu_bundle.sh pack BUILD_DIR OUT_DIR   (here)   -> OUT_DIR/bundle.tar.xz + OUT_DIR/run.sh
#   OUT_DIR/run.sh LOG_DIR                            (there, from a copy of this repository's root)
#
# BUILD_DIR must be configured for any x86-64 CPU and that machine's Python, e.g.
#   meson setup build-gpu -Dnative=false -Dcuda=enabled -Ddnnl=disabled -Ducx=enabled \
#     -Ducx_prefix=<site-packages>/libucx -Dpython_exe=<a python3.12 venv with numpy 2 + pybind11>
# The bundle keeps absolute paths: the tree unpacks at the path it was built at (run.sh links that
# path to the repository copy), with UCX's wheel tree, the Debian libraries the binaries need that
# such a machine may lack (libfmt), and Debian's meson (to run `meson test` on the tree).
# run.sh then runs tests/cuda/gpu_machine_check.sh (issue 23's floor) with the logs in LOG_DIR.
set -euo pipefail
[ "${1:-}" = pack ] || { sed -n '2,15p' "$0"; exit 2; }
build=$(cd "${2:?BUILD_DIR}" && pwd)
out=${3:?OUT_DIR}
repo=$(cd "$(dirname "$0")/../.." && pwd)
case "$build" in "$repo"/*) ;; *) echo "gpu_bundle.sh: $build is not inside $repo" >&2; exit 2 ;; esac
ucx=$(meson introspect --buildoptions "$build" | python3 -c \
  'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "ucx_prefix"))')
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# The tree's executables, libraries, the extension, and meson's records of it (not objects).
( cd / && { find "${build#/}" -maxdepth 1 -name '*.so*' -type f
    find "${build#/}" -type f -perm -u+x ! -path '*.p/*' ! -path '*/meson-*'
    find "${build#/}/python" -name '*.so' -type f
    find "${build#/}/meson-private" "${build#/}/meson-info" -type f
    find "${build#/}" -maxdepth 1 -name '*.ninja'; } | sort -u | tar -cf - -T - ) | tar -xf - -C "$stage"
if [ -n "$ucx" ]; then
  ( cd / && tar -cf - "${ucx#/}"/lib/*.so* "${ucx#/}"/lib/ucx/libuc[mt]_*.so* \
      "$(dirname "${ucx#/}")/libucx_cu13.libs" ) | tar -xf - -C "$stage"
fi
find "$stage" -type f -exec sh -c 'file "$1" | grep -q "ELF.*shared object\|ELF.*executable" && strip --strip-debug "$1"' _ {} \;
mkdir -p "$stage/opt/weft-gpu-bundle/lib"
cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 "$stage/opt/weft-gpu-bundle/lib/"
meson_python=$(sed -n '1s/^#! *//p' "$(command -v meson)")  # the interpreter meson runs under
meson_py=$($meson_python -c 'import mesonbuild, os; print(os.path.dirname(mesonbuild.__file__))')
cp -r "$meson_py" "$stage/opt/weft-gpu-bundle/"
find "$stage/opt/weft-gpu-bundle" -name __pycache__ -prune -exec rm -rf {} +
printf '#!/usr/bin/env python3\nimport sys\nsys.path.insert(0, "/opt/weft-gpu-bundle")\nfrom mesonbuild import mesonmain\nsys.exit(mesonmain.main())\n' \
  >"$stage/opt/weft-gpu-bundle/meson"
chmod +x "$stage/opt/weft-gpu-bundle/meson"
mkdir -p "$out"
tar -C "$stage" -cf - . | xz -T0 -6 >"$out/bundle.tar.xz"
cat >"$out/run.sh" <<RUN
#!/usr/bin/env bash
# Made by tests/cuda/gpu_bundle.sh: run from the repository copy's root on the GPU machine.
set -u
logs=\${1:?LOG_DIR}
here=\$(cd "\$(dirname "\$0")" && pwd)
# The tree's paths: where this repository was when it was packed.
if [ "\$(cd "$repo" 2>/dev/null && pwd -P)" != "\$(pwd -P)" ]; then
  [ -e "$repo" ] && [ ! -L "$repo" ] && { echo "run.sh: $repo exists and is not this repository" >&2; exit 2; }
  mkdir -p "$(dirname "$repo")" && ln -sfn "\$PWD" "$repo"
fi
tar --keep-directory-symlink -xJf "\$here/bundle.tar.xz" -C / || { echo "run.sh: unpacking failed" >&2; exit 2; }
# CUDA's libraries: the toolkit's, else the Python wheels' (cuDNN usually comes only that way).
sp=\$(python3 -c 'import site; print(site.getsitepackages()[0])')
libs=\$(for n in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13 libcudart.so.13; do
  find /usr/local/cuda/lib64/ "\$sp/nvidia" -name "\$n" 2>/dev/null | head -1; done | xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH="/opt/weft-gpu-bundle/lib:\$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" PATH="/usr/local/cuda/bin:\$PATH"
cd "$repo" && tests/cuda/gpu_machine_check.sh "${build#"$repo"/}" "\$logs" /opt/weft-gpu-bundle/meson python3
RUN
chmod +x "$out/run.sh"
ls -la "$out"
