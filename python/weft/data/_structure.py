"""Element structures of weft.data: nested tuples, namedtuples and dicts whose leaves are
components (one tensor each), flattened in TensorFlow's order (dicts by sorted key), and the
TensorSpec that describes a component."""
import numpy as np

from .. import _text_values as _tv
from .. import framework as _fw


class TensorShape(tuple):
    """A static shape: a tuple of ints with None for unknown dims (tf.TensorShape's common surface)."""

    def as_list(self):
        return list(self)

    @property
    def rank(self):
        return len(self)

    ndims = rank

    def __repr__(self):
        return "TensorShape(%s)" % list(self)


def _as_dtype(dtype):
    """A weft dtype, or weft.string (host string values: numpy object arrays of bytes)."""
    if isinstance(dtype, _tv.StringDType) or dtype is object or (isinstance(dtype, np.dtype) and dtype == object) or \
            (isinstance(dtype, str) and dtype in ("string", "tf.string", "object")):
        return _tv.string
    return _fw.as_dtype(dtype)


class TensorSpec:
    """The shape and dtype of one component of a dataset's elements (tf.TensorSpec). ``shape``
    None: the rank is unknown too (TF's TensorShape(None))."""

    def __init__(self, shape, dtype=_fw.float32, name=None):
        self.shape = None if shape is None else TensorShape(None if d is None else int(d) for d in shape)
        self.dtype = _as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, other):
        """True when ``other`` (a TensorSpec, or an array) has this dtype and fits this shape."""
        shape = other.shape
        dtype = other.dtype if isinstance(other, TensorSpec) else _as_dtype(np.asarray(other).dtype)
        if self.shape is None or shape is None:
            return dtype == self.dtype
        return dtype == self.dtype and len(shape) == len(self.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, shape))

    def __eq__(self, other):
        return isinstance(other, TensorSpec) and (self.shape, self.dtype, self.name) == \
            (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else tuple(self.shape)
        return "TensorSpec(shape=%s, dtype=%r, name=%r)" % (shape, self.dtype, self.name)


def _is_namedtuple(s):
    return isinstance(s, tuple) and hasattr(s, "_fields")


def flatten(s, is_leaf):
    """The leaves of ``s`` in order (dict values by sorted key)."""
    if is_leaf(s):
        return [s]
    if isinstance(s, dict):
        return [x for k in sorted(s) for x in flatten(s[k], is_leaf)]
    if isinstance(s, (tuple, list)):
        return [x for v in s for x in flatten(v, is_leaf)]
    raise TypeError("weft.data: %r (a %s) is not a component or a tuple/dict of components" %
                    (s, type(s).__name__))


def flatten_as(spec, value, what):
    """The leaves of ``value`` in the structure of ``spec`` (TensorSpec leaves); a value whose
    structure differs is a TypeError naming both."""
    if isinstance(spec, TensorSpec):
        return [value]
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [x for k in sorted(spec) for x in flatten_as(spec[k], value[k], what)]
    if isinstance(spec, (tuple, list)) and isinstance(value, (tuple, list)) and len(spec) == len(value):
        return [x for s, v in zip(spec, value) for x in flatten_as(s, v, what)]
    raise TypeError("%s: the value %r does not have the structure of %r" % (what, value, spec))


def pack(template, leaves, is_leaf):
    """``template``'s structure with its leaves replaced, in order, by ``leaves``."""
    it = iter(leaves)

    def build(t):
        if is_leaf(t):
            return next(it)
        if isinstance(t, dict):
            vals = {k: build(t[k]) for k in sorted(t)}
            return type(t)((k, vals[k]) for k in t) if type(t) is not dict else {k: vals[k] for k in sorted(t)}
        if _is_namedtuple(t):
            return type(t)(*[build(v) for v in t])
        return tuple(build(v) for v in t)  # lists come back as tuples, as tf.data does
    return build(template)


def is_spec(x):
    return isinstance(x, TensorSpec)


def to_array(value, what):
    """A component from a user's value: numpy arrays keep their dtype; Python floats become
    float32 and ints int32, as TensorFlow converts them."""
    if isinstance(value, _fw.Tensor):
        from .._values import _eager_value  # TF2's eager tensor (computed from constants): its value
        v = _eager_value(value)
        value = value if v is None or isinstance(value, _fw.Variable) else np.asarray(v)
    if isinstance(value, _fw.Tensor):
        raise TypeError("%s: %s is a symbolic weft.Tensor; datasets are built from values (numpy arrays, "
                        "lists, numbers, tensors computed from constants)" % (what, value.name))
    arr = _fw._numpy_value(value)
    if arr.dtype.kind in "USO":
        raise TypeError("%s: a component of dtype %s (%r...): weft tensors hold numbers and bools, not strings "
                        "or objects" % (what, arr.dtype, arr.ravel()[:1]))
    try:
        _fw.as_dtype(arr.dtype)
    except Exception:
        raise TypeError("%s: numpy dtype %s is not a weft dtype (float32, float64, int32, int64, uint8, bool, "
                        "float16)" % (what, arr.dtype)) from None
    return arr


def batched(spec, batch_size, drop_remainder):
    """The spec of ``spec``'s elements batched by ``batch_size`` (int >= 1, else a ValueError):
    a new first dim, ``batch_size`` with ``drop_remainder``, else None."""
    if batch_size < 1:
        raise ValueError("Dataset.batch: batch_size must be >= 1, got %d" % batch_size)
    dim = batch_size if drop_remainder else None
    return pack(spec, [TensorSpec(None if s.shape is None else (dim,) + tuple(s.shape), s.dtype)
                       for s in flatten(spec, is_spec)], is_spec)


def check_slices(arrays):
    """``arrays`` (from_tensor_slices' components) after checking they can be sliced together."""
    for a in arrays:
        if a.ndim == 0:
            raise ValueError("Dataset.from_tensor_slices: a component is a scalar (%r); components are sliced "
                             "along dim 0 and need rank >= 1" % (a,))
    if len({a.shape[0] for a in arrays}) > 1:
        raise ValueError("Dataset.from_tensor_slices: components differ in their first dim: %s" %
                         [a.shape for a in arrays])
    return arrays


def is_value_leaf(x):
    """Leaves of a user's nested value: anything but tuples and dicts (lists are values, as in TF)."""
    return not isinstance(x, (tuple, dict))


class DatasetSpec(TensorSpec):
    """The spec of a component that is itself a dataset (tf.data.DatasetSpec): what ``window``
    yields. ``element_spec``: its elements' spec."""

    def __init__(self, element_spec):
        self.element_spec = element_spec
        self.shape, self.dtype, self.name = TensorShape(()), None, None

    def is_compatible_with(self, other):
        return isinstance(other, DatasetSpec)

    def __eq__(self, other):
        return isinstance(other, DatasetSpec) and other.element_spec == self.element_spec

    def __hash__(self):
        return hash(repr(self.element_spec))

    def __repr__(self):
        return "DatasetSpec(%r, TensorShape([]))" % (self.element_spec,)


def has_datasets(spec):
    return any(isinstance(s, DatasetSpec) for s in flatten(spec, is_spec))
