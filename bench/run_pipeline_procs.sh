#!/usr/bin/env bash
# Pipeline vs data parallelism across processes: `weft-zoo launch -n 2 -- weft-zoo train MODEL` with
# --strategy multi_worker (each process a whole replica, gradients all-reduced) and with
# --strategy pipeline (each process one stage: worker:0 trains stage 0, worker:1 serves stage 1),
# GPipe and 1F1B with M micro-batches, interleaved round by round (this machine's speed drifts:
# compare medians). Per run: worker:0's training images/s (global batch) and each process's peak
# RSS (GNU time). UCX_TLS (tcp,self by default: the loopback's TCP, as between hosts) is passed on.
# Inside `bench/netns_cluster.sh run 2 RATE -- bench/run_pipeline_procs.sh ...` (root) the two
# tasks run in the emulated hosts' namespaces instead (WEFT_CLUSTER_NETNS / WEFT_CLUSTER_ADDRS,
# TF_CONFIG naming their addresses; launch cannot start processes in other namespaces), across
# the shaped links. Results: bench/README.md, "Pipeline across processes".
#   bench/run_pipeline_procs.sh [MODEL (mlp)] [ROUNDS (3)] [STEPS (20)] [BATCH (128)] [M (4)]
set -euo pipefail
cd "$(dirname "$0")/.."
model="${1:-mlp}" rounds="${2:-3}" steps="${3:-20}" batch="${4:-128}" micro="${5:-4}"
zoo=build/zoo/weft-zoo
export UCX_TLS="${UCX_TLS:-tcp,self}"
configs=("data-parallel|--strategy multi_worker"
         "pipeline gpipe M=$micro|--strategy pipeline --micro-batches $micro --schedule gpipe"
         "pipeline 1f1b M=$micro|--strategy pipeline --micro-batches $micro --schedule 1f1b")
# two_tasks ARGS...: `weft-zoo ARGS` as worker:0 and worker:1, each line prefixed "[worker:i] " as
# launch does: through launch on loopback, or one task per namespace of the emulated cluster.
two_tasks() {
  local time=(/usr/bin/time -f 'peak RSS %M KiB')
  if [ -z "${WEFT_CLUSTER_NETNS:-}" ]; then
    timeout 600 "$zoo" launch -n 2 -- "${time[@]}" "$zoo" "$@" 2>&1
    return
  fi
  local ns=($WEFT_CLUSTER_NETNS) addrs=($WEFT_CLUSTER_ADDRS) i pids=()
  local cluster="{\"worker\": [\"${addrs[0]}:23456\", \"${addrs[1]}:23456\"]}"
  for i in 1 0; do
    ip netns exec "${ns[$i]}" env WEFT_CLUSTER_SECRET=bench UCX_NET_DEVICES=eth0 \
      TF_CONFIG="{\"cluster\": $cluster, \"task\": {\"type\": \"worker\", \"index\": $i}}" \
      timeout 600 "${time[@]}" "$zoo" "$@" 2>&1 | sed "s/^/[worker:$i] /" &
    pids+=($!)
  done
  wait "${pids[@]}" || true
}
for ((r = 1; r <= rounds; r++)); do
  for c in "${configs[@]}"; do
    name="${c%%|*}" flags="${c#*|}"
    # shellcheck disable=SC2086  # flags are words
    out=$(two_tasks train "$model" $flags --data synthetic --batch-size "$batch" --steps-per-epoch "$steps" \
            --threads 1 --quiet)
    ips=$(grep '^\[worker:0\]' <<<"$out" | grep -o '[0-9.]* img/s training' | cut -d' ' -f1)
    rss=$(grep -o '^\[worker:[01]\] peak RSS [0-9]* KiB' <<<"$out" | sort |
          awk '{printf "%s%.1f", (NR > 1 ? " / " : ""), $4 / 1024}')
    printf '%s\t%s\t%s img/s\tpeak RSS worker:0 / worker:1 %s MiB\n' "$r" "$name" "$ips" "$rss"
  done
done
