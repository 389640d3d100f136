#!/usr/bin/env bash
# mpirun's remote-shell agent for the emulated hosts of bench/netns_cluster.sh: OpenMPI starts its
# daemon on "host" 10.213.0.(i+1) as `netns_rsh.sh 10.213.0.(i+1) COMMAND...`, and this runs
# COMMAND in that host's namespace (wfcl-hI) as ssh would run it on a real host: through a shell.
#   ip netns exec wfcl-h0 mpirun --mca plm_rsh_agent bench/netns_rsh.sh --host 10.213.0.1,10.213.0.2 ...
set -euo pipefail
while [[ "${1:-}" == -* ]]; do shift; done   # ssh options mpirun may add (-x, -T ...): no meaning here
host="$1"
shift
last="${host##*.}"
[[ "$host" == 10.213.0.* && "$last" =~ ^[0-9]+$ && "$last" -ge 1 ]] || { echo "netns_rsh: unknown host '$host'" >&2; exit 255; }
exec ip netns exec "wfcl-h$((last - 1))" /bin/sh -c "$*"
