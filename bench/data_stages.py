"""Rates of the tf.data stages made for issue data25 (weft only; no peer): padded_batch in C++ and as
a Python stream, window + flat_map, scan, TFRecord reading and Example parsing. Interleaved rounds,
medians printed.  python3 bench/data_stages.py --rounds 3"""
import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import weft as tf
from weft.data import _host, _transform
from weft.data import dataset as _dataset

D = tf.data.Dataset


def rate(stream, n):
    t = time.perf_counter()
    for _ in stream:
        pass
    return n / (time.perf_counter() - t)


def python_padded_batch(ds, n):
    """The Python stream padded_batch on the same elements (the path strings take)."""
    host = _host.HostDataset(_host.as_host(ds)._make, ds.element_spec, -2)
    is_cpp, _dataset._is_cpp = _dataset._is_cpp, lambda x: False
    try:
        return _transform.padded_batch(host, n)
    finally:
        _dataset._is_cpp = is_cpp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rows = D.from_tensor_slices(np.arange(200000 * 20, dtype=np.int64).reshape(200000, 20))
    d = tempfile.mkdtemp()
    path = os.path.join(d, "r.tfrecord")
    T = tf.train
    record = T.Example(features=T.Features(feature={"x": T.Feature(float_list=T.FloatList(value=[1.0] * 4)),
                                                    "y": T.Feature(int64_list=T.Int64List(value=[1]))}))
    with tf.io.TFRecordWriter(path) as w:
        for _ in range(20000):
            w.write(record.SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([4], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    cases = {
        "padded_batch(32) of int64[20], C++ (elements/s)": lambda: rate(rows.padded_batch(32)._ds.make_iterator(),
                                                                        200000),
        "padded_batch(32) of int64[20], Python stream (elements/s)":
            lambda: rate(python_padded_batch(rows, 32)._make(), 200000),
        "window(4) + flat_map(batch) (windows/s)": lambda: rate(
            D.range(20000).window(4, drop_remainder=True).flat_map(lambda w: w.batch(4))._make(), 5000),
        "scan (elements/s)": lambda: rate(D.range(20000).scan(tf.constant(0, tf.int64),
                                                               lambda s, x: (s + x, s))._make(), 20000),
        "TFRecordDataset read (records/s)": lambda: rate(tf.data.TFRecordDataset(path)._make(), 20000),
        "map(parse_single_example) (records/s)": lambda: rate(tf.data.TFRecordDataset(path).map(
            lambda r: tf.io.parse_single_example(r, spec))._make(), 20000),
        "batch(256).map(parse_example) (records/s)": lambda: rate(tf.data.TFRecordDataset(path).batch(256).map(
            lambda b: tf.io.parse_example(b, spec))._make(), 20000),
    }
    got = {k: [] for k in cases}
    for _ in range(args.rounds):
        for k, f in cases.items():
            got[k].append(f())
    for k, v in got.items():
        print("%-60s %10.0f   (%s)" % (k, statistics.median(v), ", ".join("%.0f" % x for x in v)))


if __name__ == "__main__":
    main()
