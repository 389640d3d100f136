#!/usr/bin/env bash
# Activation recomputation (`weft-zoo train --recompute`): training speed and the step's peak bytes
# with and without it, one device, interleaved round by round (this machine's speed drifts:
# compare medians). Results: bench/README.md, "Activation recomputation".
#   bench/run_recompute.sh [MODEL (gpt_small)] [ROUNDS (3)] [STEPS (5)] [BATCH (16)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-gpt_small}" rounds="${2:-3}" steps="${3:-5}" batch="${4:-16}"
zoo=build/zoo/weft-zoo
# A budget no run reaches: it turns on the per-device accounting that prints the peaks.
common=(train "$model" --data synthetic --epochs 1 --steps-per-epoch "$steps" --batch-size "$batch" --threads 2
        --device-memory-limit 1000000000000)
configs=("plain|" "recompute all|--recompute all")
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
