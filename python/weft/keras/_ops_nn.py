"""``keras.ops``' neural-network pieces and control flow (Keras 3's keras.ops.nn and
keras.ops.core), composed of weft ops: the cross-entropies and CTC of keras.ops.nn, attention,
the normalizations and pooling, and cond / while_loop / fori_loop / map / scan / switch over
weft's control flow. Values and graph tensors alike, as _ops_numpy.py.
"""
import math as _pymath

import numpy as np

from .. import array_ops as _a, nn as _nn, ops as _o
from .. import control_flow_ops as _cf, functional_ops as _fn
from ..framework import convert_to_tensor as _t
from ._ops_numpy import _axis, _float, _rank


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


def depth_to_space(x, block_size, data_format="channels_last"):
    return _nn.depth_to_space(x, block_size, "NHWC" if data_format == "channels_last" else "NCHW")


def space_to_depth(x, block_size, data_format="channels_last"):
    return _nn.space_to_depth(x, block_size, "NHWC" if data_format == "channels_last" else "NCHW")


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


__all__ = [n for n in list(globals()) if not n.startswith("_") and n not in ("builtins", "np")]
