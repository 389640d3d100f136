"""keras.io's "Writing a training loop from scratch" step (a functional MLP 784-64-64-10, SGD,
sparse softmax cross-entropy from logits, an accuracy metric, float(loss) every step) run eagerly
(no @tf.function) and as a tf.function step, in weft and in TensorFlow, fresh processes, rounds
interleaved; prints the median steps/s of each and the ratios.

    python3 bench/eager_loop.py --rounds 3 [--steps 300] [--batch 64] [--threads 2] [--tf-python PATH]

weft runs with .venv/bin/python, TensorFlow with bench/.venv/bin/python (bench/setup_peers.sh).
The data are random arrays made in each child from one seed (the step's cost does not depend on
their values)."""
import argparse
import os
import statistics
import tempfile

import interleaved

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import sys, time
import numpy as np
fw, mode, steps, batch, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if fw == "tf":
    import tensorflow as tf
else:
    import weft as tf
tf.config.threading.set_inter_op_parallelism_threads(threads)
tf.config.threading.set_intra_op_parallelism_threads(threads)
keras = tf.keras
rng = np.random.default_rng(0)
x = rng.normal(size=(batch * 20, 784)).astype(np.float32)
y = rng.integers(0, 10, batch * 20).astype(np.int64)
inputs = keras.Input(shape=(784,))
h = keras.layers.Dense(64, activation="relu")(inputs)
h = keras.layers.Dense(64, activation="relu")(h)
model = keras.Model(inputs, keras.layers.Dense(10)(h))
optimizer = keras.optimizers.SGD(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
acc = keras.metrics.SparseCategoricalAccuracy()

def train_step(xb, yb):
    with tf.GradientTape() as tape:
        logits = model(xb, training=True)
        loss_value = loss_fn(yb, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    acc.update_state(yb, logits)
    return loss_value

step = tf.function(train_step) if mode == "function" else train_step
batches = [(x[i:i + batch], y[i:i + batch]) for i in range(0, len(x), batch)]
for b in batches[:10]:
    float(step(*b))  # warm up (and trace)
t = time.perf_counter()
for k in range(steps):
    float(step(*batches[k % len(batches)]))
print("STEPS_PER_S %.3f" % (steps / (time.perf_counter() - t)))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tf-python", default=os.path.join(HERE, ".venv", "bin", "python"))
    a = ap.parse_args()
    weft, tf = os.path.join(ROOT, ".venv", "bin", "python"), a.tf_python
    pythons = {"weft eager": weft, "weft function": weft, "tf eager": tf, "tf function": tf}
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        got = interleaved.rounds(pythons, lambda name: [child] + name.split() + [str(a.steps), str(a.batch),
                                                                              str(a.threads)], a.rounds)
    med = {k: statistics.median(v) for k, v in got.items()}
    print("eager loop, batch %d, %d threads (steps/s, medians):" % (a.batch, a.threads))
    for k, v in med.items():
        print("  %-14s %8.1f" % (k, v))
    print("  weft eager / weft function %.2f, weft eager / tf eager %.2f, tf eager / tf function %.2f" % (
        med["weft eager"] / med["weft function"], med["weft eager"] / med["tf eager"],
        med["tf eager"] / med["tf function"]))


if __name__ == "__main__":
    main()
