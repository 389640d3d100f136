#!/usr/bin/env bash
# Pipeline vs data parallelism on the CPU devices of one process: training images/s and each
# device's peak bytes in a step, for one zoo model, interleaved round by round (this machine's
# speed drifts: compare medians). Results: bench/README.md, "Pipeline parallelism".
#   bench/run_pipeline.sh [MODEL (mlp)] [ROUNDS (3)] [STEPS (40)] [BATCH (128)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mlp}" rounds="${2:-3}" steps="${3:-40}" batch="${4:-128}"
zoo=build/zoo/weft-zoo
# A budget no run reaches: it turns on the per-device accounting that prints the peaks.
common=(train "$model" --data synthetic --epochs 1 --steps-per-epoch "$steps" --batch-size "$batch" --threads 2
        --device-memory-limit 1000000000000)
configs=("none|"
         "mirrored|--strategy mirrored --devices 2"
         "pipeline gpipe M=4|--strategy pipeline --devices 2 --micro-batches 4 --schedule gpipe"
         "pipeline 1f1b M=4|--strategy pipeline --devices 2 --micro-batches 4 --schedule 1f1b")
for ((r = 1; r <= rounds; r++)); do
  for c in "${configs[@]}"; do
    name="${c%%|*}" flags="${c#*|}"
    # shellcheck disable=SC2086  # flags are words
    out=$(timeout 300 "$zoo" "${common[@]}" $flags 2>&1)
    ips=$(grep -o '[0-9.]* img/s training' <<<"$out" | cut -d' ' -f1)
    peaks=$(grep '^device memory:' <<<"$out" | sed -E 's/.*device:(CPU:[0-9]+) peak ([0-9.]+) MiB.*/\1 \2 MiB/' | paste -sd, -)
    printf '%s\t%s\t%s img/s\t%s\n' "$r" "$name" "$ips" "$peaks"
  done
done
