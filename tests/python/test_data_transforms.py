"""weft.data's Python-run transformations and sources (data/_transform.py, data/_sources.py)
against TensorFlow 2.21's outputs kept as data (data/tf_records_reference.json, made by
data/gen_tf_records_reference.py) and the examples of TF's documentation."""
import json
import os
import sys

import numpy as np
import pytest

import weft as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
from tf_records_cases import cardinality_cases  # noqa: E402

D = tf.data.Dataset
REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "tf_records_reference.json")))


def L(ds):
    return [np.asarray(e).tolist() for e in ds.as_numpy_iterator()]


def test_interleave_order_is_tfs():
    assert L(D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6), cycle_length=2,
                                      block_length=4, num_parallel_calls=tf.data.AUTOTUNE)) == REF["interleave"]
    assert L(D.range(4).interleave(lambda x: D.range(x), cycle_length=3)) == REF["interleave_c3"]


def test_window_and_flat_map():
    assert [L(w) for w in D.range(7).window(3, 2)] == REF["window_3_2"]
    assert L(D.range(7).window(3, 1, 2, True).flat_map(lambda w: w.batch(3))) == REF["window_flat"]
    cards = [int(D.range(n).window(3, s, t, dr).cardinality()) for n in (0, 2, 7, 10)
             for s in (1, 2, 4) for t in (1, 2) for dr in (False, True)]
    assert cards == REF["window_card"]
    # a tuple element: a tuple of datasets, zipped back (TF's idiom)
    xy = D.from_tensor_slices((np.arange(6), np.arange(6) * 10)).window(2, drop_remainder=True)
    assert isinstance(xy.element_spec[0], tf.data.DatasetSpec)
    got = L(xy.flat_map(lambda x, y: D.zip((x.batch(2), y.batch(2)))))
    assert got == [[[0, 1], [0, 10]], [[2, 3], [20, 30]], [[4, 5], [40, 50]]]
    # then fit-ready: the numeric result goes on in the C++ pipeline
    assert L(D.range(6).window(3).flat_map(lambda w: w.batch(3)).map(lambda b: b * 2)) == [[0, 2, 4], [6, 8, 10]]


def test_padded_batch():
    ds = D.range(1, 6).map(lambda x: tf.fill([x], x))
    assert L(ds.padded_batch(2, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64))) == REF["padded_batch"]
    assert L(ds.padded_batch(2, drop_remainder=True)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    pairs = D.range(4).map(lambda x: (tf.fill([x, 2], x), x)).padded_batch(3)
    assert str(pairs.element_spec).replace("weft.", "tf.") == REF["padded_batch_spec"]
    assert pairs.padded_batch  # a method of every dataset
    assert D.range(5).padded_batch(2, drop_remainder=True).element_spec.shape == (2,)
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size"):
        L(ds.padded_batch(2, padded_shapes=[3]))
    # strings pad with b""
    text = D.from_tensor_slices(["a b", "c"]).map(lambda s: tf.strings.split(s))
    assert [x.tolist() for x in text.padded_batch(2).as_numpy_iterator()] == [[[b"a", b"b"], [b"c", b""]]]


def test_scan_take_while_unique_group_by_window():
    assert L(D.range(10).scan(tf.constant(0, tf.int64), lambda s, i: (s + i, s))) == REF["scan"]
    assert L(D.range(10).take_while(lambda x: x < 5)) == REF["take_while"]
    assert L(D.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique()) == REF["unique"]
    assert L(D.from_tensor_slices(["a", "b", "a"]).unique()) == [b"a", b"b"]
    with pytest.raises(TypeError, match="int32, int64 or string"):
        D.range(3).map(lambda x: tf.cast(x, tf.float32)).unique()
    assert L(D.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(4), window_size=4)) == \
        REF["group_by_window"]
    # the tf.data.experimental forms, through apply
    assert L(D.range(10).apply(tf.data.experimental.scan(tf.constant(0, tf.int64), lambda s, i: (s + i, s)))) == \
        REF["scan"]
    with pytest.raises(TypeError, match="new state"):
        D.range(3).scan(tf.constant(0, tf.int32), lambda s, i: (i, s))


def test_bucket_by_sequence_length():
    seqs = [[1], [2, 2], [3, 3, 3], [4, 4, 4, 4], [5] * 5, [6] * 6, [7] * 7]
    sds = D.from_generator(lambda: iter(seqs), output_signature=tf.TensorSpec([None], tf.int32))
    assert L(sds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 5], [2, 2, 2])) == REF["bucket"]
    assert L(sds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 8], [2, 2, 2],
                                           pad_to_bucket_boundary=True)) == REF["bucket_pad"]
    with pytest.raises(ValueError, match="bucket_batch_sizes"):
        sds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 5], [2, 2])


def test_choose_and_sample_from_datasets():
    words = [D.from_tensors(w).repeat() for w in ("foo", "bar", "baz")]
    assert [b.decode() for b in D.choose_from_datasets(words, D.range(3).repeat(3)).as_numpy_iterator()] == \
        REF["choose"]
    picks = D.from_tensor_slices(np.array([0, 1, 0, 0, 1], np.int64))
    assert L(tf.data.experimental.choose_from_datasets([D.range(2), D.range(10, 13)], picks,
                                                       stop_on_empty_dataset=False)) == REF["choose_stop"]
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        L(D.choose_from_datasets([D.range(2)], D.from_tensors(np.int64(3))))
    # every element of each input once (an exhausted input leaves the draw); seeded runs repeat
    mixed = D.sample_from_datasets([D.range(0, 50), D.range(100, 120)], weights=[0.5, 0.5], seed=3)
    got = L(mixed)
    assert sorted(got) == list(range(50)) + list(range(100, 120)) and got == L(mixed)
    assert got != sorted(got)
    stop = L(D.sample_from_datasets([D.range(3), D.range(100, 200)], seed=1, stop_on_empty_dataset=True))
    assert [x for x in stop if x < 3] == [0, 1, 2] and len(stop) < 103
    # proportions: 20000 draws at 0.8 / 0.2 are within 5 sigma of 16000
    ones = sum(L(D.sample_from_datasets([D.from_tensors(np.int64(1)).repeat(), D.from_tensors(np.int64(0)).repeat()],
                                        weights=[0.8, 0.2], seed=7).take(20000)))
    assert abs(ones - 16000) < 5 * np.sqrt(20000 * 0.8 * 0.2)


def test_sources_counter_random_list_files(tmp_path):
    assert L(D.counter(3, 2).take(3)) == [3, 5, 7] and int(D.counter().cardinality()) == tf.data.INFINITE_CARDINALITY
    assert L(tf.data.experimental.Counter(dtype=tf.int32).take(2)) == [0, 1]
    r = D.random(seed=4).take(1000)
    a = np.array(L(r))
    assert a.min() >= 0 and L(r) == a.tolist() and len(set(a.tolist())) == 1000
    # uniform over [0, 2**63): the mean is within 5 sigma of 2**62
    assert abs(a.mean() / 2 ** 63 - 0.5) < 5 * np.sqrt(1 / 12 / 1000)
    for name in ("b.txt", "a.txt", "c.csv"):
        (tmp_path / name).write_text("x")
    files = D.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert [os.path.basename(f) for f in files.as_numpy_iterator()] == [b"a.txt", b"b.txt"]
    assert sorted(D.list_files(str(tmp_path / "*.txt"), seed=1).as_numpy_iterator()) == \
        list(files.as_numpy_iterator())
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):
        D.list_files(str(tmp_path / "*.none"))


def test_single_element_cardinality_ignore_errors():
    assert D.from_tensors(np.int64(5)).get_single_element() == 5
    assert tf.data.experimental.get_single_element(D.range(1)) == 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than one"):
        D.range(2).get_single_element()
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty"):
        D.range(0).get_single_element()
    ds = D.range(5).filter(lambda x: x < 3).apply(tf.data.experimental.assert_cardinality(3))
    assert int(ds.cardinality()) == 3 and L(ds) == [0, 1, 2]
    with pytest.raises(tf.errors.FailedPreconditionError, match="expected to contain 4 elements but contained only 3"):
        L(D.range(3).apply(tf.data.experimental.assert_cardinality(4)))
    # TF's ignore_errors example: the element that fails check_numerics is dropped
    bad = D.from_tensor_slices([1., 2., 0., 4.]).map(lambda x: tf.debugging.check_numerics(1. / x, "error"))
    assert L(bad.ignore_errors()) == [1.0, 0.5, 0.25]


def test_save_load_roundtrip(tmp_path):
    ds = D.from_tensor_slices(({"a": np.arange(6, dtype=np.float32).reshape(3, 2)}, ["x", "yy", ""]))
    ds.save(str(tmp_path / "saved"))
    back = D.load(str(tmp_path / "saved"))
    assert back.element_spec == ds.element_spec and int(back.cardinality()) == 3
    got = list(back.as_numpy_iterator())
    assert [g[1] for g in got] == [b"x", b"yy", b""]
    np.testing.assert_array_equal(np.stack([g[0]["a"] for g in got]), np.arange(6, dtype=np.float32).reshape(3, 2))
    tf.data.experimental.save(D.range(4), str(tmp_path / "r"), compression="GZIP")
    assert L(tf.data.experimental.load(str(tmp_path / "r")).batch(4)) == [[0, 1, 2, 3]]
    with pytest.raises(tf.errors.NotFoundError, match="dataset_spec.json"):
        D.load(str(tmp_path / "nothing"))


def test_rejection_resample_reaches_target():
    labels = np.array([0] * 900 + [1] * 100, np.int64)
    ds = D.from_tensor_slices(labels).shuffle(1000, seed=2)
    out = ds.rejection_resample(lambda x: tf.cast(x, tf.int32), target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1],
                                seed=5)
    cls = np.array([c for c, _ in out.as_numpy_iterator()])
    # about 100 of each class survive; the share of class 1 within 5 sigma of 0.5
    assert abs(cls.mean() - 0.5) < 5 * np.sqrt(0.25 / len(cls)) and 120 < len(cls) < 280


def test_new_stages_feed_fit():
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    y = (x.sum(1) > 0).astype(np.float32)
    ds = D.from_tensor_slices((x, y)).window(8, drop_remainder=True).flat_map(
        lambda a, b: D.zip((a.batch(8), b.batch(8))))
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="sgd", loss="binary_crossentropy")
    hist = model.fit(ds, epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2 and np.isfinite(hist.history["loss"]).all()


def test_cardinality_rules_are_tfs():
    assert {k: int(v.cardinality()) for k, v in cardinality_cases(tf).items()} == REF["cardinality"]
