#!/usr/bin/env bash
# weft-zoo end to end on synthetic data: list, describe, train with checkpoints and resume
# (compared with an uninterrupted run), evaluate, bench --json, and the errors of bad use.
#   tests/zoo/cli_test.sh path/to/weft-zoo
set -euo pipefail
zoo="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() {  # expect STATUS PATTERN -- command...: the exit status and a pattern in its output
  local want="$1" pattern="$2"; shift 3
  local out status=0
  out="$("$@" 2>&1)" || status=$?
  [ "$status" -eq "$want" ] || fail "'$*' exited $status, expected $want: $out"
  grep -q -- "$pattern" <<<"$out" || fail "'$*' output lacks '$pattern': $out"
}
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

expect 0 "mnist_cnn" -- "$zoo" list
[ "$("$zoo" list | wc -l)" -eq 7 ] || fail "list should show 7 models"
expect 0 "Total params: 347,146" -- "$zoo" describe mnist_cnn
expect 0 "Total params: 274,442" -- "$zoo" describe resnet20 --data synthetic
expect 0 "Total params: 28,618" -- "$zoo" describe lstm_text
# lstm_text on Debian's fortunes (its default data): mirrored over 2 devices, and its bench.
expect 0 "MirroredStrategy over 2 replicas" -- "$zoo" train lstm_text --batch-size 32 --steps-per-epoch 4 \
  --threads 2 --devices 2
expect 0 '"images_per_second"' -- "$zoo" bench lstm_text --batch-size 16 --threads 1 --warmup 1 --seconds 0.3 --json

common=(--data synthetic --batch-size 50 --steps-per-epoch 8 --threads 1 --quiet)
# Two epochs straight, and one epoch + a resumed second: same steps, same final state.
"$zoo" train mlp "${common[@]}" --epochs 2 --summary "$tmp/straight.json" >/dev/null
"$zoo" train mlp "${common[@]}" --epochs 1 --checkpoint-dir "$tmp/ckpt" >/dev/null
ls "$tmp/ckpt"/ckpt-8.weft >/dev/null || fail "no checkpoint after epoch 1"
expect 0 "resumed from .*ckpt-8.weft (step 8, epoch 1)" -- \
  "$zoo" train mlp "${common[@]}" --epochs 2 --checkpoint-dir "$tmp/ckpt" --resume --summary "$tmp/resumed.json"
[ "$(field "$tmp/resumed.json" steps)" = 16 ] || fail "resumed run should end at step 16"
for k in test_loss test_accuracy train_loss; do
  [ "$(field "$tmp/straight.json" $k)" = "$(field "$tmp/resumed.json" $k)" ] \
    || fail "$k differs: straight $(field "$tmp/straight.json" $k), resumed $(field "$tmp/resumed.json" $k)"
done
for k in model epochs test_accuracy test_loss images_per_second wall_seconds; do
  field "$tmp/straight.json" $k >/dev/null || fail "summary lacks $k"
done
acc="$(field "$tmp/straight.json" test_accuracy)"
python3 -c "import sys; sys.exit(0 if float('$acc') > 0.5 else 1)" || fail "mlp did not learn: accuracy $acc"

expect 0 "at step 16: test_loss" -- "$zoo" evaluate mlp --data synthetic --checkpoint "$tmp/ckpt/ckpt-16.weft"
expect 0 '"images_per_second"' -- "$zoo" bench mnist_cnn --batch-size 16 --threads 1 --warmup 1 --seconds 0.3 --json
expect 2 "bucket-bytes needs an integer >= -1, got '-5'" -- "$zoo" bench mlp --bucket-bytes -5

# gpt_small on Debian's fortunes: per-character loss and a sample; generate from the checkpoint;
# mirrored over 2 devices; usage errors.
if [ -d /usr/share/games/fortunes ]; then
  expect 0 "per-character loss: train .* nats" -- "$zoo" train gpt_small --batch-size 4 --steps-per-epoch 3 \
    --threads 1 --optimizer adam --checkpoint-dir "$tmp/gpt" --quiet
  expect 0 "^Once upon" -- "$zoo" generate gpt_small --checkpoint "$tmp/gpt/ckpt-3.weft" --prompt "Once upon" --length 20
else
  echo "no /usr/share/games/fortunes (Debian's fortunes): skipping gpt_small on fortunes"
fi
expect 0 "Total params: 834,657" -- "$zoo" describe gpt_small
expect 0 "MirroredStrategy over 2 replicas" -- "$zoo" train gpt_small --data synthetic --batch-size 4 \
  --steps-per-epoch 2 --threads 2 --devices 2
expect 0 '"images_per_second"' -- "$zoo" bench gpt_small --batch-size 2 --threads 1 --warmup 1 --seconds 0.3 --json
expect 2 "generate needs a text model" -- "$zoo" generate mlp --checkpoint x
expect 2 "--data for gpt_small must be fortunes or synthetic" -- "$zoo" train gpt_small --data fashion-mnist

# Distribution: mirrored over 2 CPU devices trains; the partitioned graph and a step trace.
expect 0 "MirroredStrategy over 2 replicas" -- "$zoo" train mlp --data synthetic --batch-size 64 --steps-per-epoch 12 \
  --threads 2 --devices 2 --trace "$tmp/trace.json"
python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; \
  assert any(x.get('cat') == 'CollectiveReduce' for x in e), 'no collective in the trace'" "$tmp/trace.json" \
  || fail "trace lacks the all-reduce"
expect 0 "on 2 device(s), 10 Send/Recv pair(s)" -- "$zoo" graph mnist_cnn --devices 2 --partitioned -o "$tmp/g.dot"
grep -q "cluster_1" "$tmp/g.dot" || fail "no second device cluster in the DOT"
expect 2 "needs a strategy" -- "$zoo" train mlp --devices 2 --strategy none

# A corrupted checkpoint is reported, naming the file; so is a missing one.
cp "$tmp/ckpt/ckpt-16.weft" "$tmp/bad.weft"
printf '\xff' | dd of="$tmp/bad.weft" bs=1 seek=200 conv=notrunc status=none
expect 1 "DataLoss.*bad.weft" -- "$zoo" evaluate mlp --data synthetic --checkpoint "$tmp/bad.weft"
expect 1 "nothere.weft" -- "$zoo" evaluate mlp --data synthetic --checkpoint "$tmp/nothere.weft"
# Not a regular file (issue 17, finding 7): refused before the open, which blocks on a FIFO with
# no writer. `timeout` turns a hang into a failure. A directory and a character device too.
mkdir -p "$tmp/fifo"
mkfifo "$tmp/fifo/ckpt-10.weft"
expect 1 "ckpt-10.weft': is a FIFO (named pipe), not a regular file" -- \
  timeout 20 "$zoo" evaluate mlp --data synthetic --checkpoint "$tmp/fifo/ckpt-10.weft"
expect 1 "is a FIFO (named pipe)" -- \
  timeout 20 "$zoo" train mlp "${common[@]}" --epochs 1 --checkpoint-dir "$tmp/fifo" --resume
expect 1 "is a directory, not a regular file" -- "$zoo" evaluate mlp --data synthetic --checkpoint "$tmp/ckpt"
expect 1 "is a character device, not a regular file" -- \
  timeout 20 "$zoo" evaluate mlp --data synthetic --checkpoint /dev/zero

# Across processes (when built with UCX): 2 workers under launch train like one process at the
# same global batch; only the chief writes checkpoints and the summary.
if "$zoo" train mlp --strategy multi_worker --quiet 2>&1 | grep -q "needs UCX"; then
  echo "weft-zoo built without UCX: skipping --strategy multi_worker"
else
  mw=(--data synthetic --batch-size 128 --steps-per-epoch 10 --threads 1 --quiet --optimizer sgd)
  "$zoo" train mlp "${mw[@]}" --summary "$tmp/one.json" >/dev/null
  expect 0 "worker:1.*test_loss" -- "$zoo" launch -n 2 -- "$zoo" train mlp "${mw[@]}" --strategy multi_worker \
    --checkpoint-dir "$tmp/mw" --summary "$tmp/mw.json"
  [ "$(field "$tmp/one.json" train_loss)" = "$(field "$tmp/mw.json" train_loss)" ] \
    || fail "2 workers' train_loss $(field "$tmp/mw.json" train_loss) != one process's $(field "$tmp/one.json" train_loss)"
  [ "$(ls "$tmp/mw" | wc -l)" = 1 ] || fail "expected one checkpoint (the chief's) in $tmp/mw: $(ls "$tmp/mw")"
  # lstm_text (Embedding + LSTM on the fortunes set) across two workers, as the image models.
  expect 0 "worker:1.*test_loss" -- "$zoo" launch -n 2 -- "$zoo" train lstm_text --batch-size 32 --steps-per-epoch 4 \
    --threads 1 --quiet --strategy multi_worker
  expect 1 "MultiWorkerMirroredStrategy: the cluster has a 'ps' job" -- \
    env TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:1"], "ps": ["127.0.0.1:2"]}, "task": {"type": "worker", "index": 0}}' \
    "$zoo" train mlp --data synthetic --strategy multi_worker --quiet
fi

# Usage errors exit 2 and say what was wrong; unknown models list the known ones.
expect 2 "unknown command 'fly'" -- "$zoo" fly
# --device gpu trains where a GPU exists; without one it fails with CUDA's reason (docs/cuda.md).
status=0
out="$("$zoo" train mlp "${common[@]}" --epochs 1 --device gpu 2>&1)" || status=$?
case "$status" in
  0) ;;
  1) grep -q "no GPU device: " <<<"$out" || fail "--device gpu without a GPU should say why: $out" ;;
  *) fail "--device gpu exited $status: $out" ;;
esac
# Pipeline parallelism (docs/pipeline.md): 2 stages, 4 micro-batches of 12; bad input names what was wrong.
expect 0 "PipelineStrategy: 2 stages x 4 micro-batches of 12 (1f1b), ideal bubble fraction 0.200" -- \
  "$zoo" train mlp --data synthetic --batch-size 48 --steps-per-epoch 3 --threads 1 --strategy pipeline --devices 2 \
  --micro-batches 4 --schedule 1f1b
expect 1 "4 micro-batches do not divide the batch of 50 examples" -- \
  "$zoo" train mlp "${common[@]}" --strategy pipeline --devices 2 --micro-batches 4
expect 1 "stage boundary 'dense_9' is not a layer of model 'mlp'" -- \
  "$zoo" train mlp "${common[@]}" --strategy pipeline --devices 2 --boundaries dense_9
expect 2 "need --strategy pipeline" -- "$zoo" train mlp "${common[@]}" --micro-batches 4
# Stages x replicas, balanced by measured layer costs; the measured bubble beside the ideal one.
expect 0 "PipelineStrategy: 2 stages x 2 replicas x 2 micro-batches of 12 (gpipe)" -- \
  "$zoo" train mlp --data synthetic --batch-size 48 --steps-per-epoch 3 --threads 1 --strategy pipeline --devices 2 \
  --micro-batches 2 --replicas 2
expect 0 "measured layer costs (us of kernels in one step on one device): flatten [0-9]*, dense [0-9]*, dense_1" -- \
  "$zoo" train mlp --data synthetic --batch-size 48 --steps-per-epoch 3 --threads 1 --strategy pipeline --devices 2 \
  --balance measured
expect 0 "pipeline bubble: measured 0\.[0-9]* (stage 0: 0\.[0-9]*, stage 1: 0\.[0-9]*) in step 3; ideal 0.200" -- \
  "$zoo" train mlp --data synthetic --batch-size 48 --steps-per-epoch 3 --threads 1 --strategy pipeline --devices 2
expect 1 "2 replicas x 4 micro-batches do not divide the batch of 50 examples" -- \
  "$zoo" train mlp "${common[@]}" --strategy pipeline --devices 2 --micro-batches 4 --replicas 2
expect 2 "--balance must be parameters or measured, got 'flops'" -- \
  "$zoo" train mlp "${common[@]}" --strategy pipeline --devices 2 --balance flops
# A memory budget smaller than mlp's 784x512 kernel (1.6 MB); gradient accumulation trains.
expect 1 "device:CPU:0 is over its memory limit of 1000000 bytes" -- \
  "$zoo" train mlp "${common[@]}" --device-memory-limit 1000000
expect 0 "test_loss" -- "$zoo" train mlp --data synthetic --batch-size 25 --steps-per-epoch 4 --threads 1 \
  --gradient-accumulation-steps 2
# Sharded optimizer state (docs/distributed.md): 2 replicas, stage 2, the state per replica printed.
expect 0 "optimizer state: 2.555 MiB per replica (zero stage 2: the slots of 1/2" -- \
  "$zoo" train mlp "${common[@]}" --devices 2 --optimizer adam --zero 2
expect 1 "shard_optimizer_state must be 0 (off), 1 (shard the optimizer slots) or 2" -- \
  "$zoo" train mlp "${common[@]}" --devices 2 --zero 3
expect 2 "--zero needs --strategy mirrored or multi_worker" -- "$zoo" train mlp "${common[@]}" --zero 1
expect 2 "--device must be auto, cpu or gpu" -- "$zoo" train mlp "${common[@]}" --device tpu
expect 2 "unknown option '--epoch'" -- "$zoo" train mlp --epoch 3
expect 2 "--epochs needs an integer >= 1" -- "$zoo" train mlp --epochs zero
expect 2 "--resume needs --checkpoint-dir" -- "$zoo" train mlp --resume
expect 2 "--data must be" -- "$zoo" train mlp --data cifar
expect 2 "--dump-trace needs --strategy multi_worker or parameter_server" -- "$zoo" train mlp --dump-trace t.json
expect 2 "--trace-events needs --strategy multi_worker" -- "$zoo" train mlp --strategy mirrored --trace-events 8
expect 2 "usage: weft-zoo trace merge DIR -o FILE" -- "$zoo" trace merge
expect 1 "trace merge: '/nowhere' is not a directory" -- "$zoo" trace merge /nowhere -o all.json
expect 1 "unknown model 'alexnet' (known: mlp, mnist_cnn" -- "$zoo" describe alexnet
expect 1 "in '/nowhere'" -- "$zoo" train mlp --data mnist:/nowhere --quiet
echo "weft-zoo CLI: all checks passed"
