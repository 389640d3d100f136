# Sourced by bench/run_pipeline.sh and bench/run_recompute.sh: `zoo_peaks MODEL ROUNDS STEPS BATCH
# CONFIG...` trains MODEL once per CONFIG ("name|weft-zoo train flags") in each of ROUNDS rounds,
# interleaved (this machine's speed drifts: compare medians), and prints per run: round, name,
# training images/s and each device's peak bytes in a step.
zoo_peaks() {
  local model=$1 rounds=$2 steps=$3 batch=$4
  shift 4
  # A budget no run reaches: it turns on the per-device accounting that prints the peaks.
  local common=(train "$model" --data synthetic --epochs 1 --steps-per-epoch "$steps" --batch-size "$batch"
                --threads 2 --device-memory-limit 1000000000000)
  local r c name flags out ips peaks
  for ((r = 1; r <= rounds; r++)); do
    for c in "$@"; do
      name="${c%%|*}" flags="${c#*|}"
      # shellcheck disable=SC2086  # flags are words
      out=$(timeout 300 build/zoo/weft-zoo "${common[@]}" $flags 2>&1)
      ips=$(grep -o '[0-9.]* img/s training' <<<"$out" | cut -d' ' -f1)
      peaks=$(grep '^device memory:' <<<"$out" | sed -E 's/.*device:(CPU:[0-9]+) peak ([0-9.]+) MiB.*/\1 \2 MiB/' | paste -sd, -)
      printf '%s\t%s\t%s img/s\t%s\n' "$r" "$name" "$ips" "$peaks"
    done
  done
}
