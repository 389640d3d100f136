"""A map-heavy input pipeline, weft.data against tf.data on the same machine (not part of the tests).

The pipeline is the usual image one, written once for both (`import weft as tf` or `import
tensorflow as tf`): Fashion-MNIST's 60,000 uint8 images and labels sliced, shuffled (buffer
10,000), mapped by a Python function with `num_parallel_calls=AUTOTUNE`, batched by 64 and
prefetched; one epoch is read to the end in Python. Two map functions:

- `elementwise`: cast to float32, scale to [-1, 1], add a channel dim, one-hot the label (weft runs
  it once per batch: map-then-batch vectorization, docs/python.md);
- `standardize`: subtract each image's mean (a reduction over the element), reshape to
  [28, 28, 1], one-hot the label (weft runs it per element, as tf.data does).

Each measurement is a fresh process; weft and TensorFlow alternate, run by run, and the ratio of
the median throughputs is printed (goal >= 1.0). TensorFlow runs in the peers' venv
(bench/setup_peers.sh; default /work/peers-venv/bin/python or $PEERS_PYTHON), never in CI.

    .venv/bin/python bench/data_pipeline.py [--repeats 5] [--peer-python PATH]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PIPELINE = r"""
import gzip, json, os, sys, time
import numpy as np
framework, fn_name = sys.argv[1], sys.argv[2]
if framework == "weft":
    import weft as tf
else:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

def idx(path):
    with gzip.open(path) as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)

d = "/usr/share/datasets/fashion-mnist"
x, y = idx(d + "/train-images-idx3-ubyte.gz"), idx(d + "/train-labels-idx1-ubyte.gz")

def elementwise(image, label):
    image = tf.cast(image, tf.float32) / 127.5 - 1.0
    return tf.expand_dims(image, -1), tf.one_hot(label, 10)

def standardize(image, label):
    image = tf.cast(image, tf.float32)
    image = (image - tf.reduce_mean(image)) / 64.0
    return tf.reshape(image, [28, 28, 1]), tf.one_hot(label, 10)

fn = {"elementwise": elementwise, "standardize": standardize}[fn_name]
ds = (tf.data.Dataset.from_tensor_slices((x, y)).shuffle(10000, seed=1)
      .map(fn, num_parallel_calls=tf.data.AUTOTUNE).batch(64).prefetch(tf.data.AUTOTUNE))
for _ in ds.take(2):  # warm up: traced functions, threads
    pass
start = time.perf_counter()
n = 0
for images, labels in ds:
    n += images.shape[0]
print(json.dumps({"elements_per_second": n / (time.perf_counter() - start), "elements": n}))
"""


def run(python, framework, fn):
    env = dict(os.environ)
    if framework == "weft":
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), os.path.join(ROOT, "build", "python"),
                                             env.get("PYTHONPATH", "")])
    out = subprocess.run([python, "-c", PIPELINE, framework, fn], check=True, capture_output=True, text=True,
                         env=env).stdout
    return json.loads(out.strip().splitlines()[-1])["elements_per_second"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peer-python", default=os.environ.get("PEERS_PYTHON", "/work/peers-venv/bin/python"))
    args = ap.parse_args()
    if not os.path.exists(args.peer_python):
        print("no TensorFlow venv at %s (bench/setup_peers.sh makes one)" % args.peer_python)
        return 2
    worst = None
    for fn in ("elementwise", "standardize"):
        w, t = [], []
        for i in range(args.repeats):
            order = [("weft", sys.executable, w), ("tensorflow", args.peer_python, t)]
            for framework, python, out in (order if i % 2 == 0 else order[::-1]):
                out.append(run(python, framework, fn))
            print("%s run %d: weft %.0f, tf.data %.0f elements/s" % (fn, i + 1, w[-1], t[-1]))
            sys.stdout.flush()
        ratio = statistics.median(w) / statistics.median(t)
        worst = ratio if worst is None else min(worst, ratio)
        print("%s map: median weft %.0f, tf.data %.0f elements/s: weft / tf.data %.2f (goal >= 1.0)" %
              (fn, statistics.median(w), statistics.median(t), ratio))
    return 0 if worst >= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
