"""Writes text_data_reference.json: tf.strings results, TextLineDataset lines and
keras.utils.text_dataset_from_directory subsets computed by TensorFlow 2.21 / Keras 3 (run with a
TensorFlow venv: python gen_text_data_reference.py > text_data_reference.json). test_text_data.py
checks weft against the file; the tests never import TensorFlow. String results are kept as
(nested) lists of latin-1 text of their bytes ("b:" prefixed), numbers as lists."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import contextlib
import json
import sys
import tempfile

import numpy as np
import tensorflow as tf


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from text_data_cases import cases, make_tree, plain as _plain  # noqa: E402


def plain(v):
    return _plain(v, tf.RaggedTensor)


strings = {}
for name, f in cases(tf).items():
    strings[name] = plain(f())
errors = {}
S = tf.strings
for name, f in {"to_number_bad": lambda: S.to_number("1.5x"),
                "substr_out_of_range": lambda: S.substr("abc", 5, 1)}.items():
    try:
        f()
    except Exception as e:
        errors[name] = [type(e).__name__, str(e).splitlines()[0]]

out = {"strings": strings, "errors": errors}

# TextLineDataset: line terminators removed, empty lines kept, a last line without "\n" read.
with tempfile.TemporaryDirectory() as d:
    a, b = os.path.join(d, "a.txt"), os.path.join(d, "b.csv")
    with open(a, "wb") as f:
        f.write(b"first line\nsecond\r\n\nlast without newline")
    with open(b, "wb") as f:
        f.write(b"x,y\n1,2.5\n3,-4\n")
    ds = tf.data.TextLineDataset([a, b])
    out["text_line"] = {"lines": plain([x for x in ds.as_numpy_iterator()]),
                        "cardinality": int(ds.cardinality())}
    csv = (tf.data.TextLineDataset(b).skip(1)
           .map(lambda line: tf.strings.to_number(tf.strings.split(line, ","))))
    out["text_line"]["csv"] = plain([x for x in csv.as_numpy_iterator()])

# text_dataset_from_directory: which files each subset holds, per seed (Keras' messages to stderr).
import keras
with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(sys.stderr):
    make_tree(d)
    tdd = {}
    for seed in (42, 7):
        for subset in ("training", "validation"):
            ds = keras.utils.text_dataset_from_directory(os.path.join(d, "tree"), batch_size=5,
                                                         validation_split=0.2, subset=subset, seed=seed)
            texts, labels = [], []
            for x, y in ds:
                texts += [t.decode() for t in x.numpy().tolist()]
                labels += y.numpy().tolist()
            tdd["%s_%d" % (subset, seed)] = {"class_names": ds.class_names, "texts": texts, "labels": labels,
                                             "cardinality": int(ds.cardinality())}
    ds = keras.utils.text_dataset_from_directory(os.path.join(d, "tree"), batch_size=4, shuffle=False,
                                                 label_mode="categorical", class_names=["pos", "neg"])
    x, y = next(iter(ds))
    tdd["unshuffled_categorical"] = {"texts": [t.decode() for t in x.numpy().tolist()], "labels": y.numpy().tolist(),
                                     "class_names": ds.class_names, "spec": [str(s) for s in ds.element_spec]}
    errs = {}
    os.makedirs(os.path.join(d, "flat"))
    with open(os.path.join(d, "flat", "a.txt"), "w") as f:
        f.write("a")
    for name, kw in {"no_class_dirs": dict(directory=os.path.join(d, "flat")),
                     "subset_without_split": dict(directory=os.path.join(d, "tree"), subset="training", seed=1),
                     "split_without_seed": dict(directory=os.path.join(d, "tree"), validation_split=0.2,
                                                subset="training"),
                     "bad_subset": dict(directory=os.path.join(d, "tree"), validation_split=0.2, subset="test",
                                        seed=1),
                     "binary_three_classes": dict(directory=os.path.join(d, "tree"), label_mode="binary")}.items():
        try:
            keras.utils.text_dataset_from_directory(**kw)
            errs[name] = None
        except Exception as e:
            errs[name] = [type(e).__name__, str(e).replace(d, "<DIR>")]
    tdd["errors"] = errs
out["text_dataset_from_directory"] = tdd
print(json.dumps(out, indent=1, ensure_ascii=True))
