"""One Keras recurrent model trained under weft (`import weft as tf`) and under TensorFlow 2.21,
interleaved: sequences/s of train_on_batch, and the ratio weft / TF.

    python3 bench/rnn_keras.py --rounds 5 [--cells lstm,gru] [--batch 64] [--steps 64] [--threads 2]
    .venv/bin/python bench/rnn_keras.py --framework weft --cell lstm --json     # one measurement

Model (the same Keras code for both): Input (steps, 32 features) -> LSTM / GRU / SimpleRNN(128)
-> Dense(10), sparse softmax cross-entropy on the logits, SGD lr 0.01 momentum 0.9, fixed random
batch. weft runs each recurrent layer as one fused sequence op (docs/ops.md); TF 2.21 on the CPU
runs Keras 3's while_loop over the cell (no cuDNN). Method: --warmup seconds of steps, then
--windows windows of --window seconds; a run's figure is the median window. The driver runs the
two frameworks as fresh processes one after the other, alternating which goes first every round
(this machine's speed drifts), and prints the medians over the rounds and their ratio.
weft comes from the repo's .venv, TensorFlow from bench/.venv (setup_peers.sh).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PYTHONS = {"weft": os.path.join(ROOT, ".venv", "bin", "python"), "tf": os.path.join(HERE, ".venv", "bin", "python")}


def measure(args):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    if args.framework == "weft":
        import weft as tf
    else:
        import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    keras = tf.keras
    rnn = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "simple_rnn": keras.layers.SimpleRNN}[args.cell]
    model = keras.Sequential([keras.Input(shape=(args.steps, 32)), rnn(args.units), keras.layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.SGD(0.01, momentum=0.9),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(1)
    x = rng.normal(size=(args.batch, args.steps, 32)).astype(np.float32)
    y = rng.integers(0, 10, size=(args.batch,)).astype(np.int32)

    def timed(seconds):
        n, t0 = 0, time.perf_counter()
        while True:
            model.train_on_batch(x, y)
            n += 1
            t = time.perf_counter() - t0
            if t >= seconds:
                return n * args.batch / t

    timed(args.warmup)
    rate = statistics.median(timed(args.window) for _ in range(args.windows))
    print(json.dumps({"framework": args.framework, "cell": args.cell, "batch": args.batch, "steps": args.steps,
                      "threads": args.threads, "sequences_per_second": rate}))


def drive(args):
    rows = []
    for cell in args.cells.split(","):
        rates = {"weft": [], "tf": []}
        for r in range(args.rounds):
            order = ["weft", "tf"] if r % 2 == 0 else ["tf", "weft"]
            for fw in order:
                cmd = [args.tf_python if fw == "tf" else PYTHONS[fw], os.path.abspath(__file__), "--framework", fw, "--cell", cell,
                       "--batch", str(args.batch), "--steps", str(args.steps), "--units", str(args.units),
                       "--threads", str(args.threads), "--warmup", str(args.warmup), "--windows",
                       str(args.windows), "--window", str(args.window)]
                out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()[-1]
                rates[fw].append(json.loads(out)["sequences_per_second"])
        w, t = statistics.median(rates["weft"]), statistics.median(rates["tf"])
        rows.append((cell, w, t))
        print(f"{cell:10s} batch {args.batch} steps {args.steps} units {args.units} threads {args.threads}: "
              f"weft {w:8.0f} seq/s  TF 2.21 {t:8.0f} seq/s  weft/TF {w / t:5.2f}x  (medians of {args.rounds})")
        sys.stdout.flush()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--framework", choices=["weft", "tf"], help="measure one framework (else: drive both)")
    p.add_argument("--cell", default="lstm", choices=["lstm", "gru", "simple_rnn"])
    p.add_argument("--cells", default="lstm,gru")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--tf-python", default=PYTHONS["tf"], help="the Python with tensorflow-cpu 2.21")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--units", type=int, default=128)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=float, default=2.0)
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--window", type=float, default=1.0)
    args = p.parse_args()
    if args.framework:
        measure(args)
    else:
        drive(args)


if __name__ == "__main__":
    main()
