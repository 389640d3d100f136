#!/usr/bin/env bash
# Issue 23's floor on a machine with a GPU, in one bounded run over an already built tree:
#   1. test_cuda on its own (its first process also fills the driver's cache of JIT-compiled PTX);
#   2. side by side: every meson suite and tests/python with the GPU visible (use_gpus on: the CPU
#      suites' ops land on the GPU), both again with no GPU visible (`--setup nogpu`,
#      CUDA_VISIBLE_DEVICES=), and test_cuda under compute-sanitizer's memcheck;
#   3. bench_gpu.
# Each part has a time limit; logs go to LOG_DIR, one file per part, and a summary is printed last.
#
#   tests/cuda/gpu_machine_check.sh BUILD_DIR LOG_DIR [MESON [PYTHON]]
#
# MESON is the command that runs `meson` for BUILD_DIR (default: meson); PYTHON the interpreter the
# extension in BUILD_DIR/python was built for (default: python3). Exits 1 if any part failed.
set -u
build=${1:?usage: gpu_machine_check.sh BUILD_DIR LOG_DIR [MESON [PYTHON]]}
logs=${2:?usage: gpu_machine_check.sh BUILD_DIR LOG_DIR [MESON [PYTHON]]}
meson=${3:-meson}
python=${4:-python3}
jobs=$(( $(nproc) / 4 > 1 ? $(nproc) / 4 : 1 ))  # two meson runs and two pytest runs at once
mkdir -p "$logs"
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here" || exit 1
export PYTHONPATH="$here/python:$here/$build/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
part() {  # part NAME SECONDS CMD...: runs CMD with a limit, its output in LOG_DIR/NAME.txt
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$logs/$name.txt" 2>&1
  local rc=$? line
  line="rc=$rc $((SECONDS - start))s"
  [ "$rc" = 124 ] && line+=" (time limit ${limit}s)"
  echo "$line" >"$results/$name"  # a file: parts run in the background too
  return $rc
}

{
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv
  "$python" --version; "$python" -c 'import numpy; print("numpy", numpy.__version__)'
  command -v compute-sanitizer && compute-sanitizer --version | tail -1
  "$python" -c 'import weft; print("weft.gpu_info()", weft.gpu_info())'
} >"$logs/env.txt" 2>&1

part test_cuda 150 "$build/tests/test_cuda" --duration=true

# The rest side by side (the GPU holds them all: each process takes device memory as it needs it).
pids=()
part meson_gpu 240 "$meson" test -C "$build" --no-rebuild --print-errorlogs --num-processes "$jobs" & pids+=($!)
part meson_nogpu 240 "$meson" test -C "$build" --no-rebuild --print-errorlogs --num-processes "$jobs" \
  --setup nogpu & pids+=($!)
part pytest_gpu 240 "$python" -m pytest -q -rs -p no:cacheprovider tests/python & pids+=($!)
CUDA_VISIBLE_DEVICES= part pytest_nogpu 240 "$python" -m pytest -q -rs -p no:cacheprovider tests/python & pids+=($!)
if command -v compute-sanitizer >/dev/null; then
  part sanitizer 240 compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$build/tests/test_cuda" & pids+=($!)
fi
wait "${pids[@]}"

part bench_gpu 90 "$build/bench/gpu/bench_gpu" --seconds=0.5

echo "== summary ($build)"
failed=0
for name in test_cuda meson_gpu sanitizer pytest_gpu meson_nogpu pytest_nogpu bench_gpu; do
  [ -f "$results/$name" ] || continue
  line=$(cat "$results/$name")
  printf '%-13s %s\n' "$name" "$line"
  case "$line" in rc=0\ *) ;; *) failed=1 ;; esac
done
exit $failed
