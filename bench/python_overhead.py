"""Python overhead, measured (not part of the tests):

1. Session.run of a trivial graph (y = x + 1 on a fed float32 scalar) from Python, against the same
   run from C++ (build/bench/bench_session_overhead): microseconds per run and the difference.
2. One training epoch of the talks' CNN (mnist_cnn) on Fashion-MNIST from Python (weft.keras fit),
   against `weft-zoo train mnist_cnn --epochs 1` with the same settings (batch 64, SGD momentum 0.9,
   lr 0.05, seed 1, same threads): training images/s, interleaved run by run, median ratio.

    .venv/bin/python bench/python_overhead.py [--build-dir build] [--threads 2] [--repeats 3] [--skip-fit]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import weft
from weft import keras
from weft.keras import layers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def session_run_us(runs):
    g = weft.Graph()
    with g.as_default():
        x = weft.placeholder(weft.float32, shape=(), name="x")
        y = weft.add(x, 1.0, name="y")
    sess = weft.Session(g, inter_op_threads=1, intra_op_threads=1)
    v = np.float32(1.0)
    for _ in range(1000):
        sess.run(y, feed_dict={x: v})
    start = time.perf_counter()
    for _ in range(runs):
        sess.run(y, feed_dict={x: v})
    return (time.perf_counter() - start) / runs * 1e6


def python_fit_ips(x, y, threads, seed=1):
    model = keras.Sequential([
        layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)), layers.MaxPooling2D(), layers.Flatten(),
        layers.Dense(64, activation="relu"), layers.Dense(10)])
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.05, momentum=0.9), metrics=["accuracy"], seed=seed,
                  inter_op_threads=threads, intra_op_threads=threads)
    start = time.perf_counter()
    model.fit(x, y, batch_size=64, epochs=1, shuffle_seed=seed, verbose=0)
    return len(x) / (time.perf_counter() - start)


def zoo_fit_ips(zoo, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([zoo, "train", "mnist_cnn", "--epochs", "1", "--batch-size", "64", "--optimizer", "momentum",
                        "--lr", "0.05", "--seed", "1", "--threads", str(threads), "--quiet", "--summary", f.name],
                       check=True, stdout=subprocess.DEVNULL)
        return json.load(open(f.name))["images_per_second"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--skip-fit", action="store_true")
    args = ap.parse_args()

    cpp = subprocess.run([os.path.join(args.build_dir, "bench", "bench_session_overhead"), str(args.runs)],
                         check=True, capture_output=True, text=True)
    cpp_us = [json.loads(cpp.stdout)["us_per_run"]]
    py_us = [session_run_us(args.runs)]
    for _ in range(2):  # interleaved
        cpp_us.append(json.loads(subprocess.run([os.path.join(args.build_dir, "bench", "bench_session_overhead"),
                                                 str(args.runs)], check=True, capture_output=True,
                                                text=True).stdout)["us_per_run"])
        py_us.append(session_run_us(args.runs))
    c, p = statistics.median(cpp_us), statistics.median(py_us)
    print("Session.run, trivial graph: C++ %.1f us/run, Python %.1f us/run (+%.1f us, x%.2f)" % (c, p, p - c, p / c))

    if args.skip_fit:
        return 0
    (x, y), _ = keras.datasets.fashion_mnist.load_data()
    x = x.reshape(-1, 28, 28, 1) / np.float32(255)  # float32, as weft-zoo's loader gives
    zoo = os.path.join(args.build_dir, "zoo", "weft-zoo")
    ratios = []
    for i in range(args.repeats):
        if i % 2 == 0:  # alternate which one goes first
            z = zoo_fit_ips(zoo, args.threads)
            py = python_fit_ips(x, y, args.threads)
        else:
            py = python_fit_ips(x, y, args.threads)
            z = zoo_fit_ips(zoo, args.threads)
        ratios.append(py / z)
        print("fit epoch %d: weft-zoo %.0f img/s, Python %.0f img/s, Python/C++ %.3f" % (i + 1, z, py, py / z))
        sys.stdout.flush()
    r = statistics.median(ratios)
    print("fit, mnist_cnn on Fashion-MNIST, batch 64, %d threads: median Python/C++ throughput %.3f (%s)" %
          (args.threads, r, "within 5%" if r >= 0.95 else "MORE than 5% slower"))
    return 0 if r >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
