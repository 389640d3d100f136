#!/usr/bin/env bash
# Sharded optimizer state (ZeRO) across worker processes: `weft-zoo launch -n N -- weft-zoo train
# MODEL --strategy multi_worker --zero Z --optimizer adam` for N in WORKERS and Z in 0 1 2,
# interleaved round by round (this machine's speed drifts: compare medians). Per run, worker:0's
# training images/s, its optimizer state, its device's peak bytes in a step and bytes in use after
# it, and its process's peak RSS. Results: bench/README.md, "Sharded optimizer state".
#   bench/run_zero.sh [MODEL (mlp)] [ROUNDS (3)] [STEPS (40)] [BATCH (256)] [WORKERS (2,4)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mlp}" rounds="${2:-3}" steps="${3:-40}" batch="${4:-256}" workers="${5:-2,4}"
zoo=build/zoo/weft-zoo
for ((r = 1; r <= rounds; r++)); do
  for n in ${workers//,/ }; do
    for z in 0 1 2; do
      # A budget no run reaches: it turns on the per-device accounting that prints the peaks.
      out=$(timeout 600 "$zoo" launch -n "$n" -- "$zoo" train "$model" --strategy multi_worker --zero "$z" \
              --optimizer adam --data synthetic --batch-size "$batch" --steps-per-epoch "$steps" --threads 1 \
              --quiet --device-memory-limit 1000000000000 2>&1 | grep '^\[worker:0\]')
      ips=$(grep -o '[0-9.]* img/s training' <<<"$out" | cut -d' ' -f1)
      state=$(grep -o 'optimizer state: [0-9.]* MiB' <<<"$out" | cut -d' ' -f3)
      mem=$(grep -o 'peak [0-9.]* MiB of the last step ([0-9.]* MiB in use' <<<"$out" | tr -d '(' | cut -d' ' -f2,8)
      rss=$(grep -o 'peak RSS of this process: [0-9.]* MiB' <<<"$out" | cut -d' ' -f6)
      printf '%s\tworkers %s\tzero %s\t%s img/s\tstate %s MiB\tpeak/after %s MiB\tRSS %s MiB\n' \
        "$r" "$n" "$z" "$ips" "$state" "${mem/ //}" "$rss"
    done
  done
done
