"""Makes tf_records_reference.json: TensorFlow 2.21's bytes and values for tests/python/test_data_records.py
(tf.train.Example and serialize_tensor encodings, a TFRecord file, parse_example, CSV) and for
tests/python/test_data_transforms.py (deterministic tf.data transformations).
Run with TensorFlow's venv: bench/.venv/bin/python tests/python/data/gen_tf_records_reference.py
(it reproduces the file except "parse_in", whose map entries protobuf writes in a varying order)."""
import json
import os
import tempfile

import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tf_records_cases import cardinality_cases  # noqa: E402

out = {}
def ex(feature):
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString().hex()
out["example_int64"] = ex({"a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, -2, 300]))})
out["example_float"] = ex({"b": tf.train.Feature(float_list=tf.train.FloatList(value=[0.5, -1.25]))})
out["example_bytes"] = ex({"c": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"xy", "z".encode()]))})
out["example_empty_float"] = ex({"e": tf.train.Feature(float_list=tf.train.FloatList(value=[]))})
out["serialize_int32"] = tf.io.serialize_tensor(tf.constant([[1, 2, 3], [4, 5, 6]], tf.int32)).numpy().hex()
out["serialize_float_scalar"] = tf.io.serialize_tensor(tf.constant(2.5)).numpy().hex()
out["serialize_strings"] = tf.io.serialize_tensor(tf.constant(["ab", "c"])).numpy().hex()
out["serialize_int64"] = tf.io.serialize_tensor(tf.constant([7, -1], tf.int64)).numpy().hex()
out["serialize_bool"] = tf.io.serialize_tensor(tf.constant([True, False])).numpy().hex()
# a TFRecord file of two records, as TF writes it
d = tempfile.mkdtemp(); p = os.path.join(d, "r.tfrecord")
with tf.io.TFRecordWriter(p) as w:
    w.write(b"hello"); w.write(b"")
out["tfrecord_file"] = open(p, "rb").read().hex()
# parse_example with all kinds, on examples TF made
e1 = tf.train.Example(features=tf.train.Features(feature={
    "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[1, 2])),
    "s": tf.train.Feature(float_list=tf.train.FloatList(value=[1., 2., 3., 4.])),
    "v": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"p", b"q", b"r"]))})).SerializeToString()
e2 = tf.train.Example(features=tf.train.Features(feature={
    "a": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 4])),
    "s": tf.train.Feature(float_list=tf.train.FloatList(value=[5., 6.]))})).SerializeToString()
out["parse_in"] = [e1.hex(), e2.hex()]
r = tf.io.parse_example([e1, e2], {"a": tf.io.FixedLenFeature([2], tf.int64),
                                   "s": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True,
                                                                      default_value=-1.0),
                                   "v": tf.io.VarLenFeature(tf.string),
                                   "d": tf.io.FixedLenFeature([], tf.float32, default_value=9.0)})
out["parse_out"] = {"a": r["a"].numpy().tolist(), "s": r["s"].numpy().tolist(),
                    "v_indices": r["v"].indices.numpy().tolist(),
                    "v_values": [b.decode() for b in r["v"].values.numpy()],
                    "v_shape": r["v"].dense_shape.numpy().tolist(),
                    "d": r["d"].numpy().tolist()}
try:
    tf.io.parse_single_example(e2, {"v": tf.io.FixedLenFeature([], tf.string)})
except Exception as e: out["missing_err"] = str(e)[:300]
try:
    tf.io.parse_single_example(e2, {"a": tf.io.FixedLenFeature([3], tf.int64)})
except Exception as e: out["count_err"] = str(e)[:300]
# CSV
csv = "name,age,score,big\n\"Smith, J\",31,0.5,3000000000\nLee,,2.25,1\n"
p = os.path.join(d, "a.csv"); open(p, "w").write(csv)
ds = tf.data.experimental.make_csv_dataset(p, batch_size=2, label_name="score", num_epochs=1, shuffle=False)
feats, label = next(iter(ds))
out["csv_features"] = {k: (v.dtype.name, [x.decode() if isinstance(x, bytes) else x for x in v.numpy().tolist()])
                       for k, v in feats.items()}
out["csv_label"] = (label.dtype.name, label.numpy().tolist())
out["csv_keys"] = list(feats.keys())
r = tf.io.decode_csv(["1,2.5,x", '4,,"y,z"'], record_defaults=[[0], [0.0], [""]])
out["decode_csv"] = [r[0].numpy().tolist(), r[1].numpy().tolist(), [b.decode() for b in r[2].numpy()]]
try:
    tf.io.decode_csv(["1,2.5"], record_defaults=[[0], tf.constant([], tf.float32)]); 
    tf.io.decode_csv(["1,"], record_defaults=[[0], tf.constant([], tf.float32)])
except Exception as e: out["csv_required_err"] = str(e)[:200]
try:
    tf.io.decode_csv(["a,2.5"], record_defaults=[[0], [0.0]])
except Exception as e: out["csv_bad_err"] = str(e)[:200]
cds = tf.data.experimental.CsvDataset(p, [tf.string, [0], tf.float32], header=True, select_cols=[0, 1, 2])
out["csvdataset"] = [[a.decode(), int(b), float(c)] for a, b, c in cds.as_numpy_iterator()]
D = tf.data.Dataset
L = lambda ds: [np.asarray(e).tolist() for e in ds.as_numpy_iterator()]  # noqa: E731
out["interleave"] = L(D.range(1, 6).interleave(lambda x: D.from_tensors(x).repeat(6), cycle_length=2, block_length=4))
out["interleave_c3"] = L(D.range(4).interleave(lambda x: D.range(x), cycle_length=3))
out["window_3_2"] = [L(w) for w in D.range(7).window(3, 2)]
out["window_flat"] = L(D.range(7).window(3, 1, 2, True).flat_map(lambda w: w.batch(3)))
out["window_card"] = [int(D.range(n).window(3, s, t, dr).cardinality()) for n in (0, 2, 7, 10)
                      for s in (1, 2, 4) for t in (1, 2) for dr in (False, True)]
out["padded_batch"] = L(D.range(1, 6).map(lambda x: tf.fill([x], x)).padded_batch(
    2, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64)))
out["padded_batch_spec"] = str(D.range(4).map(lambda x: (tf.fill([x, 2], x), x)).padded_batch(3).element_spec)
out["scan"] = L(D.range(10).scan(tf.constant(0, tf.int64), lambda s, i: (s + i, s)))
out["take_while"] = L(D.range(10).take_while(lambda x: x < 5))
out["unique"] = L(D.from_tensor_slices([1, 37, 2, 37, 2, 1]).unique())
out["group_by_window"] = L(D.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(4), window_size=4))
seqs = [[1], [2, 2], [3, 3, 3], [4, 4, 4, 4], [5] * 5, [6] * 6, [7] * 7]
gen = lambda: iter(seqs)  # noqa: E731
sds = D.from_generator(gen, output_signature=tf.TensorSpec([None], tf.int32))
out["bucket"] = L(sds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 5], [2, 2, 2]))
out["bucket_pad"] = L(sds.bucket_by_sequence_length(lambda e: tf.shape(e)[0], [3, 8], [2, 2, 2],
                                                    pad_to_bucket_boundary=True))
out["choose"] = [b.decode() for b in tf.data.Dataset.choose_from_datasets(
    [D.from_tensors("foo").repeat(), D.from_tensors("bar").repeat(), D.from_tensors("baz").repeat()],
    D.range(3).repeat(3)).as_numpy_iterator()]
out["choose_stop"] = L(D.choose_from_datasets([D.range(2), D.range(10, 13)], D.from_tensor_slices(
    tf.constant([0, 1, 0, 0, 1], tf.int64)), stop_on_empty_dataset=False))
out["cardinality"] = {k: int(v.cardinality()) for k, v in cardinality_cases(tf).items()}
print(json.dumps(out, indent=1))
