#!/usr/bin/env bash
# All-reduce (weft's ring and recursive doubling against OpenMPI's MPI_Allreduce, pml ucx and ob1
# tcp) and 2- / 4-worker training step times across emulated hosts: for each rate, 4 network
# namespaces shaped by bench/netns_cluster.sh, the sweep of bench/cluster_allreduce.py in them, the
# cluster torn down after (on any exit); then bench/allreduce_model.py prints the tables, the
# alpha-beta-gamma fit and its predictions (bench/README.md has a run). Root; about 15 minutes on this
# loaded 2-core machine, each rate bounded by 10 minutes. --out (default ./cluster_allreduce.jsonl)
# keeps every measurement; bench/results/ has the run the README and the cost model quote.
#
#   bench/run_cluster_allreduce.sh [--rates 1gbit,10gbit,25gbit] [--out FILE] [cluster_allreduce.py flags]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
build="${BUILD:-$root/build}"
rates=1gbit,10gbit,25gbit
out="cluster_allreduce.jsonl"
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) rates="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) break ;;
  esac
done
command -v mpirun > /dev/null || { echo "needs OpenMPI (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }
ninja -C "$build" -j"${NINJA_JOBS:-2}" bench/bench_cluster_allreduce bench/bench_mpi_allreduce zoo/weft-zoo >&2
: > "$out"
for rate in ${rates//,/ }; do
  "$here/netns_cluster.sh" run 4 "$rate" --timeout 600 -- \
    python3 "$here/cluster_allreduce.py" --rate "$rate" --weft "$build/bench/bench_cluster_allreduce" \
    --mpi "$build/bench/bench_mpi_allreduce" --zoo "$build/zoo/weft-zoo" --out "$out" "$@"
done
exec python3 "$here/allreduce_model.py" "$out"
