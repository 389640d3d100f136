"""TensorFlow 2's custom training loop (the "advanced" quickstart: a subclassed CNN, a tf.function
step with tf.GradientTape and Adam's apply_gradients, two Keras metrics) timed in weft and in
TensorFlow on the same Fashion-MNIST arrays, in fresh processes, rounds interleaved; prints the
median steps/s of each and the ratio.

    python3 bench/custom_loop.py --rounds 3 [--steps 150] [--batch 32] [--threads 2]

weft runs with .venv/bin/python, TensorFlow with bench/.venv/bin/python (bench/setup_peers.sh).
Each process loads its arrays from an .npz this script writes once (TF's loader would download)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import os, sys, time
import numpy as np
fw, data, steps, batch, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if fw == "tf":
    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    tf.config.threading.set_intra_op_parallelism_threads(threads)
else:
    import weft as tf
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    tf.config.threading.set_intra_op_parallelism_threads(threads)
d = np.load(data)
x, y = d["x"], d["y"]
class MyModel(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.conv1 = tf.keras.layers.Conv2D(32, 3, activation="relu")
        self.flatten = tf.keras.layers.Flatten()
        self.d1 = tf.keras.layers.Dense(128, activation="relu")
        self.d2 = tf.keras.layers.Dense(10)
    def call(self, x):
        return self.d2(self.d1(self.flatten(self.conv1(x))))
model = MyModel()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(labels, predictions)
batches = [(x[i:i + batch], y[i:i + batch]) for i in range(0, len(x) - batch + 1, batch)]
for b in batches[:10]:
    train_step(*b)  # trace and warm up
float(train_loss.result())
t = time.perf_counter()
for k in range(steps):
    train_step(*batches[k % len(batches)])
float(train_loss.result())
print("STEPS_PER_S %.3f" % (steps / (time.perf_counter() - t)))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    pythons = {"weft": os.path.join(ROOT, ".venv", "bin", "python"), "tf": os.path.join(HERE, ".venv", "bin", "python")}
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "fmnist.npz")
        subprocess.run([pythons["weft"], "-c", "import numpy as np, weft; (x, y), _ = weft.keras.datasets.fashion_mnist."
                        "load_data(); np.savez(%r, x=(x[:6000, ..., None] / 255.0).astype('float32'), y=y[:6000])" % data],
                       check=True, capture_output=True)
        child = os.path.join(tmp, "child.py")
        with open(child, "w") as f:
            f.write(CHILD)
        got = {"weft": [], "tf": []}
        for r in range(a.rounds):
            order = ["weft", "tf"] if r % 2 == 0 else ["tf", "weft"]
            for fw in order:
                out = subprocess.run([pythons[fw], child, fw, data, str(a.steps), str(a.batch), str(a.threads)],
                                     capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
                line = [ln for ln in out.stdout.splitlines() if ln.startswith("STEPS_PER_S")]
                if not line:
                    sys.exit("%s failed:\n%s" % (fw, out.stdout + out.stderr))
                got[fw].append(float(line[0].split()[1]))
                print("round %d %-4s %8.1f steps/s" % (r + 1, fw, got[fw][-1]), flush=True)
        w, t = statistics.median(got["weft"]), statistics.median(got["tf"])
        print("custom loop, batch %d, %d threads: weft %.1f steps/s, TF %.1f steps/s, weft/TF %.2f"
              % (a.batch, a.threads, w, t, w / t))


if __name__ == "__main__":
    main()
