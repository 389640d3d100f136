"""TFRecord files, tf.train.Example, parse_example, serialize_tensor and CSV (weft/io/, data/_csv.py)
against TensorFlow 2.21's bytes and values kept as data (data/tf_records_reference.json, made by
data/gen_tf_records_reference.py)."""
import gzip
import json
import os

import numpy as np
import pytest

import weft as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "tf_records_reference.json")))
T = tf.train


def test_example_bytes_are_tfs():
    cases = {"example_int64": {"a": T.Feature(int64_list=T.Int64List(value=[1, -2, 300]))},
             "example_float": {"b": T.Feature(float_list=T.FloatList(value=[0.5, -1.25]))},
             "example_bytes": {"c": T.Feature(bytes_list=T.BytesList(value=[b"xy", "z"]))},
             "example_empty_float": {"e": T.Feature(float_list=T.FloatList(value=[]))}}
    for key, feature in cases.items():
        ex = T.Example(features=T.Features(feature=feature))
        assert ex.SerializeToString().hex() == REF[key], key
        back = T.Example.FromString(bytes.fromhex(REF[key]))
        assert back == ex
    got = T.Example.FromString(bytes.fromhex(REF["parse_in"][0]))
    assert got.features.feature["s"].float_list.value == [1.0, 2.0, 3.0, 4.0]
    assert got.features.feature["v"].WhichOneof("kind") == "bytes_list"
    assert got.features.feature["a"].int64_list.value == [1, 2]
    with pytest.raises(TypeError, match="expected one of: int"):
        T.Int64List(value=[1.5])
    with pytest.raises(tf.errors.DataLossError, match="Example"):
        T.Example.FromString(bytes.fromhex(REF["example_int64"])[:-3])


def test_serialize_tensor_bytes_are_tfs():
    assert tf.io.serialize_tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int32)).numpy().hex() == REF["serialize_int32"]
    assert tf.io.serialize_tensor(tf.constant(2.5)).numpy().hex() == REF["serialize_float_scalar"]
    assert tf.io.serialize_tensor(["ab", "c"]).numpy().hex() == REF["serialize_strings"]
    assert tf.io.serialize_tensor(np.array([7, -1], np.int64)).numpy().hex() == REF["serialize_int64"]
    assert tf.io.serialize_tensor(np.array([True, False])).numpy().hex() == REF["serialize_bool"]
    np.testing.assert_array_equal(tf.io.parse_tensor(bytes.fromhex(REF["serialize_int32"]), tf.int32),
                                  [[1, 2, 3], [4, 5, 6]])
    assert tf.io.parse_tensor(bytes.fromhex(REF["serialize_strings"]), tf.string).tolist() == [b"ab", b"c"]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Type mismatch between parsed tensor \(int32\) and "
                                                             r"dtype \(float32\)"):
        tf.io.parse_tensor(bytes.fromhex(REF["serialize_int32"]), tf.float32)


def test_tfrecord_file_is_tfs(tmp_path):
    p = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        w.write(b"hello")
        w.write(b"")
    assert open(p, "rb").read().hex() == REF["tfrecord_file"]
    (tmp_path / "tf.tfrecord").write_bytes(bytes.fromhex(REF["tfrecord_file"]))
    assert list(tf.data.TFRecordDataset(str(tmp_path / "tf.tfrecord")).as_numpy_iterator()) == [b"hello", b""]
    # GZIP and ZLIB: whole-file compression, as TF's
    for kind, opener in (("GZIP", gzip.decompress), ("ZLIB", __import__("zlib").decompress)):
        q = str(tmp_path / ("c." + kind))
        with tf.io.TFRecordWriter(q, options=tf.io.TFRecordOptions(compression_type=kind)) as w:
            w.write("hello")
            w.write(b"")
        assert opener(open(q, "rb").read()).hex() == REF["tfrecord_file"]
        assert list(tf.data.TFRecordDataset([q], compression_type=kind).as_numpy_iterator()) == [b"hello", b""]


def test_corrupt_tfrecord_names_file_and_offset(tmp_path):
    data = bytearray.fromhex(REF["tfrecord_file"])
    data[14] ^= 1  # a byte of the first record's data
    p = tmp_path / "bad.tfrecord"
    p.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=r"bad.tfrecord: corrupted record at 0: the data's CRC"):
        list(tf.data.TFRecordDataset(str(p)))
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(bytes.fromhex(REF["tfrecord_file"])[:-3])
    with pytest.raises(tf.errors.DataLossError, match=r"cut.tfrecord: corrupted record at 21: the file ends"):
        list(tf.data.TFRecordDataset(str(cut)))
    with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
        tf.data.TFRecordDataset(str(tmp_path / "missing.tfrecord"))


def test_parse_example_values_are_tfs():
    serialized = [bytes.fromhex(h) for h in REF["parse_in"]]
    spec = {"a": tf.io.FixedLenFeature([2], tf.int64),
            "s": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=-1.0),
            "v": tf.io.VarLenFeature(tf.string),
            "d": tf.io.FixedLenFeature([], tf.float32, default_value=9.0)}
    r = tf.io.parse_example(serialized, spec)
    want = REF["parse_out"]
    assert r["a"].tolist() == want["a"] and r["s"].tolist() == want["s"] and r["d"].tolist() == want["d"]
    assert r["a"].dtype == np.int64 and r["s"].dtype == np.float32
    assert r["v"].indices.numpy().tolist() == want["v_indices"]
    assert [b.decode() for b in r["v"].values.numpy()] == want["v_values"]
    assert r["v"].dense_shape.numpy().tolist() == want["v_shape"]
    one = tf.io.parse_single_example(serialized[0], {"a": spec["a"], "v": tf.io.VarLenFeature(tf.string),
                                                     "n": tf.io.VarLenFeature(tf.int64)})
    assert one["a"].tolist() == [1, 2] and one["v"].values.numpy().tolist() == [b"p", b"q", b"r"]
    assert tf.sparse.to_dense(one["n"]).numpy().tolist() == []
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Feature: v \(data type: string\) is required but could not be found"):
        tf.io.parse_single_example(serialized[1], {"v": tf.io.FixedLenFeature([], tf.string)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: a.*Values size: 2 but output shape: \\[3\\]"):
        tf.io.parse_single_example(serialized[1], {"a": tf.io.FixedLenFeature([3], tf.int64)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Key: a.*Data types don't match"):
        tf.io.parse_single_example(serialized[1], {"a": tf.io.FixedLenFeature([2], tf.float32)})
    with pytest.raises(ValueError, match="allow_missing"):
        tf.io.parse_example(serialized, {"s": tf.io.FixedLenSequenceFeature([2], tf.float32)})


def test_tfrecord_pipeline_into_fit(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(32, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    p = str(tmp_path / "train.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for xi, yi in zip(x, y):
            w.write(T.Example(features=T.Features(feature={
                "x": T.Feature(float_list=T.FloatList(value=xi)),
                "y": T.Feature(int64_list=T.Int64List(value=[yi]))})).SerializeToString())
    spec = {"x": tf.io.FixedLenFeature([4], tf.float32), "y": tf.io.FixedLenFeature([], tf.int64)}
    ds = tf.data.TFRecordDataset(p).map(lambda r: tf.io.parse_single_example(r, spec)).map(
        lambda e: (e["x"], e["y"])).batch(8)
    first_x, first_y = next(iter(ds))
    np.testing.assert_array_equal(first_x, x[:8])
    np.testing.assert_array_equal(first_y, y[:8])
    model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    assert len(model.fit(ds, epochs=2, verbose=0).history["loss"]) == 2


def _csv(tmp_path):
    p = tmp_path / "a.csv"
    p.write_text('name,age,score,big\n"Smith, J",31,0.5,3000000000\nLee,,2.25,1\n')
    return str(p)


def test_decode_csv_is_tfs():
    a, b, c = tf.io.decode_csv(["1,2.5,x", '4,,"y,z"'], record_defaults=[[0], [0.0], [""]])
    assert [a.tolist(), b.tolist(), [s.decode() for s in c.tolist()]] == REF["decode_csv"]
    assert a.dtype == np.int32 and b.dtype == np.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 1 is required but missing in record 0!"):
        tf.io.decode_csv(["1,"], record_defaults=[[0], tf.float32])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record 0 is not a valid int32: a"):
        tf.io.decode_csv(["a,2.5"], record_defaults=[[0], [0.0]])
    assert "Field 1 is required" in REF["csv_required_err"] and "not a valid int32: a" in REF["csv_bad_err"]


def test_csv_dataset_and_make_csv_dataset_are_tfs(tmp_path):
    p = _csv(tmp_path)
    cds = tf.data.experimental.CsvDataset(p, [tf.string, [0], tf.float32], header=True, select_cols=[0, 1, 2])
    assert [[a.decode(), int(b), float(c)] for a, b, c in cds.as_numpy_iterator()] == REF["csvdataset"]
    ds = tf.data.experimental.make_csv_dataset(p, batch_size=2, label_name="score", num_epochs=1, shuffle=False)
    feats, label = next(iter(ds))
    assert list(feats.keys()) == REF["csv_keys"]
    for k, (dtype, values) in REF["csv_features"].items():
        got = feats[k]
        assert (got.dtype == object and dtype == "string") or str(got.dtype) == dtype, k
        assert [v.decode() if isinstance(v, bytes) else v for v in got.tolist()] == values, k
    assert str(label.dtype) == REF["csv_label"][0] and label.tolist() == REF["csv_label"][1]
    # numbers only (select_columns): the batches go on in the C++ pipeline and into fit
    num = tf.data.experimental.make_csv_dataset(p, batch_size=2, select_columns=["age", "score"], label_name="score",
                                                num_epochs=2, shuffle=True, shuffle_seed=3)
    assert sorted(float(v) for _, y in num.as_numpy_iterator() for v in y) == [0.5, 0.5, 2.25, 2.25]
    with pytest.raises(ValueError, match="label_name"):
        tf.data.experimental.make_csv_dataset(p, batch_size=2, label_name="nope")
    (tmp_path / "b.csv").write_text("a,1,2\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expect 4 fields but have 3 in record 0"):
        list(tf.data.experimental.CsvDataset(str(tmp_path / "b.csv"), [tf.string, [0], [0.0], [0]]))


def test_ignore_errors_skips_bad_records(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("a,b\n1,2\nx,3\n4,5\n")
    rows = tf.data.experimental.CsvDataset(str(p), [tf.int32, tf.int32], header=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Field 0 in record 1 is not a valid int32: x"):
        list(rows)
    assert [tuple(map(int, r)) for r in rows.ignore_errors().as_numpy_iterator()] == [(1, 2), (4, 5)]
    ds = tf.data.experimental.make_csv_dataset(str(p), batch_size=5, num_epochs=1, shuffle=False, ignore_errors=True,
                                               column_defaults=[tf.int32, tf.int32])
    assert [{k: v.tolist() for k, v in b.items()} for b in ds.as_numpy_iterator()] == [{"a": [1, 4], "b": [2, 5]}]
    text = tf.data.Dataset.from_tensor_slices(["1", "x", "3"]).map(lambda s: tf.strings.to_number(s))
    assert list(text.ignore_errors().as_numpy_iterator()) == [1.0, 3.0]


def test_experimental_tfrecord_writer_writes_a_dataset(tmp_path):
    p = str(tmp_path / "w.tfrecord")
    tf.data.experimental.TFRecordWriter(p).write(tf.data.Dataset.from_tensor_slices(["hello", ""]))
    assert open(p, "rb").read().hex() == REF["tfrecord_file"]
    with pytest.raises(TypeError, match="scalar strings"):
        tf.data.experimental.TFRecordWriter(p).write(tf.data.Dataset.range(2))


def test_sparse_result_in_a_map_says_to_densify():
    ex = T.Example(features=T.Features(feature={"v": T.Feature(int64_list=T.Int64List(value=[1, 2]))}))
    ds = tf.data.Dataset.from_tensor_slices([ex.SerializeToString()] * 2)
    spec = {"v": tf.io.VarLenFeature(tf.int64)}
    with pytest.raises(NotImplementedError, match="to_dense"):
        ds.map(lambda r: tf.io.parse_single_example(r, spec))
    dense = ds.map(lambda r: tf.sparse.to_dense(tf.io.parse_single_example(r, spec)["v"]))
    assert [v.tolist() for v in dense.as_numpy_iterator()] == [[1, 2], [1, 2]]
