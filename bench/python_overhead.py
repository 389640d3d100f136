"""Python overhead, measured (not part of the tests):

1. Session.run of a trivial graph (y = x + 1 on a fed float32 scalar) from Python, against the same
   run from C++ (build/bench/bench_session_overhead): microseconds per run and the difference.
2. One training epoch of the talks' CNN (mnist_cnn) on Fashion-MNIST from Python (weft.keras fit),
   against `weft-zoo train mnist_cnn --epochs 1` with the same settings (batch 64, SGD momentum 0.9,
   lr 0.05, seed 1, same threads): training images/s, interleaved run by run, median ratio.

3. With --dataset: the same Python fit fed by a weft.data pipeline against fed by arrays (above).

    .venv/bin/python bench/python_overhead.py [--build-dir build] [--threads 2] [--repeats 3] [--skip-fit]
    .venv/bin/python bench/python_overhead.py --dataset [--steps 300] [--repeats 5]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import weft

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


# Run in a fresh interpreter per measurement, as weft-zoo runs in a fresh process: neither side
# gets warm allocator caches from the previous run.
FIT_SCRIPT = r"""
import json, sys, time
import numpy as np
from weft import keras
from weft.keras import layers
threads, steps = int(sys.argv[1]), (None if sys.argv[2] == "all" else int(sys.argv[2]))
feed = sys.argv[3] if len(sys.argv) > 3 else "arrays"  # arrays | dataset | dataset_map (part 3)
(x, y), _ = keras.datasets.fashion_mnist.load_data()
raw = x.reshape(-1, 28, 28, 1)
x = raw / np.float32(255)  # float32, as weft-zoo's loader gives
model = keras.Sequential([
    layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)), layers.MaxPooling2D(), layers.Flatten(),
    layers.Dense(64, activation="relu"), layers.Dense(10)])
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.SGD(0.05, momentum=0.9), metrics=["accuracy"], seed=1,
              inter_op_threads=threads, intra_op_threads=threads)
start, cpu = time.perf_counter(), time.process_time()
if feed == "arrays":
    model.fit(x, y, batch_size=64, epochs=1, shuffle_seed=1, verbose=0, steps_per_epoch=steps)
else:
    import weft as tf
    ds = tf.data.Dataset.from_tensor_slices((x, y) if feed == "dataset" else (raw, y)).shuffle(len(x), seed=1)
    if feed == "dataset_map":
        ds = ds.map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, b), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(64).prefetch(tf.data.AUTOTUNE)
    model.fit(ds, epochs=1, verbose=0, steps_per_epoch=steps)
images = len(x) if steps is None else min(len(x), steps * 64)
print(json.dumps({"images_per_second": images / (time.perf_counter() - start),
                  "cpu_seconds": time.process_time() - cpu}))
"""


def python_fit_ips(threads, steps, feed="arrays"):
    """(training images/s, CPU seconds of the training) of one Python fit."""
    out = subprocess.run([sys.executable, "-c", FIT_SCRIPT, str(threads), "all" if steps is None else str(steps), feed],
                         check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["images_per_second"], r["cpu_seconds"]


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def zoo_fit_ips(zoo, threads, steps):
    """(training images/s, CPU seconds of the whole weft-zoo process) of one weft-zoo train."""
    cpu = children_cpu()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        extra = [] if steps is None else ["--steps-per-epoch", str(steps)]
        subprocess.run([zoo, "train", "mnist_cnn", "--epochs", "1", "--batch-size", "64", "--optimizer", "momentum",
                        "--lr", "0.05", "--seed", "1", "--threads", str(threads), "--quiet", "--summary", f.name] + extra,
                       check=True, stdout=subprocess.DEVNULL)
        return json.load(open(f.name))["images_per_second"], children_cpu() - cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=None,
                    help="steps per measured run (default: the full epoch of 938 steps); shorter runs, more "
                         "repeats: steadier medians on a loaded machine")
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--skip-fit", action="store_true")
    ap.add_argument("--dataset", action="store_true",
                    help="only part 3: fit from a weft.data pipeline against fit from arrays")
    args = ap.parse_args()
    if args.dataset:
        return dataset_fit(args)

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
    zoo = os.path.join(args.build_dir, "zoo", "weft-zoo")
    # CPU time is steadier than wall time when other processes share the cores. weft-zoo's CPU time
    # includes loading the data and the test evaluation: a 1-step run measures that part.
    z_base = statistics.median(zoo_fit_ips(zoo, args.threads, 1)[1] for _ in range(3))
    ratios, cpu_ratios = [], []
    for i in range(args.repeats):
        if i % 2 == 0:  # alternate which one goes first
            (z, zc), (py, pc) = zoo_fit_ips(zoo, args.threads, args.steps), python_fit_ips(args.threads, args.steps)
        else:
            (py, pc), (z, zc) = python_fit_ips(args.threads, args.steps), zoo_fit_ips(zoo, args.threads, args.steps)
        zc -= z_base
        ratios.append(py / z)
        cpu_ratios.append(zc / pc)
        print("fit run %d: weft-zoo %.0f img/s (%.1f CPU-s), Python %.0f img/s (%.1f CPU-s), Python/C++ %.3f "
              "(CPU time %.3f)" % (i + 1, z, zc, py, pc, py / z, zc / pc))
        sys.stdout.flush()
    r, rc = statistics.median(ratios), statistics.median(cpu_ratios)
    print("fit, mnist_cnn on Fashion-MNIST, batch 64, %d threads, %s: median Python/C++ throughput %.3f by wall "
          "time, %.3f by CPU time (%s)" % (args.threads, "%d steps" % args.steps if args.steps else "full epoch", r, rc,
                                          "within 5%" if max(r, rc) >= 0.95 else "MORE than 5% slower"))
    return 0 if max(r, rc) >= 0.95 else 1


def dataset_fit(args):
    """3. fit on a weft.data pipeline (from_tensor_slices -> shuffle -> batch -> prefetch; and the same
    from uint8 images with a traced map that scales them) against fit on the float32 arrays, each
    in a fresh process, interleaved: median throughput ratios (goal: within 5%)."""
    worst = 1.0
    for feed in ("dataset", "dataset_map"):
        ratios, cpu_ratios = [], []
        for i in range(args.repeats):
            first, second = ("arrays", feed) if i % 2 == 0 else (feed, "arrays")
            r = {first: python_fit_ips(args.threads, args.steps, first)}
            r[second] = python_fit_ips(args.threads, args.steps, second)
            ratios.append(r[feed][0] / r["arrays"][0])
            cpu_ratios.append(r["arrays"][1] / r[feed][1])  # the pipeline's threads' CPU time included
            print("fit run %d: arrays %.0f img/s (%.1f CPU-s), %s %.0f img/s (%.1f CPU-s), ratio %.3f (CPU time %.3f)"
                  % (i + 1, r["arrays"][0], r["arrays"][1], feed, r[feed][0], r[feed][1], ratios[-1], cpu_ratios[-1]))
            sys.stdout.flush()
        m, mc = statistics.median(ratios), statistics.median(cpu_ratios)
        worst = min(worst, max(m, mc))
        print("fit, mnist_cnn, batch 64, %d threads, %s: median %s / arrays throughput %.3f by wall time, %.3f by "
              "CPU time (%s)" % (args.threads, "%d steps" % args.steps if args.steps else "full epoch", feed, m, mc,
                                 "within 5%" if max(m, mc) >= 0.95 else "MORE than 5% slower"))
    return 0 if worst >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
