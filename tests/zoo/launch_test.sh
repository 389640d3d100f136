#!/usr/bin/env bash
# weft-zoo launch: per-task TF_CONFIG on distinct loopback ports, prefixed output, ps tasks stopped
# when the workers are done, one failing task stopping the others (SIGTERM, then SIGKILL after the
# grace), signals forwarded, no process left behind, usage errors; then weft-zoo train under
# ParameterServerStrategy, async and sync, and a pipeline over two tasks, through launch; elastic restart of a multi-worker job
# (--max-restarts); hang reports, trace dumps and --status lines through launch; trace merge. About 30 s.
#   tests/zoo/launch_test.sh path/to/weft-zoo
set -euo pipefail
zoo="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# run OUT_FILE -- command...: stdout+stderr to OUT_FILE, echoes the exit status.
run() { local out="$1"; shift 2; local status=0; "$@" >"$out" 2>&1 || status=$?; echo "$status"; }
# Every pid written into $tmp/pids must be gone.
no_leftovers() {
  for p in $(cat "$tmp"/pids.* 2>/dev/null); do
    if kill -0 "$p" 2>/dev/null; then fail "process $p of a task is still running after launch returned"; fi
  done
  rm -f "$tmp"/pids.*
}

# Tasks wait for each other through files in $tmp (bounded: 20 s), not for a fixed time.
export LAUNCH_TMP="$tmp"
wait_for='for i in $(seq 400); do [ -e "$LAUNCH_TMP/$1" ] && break; sleep 0.05; done'

# 1. Each task gets its own TF_CONFIG: same cluster, its own task, distinct ports; lines prefixed.
status="$(run "$tmp/out" -- "$zoo" launch -n 3 --ps 1 -- sh -c 'w() { '"$wait_for"'; }; echo "$TF_CONFIG"; \
  printf "no newline"; case "$WEFT_TASK" in ps*) touch "$LAUNCH_TMP/ps-ready"; sleep 30;; *) w ps-ready;; esac')"
[ "$status" = 0 ] || fail "launch -n 3 --ps 1 exited $status: $(cat "$tmp/out")"
python3 - "$tmp/out" <<'PY' || fail "TF_CONFIG per task is wrong: $(cat "$tmp/out")"
import json, re, sys
configs = {}
for line in open(sys.argv[1]):
    m = re.match(r"\[(\w+):(\d+)\] (\{.*\})$", line.strip())
    if m:
        configs[(m.group(1), int(m.group(2)))] = json.loads(m.group(3))
assert sorted(configs) == [("ps", 0), ("worker", 0), ("worker", 1), ("worker", 2)], sorted(configs)
clusters = {json.dumps(c["cluster"], sort_keys=True) for c in configs.values()}
assert len(clusters) == 1, clusters
cluster = next(iter(configs.values()))["cluster"]
addresses = cluster["worker"] + cluster["ps"]
assert len(set(addresses)) == 4 and all(a.startswith("127.0.0.1:") for a in addresses), addresses
for (job, index), c in configs.items():
    assert c["task"] == {"type": job, "index": index}, c
PY
[ "$(grep -c '^\[worker:[0-2]\] no newline$' "$tmp/out")" = 3 ] || fail "a last line without newline was lost: $(cat "$tmp/out")"

# 2. One task fails: the others are stopped with SIGTERM, the launch fails naming the task.
status="$(run "$tmp/out" -- "$zoo" launch -n 3 -- sh -c 'w() { '"$wait_for"'; }; echo $$ > "$LAUNCH_TMP/pids.$WEFT_TASK"; \
  if [ "$WEFT_TASK" = worker:1 ]; then w ready.worker:0; w ready.worker:2; echo "worker 1 fails"; exit 3; fi; \
  trap "echo got TERM; exit 5" TERM; touch "$LAUNCH_TMP/ready.$WEFT_TASK"; sleep 30 & wait')"
[ "$status" = 3 ] || fail "a failing task should make launch exit 3, got $status: $(cat "$tmp/out")"
grep -q "failed: task worker:1 exited with status 3" "$tmp/out" || fail "the failed task is not named: $(cat "$tmp/out")"
grep -q '^\[worker:1\] worker 1 fails$' "$tmp/out" || fail "worker 1's output is missing: $(cat "$tmp/out")"
[ "$(grep -c '^\[worker:[02]\] got TERM$' "$tmp/out")" = 2 ] || fail "the others were not sent SIGTERM: $(cat "$tmp/out")"
no_leftovers

# 3. A task ignoring SIGTERM is killed after the grace period.
status="$(run "$tmp/out" -- "$zoo" launch -n 2 --grace 0.5 -- sh -c 'w() { '"$wait_for"'; }; echo $$ > "$LAUNCH_TMP/pids.$WEFT_TASK"; \
  if [ "$WEFT_TASK" = worker:0 ]; then w stubborn; exit 1; fi; trap "" TERM; touch "$LAUNCH_TMP/stubborn"; \
  while :; do sleep 0.1; done')"
[ "$status" = 1 ] || fail "expected exit 1 from the failing worker:0, got $status: $(cat "$tmp/out")"
grep -q "killing them" "$tmp/out" || fail "the stubborn task was not killed: $(cat "$tmp/out")"
no_leftovers

# 4. Signals sent to the launcher reach every task.
"$zoo" launch -n 2 -- sh -c 'trap "echo got INT; exit 7" INT; echo ready; sleep 30 & wait' >"$tmp/out" 2>&1 &
launcher=$!
for _ in $(seq 400); do [ "$(grep -c ready "$tmp/out")" = 2 ] && break; sleep 0.05; done
kill -INT "$launcher"
status=0; wait "$launcher" || status=$?
[ "$status" = 7 ] || [ "$status" = 130 ] || fail "launch after SIGINT exited $status: $(cat "$tmp/out")"
[ "$(grep -c '^\[worker:[01]\] got INT$' "$tmp/out")" = 2 ] || fail "SIGINT was not forwarded: $(cat "$tmp/out")"

# 5. Usage errors and a command that cannot run.
[ "$(run "$tmp/out" -- "$zoo" launch -n 2 sh)" = 2 ] || fail "launch without '--' should be a usage error"
grep -q "after '--'" "$tmp/out" || fail "usage error should say where the command goes: $(cat "$tmp/out")"
[ "$(run "$tmp/out" -- "$zoo" launch -n 0 -- true)" = 2 ] || fail "-n 0 should be a usage error"
[ "$(run "$tmp/out" -- "$zoo" launch -n 2 -- /nonexistent/program)" = 127 ] || fail "a missing program should exit 127"
grep -q "cannot run '/nonexistent/program'" "$tmp/out" || fail "a missing program is not named: $(cat "$tmp/out")"
# 6. ParameterServerStrategy through launch (UCX builds): every task runs the same train command.
status="$(run "$tmp/out" -- "$zoo" launch --ps 1 -n 2 -- "$zoo" train mlp --strategy parameter_server \
  --ps-mode async --data synthetic --steps-per-epoch 5 --batch-size 32 --threads 1 --quiet \
  --checkpoint-dir "$tmp/ckpt")"
if ! grep -q "strategy must be" "$tmp/out"; then
  [ "$status" = 0 ] || fail "async parameter_server launch exited $status: $(cat "$tmp/out")"
  [ "$(grep -c '^\[worker:[01]\] test_loss' "$tmp/out")" = 2 ] || fail "both async workers train: $(cat "$tmp/out")"
  [ -e "$tmp/ckpt/ckpt-5.weft" ] || fail "the async chief wrote no checkpoint: $(ls "$tmp/ckpt") $(cat "$tmp/out")"
  status="$(run "$tmp/out" -- "$zoo" launch --ps 1 -n 2 -- "$zoo" train mlp --strategy parameter_server \
    --data synthetic --steps-per-epoch 5 --batch-size 32 --threads 1 --quiet --dump-trace "$tmp/ps-trace.json")"
  [ "$status" = 0 ] || fail "sync parameter_server launch exited $status: $(cat "$tmp/out")"
  grep -q '^\[worker:0\] test_loss' "$tmp/out" || fail "worker:0 drives the sync training: $(cat "$tmp/out")"
  # The client's server traced its partitions' kernels, Send/Recv and steps (--dump-trace at the end).
  python3 - "$tmp/ps-trace.json" <<'PY' || fail "the parameter_server trace: $(head -c 2000 "$tmp/ps-trace.json")"
import json, sys
events = json.load(open(sys.argv[1]))
meta = [e for e in events if e.get("name") == "weft_trace"][0]["args"]
assert meta["process"] == "worker:0", meta
kinds = {e["args"]["kind"] for e in events if e.get("ph") == "X"}
assert {"kernel", "send", "recv", "step"} <= kinds, kinds
PY
  grep -q '^\[worker:1\] .*stopping (the client has finished)' "$tmp/out" || fail "worker:1 serves: $(cat "$tmp/out")"
  [ "$(run "$tmp/out" -- "$zoo" train mlp --ps-mode async --data synthetic)" = 2 ] || fail "--ps-mode alone: usage error"
  # 6b. A pipeline across the two tasks' processes: worker:0 trains stage 0, worker:1 serves stage 1.
  status="$(run "$tmp/out" -- "$zoo" launch -n 2 -- "$zoo" train mlp --strategy pipeline --micro-batches 4 \
    --schedule 1f1b --data synthetic --steps-per-epoch 4 --batch-size 32 --threads 1)"
  [ "$status" = 0 ] || fail "pipeline launch exited $status: $(cat "$tmp/out")"
  grep -q '^\[worker:0\] stage devices: /job:worker/replica:0/task:0/device:CPU:0 /job:worker/replica:0/task:1/device:CPU:0' \
    "$tmp/out" || fail "the pipeline's stages are the tasks: $(cat "$tmp/out")"
  grep -q '^\[worker:0\] test_loss' "$tmp/out" || fail "worker:0 drives the pipeline: $(cat "$tmp/out")"
  grep -q '^\[worker:1\] .*stopping (the client has finished)' "$tmp/out" || fail "worker:1 serves: $(cat "$tmp/out")"
  # More stages than tasks: an error naming them (the client's; worker:1 then sees it gone).
  status="$(run "$tmp/out" -- "$zoo" launch -n 2 -- "$zoo" train mlp --strategy pipeline --devices 3 \
    --data synthetic --steps-per-epoch 1 --batch-size 32 --threads 1 --quiet)"
  [ "$status" != 0 ] || fail "3 stages over 2 tasks should fail: $(cat "$tmp/out")"
  grep -q "3 stages need 3 tasks (a stage per task), but the cluster has 2 training task(s): worker:0, worker:1" \
    "$tmp/out" || fail "more stages than tasks is not named: $(cat "$tmp/out")"
  # 6c. The client (stage 0) killed in the middle of training: the stage task's server exits 1 within
  #     seconds, saying Unavailable and naming it (two processes started here, each bounded by timeout).
  read -r p0 p1 < <(python3 -c 'import socket; s = [socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1", 0)) for x in s]; print(*[x.getsockname()[1] for x in s])')
  cluster="{\"worker\": [\"127.0.0.1:$p0\", \"127.0.0.1:$p1\"]}"
  train=(train mlp --strategy pipeline --data synthetic --steps-per-epoch 1000 --batch-size 64 --threads 1)
  WEFT_CLUSTER_SECRET=launch-test UCX_TLS=tcp,self TF_CONFIG="{\"cluster\": $cluster, \"task\": {\"type\": \"worker\", \"index\": 1}}" \
    timeout 60 "$zoo" "${train[@]}" >"$tmp/stage1" 2>&1 & stage1=$!
  WEFT_CLUSTER_SECRET=launch-test UCX_TLS=tcp,self TF_CONFIG="{\"cluster\": $cluster, \"task\": {\"type\": \"worker\", \"index\": 0}}" \
    timeout --signal=KILL 60 "$zoo" "${train[@]}" >"$tmp/stage0" 2>&1 & stage0=$!
  # Once training has started (compiled: its graphs are registered on worker:1), kill the client.
  for i in $(seq 800); do grep -q "Epoch 1/1" "$tmp/stage0" && break; sleep 0.05; done
  grep -q "Epoch 1/1" "$tmp/stage0" || fail "the pipeline client did not start training: $(cat "$tmp/stage0")"
  kill -KILL "$(pgrep -P "$stage0")" 2>/dev/null || true  # timeout's child: weft-zoo itself
  status=0; wait "$stage1" || status=$?
  wait "$stage0" 2>/dev/null || true
  [ "$status" = 1 ] || fail "the stage task should exit 1 when the client dies, got $status: $(cat "$tmp/stage1")"
  grep -q "Unavailable: the client, task worker:0, is gone in the middle of training" "$tmp/stage1" ||
    fail "the stage task does not name the dead client: $(cat "$tmp/stage1")"
fi

# 7. Elastic restart (--max-restarts): a worker of a multi-worker job is killed (SIGKILL, from here)
#    after the chief's first checkpoint; the launcher stops the other, starts the job again on new
#    ports, and `train --resume` continues at the epoch after the latest checkpoint. Bounded: 60 s.
#    Without --max-restarts the same kill fails the launch (137).
# pid_of TASK RESTART: the task process of the launch under `timeout` ($launcher) running TASK in
# incarnation RESTART (from its environment).
pid_of() {
  local l p
  for l in $(ps -o pid= --ppid "$launcher"); do
    for p in $(ps -o pid= --ppid "$l"); do
      if grep -qzx "WEFT_TASK=$1" "/proc/$p/environ" 2>/dev/null &&
         grep -qzx "WEFT_RESTART_COUNT=$2" "/proc/$p/environ" 2>/dev/null; then echo "$p"; return; fi
    done
  done
}
# kill_after_checkpoint OUT_FILE MAX_RESTARTS: runs the job, kills worker:1 once ckpt-60 exists; echoes the exit status.
kill_after_checkpoint() {
  rm -rf "$tmp/elastic"
  # In $tmp: the worker that sees its peer killed writes its hang report in the working directory.
  timeout 60 env -C "$tmp" "$(readlink -f "$zoo")" launch -n 2 --max-restarts "$2" -- "$(readlink -f "$zoo")" train mlp \
    --strategy multi_worker --data synthetic \
    --epochs 3 --steps-per-epoch 60 --batch-size 32 --threads 1 --quiet --checkpoint-dir "$tmp/elastic" --resume \
    >"$1" 2>&1 &
  launcher=$!
  for _ in $(seq 600); do [ -e "$tmp/elastic/ckpt-60.weft" ] && break; sleep 0.05; done
  [ -e "$tmp/elastic/ckpt-60.weft" ] || { kill "$launcher"; fail "no checkpoint after epoch 1 within 30 s: $(cat "$1")"; }
  victim="$(pid_of worker:1 0)"
  [ -n "$victim" ] || { kill "$launcher"; fail "worker:1 had already finished at the first checkpoint: $(cat "$1")"; }
  kill -KILL "$victim"
  local status=0
  wait "$launcher" || status=$?
  echo "$status"
}
status="$(kill_after_checkpoint "$tmp/out" 1)"
[ "$status" = 0 ] || fail "the restarted job should finish with 0, got $status: $(cat "$tmp/out")"
grep -q "restarting the job after task worker:1 was killed by signal 9 .*(restart 1 of 1)" "$tmp/out" ||
  fail "the launcher did not say it restarts: $(cat "$tmp/out")"
[ "$(grep -c "weft-zoo launch: cluster" "$tmp/out")" = 2 ] || fail "expected two incarnations: $(cat "$tmp/out")"
grep -Eq '^\[worker:0\] resumed from .*ckpt-(60|120)\.weft \(step (60|120), epoch [12]\)' "$tmp/out" ||
  fail "the chief did not resume at an epoch > 0: $(cat "$tmp/out")"
[ "$(grep -c '^\[worker:[01]\] test_loss' "$tmp/out")" = 2 ] || fail "both workers finish after the restart: $(cat "$tmp/out")"
[ -e "$tmp/elastic/ckpt-180.weft" ] || fail "the restarted job wrote no final checkpoint: $(ls "$tmp/elastic")"
status="$(kill_after_checkpoint "$tmp/out" 0)"
[ "$status" = 137 ] || fail "without --max-restarts the killed worker fails the launch (137), got $status: $(cat "$tmp/out")"
grep -q "restarting" "$tmp/out" && fail "restarted without --max-restarts: $(cat "$tmp/out")"
[ "$(run "$tmp/out" -- "$zoo" launch -n 2 --max-restarts -1 -- true)" = 2 ] || fail "--max-restarts -1 should be a usage error"

# 8. Hang reports through launch: worker:1 is stopped (SIGSTOP) after the chief's first
#    checkpoint; worker:0's collective passes its 2 s deadline, it writes its hang report in the
#    working directory, and the launcher's summary names worker:1 as the rank everyone waits for.
rm -rf "$tmp/hang" && mkdir -p "$tmp/hang"
zoo_path="$(readlink -f "$zoo")"  # the job runs in $tmp/hang, where its hang reports go
timeout 60 env -C "$tmp/hang" "$zoo_path" launch -n 2 --grace 0.5 --status -- "$zoo_path" train mlp --strategy multi_worker \
  --data synthetic --epochs 1000 --steps-per-epoch 5 --batch-size 32 --threads 1 --quiet --collective-timeout 2 \
  --checkpoint-dir "$tmp/hang/ckpt" >"$tmp/out" 2>&1 &
launcher=$!
# (The chief keeps its latest checkpoints only: any one says that training steps have run.)
trained() { compgen -G "$tmp/hang/ckpt/ckpt-*.weft" >/dev/null; }
for _ in $(seq 600); do trained && break; sleep 0.05; done
trained || { kill "$launcher"; fail "no checkpoint after epoch 1 within 30 s: $(cat "$tmp/out")"; }
victim="$(pid_of worker:1 0)"
[ -n "$victim" ] || { kill "$launcher"; fail "worker:1 not found: $(cat "$tmp/out")"; }
kill -STOP "$victim"
status=0; wait "$launcher" || status=$?
[ "$status" != 0 ] && [ "$status" != 124 ] || fail "a stopped worker should fail the launch (not time out), got $status: $(cat "$tmp/out")"
grep -q "^weft-zoo launch:   worker:0 waits for worker:1 (why: step [0-9]*: DeadlineExceeded: " "$tmp/out" ||
  fail "no summary line for worker:0: $(cat "$tmp/out")"
grep -q "^weft-zoo launch:   worker:1 wrote no report$" "$tmp/out" || fail "worker:1 should have no report: $(cat "$tmp/out")"
grep -q "^weft-zoo launch:   the rank everyone waits for: worker:1 (it wrote no report: stopped, killed, or stuck)$" \
  "$tmp/out" || fail "the summary does not name worker:1: $(cat "$tmp/out")"
grep -q "^waits for: worker:1$" "$tmp/hang/weft-hang-worker-0.txt" || fail "worker:0's report: $(cat "$tmp/hang/weft-hang-worker-0.txt")"
# --status: while both trained, the launcher printed a status line for each from its status file.
for w in 0 1; do
  grep -Eq "^weft-zoo launch: status worker:$w: step [1-9][0-9]*, [0-9]+ img/s, [0-9]+% in collectives, slowest peer: " \
    "$tmp/out" || fail "no status line for worker:$w: $(cat "$tmp/out")"
done
grep -q "^step [1-9]" "$tmp/hang/weft-status-worker-0.txt" || fail "worker:0's status file: $(cat "$tmp/hang/weft-status-worker-0.txt")"
# The always-on trace: worker:0 dumped it beside its report, and the launcher says so.
grep -q "^weft-zoo launch: traces of worker:0 (weft-trace-<job>-<index>.json); one timeline: weft-zoo trace merge . -o all.json$" \
  "$tmp/out" || fail "no line about the trace dumps: $(cat "$tmp/out")"
grep -q "^trace: weft-trace-worker-0.json ([1-9][0-9]* events)$" "$tmp/hang/weft-hang-worker-0.txt" ||
  fail "worker:0's report does not name its trace: $(cat "$tmp/hang/weft-hang-worker-0.txt")"

# 9. --status names the slowest peer: the task with the smallest share of time in collectives
#    (the others wait there for it). Tasks here write their status files themselves.
status="$(run "$tmp/out" -- env -C "$tmp" "$zoo_path" launch -n 3 --status -- sh -c 'case "$WEFT_TASK" in \
  worker:0) f=0.8;; worker:1) f=0.1;; *) f=0.7;; esac; [ -n "$WEFT_STATUS_FILE" ] || exit 9; \
  printf "step 5\nimages_per_second 100\ncollective_fraction %s\ncollective_seconds 1\n" $f > "$WEFT_STATUS_FILE"; sleep 1.5')"
[ "$status" = 0 ] || fail "launch --status exited $status: $(cat "$tmp/out")"
grep -q "^weft-zoo launch: status worker:0: step 5, 100 img/s, 80% in collectives, slowest peer: worker:1$" "$tmp/out" ||
  fail "worker:0's status line should name worker:1: $(cat "$tmp/out")"
grep -q "^weft-zoo launch: status worker:1: step 5, 100 img/s, 10% in collectives, slowest peer: this one (the others wait for it)$" \
  "$tmp/out" || fail "worker:1's status line: $(cat "$tmp/out")"
grep -q "^weft-zoo launch: status worker:2: .*slowest peer: worker:1$" "$tmp/out" || fail "worker:2's line: $(cat "$tmp/out")"
# 10. weft-zoo trace merge on two real dumps: a 2-worker job that ends well, each worker writing its
#     trace at the end (--dump-trace); the merge is one JSON array with both ranks' all-reduces.
rm -rf "$tmp/traces" && mkdir -p "$tmp/traces"
status="$(run "$tmp/out" -- env -C "$tmp/traces" timeout 60 "$zoo_path" launch -n 2 -- sh -c \
  '"$0" train mlp --strategy multi_worker --data synthetic --epochs 1 --steps-per-epoch 5 --batch-size 32 --threads 1 \
  --quiet --dump-trace "weft-trace-${WEFT_TASK%%:*}-${WEFT_TASK##*:}.json"' "$zoo_path")"
[ "$status" = 0 ] || fail "the traced job exited $status: $(cat "$tmp/out")"
status="$(run "$tmp/merge" -- "$zoo_path" trace merge "$tmp/traces" -o "$tmp/traces/all.json")"
[ "$status" = 0 ] || fail "trace merge exited $status: $(cat "$tmp/merge")"
grep -q "^merged 2 dumps into $tmp/traces/all.json$" "$tmp/merge" || fail "trace merge said: $(cat "$tmp/merge")"
grep -Eq "weft-trace-worker-1.json: worker:1: [1-9][0-9]* events, clock [-+][0-9.]+ us from worker:0 \(round trip [0-9.]+ us\)" \
  "$tmp/merge" || fail "trace merge should list worker:1's dump: $(cat "$tmp/merge")"
python3 - "$tmp/traces/all.json" <<'PY' || fail "the merged trace: $(head -c 2000 "$tmp/traces/all.json")"
import json, sys
events = json.load(open(sys.argv[1]))
names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
assert names == {0: "worker:0", 1: "worker:1"}, names
for pid in (0, 1):
    assert any(e.get("cat") == "CollectiveReduce" and e["pid"] == pid for e in events), pid
assert min(e["ts"] for e in events if "ts" in e) == 0
PY

echo "launch_test: OK"
