"""``keras.ops``' comparisons, NaN-aware reductions, statistics and searching (Keras 3's
numpy-like functions: allclose, fmax, nansum, quantile, searchsorted, ...), composed of weft ops;
values and graph tensors alike, as _ops_numpy.py.
"""
import builtins

import numpy as np

from .. import array_ops as _a, math as _m, ops as _o
from ..framework import convert_to_tensor as _t
from ._ops_numpy import _axis, _float, _rank, diagonal, diff, isclose, moveaxis, ravel, trunc


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return _m.reduce_all(isclose(x1, x2, rtol, atol, equal_nan))


def fmax(x1, x2):
    """The larger of each pair, a NaN losing to a number (numpy's fmax)."""
    x1, x2 = _float(x1), _float(x2)
    return _o.where(_m.is_nan(x1), x2 * _o.ones_like(x1), _o.where(_m.is_nan(x2), x1, _o.maximum(x1, x2)))


def fmin(x1, x2):
    x1, x2 = _float(x1), _float(x2)
    return _o.where(_m.is_nan(x1), x2 * _o.ones_like(x1), _o.where(_m.is_nan(x2), x1, _o.minimum(x1, x2)))


def fmod(x1, x2):
    """The remainder with the dividend's sign (C's fmod): x1 - trunc(x1 / x2) * x2."""
    x1, x2 = _t(x1), _t(x2)
    if x1.dtype.is_floating or x2.dtype.is_floating:
        x1, x2 = _float(x1), _o.cast(x2, _float(x1).dtype)
        return x1 - trunc(x1 / x2) * x2
    return x1 - _o.cast(trunc(_o.cast(x1, "float64") / _o.cast(x2, "float64")), x1.dtype) * x2


def isposinf(x):
    x = _float(x)
    return _o.equal(x, _o.zeros_like(x) + np.inf)


def isneginf(x):
    x = _float(x)
    return _o.equal(x, _o.zeros_like(x) - np.inf)


def signbit(x):
    """True where x < 0 (and for -inf); weft does not tell -0.0 from 0.0 here."""
    x = _t(x)
    return _o.less(x, _o.zeros_like(x))


def _nan_reduce(reduce, fill):
    def f(x, axis=None, keepdims=False):
        x = _float(x)
        return reduce(_o.where(_m.is_nan(x), _o.zeros_like(x) + fill, x), axis=axis, keepdims=keepdims)
    return f


nansum = _nan_reduce(_o.reduce_sum, 0.0)
nanprod = _nan_reduce(_o.reduce_prod, 1.0)
nanmax = _nan_reduce(_o.reduce_max, -np.inf)
nanmin = _nan_reduce(_o.reduce_min, np.inf)


def nanmean(x, axis=None, keepdims=False):
    x = _float(x)
    ok = _o.cast(_o.logical_not(_m.is_nan(x)), x.dtype)
    return nansum(x, axis, keepdims) / _o.reduce_sum(ok, axis=axis, keepdims=keepdims)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoid rule along ``axis``: sum((y[1:] + y[:-1]) / 2 * dx), dx from x when given."""
    y = _float(y)
    rank = _rank(y, "trapezoid")
    axis = _axis(axis, rank, "trapezoid")
    hi = [builtins.slice(None)] * rank
    lo = [builtins.slice(None)] * rank
    hi[axis], lo[axis] = builtins.slice(1, None), builtins.slice(None, -1)
    widths = dx if x is None else diff(_float(x), axis=-1 if _rank(_t(x), "trapezoid") == 1 else axis)
    if x is not None and _rank(_t(x), "trapezoid") == 1 and rank > 1:
        shape = [1] * rank
        shape[axis] = -1
        widths = _o.reshape(widths, shape)
    return _o.reduce_sum((y[tuple(hi)] + y[tuple(lo)]) * 0.5 * widths, axis=axis)


def isin(x1, x2):
    """Whether each element of x1 is among x2's values."""
    x1, x2 = _t(x1), ravel(x2)
    eq = _o.equal(_o.expand_dims(x1, -1), _o.cast(x2, x1.dtype))
    return _m.reduce_any(eq, axis=-1)


# ---- statistics and searching ----------------------------------------------------------------
def bincount(x, weights=None, minlength=0, sparse=False):
    """Counts (or summed weights) of each value 0..n-1 in the 1-D int ``x``; n = max(x) + 1 when
    x comes from constants, else ``minlength`` (the graph is built before the values exist)."""
    if sparse:
        raise NotImplementedError("keras.ops.bincount: sparse=True (weft's tensors are dense)")
    x = _t(x)
    dtype = "int32" if weights is None else _float(weights).dtype
    return _m.bincount(x, weights=weights, minlength=int(minlength) or None, dtype=dtype)


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors along the last axis."""
    if axis is not None or (axisa, axisb, axisc) != (-1, -1, -1):
        raise NotImplementedError("keras.ops.cross: vectors along the last axis only")
    a, b = _float(x1), _float(x2)
    if a.shape is None or a.shape[-1] != 3 or b.shape is None or b.shape[-1] != 3:
        raise ValueError("keras.ops.cross: 3-vectors along the last axis, got %s and %s" % (a.shape, b.shape))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return _a.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def cdist(x1, x2, p=2.0):
    """Pairwise p-norm distances between the rows of x1 [..., m, d] and x2 [..., n, d]."""
    diff_ = _o.expand_dims(_float(x1), -2) - _o.expand_dims(_float(x2), -3)
    if p == 2:
        return _o.sqrt(_o.reduce_sum(_o.square(diff_), axis=-1))
    if p == 1:
        return _o.reduce_sum(_o.abs(diff_), axis=-1)
    return _o.pow(_o.reduce_sum(_o.pow(_o.abs(diff_), float(p)), axis=-1), 1.0 / float(p))


def vander(x, N=None, increasing=False):
    x = _float(x)
    n = x.shape[0] if N is None else N
    if n is None:
        raise ValueError("keras.ops.vander: the length of x must be known (or N given)")
    powers = np.arange(int(n))[::1 if increasing else -1].astype(x.dtype.as_numpy_dtype)
    return _o.pow(_o.expand_dims(x, -1), _t(powers))


def searchsorted(sorted_sequence, values, side="left"):
    """int32 insertion points of ``values`` into the sorted 1-D sequence (numpy's)."""
    if side not in ("left", "right"):
        raise ValueError("keras.ops.searchsorted: side must be 'left' or 'right', got %r" % (side,))
    seq, v = _t(sorted_sequence), _t(values)
    if _rank(seq, "searchsorted") != 1:
        raise NotImplementedError("keras.ops.searchsorted: a 1-D sorted sequence only, got shape %s" % (seq.shape,))
    v = _o.cast(v, seq.dtype)
    before = (_o.less if side == "left" else _o.less_equal)(seq, _o.expand_dims(v, -1))
    return _o.cast(_o.reduce_sum(_o.cast(before, "int32"), axis=-1), "int32")


def digitize(x, bins):
    """The bin index of each x for increasing ``bins`` (numpy's digitize, right=False)."""
    return searchsorted(bins, x, side="right")


def quantile(x, q, axis=None, method="linear", keepdims=False):
    """The q-th quantiles (q in [0, 1], a number or a 1-D list) along ``axis``, numpy's 'linear'
    method: sorted values interpolated at q (n - 1). The axis length must be known."""
    if method != "linear":
        raise NotImplementedError("keras.ops.quantile: method='linear' only, got %r" % (method,))
    x = _float(x)
    if axis is None:
        x, axis, full_rank = _o.reshape(x, [-1]), -1, _rank(x, "quantile")
    else:
        full_rank = None
    rank = _rank(x, "quantile")
    axis = _axis(axis, rank, "quantile")
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.ops.quantile: axis %d has an unknown length" % axis)
    ordered = _a.sort(moveaxis(x, axis, -1), axis=-1)  # [..., n]
    qs = np.atleast_1d(np.asarray(q, np.float64))
    pos = qs * (int(n) - 1)
    lo, hi = np.floor(pos).astype(np.int32), np.ceil(pos).astype(np.int32)
    frac = _t((pos - lo).astype(x.dtype.as_numpy_dtype))
    out = _o.gather(ordered, _t(lo), axis=-1) * (1.0 - frac) + _o.gather(ordered, _t(hi), axis=-1) * frac  # [..., k]
    out = moveaxis(out, -1, 0)  # numpy puts q's axis first
    if keepdims:
        if full_rank is not None:
            out = _o.reshape(out, [len(qs)] + [1] * full_rank)
        else:
            out = _o.expand_dims(out, axis + 1)
    return out[0] if np.ndim(q) == 0 else out


def percentile(x, q, axis=None, method="linear", keepdims=False):
    return quantile(x, np.asarray(q, np.float64) / 100.0, axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def corrcoef(x):
    """Pearson correlation coefficients of the rows of a 2-D x (variables in rows)."""
    x = _float(x)
    centred = x - _o.reduce_mean(x, axis=1, keepdims=True)
    cov = _o.matmul(centred, _o.transpose(centred))
    d = _o.sqrt(diagonal(cov))
    return cov / (_o.expand_dims(d, 1) * _o.expand_dims(d, 0))


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("builtins", "np")]
