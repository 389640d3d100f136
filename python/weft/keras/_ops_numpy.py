"""More of Keras 3's ``keras.ops``: its numpy-like functions (reductions, elementwise math,
shapes and layout), composed of weft ops with Keras' names, signatures and defaults
(_ops_nn.py: keras.ops.nn's losses, attention, normalizations and the control flow;
_ops_stats.py: comparisons, NaN-aware reductions, statistics and searching). Each works on values (``ops.cumsum(np.arange(4))``) and on graph
tensors (in a Lambda layer, a custom layer's call, a tf.function step). Shapes that decide how
the ops are laid out (an axis length for cumprod, a matrix's size for diagonal) must be known
when the graph is built; otherwise a ValueError says which.
"""
import builtins
import math as _pymath

import numpy as np

from .. import array_ops as _a, math as _m, ops as _o
from .. import functional_ops as _fn, manip_ops as _mo
from ..framework import convert_to_tensor as _t, float32


def _rank(x, what):
    if x.shape is None:
        raise ValueError("keras.ops.%s: the input's rank must be known, got %s" % (what, x.name))
    return len(x.shape)


def _axis(axis, rank, what):
    a = int(axis)
    if not -rank <= a < rank:
        raise ValueError("keras.ops.%s: axis %d is out of range for rank %d" % (what, a, rank))
    return a % rank


def _float(x):
    x = _t(x)
    return x if x.dtype.is_floating else _o.cast(x, float32)


def _flat_or(x, axis):
    """(x, axis) with axis None meaning the flattened tensor's axis 0, as numpy."""
    x = _t(x)
    return (_o.reshape(x, [-1]), 0) if axis is None else (x, axis)


# ---- running reductions --------------------------------------------------------------------
def cumsum(x, axis=None, dtype=None):
    x, axis = _flat_or(x, axis)
    if dtype is not None:
        x = _o.cast(x, dtype)
    return _m.cumsum(x, axis=_axis(axis, _rank(x, "cumsum"), "cumsum"))


def cumprod(x, axis=None, dtype=None):
    """Running products: out[..., i] = prod(x[..., :i + 1]), as the product over a lower-triangle
    mask (no log, so zeros and negatives are exact; O(n^2) in the axis length n)."""
    x, axis = _flat_or(x, axis)
    if dtype is not None:
        x = _o.cast(x, dtype)
    rank = _rank(x, "cumprod")
    axis = _axis(axis, rank, "cumprod")
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.ops.cumprod: axis %d of %s has an unknown length" % (axis, x.name))
    last = moveaxis(x, axis, -1)
    lower = np.tril(np.ones((int(n), int(n)), bool))  # [i, j]: j <= i
    spread = _o.expand_dims(last, -2) * _o.ones_like(_o.expand_dims(last, -1))  # [..., i, j] = x_j
    picked = _o.where(_o.broadcast_to(_t(lower), _o.shape(spread)), spread, _o.ones_like(spread))
    return moveaxis(_o.reduce_prod(picked, axis=-1), -1, axis)


def count_nonzero(x, axis=None):
    return _m.count_nonzero(x, axis=axis, dtype="int32")


# ---- elementwise ---------------------------------------------------------------------------
def isnan(x):
    return _m.is_nan(_float(x))


def isinf(x):
    return _m.is_inf(_float(x))


def isfinite(x):
    return _m.is_finite(_float(x))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +inf -> ``posinf`` (default: the dtype's largest), -inf -> ``neginf``."""
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    big = float(np.finfo(x.dtype.as_numpy_dtype).max)
    fill = lambda v: _o.zeros_like(x) + v  # noqa: E731
    x = _o.where(_m.is_nan(x), fill(nan), x)
    x = _o.where(_o.equal(x, fill(np.inf)), fill(big if posinf is None else posinf), x)
    return _o.where(_o.equal(x, fill(-np.inf)), fill(-big if neginf is None else neginf), x)


def logaddexp(x1, x2):
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|))."""
    x1, x2 = _float(x1), _float(x2)
    return _o.maximum(x1, x2) + _m.log1p(_o.exp(-_o.abs(x1 - x2)))


def log2(x):
    return _o.log(_float(x)) / _pymath.log(2.0)


def log10(x):
    return _o.log(_float(x)) / _pymath.log(10.0)


def exp2(x):
    return _o.exp(_float(x) * _pymath.log(2.0))


def hypot(x1, x2):
    x1, x2 = _float(x1), _float(x2)
    return _o.sqrt(_o.square(x1) + _o.square(x2))


def reciprocal(x):
    return _o.reciprocal(_float(x))


def deg2rad(x):
    return _float(x) * (np.pi / 180.0)


def rad2deg(x):
    return _float(x) * (180.0 / np.pi)


def cbrt(x):
    x = _float(x)
    return _o.sign(x) * _o.pow(_o.abs(x), 1.0 / 3.0)


def trunc(x):
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    return _o.sign(x) * _m.floor(_o.abs(x))


def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    x1 = _float(x1)
    x2 = _o.cast(_t(x2), x1.dtype) * _o.ones_like(x1)
    return _o.where(_o.less(x1, _o.zeros_like(x1)), _o.zeros_like(x1),
                    _o.where(_o.greater(x1, _o.zeros_like(x1)), _o.ones_like(x1), x2))


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    x1, x2 = _float(x1), _float(x2)
    close = _o.less_equal(_o.abs(x1 - x2), atol + rtol * _o.abs(x2))
    if equal_nan:
        close = _o.logical_or(close, _o.logical_and(_m.is_nan(x1), _m.is_nan(x2)))
    return close


def logical_xor(x1, x2):
    return _m.logical_xor(_o.cast(_t(x1), "bool"), _o.cast(_t(x2), "bool"))


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0."""
    x = _float(x)
    zero = _o.equal(x, _o.zeros_like(x))
    safe = _o.where(zero, _o.ones_like(x), x) * np.pi
    return _o.where(zero, _o.ones_like(x), _m.sin(safe) / safe)


tan = _m.tan
sinh = _m.sinh
cosh = _m.cosh
arcsin = _m.asin
arccos = _m.acos
arctan = _m.atan
arctan2 = _m.atan2  # Keras' arctan2(x1, x2) is atan2(y=x1, x=x2)
arcsinh = _m.asinh
arccosh = _m.acosh
arctanh = _m.atanh
erfc = _m.erfc
divide_no_nan = _m.divide_no_nan
fabs = _o.abs


# ---- shapes and layout ---------------------------------------------------------------------
def moveaxis(x, source, destination):
    x = _t(x)
    rank = _rank(x, "moveaxis")
    src = [_axis(a, rank, "moveaxis") for a in np.atleast_1d(source)]
    dst = [_axis(a, rank, "moveaxis") for a in np.atleast_1d(destination)]
    if len(src) != len(dst):
        raise ValueError("keras.ops.moveaxis: %d source and %d destination axes" % (len(src), len(dst)))
    order = [a for a in builtins.range(rank) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _o.transpose(x, order) if order != list(builtins.range(rank)) else x


def ravel(x):
    return _o.reshape(x, [-1])


def ndim(x):
    return _rank(_t(x), "ndim")


def size(x):
    return _o.size(_t(x))


def flip(x, axis=None):
    x = _t(x)
    axes = list(builtins.range(_rank(x, "flip"))) if axis is None else list(np.atleast_1d(axis))
    return _mo.reverse(x, axes)


def roll(x, shift, axis=None):
    x = _t(x)
    if axis is None:
        return _o.reshape(_mo.roll(_o.reshape(x, [-1]), shift, 0), _o.shape(x))
    return _mo.roll(x, shift, axis)


def repeat(x, repeats, axis=None):
    return _mo.repeat(x, repeats, axis)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The ``offset`` diagonal of the matrices on axes (axis1, axis2), as a new last axis."""
    x = _t(x)
    rank = _rank(x, "diagonal")
    if rank < 2:
        raise ValueError("keras.ops.diagonal needs a tensor of rank >= 2, got shape %s" % (x.shape,))
    a1, a2 = _axis(axis1, rank, "diagonal"), _axis(axis2, rank, "diagonal")
    if a1 == a2:
        raise ValueError("keras.ops.diagonal: axis1 and axis2 are the same axis (%d)" % a1)
    m, n = x.shape[a1], x.shape[a2]
    if m is None or n is None:
        raise ValueError("keras.ops.diagonal: the matrix dims of %s must be known, got %s" % (x.name, x.shape))
    m, n, k = int(m), int(n), int(offset)
    rows = np.arange(builtins.max(0, -k), builtins.max(builtins.min(m, n - k), builtins.max(0, -k)))
    moved = moveaxis(x, [a1, a2], [-2, -1])
    flat = _o.reshape(moved, _o.concat([_o.shape(moved)[:-2], [m * n]], 0))
    return _o.gather(flat, _t((rows * n + rows + k).astype(np.int32)), axis=-1)


def diag(x, k=0):
    """A 1-D input: the square matrix with it on diagonal ``k``; a 2-D input: its diagonal ``k``."""
    x = _t(x)
    rank = _rank(x, "diag")
    if rank == 2:
        return diagonal(x, k)
    if rank != 1:
        raise ValueError("keras.ops.diag takes a 1-D or 2-D tensor, got shape %s" % (x.shape,))
    n = x.shape[0]
    if n is None:
        raise ValueError("keras.ops.diag: the length of %s must be known" % x.name)
    n, k = int(n), int(k)
    size_ = n + builtins.abs(k)
    rows = np.arange(n) + builtins.max(0, -k)
    cols = rows + k
    index = np.stack([rows, cols], 1).astype(np.int32)
    return _a.scatter_nd(_t(index), x, [size_, size_])


def trace(x, offset=0, axis1=0, axis2=1):
    return _o.reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1)


def outer(x1, x2):
    return _o.reshape(x1, [-1, 1]) * _o.reshape(x2, [1, -1])


def inner(x1, x2):
    """Sums over the last axes of both (scalars multiply)."""
    x1, x2 = _t(x1), _t(x2)
    r1, r2 = _rank(x1, "inner"), _rank(x2, "inner")
    if r1 == 0 or r2 == 0:
        return x1 * x2
    return _a.tensordot(x1, x2, [[r1 - 1], [r2 - 1]])


def vdot(x1, x2):
    return _o.reduce_sum(ravel(x1) * ravel(x2))


tensordot = _a.tensordot


def take_along_axis(x, indices, axis=None):
    """x's values at ``indices`` along ``axis`` (numpy's): indices have x's rank, the other dims
    broadcast; as a one-hot contraction, so x must be a float or int tensor."""
    x = _t(x)
    indices = _o.cast(_t(indices), "int32")
    if axis is None:
        x, indices, axis = _o.reshape(x, [-1]), _o.reshape(indices, [-1]), 0
    rank = _rank(x, "take_along_axis")
    axis = _axis(axis, rank, "take_along_axis")
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.ops.take_along_axis: axis %d of %s has an unknown length" % (axis, x.name))
    xl, il = moveaxis(x, axis, -1), moveaxis(indices, axis, -1)
    il = _o.where(_o.less(il, _o.zeros_like(il)), il + int(n), il)  # numpy's negative indices
    hot = _o.one_hot(il, int(n), dtype=x.dtype)  # [..., k, n]
    return moveaxis(_o.reduce_sum(hot * _o.expand_dims(xl, -2), axis=-1), -1, axis)


def append(x1, x2, axis=None):
    if axis is None:
        return _o.concat([ravel(x1), ravel(x2)], 0)
    return _o.concat([x1, x2], axis)


def _at_least(x, rank):
    x = _t(x)
    while _rank(x, "stack") < rank:
        x = _o.expand_dims(x, 0 if len(x.shape) == 0 or rank == 2 else -1)
    return x


def hstack(xs):
    xs = [_t(x) for x in xs]
    return _o.concat(xs, 0 if builtins.all(_rank(x, "hstack") == 1 for x in xs) else 1)


def vstack(xs):
    return _o.concat([_at_least(x, 2) for x in xs], 0)


def dstack(xs):
    out = []
    for x in xs:
        x = _t(x)
        r = _rank(x, "dstack")
        x = _o.reshape(x, [1, -1, 1]) if r <= 1 else (_o.expand_dims(x, -1) if r == 2 else x)
        out.append(x)
    return _o.concat(out, 2)


def unstack(x, num=None, axis=0):
    return _a.unstack(x, num=num, axis=axis)


def diff(a, n=1, axis=-1):
    a = _t(a)
    rank = _rank(a, "diff")
    axis = _axis(axis, rank, "diff")
    for _ in builtins.range(int(n)):
        hi = [builtins.slice(None)] * rank
        lo = [builtins.slice(None)] * rank
        hi[axis], lo[axis] = builtins.slice(1, None), builtins.slice(None, -1)
        a = a[tuple(hi)] - a[tuple(lo)]
    return a


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    start_t, stop_t = _float(start), _float(stop)
    step = (stop_t - start_t) / builtins.max(num - 1 if endpoint else num, 1)
    end = stop_t if endpoint else stop_t - step
    out = _a.linspace(start_t, end, num, axis=axis) if num > 1 or endpoint else _o.expand_dims(start_t, axis)
    if dtype is not None:
        out = _o.cast(out, dtype)
    return (out, step) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    return _o.exp(linspace(start, stop, num, endpoint, axis=axis) * _pymath.log(base)) if dtype is None else \
        _o.cast(_o.exp(linspace(start, stop, num, endpoint, axis=axis) * _pymath.log(base)), dtype)


def tri(N, M=None, k=0, dtype=None):
    return _o.cast(_t(np.tri(int(N), None if M is None else int(M), int(k))), dtype or float32)


def identity(n, dtype=None):
    return _a.eye(int(n), dtype=dtype or float32)


def full_like(x, fill_value, dtype=None):
    x = _t(x)
    return _o.cast(_o.zeros_like(x), dtype or x.dtype) + _o.cast(_t(fill_value), dtype or x.dtype)


def empty(shape, dtype=None):
    return _o.zeros(shape, dtype or float32)


def empty_like(x, dtype=None):
    x = _t(x)
    return _o.cast(_o.zeros_like(x), dtype or x.dtype)


def amax(x, axis=None, keepdims=False):
    return _o.reduce_max(x, axis=axis, keepdims=keepdims)


def amin(x, axis=None, keepdims=False):
    return _o.reduce_min(x, axis=axis, keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    return amax(x, axis, keepdims) - amin(x, axis, keepdims)


def average(x, axis=None, weights=None):
    x = _float(x)
    if weights is None:
        return _o.reduce_mean(x, axis=axis)
    w = _o.cast(_t(weights), x.dtype)
    if axis is not None and w.shape is not None and len(w.shape) == 1 and _rank(x, "average") > 1:
        shape = [1] * len(x.shape)
        shape[_axis(axis, len(x.shape), "average")] = -1
        w = _o.reshape(w, shape)
    return _o.reduce_sum(x * w, axis=axis) / _o.reduce_sum(w * _o.ones_like(x), axis=axis)


def nonzero(x):
    """A tuple of int32 index vectors, one per dimension, of x's nonzero entries (numpy's order)."""
    x = _t(x)
    where = _o.where(_o.not_equal(x, _o.zeros_like(x)))  # [count, rank]
    return tuple(_o.cast(c, "int32") for c in _a.unstack(where, num=_rank(x, "nonzero"), axis=1))


def multi_hot(inputs, num_classes, axis=-1, dtype=None):
    """1 at every class id in the last axis of ``inputs`` (a batch of id lists)."""
    hot = _o.one_hot(_o.cast(_t(inputs), "int32"), int(num_classes), dtype=dtype or float32)
    return _o.reduce_max(hot, axis=-2)


def select(condlist, choicelist, default=0):
    """choicelist[i] where condlist[i] holds first, else ``default``."""
    choicelist = [_t(c) for c in choicelist]
    out = _o.zeros_like(choicelist[0]) + _o.cast(_t(default), choicelist[0].dtype)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = _o.where(_o.cast(_t(cond), "bool"), choice, out)
    return out


def in_top_k(targets, predictions, k):
    return _m.in_top_k(targets, predictions, k)


def normalize(x, axis=-1, order=2, epsilon=None):
    if order != 2:
        raise NotImplementedError("keras.ops.normalize: weft normalizes by the L2 norm (order=2), got %r" % (order,))
    return _m.l2_normalize(x, axis=axis, epsilon=1e-12 if epsilon is None else epsilon)


def is_tensor(x):
    return _mo.is_tensor(x)


def dtype(x):
    return _t(x).dtype.name


def slice(inputs, start_indices, shape):  # noqa: A001 (Keras' name)
    return _o.slice(inputs, start_indices, shape)


def get_item(x, key):
    return _t(x)[key]


def copy(x):
    return _o.identity(x)


def array(x, dtype=None):
    from ..framework import as_dtype
    return _t(x) if dtype is None else _o.cast(_t(x), as_dtype(dtype))


# ---- more numpy-likes ----------------------------------------------------------------------
def logaddexp2(x1, x2):
    return logaddexp(_float(x1) * _pymath.log(2.0), _float(x2) * _pymath.log(2.0)) / _pymath.log(2.0)


def fliplr(x):
    return flip(x, 1)


def flipud(x):
    return flip(x, 0)


def rot90(array, k=1, axes=(0, 1)):
    """numpy's rot90: k quarter turns from the first axis toward the second."""
    x = _t(array)
    a, b = axes
    k = int(k) % 4
    if k == 1:
        return flip(swapaxes_(x, a, b), a)
    if k == 2:
        return flip(flip(x, a), b)
    if k == 3:
        return swapaxes_(flip(x, a), a, b)
    return x


def swapaxes_(x, a, b):
    rank = _rank(x, "rot90")
    perm = list(builtins.range(rank))
    a, b = _axis(a, rank, "rot90"), _axis(b, rank, "rot90")
    perm[a], perm[b] = perm[b], perm[a]
    return _o.transpose(x, perm)


def diagflat(x, k=0):
    return diag(ravel(x), k)


def kron(x1, x2):
    """The Kronecker product of two matrices (or vectors)."""
    a, b = _t(x1), _t(x2)
    ra, rb = _rank(a, "kron"), _rank(b, "kron")
    if ra != rb or ra not in (1, 2):
        raise NotImplementedError("keras.ops.kron: two vectors or two matrices, got ranks %d and %d" % (ra, rb))
    if ra == 1:
        return _o.reshape(_o.expand_dims(a, 1) * _o.expand_dims(b, 0), [-1])
    (m, n), (p, q) = a.shape, b.shape
    if None in (m, n, p, q):
        raise ValueError("keras.ops.kron: the matrix dims must be known, got %s and %s" % (a.shape, b.shape))
    out = _o.reshape(a, [m, 1, n, 1]) * _o.reshape(b, [1, p, 1, q])
    return _o.reshape(out, [m * p, n * q])


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    out = _o.exp(linspace(_o.log(_float(start)), _o.log(_float(stop)), num, endpoint, axis=axis))
    return out if dtype is None else _o.cast(out, dtype)


def _split_at(x, parts, axis, what):
    x = _t(x)
    if isinstance(parts, int):
        return _o.split(x, parts, axis)
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.ops.%s: axis %d has an unknown length" % (what, axis))
    return _pieces(x, [0] + [int(c) for c in parts] + [int(n)], axis)


def _pieces(x, cuts, axis):
    """x[cuts[i]:cuts[i + 1]] along ``axis``, for each i (slices: weft's Split takes equal parts)."""
    lead = (builtins.slice(None),) * _axis(axis, _rank(x, "split"), "split")
    return [x[lead + (builtins.slice(a, b),)] for a, b in zip(cuts, cuts[1:])]


def hsplit(x, indices_or_sections):
    return _split_at(x, indices_or_sections, 1 if _rank(_t(x), "hsplit") > 1 else 0, "hsplit")


def vsplit(x, indices_or_sections):
    return _split_at(x, indices_or_sections, 0, "vsplit")


def dsplit(x, indices_or_sections):
    return _split_at(x, indices_or_sections, 2, "dsplit")


def array_split(x, indices_or_sections, axis=0):
    """Like split, but sections need not divide the axis evenly: the first n % k parts are 1 longer."""
    x = _t(x)
    if not isinstance(indices_or_sections, int):
        return _split_at(x, indices_or_sections, axis, "array_split")
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.ops.array_split: axis %d has an unknown length" % axis)
    k = int(indices_or_sections)
    sizes = [int(n) // k + (1 if i < int(n) % k else 0) for i in builtins.range(k)]
    return _pieces(x, list(np.cumsum([0] + sizes)), axis)


def meshgrid(*x, indexing="xy"):
    return _mo.meshgrid(*x, indexing=indexing)


def unravel_index(indices, shape):
    """A tuple of coordinate tensors, one per dim of ``shape`` (C order)."""
    idx = _o.cast(_t(indices), "int64")
    out = []
    for d in reversed([int(s) for s in shape]):
        out.append(_m.floormod(idx, d))
        idx = _m.floordiv(idx, d)
    return tuple(reversed(out))


def vectorized_map(function, elements):
    return _fn.map_fn(function, elements)


def scatter(indices, values, shape):
    """Zeros of ``shape`` with ``values`` added at ``indices`` (duplicates add up)."""
    return _a.scatter_nd(_o.cast(_t(indices), "int32"), values, shape)


def scatter_update(inputs, indices, updates):
    return _a.tensor_scatter_nd_update(inputs, _o.cast(_t(indices), "int32"), updates)


def saturate_cast(x, dtype):
    """x cast to ``dtype`` with values clipped to its range first."""
    from ..framework import as_dtype
    d = as_dtype(dtype)
    info = np.iinfo(d.as_numpy_dtype) if not d.is_floating else np.finfo(d.as_numpy_dtype)
    x = _t(x)
    if x.dtype.is_floating or not d.is_floating:
        x = _o.minimum(_o.maximum(x, _o.cast(_t(float(info.min)), x.dtype)), _o.cast(_t(float(info.max)), x.dtype))
    return _o.cast(x, d)


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("builtins", "np", "swapaxes_")]
