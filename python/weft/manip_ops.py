"""Array manipulations TF programs use that compose from weft's ops: ``tf.reverse``, ``tf.roll``,
``tf.sequence_mask``, ``tf.meshgrid``, ``tf.unique``, ``tf.identity_n``, ``tf.tuple``,
``tf.is_tensor``. Their gradients are those of the ops they are made of (StridedSlice, Concat,
Tile, ...)."""
import builtins

import numpy as np

from . import framework as _fw
from . import ops as _ops
from .framework import Tensor, convert_to_tensor

__all__ = ["reverse", "roll", "sequence_mask", "meshgrid", "unique", "identity_n", "tuple", "is_tensor"]


def _axes(axis, rank, what):
    axes = [int(a) for a in (axis if isinstance(axis, (list, builtins.tuple, np.ndarray)) else [axis])]
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("%s: axis %d is out of range for a tensor of rank %d" % (what, a, rank))
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError("%s: axis %s names a dimension twice" % (what, axes))
    return out


def _static_ints(x, what, arg):
    if isinstance(x, Tensor):
        try:
            x = x.numpy()
        except Exception as e:  # noqa: BLE001 - a tensor with no value while the graph is built
            raise ValueError("%s: weft needs %s known when the graph is built (ints or a constant), got %s"
                             % (what, arg, x.name)) from e
    return x


def reverse(tensor, axis, name=None):
    """The tensor with the order of each dimension in ``axis`` reversed (TF's tf.reverse)."""
    x = convert_to_tensor(tensor)
    if x.shape is None:
        raise ValueError("reverse: %s has unknown rank" % x.name)
    axes = _axes(_static_ints(axis, "reverse", "axis"), len(x.shape), "reverse")
    index = [slice(None, None, -1) if d in axes else slice(None) for d in builtins.range(len(x.shape))]
    return x[builtins.tuple(index)] if axes else x


def roll(input, shift, axis, name=None):
    """Elements shifted along ``axis`` by ``shift`` (positive: toward higher indices), wrapping
    around (TF's tf.roll); ``shift`` and ``axis`` may be lists of equal length, and an axis named
    twice has its shifts added. Shifts must be known when the graph is built."""
    x = convert_to_tensor(input)
    if x.shape is None:
        raise ValueError("roll: %s has unknown rank" % x.name)
    shift = np.atleast_1d(_static_ints(shift, "roll", "shift")).astype(np.int64)
    axis = np.atleast_1d(_static_ints(axis, "roll", "axis")).astype(np.int64)
    if shift.shape != axis.shape:
        raise ValueError("roll: shift %s and axis %s must have the same length" % (list(shift), list(axis)))
    rank = len(x.shape)
    total = {}
    for s, a in zip(shift, axis):
        if not -rank <= a < rank:
            raise ValueError("roll: axis %d is out of range for a tensor of rank %d" % (a, rank))
        total[int(a) % rank] = total.get(int(a) % rank, 0) + int(s)
    for a, s in sorted(total.items()):
        n = x.shape[a]
        if n is None:  # a dimension known only when the step runs: gather at (j - shift) mod n
            from .array_ops import range as _range
            from .math import floormod
            size = _ops.shape(x)[a]
            x = _ops.gather(x, floormod(_range(size) - _fw.constant(s, size.dtype), size), axis=a)
            continue
        if n == 0:
            continue
        k = (-s) % n
        if k:
            lo = builtins.tuple([slice(None)] * a + [slice(k, None)])
            hi = builtins.tuple([slice(None)] * a + [slice(0, k)])
            x = _ops.concat([x[lo], x[hi]], a)
    return x


def sequence_mask(lengths, maxlen=None, dtype=_fw.bool_, name=None):
    """``mask[..., j] = j < lengths[...]`` with ``maxlen`` columns (default: the largest length)
    (TF's tf.sequence_mask)."""
    from .array_ops import range as _range
    lengths = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = _ops.reduce_max(lengths)
    maxlen = _ops.cast(convert_to_tensor(maxlen), lengths.dtype)
    mask = _ops.less(_range(maxlen), _ops.expand_dims(lengths, -1))
    return mask if _fw.as_dtype(dtype) == _fw.bool_ else _ops.cast(mask, dtype)


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors (TF's tf.meshgrid): ``indexing="xy"`` (default,
    Cartesian: the first two outputs' dims swapped) or ``"ij"`` (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError("meshgrid: unexpected arguments %s" % sorted(kwargs))
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    xs = [_ops.reshape(convert_to_tensor(a), [-1]) for a in args]
    n = len(xs)
    if n == 0:
        return []
    sizes = [_ops.shape(x) for x in xs]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    shape = _ops.concat(sizes, 0)
    out = []
    for i, x in enumerate(xs):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        view = [1] * n
        view[pos] = -1
        out.append(_ops.broadcast_to(_ops.reshape(x, view), shape))
    return out


def unique(x, out_idx=_fw.int32, name=None):
    """TF's tf.unique of a 1-D tensor with a value (constants, or at top level): ``(y, idx)`` with
    ``y`` the distinct values in order of first appearance and ``x == y[idx]``. A tensor without a
    value while the graph is built (a placeholder's) is a ValueError naming it: the output size
    depends on the data, which weft's graphs do not allow."""
    t = convert_to_tensor(x)
    try:
        v = np.asarray(t.numpy())
    except Exception as e:  # noqa: BLE001
        raise ValueError("unique: %s has no value while the graph is built; weft's unique needs a constant "
                         "(its output size depends on the data)" % t.name) from e
    if v.ndim != 1:
        raise ValueError("unique: x must be 1-D, got shape %s" % (v.shape,))
    _, first, inverse = np.unique(v, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return (_fw.constant(v[np.sort(first)], t.dtype),
            _fw.constant(rank[inverse.reshape(-1)].astype(_fw.as_dtype(out_idx).as_numpy_dtype), out_idx))


def identity_n(input, name=None):
    """Identity of each tensor of a list (TF's tf.identity_n)."""
    return [_ops.identity(convert_to_tensor(t)) for t in input]


def tuple(tensors, control_inputs=None, name=None):  # noqa: A001 - TF's tf.tuple
    """The tensors, each available only after all of them (and ``control_inputs``) are computed
    (TF's tf.tuple); None entries stay None."""
    present = [t for t in tensors if t is not None]
    deps = list(present) + list(control_inputs or [])
    g = _fw.get_default_graph()
    with g.control_dependencies(deps):
        return [None if t is None else _ops.identity(t) for t in tensors]


def is_tensor(x):
    """True for a weft tensor or variable (and sparse / ragged tensors), as tf.is_tensor."""
    from .ragged import RaggedTensor
    from .sparse import SparseTensor
    return isinstance(x, (Tensor, SparseTensor, RaggedTensor))
