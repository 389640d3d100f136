#!/usr/bin/env bash
# Activation recomputation (`weft-zoo train --recompute`): training speed and the step's peak bytes
# with and without it, one device, interleaved round by round (this machine's speed drifts:
# compare medians). Results: bench/README.md, "Activation recomputation".
#   bench/run_recompute.sh [MODEL (gpt_small)] [ROUNDS (3)] [STEPS (5)] [BATCH (16)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-gpt_small}" rounds="${2:-3}" steps="${3:-5}" batch="${4:-16}"
# shellcheck source=bench/zoo_peaks.sh
source bench/zoo_peaks.sh
configs=("plain|" "recompute all|--recompute all")
zoo_peaks "$model" "$rounds" "$steps" "$batch" "${configs[@]}"
