"""``weft.ragged`` (tf.ragged) at the level of TensorFlow's "Introduction to tensors" guide: a
ragged tensor of rank 2 (rows of different lengths) made from a Python list, printed, measured
and turned into a dense tensor::

    rt = weft.ragged.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
    print(rt)              # <tf.RaggedTensor [[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]]>
    rt.shape               # TensorShape([4, None])
    rt.to_tensor()         # [[0 1 2 3] [4 5 0 0] [6 7 8 0] [9 0 0 0]], a weft tensor

weft's graphs carry dense tensors only, so a RaggedTensor here is a host-side value: its
``flat_values`` and ``row_splits`` are numpy arrays and ``to_tensor()`` makes a constant. Ops
on ragged tensors (``tf.ragged.map_flat_values``, ragged reductions, ragged inputs to Keras)
are not supported: pad with ``to_tensor()`` (or keras.utils.pad_sequences) and use a mask.
"""
import numpy as np

from . import _text_values
from .array_ops import TensorShape
from .framework import as_dtype, constant as _dense_constant


def _unsupported(what):
    return NotImplementedError("%s is not supported by weft (a RaggedTensor is a host-side value of rank 2 here); "
                               "pad it with rt.to_tensor() or keras.utils.pad_sequences and use a mask" % what)


class RaggedTensor:
    """Rows of different lengths: ``flat_values`` [nvals] split at ``row_splits`` [nrows + 1]
    (row i is flat_values[row_splits[i]:row_splits[i + 1]]), as TensorFlow stores them."""

    def __init__(self, flat_values, row_splits):
        self._values = np.asarray(flat_values)
        self._splits = np.asarray(row_splits, np.int64)
        if self._values.ndim != 1:
            raise _unsupported("a RaggedTensor of flat_values of rank %d" % self._values.ndim)
        s = self._splits
        if s.ndim != 1 or s.size == 0 or s[0] != 0 or np.any(np.diff(s) < 0) or s[-1] != self._values.size:
            raise ValueError("row_splits %s must start at 0, never decrease, and end at len(values) = %d"
                             % (s.tolist(), self._values.size))

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        return cls(np.asarray(values), row_splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        lengths = np.asarray(row_lengths, np.int64)
        if np.any(lengths < 0):
            raise ValueError("row_lengths %s must not be negative" % lengths.tolist())
        return cls(np.asarray(values), np.concatenate([[0], np.cumsum(lengths)]))

    # TensorFlow's names for the parts.
    flat_values = values = property(lambda self: self._values)
    row_splits = property(lambda self: self._splits)
    dtype = property(lambda self: _text_values.string if self._values.dtype == object else as_dtype(self._values.dtype))
    shape = property(lambda self: TensorShape([self.nrows(), None]))
    ndim = property(lambda self: 2)
    ragged_rank = property(lambda self: 1)

    def nrows(self):
        return int(self._splits.size - 1)

    def row_lengths(self):
        return np.diff(self._splits)

    def to_list(self):
        v = self._values.tolist()
        return [v[a:b] for a, b in zip(self._splits[:-1], self._splits[1:])]

    def numpy(self):
        """TensorFlow's: an object array of the rows (numpy arrays)."""
        out = np.empty(self.nrows(), dtype=object)
        for i, (a, b) in enumerate(zip(self._splits[:-1], self._splits[1:])):
            out[i] = self._values[a:b]
        return out

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The rows padded at the end with ``default_value`` (zero) to the longest row's length."""
        if shape is not None:
            raise _unsupported("RaggedTensor.to_tensor(shape=...)")
        width = int(self.row_lengths().max()) if self.nrows() else 0
        fill = (b"" if self._values.dtype == object else 0) if default_value is None else default_value
        dense = np.full((self.nrows(), width), fill, self._values.dtype)
        for i, (a, b) in enumerate(zip(self._splits[:-1], self._splits[1:])):
            dense[i, :b - a] = self._values[a:b]
        return _dense_constant(dense)

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            i = int(key) + (self.nrows() if key < 0 else 0)
            if not 0 <= i < self.nrows():
                raise IndexError("row %d of a RaggedTensor with %d rows" % (key, self.nrows()))
            return _dense_constant(self._values[self._splits[i]:self._splits[i + 1]])
        raise _unsupported("indexing a RaggedTensor by %r (only a row number)" % (key,))

    def __repr__(self):
        return "<tf.RaggedTensor %s>" % self.to_list()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise _unsupported("RaggedTensor.%s" % name)


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=None):
    """A RaggedTensor of rank 2 from a list of rows (lists of numbers)."""
    if ragged_rank not in (None, 1) or inner_shape is not None:
        raise _unsupported("tf.ragged.constant(ragged_rank=%r, inner_shape=%r)" % (ragged_rank, inner_shape))
    rows = list(pylist)
    for r in rows:
        if not isinstance(r, (list, tuple, np.ndarray)) or any(isinstance(x, (list, tuple, np.ndarray)) for x in r):
            raise _unsupported("tf.ragged.constant of nesting other than a list of rows of numbers (got row %r)" % (r,))
    flat = [x for r in rows for x in r]
    np_dtype = np.dtype(str(as_dtype(dtype))) if dtype is not None else None
    if np_dtype is None:
        arr = np.asarray(flat)
        # TensorFlow's defaults for Python values: ints int32 (int64 when int32 cannot hold them),
        # floats float32.
        if arr.dtype.kind in "iu":
            fits = arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)
            np_dtype = np.int32 if fits else np.int64
        else:
            np_dtype = np.float32 if arr.dtype.kind == "f" or arr.size == 0 else arr.dtype
    lengths = [len(r) for r in rows]
    return RaggedTensor(np.asarray(flat, np_dtype).reshape(-1), np.concatenate([[0], np.cumsum(lengths)]))


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    raise _unsupported("tf.ragged.%s" % name)

