#!/usr/bin/env bash
# Pipeline vs data parallelism on the CPU devices of one process: training images/s and each
# device's peak bytes in a step, for one zoo model, interleaved round by round (this machine's
# speed drifts: compare medians). Results: bench/README.md, "Pipeline parallelism".
#   bench/run_pipeline.sh [MODEL (mlp)] [ROUNDS (3)] [STEPS (40)] [BATCH (128)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mlp}" rounds="${2:-3}" steps="${3:-40}" batch="${4:-128}"
# shellcheck source=bench/zoo_peaks.sh
source bench/zoo_peaks.sh
configs=("none|"
         "mirrored|--strategy mirrored --devices 2"
         "pipeline gpipe M=4|--strategy pipeline --devices 2 --micro-batches 4 --schedule gpipe"
         "pipeline 1f1b M=4|--strategy pipeline --devices 2 --micro-batches 4 --schedule 1f1b")
zoo_peaks "$model" "$rounds" "$steps" "$batch" "${configs[@]}"
