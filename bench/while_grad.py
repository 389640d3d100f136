"""The gradient of a tf.while_loop RNN, h <- tanh(h W + b) over --steps steps of a [batch, units]
state, loss = sum(h): one step computes the loss and dloss/dW, dloss/db. weft (`import weft as tf`,
a graph and a Session: the backward loop over stacks, docs/control-flow.md) against TensorFlow 2.21
(the same loop in a tf.function with a GradientTape: its control flow v2), interleaved.

    python3 bench/while_grad.py --rounds 5 [--batch 32] [--units 128] [--steps 64] [--threads 2]
    .venv/bin/python bench/while_grad.py --framework weft --json      # one measurement

Method: --warmup seconds of steps, then --windows windows of --window seconds; a run's figure is
the median window (steps/s). The driver starts the two frameworks as fresh processes, alternating
which goes first every round (this machine's speed drifts), and prints the medians over the rounds
and the ratio weft / TF. weft comes from the repo's .venv, TensorFlow from bench/.venv.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INTERPRETERS = {"weft": os.path.join(os.path.dirname(HERE), ".venv", "bin", "python"),
                "tf": os.path.join(HERE, ".venv", "bin", "python")}


def one_run(a):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    rng = np.random.default_rng(3)
    h0 = rng.normal(size=(a.batch, a.units)).astype(np.float32)
    w0 = (rng.normal(size=(a.units, a.units)) / np.sqrt(a.units)).astype(np.float32)
    if a.framework == "weft":
        import weft as tf
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
        tf.config.threading.set_inter_op_parallelism_threads(a.threads)
        w, b = tf.Variable(w0), tf.Variable(np.zeros(a.units, np.float32))
        h_in = tf.placeholder(tf.float32, [a.batch, a.units])
        _, h = tf.while_loop(lambda i, h: i < a.steps, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + b)), (0, h_in))
        loss = tf.reduce_sum(h)
        fetch = [loss] + tf.gradients(loss, [w, b])
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())

        def step():
            return sess.run(fetch, {h_in: h0})
    else:
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
        tf.config.threading.set_inter_op_parallelism_threads(a.threads)
        w, b = tf.Variable(w0), tf.Variable(np.zeros(a.units, np.float32))

        @tf.function
        def step_fn(h_in):
            with tf.GradientTape() as tape:
                _, h = tf.while_loop(lambda i, h: i < a.steps, lambda i, h: (i + 1, tf.tanh(tf.matmul(h, w) + b)),
                                     (0, h_in))
                loss = tf.reduce_sum(h)
            return [loss] + tape.gradient(loss, [w, b])

        def step():
            return [t.numpy() for t in step_fn(tf.constant(h0))]

    def rate(seconds):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds or n == 0:
            step()
            n += 1
        return n / (time.perf_counter() - t0)

    loss = float(step()[0])
    rate(a.warmup)
    print(json.dumps({"framework": a.framework, "steps_per_second": statistics.median(rate(a.window)
                                                                                       for _ in range(a.windows)),
                      "loss": loss}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--framework", choices=sorted(INTERPRETERS))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--units", type=int, default=128)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--json", action="store_true")
    p.add_argument("--tf-python", default=INTERPRETERS["tf"], help="bench/.venv's python (another checkout's)")
    a = p.parse_args()
    INTERPRETERS["tf"] = a.tf_python
    if a.framework:
        return one_run(a)
    passed = [f"--{k}={v}" for k, v in vars(a).items() if k not in ("framework", "rounds", "json", "tf_python")]
    got = {f: [] for f in INTERPRETERS}
    for r in range(a.rounds):
        for f in (["weft", "tf"] if r % 2 == 0 else ["tf", "weft"]):
            out = subprocess.run([INTERPRETERS[f], __file__, "--framework", f] + passed, check=True,
                                 capture_output=True, text=True).stdout
            got[f].append(json.loads(out.strip().splitlines()[-1]))
    med = {f: statistics.median(x["steps_per_second"] for x in runs) for f, runs in got.items()}
    print(f"while_loop RNN gradient, batch {a.batch}, units {a.units}, {a.steps} steps, {a.threads} threads, "
          f"{a.rounds} rounds: weft {med['weft']:.1f} steps/s, TF 2.21 {med['tf']:.1f} steps/s, "
          f"weft / TF = {med['weft'] / med['tf']:.2f} (losses {got['weft'][0]['loss']:.4f} / {got['tf'][0]['loss']:.4f})")


if __name__ == "__main__":
    sys.exit(main())
