"""More of Keras 3's ``keras.ops`` (its numpy-like functions, the activations and losses of
``keras.ops.nn``, and the control flow of ``keras.ops.core``), composed of weft ops with Keras'
names, signatures and defaults. Each works on values (``ops.cumsum(np.arange(4))``) and on graph
tensors (in a Lambda layer, a custom layer's call, a tf.function step). Shapes that decide how
the ops are laid out (an axis length for cumprod, a matrix's size for diagonal) must be known
when the graph is built; otherwise a ValueError says which.
"""
import builtins
import math as _pymath

import numpy as np

from .. import array_ops as _a, math as _m, nn as _nn, ops as _o
from .. import control_flow_ops as _cf, functional_ops as _fn, manip_ops as _mo
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


# ---- losses of keras.ops.nn ----------------------------------------------------------------
def binary_crossentropy(target, output, from_logits=False):
    """Elementwise: -(t log p + (1 - t) log(1 - p)), p clipped to [1e-7, 1 - 1e-7]."""
    output = _float(output)
    target = _o.cast(_t(target), output.dtype)
    if from_logits:
        return _nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    p = _o.minimum(_o.maximum(output, 1e-7), 1.0 - 1e-7)
    return -(target * _o.log(p) + (1.0 - target) * _o.log(1.0 - p))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(t log p) over ``axis``, p the output normalized to sum 1 and clipped."""
    output = _float(output)
    target = _o.cast(_t(target), output.dtype)
    if from_logits:
        return -_o.reduce_sum(target * _nn.log_softmax(output, axis=axis), axis=axis)
    p = output / _o.reduce_sum(output, axis=axis, keepdims=True)
    p = _o.minimum(_o.maximum(p, 1e-7), 1.0 - 1e-7)
    return -_o.reduce_sum(target * _o.log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    output = _float(output)
    classes = output.shape[axis]
    if classes is None:
        raise ValueError("keras.ops.sparse_categorical_crossentropy: the class axis of %s has an unknown length"
                         % output.name)
    target = _t(target)
    if target.shape is not None and output.shape is not None and len(target.shape) == len(output.shape):
        target = _o.squeeze(target, [axis])
    hot = _o.one_hot(_o.cast(target, "int32"), int(classes), axis=axis, dtype=output.dtype)
    return categorical_crossentropy(hot, output, from_logits, axis)


def ctc_loss(target, output, target_length, output_length, mask_index=0):
    """Per-example CTC loss of (batch, max_length) integer targets and (batch, time, classes)
    logits, with each example's target length and time steps; the blank is class 0."""
    if mask_index != 0:
        raise NotImplementedError("keras.ops.ctc_loss: weft's blank is class 0 (mask_index=0), got %r" % (mask_index,))
    from ._python_losses import ctc
    output = _float(output)
    return ctc(_o.cast(_t(target), "int32"), output, _t(target_length), _t(output_length))


# ---- control flow (keras.ops.core) ---------------------------------------------------------
def cond(pred, true_fn, false_fn):
    return _cf.cond(pred, true_fn, false_fn)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """Keras' while_loop: loop_vars a tuple (or one tensor); body returns the same structure."""
    single = not isinstance(loop_vars, (tuple, list))
    state = (loop_vars,) if single else tuple(loop_vars)
    out = _cf.while_loop(lambda *v: cond(*v), lambda *v: _as_tuple(body(*v), single), state,
                         maximum_iterations=maximum_iterations)
    out = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return out[0] if single else out


def _as_tuple(value, single):
    return (value,) if single else tuple(value)


def fori_loop(lower, upper, body_fun, init_val):
    """val = body_fun(i, val) for i in [lower, upper)."""
    single = not isinstance(init_val, (tuple, list))
    state = (_o.cast(_t(lower), "int32"),) + ((init_val,) if single else tuple(init_val))

    def body(i, *val):
        new = body_fun(i, val[0] if single else tuple(val))
        return (i + 1,) + _as_tuple(new, single)

    out = _cf.while_loop(lambda i, *val: _o.less(i, _o.cast(_t(upper), "int32")), body, state)
    return out[1] if single else tuple(out[1:])


def map(f, xs):  # noqa: A001 (Keras' name)
    return _fn.map_fn(f, xs)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Keras' (jax's) scan: ``carry, y = f(carry, x)`` over xs' first axis; returns (carry, ys).
    One tensor as carry and as y; xs a tensor, or None with ``length`` steps (x None)."""
    init = _t(init)
    if xs is None:
        if length is None:
            raise ValueError("keras.ops.scan needs xs or length")
        xs_t, given = _a.range(int(length)), False
    else:
        xs_t, given = _t(xs), True
    probe_x = xs_t[0] if given else None
    _, y0 = f(init, probe_x)
    y0 = _t(y0)

    def step(acc, x):
        carry, y = f(acc[0], x if given else None)
        return (_o.cast(_t(carry), init.dtype), _o.cast(_t(y), y0.dtype))

    carries, ys = _fn.scan(step, xs_t, initializer=(init, _o.zeros_like(y0)), reverse=reverse)
    return carries[-1], ys


def switch(index, branches, *operands):
    return _fn.switch_case(_o.cast(_t(index), "int32"), [lambda b=b: b(*operands) for b in branches])


# ---- more numpy-likes ----------------------------------------------------------------------
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


def isin(x1, x2):
    """Whether each element of x1 is among x2's values."""
    x1, x2 = _t(x1), ravel(x2)
    eq = _o.equal(_o.expand_dims(x1, -1), _o.cast(x2, x1.dtype))
    return _m.reduce_any(eq, axis=-1)


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


def depth_to_space(x, block_size, data_format="channels_last"):
    return _nn.depth_to_space(x, block_size, "NHWC" if data_format == "channels_last" else "NCHW")


def space_to_depth(x, block_size, data_format="channels_last"):
    return _nn.space_to_depth(x, block_size, "NHWC" if data_format == "channels_last" else "NCHW")


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


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False, **kwargs):
    """softmax(q k^T * scale + bias, masked) v over inputs [batch, seq, heads, dim] (Keras' layout)."""
    if kwargs.get("flash_attention") or kwargs.get("attn_logits_soft_cap"):
        raise NotImplementedError("keras.ops.dot_product_attention: flash_attention / attn_logits_soft_cap")
    q, k, v = _float(query), _float(key), _float(value)
    dim = q.shape[-1]
    if dim is None:
        raise ValueError("keras.ops.dot_product_attention: the head dim must be known, got %s" % (q.shape,))
    from .. import linalg
    logits = linalg.einsum("BTNH,BSNH->BNTS", q, k) * (1.0 / _pymath.sqrt(int(dim)) if scale is None else scale)
    if bias is not None:
        logits = logits + _o.cast(_t(bias), logits.dtype)
    keep = None
    if mask is not None:
        keep = _o.cast(_t(mask), "bool")
    if is_causal:
        t, s = q.shape[1], k.shape[1]
        if t is None or s is None:
            raise ValueError("keras.ops.dot_product_attention: is_causal needs known sequence lengths")
        causal = _t(np.tril(np.ones((int(t), int(s)), bool)))
        keep = causal if keep is None else _o.logical_and(keep, causal)
    if keep is not None:
        logits = _o.where(_o.broadcast_to(keep, _o.shape(logits)), logits, _o.zeros_like(logits) - 1e9)
    weights = _nn.softmax(logits, axis=-1)
    return linalg.einsum("BNTS,BSNH->BTNH", weights, v)


def rms_normalization(x, scale=1, axis=-1, epsilon=None):
    x = _float(x)
    eps = 1e-6 if epsilon is None else epsilon
    return x * _o.rsqrt(_o.reduce_mean(_o.square(x), axis=axis, keepdims=True) + eps) * scale


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    x = _float(x)
    mean, var = _nn.moments(x, [axis], keepdims=True)
    out = (x - mean) * _o.rsqrt(var + (1e-3 if epsilon is None else epsilon))
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    x = _float(x)
    rank = _rank(x, "batch_normalization")
    axis = _axis(axis, rank, "batch_normalization")
    shape = [1] * rank
    shape[axis] = -1
    r = lambda t: None if t is None else _o.reshape(_o.cast(_t(t), x.dtype), shape)  # noqa: E731
    return _nn.batch_normalization(x, r(mean), r(variance), r(offset), r(scale), epsilon)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool((_nn.max_pool1d, _nn.max_pool2d), inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    return _pool((_nn.avg_pool1d, _nn.avg_pool2d), inputs, pool_size, strides, padding, data_format)


def _pool(fns, inputs, pool_size, strides, padding, data_format):
    """1-D pooling of [batch, steps, channels], 2-D of [batch, h, w, channels] inputs."""
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("keras.ops pooling: channels-last inputs only, got data_format=%r" % (data_format,))
    x = _t(inputs)
    rank = _rank(x, "max_pool")
    if rank not in (3, 4):
        raise NotImplementedError("keras.ops pooling: 1-D or 2-D (inputs of rank 3 or 4), got shape %s" % (x.shape,))
    return fns[rank - 3](x, pool_size, pool_size if strides is None else strides, padding.upper())


def saturate_cast(x, dtype):
    """x cast to ``dtype`` with values clipped to its range first."""
    from ..framework import as_dtype
    d = as_dtype(dtype)
    info = np.iinfo(d.as_numpy_dtype) if not d.is_floating else np.finfo(d.as_numpy_dtype)
    x = _t(x)
    if x.dtype.is_floating or not d.is_floating:
        x = _o.minimum(_o.maximum(x, _o.cast(_t(float(info.min)), x.dtype)), _o.cast(_t(float(info.max)), x.dtype))
    return _o.cast(x, d)


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


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("builtins", "np", "swapaxes_")]
