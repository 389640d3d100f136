#!/usr/bin/env bash
# An emulated multi-host cluster on this machine (root): N "hosts", each a network namespace with
# one interface eth0 (10.213.0.(i+1)/24), all plugged into a bridge that lives in a namespace of its
# own (the "switch"), every link shaped to RATE in both directions with `tc tbf` (the host's eth0
# egress shapes what it sends, the switch port's egress what it receives: a full-duplex NIC of
# RATE). Nothing is created in, or changed on, this machine's own namespace: no interface, route or
# address of the host is touched; `down` deletes the namespaces, which takes their interfaces along.
#
#   bench/netns_cluster.sh up N RATE          # N hosts (2..16), RATE a tc rate (1gbit, 10gbit, 25gbit)
#   bench/netns_cluster.sh exec I CMD...      # CMD inside host I (0-based)
#   bench/netns_cluster.sh addr I             # host I's address
#   bench/netns_cluster.sh status             # the namespaces and their qdiscs
#   bench/netns_cluster.sh down               # remove everything (also what a crashed run left)
#   bench/netns_cluster.sh run N RATE [--timeout S] -- CMD...
#                                             # up, CMD (with WEFT_CLUSTER_ADDRS and WEFT_CLUSTER_NETNS
#                                             # set, space-separated), down on any exit; bounded by S
#                                             # seconds (default 600)
#   bench/netns_cluster.sh check N RATE       # up, a TCP stream between host 0 and every other host
#                                             # (bench/tcp_rate.py), achieved vs configured rate, down
#
# tbf's parameters (the kernel has tbf, not netem: no added delay, so the links' latency is the
# veth's and the CPU's): burst = max(RATE x 1 ms, 512 KiB), latency 4 ms. A bucket must cover the
# time between two of the qdisc watchdog's wake-ups, which on this shared 2-core VM (HZ 250) are
# late by up to a tick: a smaller burst leaves one TCP stream well below the rate (the measured
# rates per burst are in bench/README.md). The latency bounds tbf's queue (a few hundred KB beyond
# the burst at 1 Gbit/s), as a switch port's buffer is bounded, so TCP sees drops rather than seconds of queue.
# Every step is bounded (`timeout`), and `up` and `run` remove what they made if anything fails or
# the script is interrupted (trap on EXIT, INT, TERM).
set -euo pipefail
# Every name this script makes starts with PREFIX (a leftover is found by it); NETNS_CLUSTER_PREFIX
# gives a second cluster its own names (the test's, beside a running bench; bench/netns_rsh.sh
# knows only the default's).
PREFIX="${NETNS_CLUSTER_PREFIX:-wfcl}"
[[ "$PREFIX" =~ ^[a-z][a-z0-9]{1,7}$ ]] || { echo "netns_cluster: NETNS_CLUSTER_PREFIX must be 2-8 of [a-z0-9]" >&2; exit 2; }
SWITCH="$PREFIX-sw"
SUBNET=10.213.0
here="$(cd "$(dirname "$0")" && pwd)"

die() { echo "netns_cluster: $*" >&2; exit 2; }
need_root() {
  [ "$(id -u)" -eq 0 ] || die "needs root (ip netns, tc)"
  command -v ip > /dev/null && command -v tc > /dev/null || die "needs iproute2 (ip, tc)"
}
t() { timeout 20 "$@"; }   # one ip/tc call: bounded

host_ns() { echo "$PREFIX-h$1"; }
host_addr() { echo "$SUBNET.$(($1 + 1))"; }

# Our namespaces, whatever N a previous (maybe crashed) run used.
ours() { ip netns list 2> /dev/null | awk '{print $1}' | grep -E "^$PREFIX-(sw|h[0-9]+)$" || true; }

down() {
  local ns
  for ns in $(ours); do
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null || true   # processes left inside
    t ip netns delete "$ns" 2> /dev/null || true
  done
}

# tbf on DEV in namespace NS at RATE (bits/s as tc writes them: 1gbit ...).
shape() {
  local ns="$1" dev="$2" rate="$3" bits burst
  bits="$(rate_bits "$rate")"
  burst=$((bits / 8 / 1000))                       # 1 ms at RATE
  [ "$burst" -ge 524288 ] || burst=524288
  t ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 4ms
}

rate_bits() {
  local r="${1,,}"
  case "$r" in
    *gbit) echo $((${r%gbit} * 1000000000)) ;;
    *mbit) echo $((${r%mbit} * 1000000)) ;;
    *) die "RATE '$1' must be like 1gbit, 10gbit, 25gbit or 500mbit" ;;
  esac
}

up() {
  local n="$1" rate="$2" i ns
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 16 ] || die "N must be 2..16, got '$n'"
  rate_bits "$rate" > /dev/null
  down   # a leftover from a crashed run goes first
  trap 'rc=$?; [ $rc -eq 0 ] || { echo "netns_cluster: up failed, removing what it made" >&2; down; }; exit $rc' EXIT
  trap 'exit 130' INT TERM
  t ip netns add "$SWITCH"
  t ip -n "$SWITCH" link add br0 type bridge
  t ip -n "$SWITCH" link set br0 up
  for ((i = 0; i < n; i++)); do
    ns="$(host_ns "$i")"
    t ip netns add "$ns"
    # Both ends are made in the switch's namespace and one is moved: the host's own never sees them.
    t ip -n "$SWITCH" link add "p$i" type veth peer name eth0 netns "$ns"
    t ip -n "$SWITCH" link set "p$i" master br0 up
    t ip -n "$ns" link set lo up
    t ip -n "$ns" addr add "$(host_addr "$i")/24" dev eth0
    t ip -n "$ns" link set eth0 up
    shape "$ns" eth0 "$rate"
    shape "$SWITCH" "p$i" "$rate"
  done
  # The bridge forwards once its ports are up (no STP: at once); wait, bounded, until all are.
  local forwarding=0
  for ((i = 0; i < 50; i++)); do
    forwarding="$(bridge -n "$SWITCH" link show | grep -c 'state forwarding' || true)"
    [ "$forwarding" -lt "$n" ] || break
    sleep 0.1
  done
  [ "$forwarding" -ge "$n" ] || die "only $forwarding of $n switch ports forward"
  trap - EXIT INT TERM
  echo "netns_cluster: $n hosts at $rate: $(for ((i = 0; i < n; i++)); do printf '%s=%s ' "$(host_ns "$i")" "$(host_addr "$i")"; done)" >&2
}

hosts_up() { ours | grep -c -- "-h" || true; }

cmd="${1:-}"
shift || true
case "$cmd" in
  up)
    [ $# -eq 2 ] || die "usage: up N RATE"
    need_root
    up "$1" "$2"
    ;;
  down)
    need_root
    down
    ;;
  exec)
    [ $# -ge 2 ] || die "usage: exec I CMD..."
    need_root
    i="$1"
    shift
    ip netns list | grep -q "^$(host_ns "$i")\b" || die "host $i is not up (netns_cluster.sh up N RATE)"
    exec ip netns exec "$(host_ns "$i")" "$@"
    ;;
  addr)
    [ $# -eq 1 ] || die "usage: addr I"
    host_addr "$1"
    ;;
  status)
    need_root
    for ns in $(ours); do
      echo "== $ns"
      ip -n "$ns" -brief addr show | grep -v '^lo' || true
      ip netns exec "$ns" tc qdisc show | grep tbf || true
    done
    ;;
  run | check)
    [ $# -ge 2 ] || die "usage: $cmd N RATE [--timeout S] [-- CMD...]"
    need_root
    n="$1" rate="$2" limit=600
    shift 2
    if [ "${1:-}" = --timeout ]; then limit="$2"; shift 2; fi
    [ "${1:-}" != -- ] || shift
    child=""
    up "$n" "$rate"
    # timeout runs CMD in a process group of its own: on any exit, that group goes, then the cluster.
    trap 'rc=$?; [ -z "$child" ] || kill -KILL -- "-$child" 2> /dev/null || true; down; exit $rc' EXIT
    trap 'exit 130' INT TERM
    WEFT_CLUSTER_ADDRS="$(for ((i = 0; i < n; i++)); do printf '%s ' "$(host_addr "$i")"; done)"
    WEFT_CLUSTER_NETNS="$(for ((i = 0; i < n; i++)); do printf '%s ' "$(host_ns "$i")"; done)"
    export WEFT_CLUSTER_ADDRS WEFT_CLUSTER_NETNS
    if [ "$cmd" = check ]; then
      for ((i = 1; i < n; i++)); do
        timeout "$limit" python3 "$here/tcp_rate.py" --server-netns "$(host_ns "$i")" --client-netns "$(host_ns 0)" \
          --addr "$(host_addr "$i")" --configured "$rate"
      done
    else
      [ $# -ge 1 ] || die "run: no command after --"
      # Not exec: the trap must remove the cluster when the command ends.
      timeout "$limit" "$@" &
      child=$!
      wait "$child"
    fi
    ;;
  *)
    die "usage: $0 up N RATE | exec I CMD... | addr I | status | down | run N RATE [--timeout S] -- CMD... | check N RATE"
    ;;
esac
