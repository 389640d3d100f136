"""keras.layers.Hashing and its FarmHash Fingerprint64 against TensorFlow 2.21's bins, kept in
data/hashing_tf.json (written by data/gen_hashing_reference.py; TensorFlow is not imported here)."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft.keras._hashing import fingerprint64

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "hashing_tf.json"), encoding="utf-8"))


def test_fingerprint64_gives_tensorflows_buckets():
    for s, b1, b2 in zip(REF["strings"], REF["bins_1000003"], REF["bins_2_62"]):
        f = fingerprint64(s.encode("utf-8"))
        assert (f % 1000003, f % 2 ** 62) == (b1, b2), s


def test_hashing_layer_as_keras():
    H = tf.keras.layers.Hashing
    assert H(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]]).tolist() == REF["keras_3"]  # also the Keras doc
    assert H(num_bins=3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]]).tolist() == REF["keras_3_mask"]
    assert H(num_bins=7)(np.array([[1], [2], [3], [40], [-5], [123456789]])).tolist() == REF["keras_ints_7"]
    got = H(num_bins=5)([b"A", "A"])
    assert got.dtype == np.int64 and got[0] == got[1]
    with pytest.raises(NotImplementedError, match="salt"):
        H(num_bins=3, salt=1337)
    with pytest.raises(ValueError, match="num_bins must be >= 1"):
        H(num_bins=0)
