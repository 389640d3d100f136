"""tf.io.parse_single_example / parse_example over serialized tf.train.Example protos, with
FixedLenFeature, VarLenFeature and FixedLenSequenceFeature.

    spec = {"label": tf.io.FixedLenFeature([], tf.int64),
            "pixels": tf.io.FixedLenFeature([4], tf.float32, default_value=[0.0] * 4),
            "tags": tf.io.VarLenFeature(tf.string)}
    ds = tf.data.TFRecordDataset(files).map(lambda rec: tf.io.parse_single_example(rec, spec))

Runs on the host (weft's strings are host values): dense results are numpy arrays with
``.numpy()`` (strings as object arrays of bytes), VarLenFeature results weft.sparse.SparseTensor
(string values stay host arrays). Errors use TensorFlow's words and name the feature's key.
"""
import collections

import numpy as np

from .. import _text_values as _tv
from .. import framework as _fw
from . import _example


def _invalid(message):
    return _fw._weft_error("InvalidArgument", message)


def _dtype(dtype):
    if isinstance(dtype, _tv.StringDType) or dtype in ("string", object):
        return _tv.string
    d = _fw.as_dtype(dtype)
    if str(d) not in ("float32", "int64"):
        raise ValueError("Example features hold float32, int64 or string, got %s" % d)
    return d


def _shape(shape):
    return tuple(int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else
                                   [shape] if isinstance(shape, int) else shape))


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature with ``prod(shape)`` values in every example (``default_value`` when missing)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, _shape(shape), _dtype(dtype), default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature with any number of values: a SparseTensor."""

    def __new__(cls, dtype):
        return super().__new__(cls, _dtype(dtype))


class FixedLenSequenceFeature(collections.namedtuple("FixedLenSequenceFeature",
                                                     ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of rows of ``shape``: [rows] + shape (batched: padded with
    ``default_value`` to the longest)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, _shape(shape), _dtype(dtype), allow_missing, default_value)


_KIND = {"float32": "float_list", "int64": "int64_list", "string": "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


def _np(dtype):
    return object if dtype == _tv.string else dtype.as_numpy_dtype


def _values(example, key, spec, record):
    """The values of feature ``key`` in ``example`` (None when it is missing), checked against ``spec``."""
    kind, payload = example.get(key, (None, None))
    if kind is None:
        return None
    want = _KIND[str(spec.dtype)]
    if kind != want:
        raise _invalid("Name: <unknown>, Key: %s, Index: %d.  Data types don't match. Data type: %s but expected "
                       "type: %s" % (key, record, _TYPE_NAME[kind], _TYPE_NAME[want]))
    values = _example._LIST[kind]()._decode(payload)
    if spec.dtype == _tv.string:
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    return np.asarray(values, _np(spec.dtype))


def _default(key, spec):
    if spec.default_value is None:
        raise _invalid("Feature: %s (data type: %s) is required but could not be found." % (key, spec.dtype))
    d = np.asarray(spec.default_value, dtype=_np(spec.dtype))
    if spec.dtype == _tv.string:
        d = _tv.as_bytes_array(spec.default_value)
    n = int(np.prod(spec.shape))
    if d.size == 1:
        d = np.full(n, d.reshape(-1)[0], dtype=d.dtype)
    if d.size != n:
        raise ValueError("FixedLenFeature %s: default_value has %d values, the shape %s holds %d" %
                         (key, d.size, list(spec.shape), n))
    return d.reshape(spec.shape)


def _examples(serialized, what):
    a = serialized.view(np.ndarray) if isinstance(serialized, np.ndarray) else _tv.as_bytes_array(serialized, what)
    return a, [_example.raw_example(_tv.to_bytes(s, what)) for s in a.reshape(-1)]


def _check(features):
    if not isinstance(features, dict) or not features:
        raise ValueError("parse_example: features must be a non-empty dict of FixedLenFeature / VarLenFeature / "
                         "FixedLenSequenceFeature, got %r" % (features,))
    for key, spec in features.items():
        if not isinstance(spec, (FixedLenFeature, VarLenFeature, FixedLenSequenceFeature)):
            raise ValueError("parse_example: feature %r: unsupported feature %r" % (key, spec))
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True. (feature %r)"
                             % key)


def _sparse(indices, values, dense_shape, dtype):
    from ..sparse import SparseTensor
    indices = np.asarray(indices, np.int64).reshape(-1, len(dense_shape))
    if dtype != _tv.string:
        return SparseTensor(indices, np.asarray(values, _np(dtype)).reshape(-1), dense_shape)
    st = SparseTensor.__new__(SparseTensor)  # string values stay host values (graphs hold no strings)
    st.indices = _tv.wrap(indices)
    st.values = _tv.wrap(np.asarray(values, dtype=object).reshape(-1))
    st.dense_shape = _tv.wrap(np.asarray(dense_shape, np.int64))
    return st


def _parse(examples, features, batch_shape):
    """A dict of parsed values, each with ``batch_shape`` (() or (n,)) in front."""
    _check(features)
    out = {}
    n = len(examples)
    for key in sorted(features):
        spec = features[key]
        found = [_values(e, key, spec, i) for i, e in enumerate(examples)]
        if isinstance(spec, VarLenFeature):
            rows = [np.zeros(0, _np(spec.dtype)) if v is None else v for v in found]
            longest = max([len(r) for r in rows] + [0])
            if batch_shape:
                idx = [(i, j) for i, r in enumerate(rows) for j in range(len(r))]
                out[key] = _sparse(idx, [x for r in rows for x in r], [n, longest], spec.dtype)
            else:
                out[key] = _sparse([[j] for j in range(len(rows[0]))], list(rows[0]), [len(rows[0])], spec.dtype)
            continue
        size = int(np.prod(spec.shape))
        values = []
        for i, v in enumerate(found):
            if isinstance(spec, FixedLenFeature):
                if v is None:
                    v = _default(key, spec)
                elif v.size != size:
                    raise _invalid("Name: <unknown>, Key: %s, Index: %d.  Number of %s values != expected.  Values "
                                   "size: %d but output shape: %s" % (key, i, _TYPE_NAME[_KIND[str(spec.dtype)]],
                                                                       v.size, list(spec.shape)))
                values.append(v.reshape(spec.shape))
            else:
                v = np.zeros(0, _np(spec.dtype)) if v is None else v
                if size and v.size % size:
                    raise _invalid("Name: <unknown>, Key: %s, Index: %d.  Number of values is not a multiple of "
                                   "stride length. Saw %d values but output shape is: %s" %
                                   (key, i, v.size, [-1] + list(spec.shape)))
                values.append(v.reshape((-1,) + spec.shape))
        if isinstance(spec, FixedLenSequenceFeature) and batch_shape:
            rows = max([v.shape[0] for v in values] + [0])
            fill = b"" if spec.dtype == _tv.string else 0
            if spec.default_value is not None:
                fill = _tv.to_bytes(spec.default_value) if spec.dtype == _tv.string else spec.default_value
            padded = np.full((n, rows) + spec.shape, fill, dtype=_np(spec.dtype))
            for i, v in enumerate(values):
                padded[i, :v.shape[0]] = v
            out[key] = _tv.wrap(padded)
        elif batch_shape:
            stacked = np.empty((n,) + spec.shape, dtype=_np(spec.dtype))
            for i, v in enumerate(values):
                stacked[i] = v
            out[key] = _tv.wrap(stacked)
        else:
            out[key] = _tv.wrap(values[0])
    return out


def parse_single_example(serialized, features, name=None, example_names=None):
    """tf.io.parse_single_example: one serialized Example (a scalar string) -> a dict of values."""
    a, examples = _examples(serialized, "parse_single_example")
    if a.ndim != 0 and a.size != 1:
        raise ValueError("parse_single_example: serialized must be a scalar string, got shape %s" % (a.shape,))
    return _parse(examples, features, ())


def parse_example(serialized, features, name=None, example_names=None):
    """tf.io.parse_example: a vector of serialized Examples -> a dict of batched values
    (VarLenFeature: a SparseTensor of dense_shape [batch, longest])."""
    a, examples = _examples(serialized, "parse_example")
    if a.ndim != 1:
        raise ValueError("parse_example: serialized must be a vector of strings, got shape %s" % (a.shape,))
    return _parse(examples, features, (len(examples),))
