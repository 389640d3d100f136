"""``tf.compat.v1.nn``: weft.nn plus the TF1 spellings graph-mode programs use."""
from ...nn import *  # noqa: F401,F403
from ...nn import max_pool2d, avg_pool2d, softmax_cross_entropy_with_logits
from ...framework import Tensor, convert_to_tensor
from ...nn import bias_add, elu
from ...ops import (abs as _abs, cast, exp, gather, greater, less, log, matmul, maximum, raw_ops, reduce_mean,
                    reduce_sum, rsqrt, square, squeeze, stop_gradient, where)
from .random import seeds


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's dropout: keeps each element with probability ``keep_prob`` (or drops it with
    probability ``rate``) and scales what it keeps by 1 / keep_prob. The probability may be a
    number or a tensor (a placeholder fed 0.5 in training and 1.0 in evaluation); a number uses
    the Dropout op, a tensor compares RandomUniformLike(x) with it. ``noise_shape`` is not supported."""
    if noise_shape is not None:
        raise NotImplementedError("weft's dropout draws one mask element per input element; noise_shape is not "
                                  "supported")
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of keep_prob and rate")
    x = convert_to_tensor(x)
    s, s2 = seeds(seed)
    if not isinstance(keep_prob, Tensor) and not isinstance(rate, Tensor):
        drop = float(rate) if rate is not None else 1.0 - float(keep_prob)
        return raw_ops.Dropout(x, rate=drop, seed=s, seed2=s2, name=name)[0]
    keep = keep_prob if keep_prob is not None else 1.0 - convert_to_tensor(rate)
    keep = convert_to_tensor(keep, None if isinstance(keep, Tensor) else x.dtype)
    if keep.dtype != x.dtype:
        keep = cast(keep, x.dtype)
    kept = cast(less(raw_ops.RandomUniformLike(x, seed=s, seed2=s2), keep), x.dtype)
    return x * kept / keep


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=-1, name=None):
    """Per-row cross-entropy of probability ``labels`` and ``logits`` (last axis)."""
    return softmax_cross_entropy_with_logits(labels=labels, logits=logits, name=name)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise max(x, 0) - x * z + log(1 + exp(-|x|)), for logits x and labels z (TF's stable form)."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, None if isinstance(labels, Tensor) else logits.dtype)
    return maximum(logits, 0.0) - logits * labels + log(1.0 + exp(-_abs(logits)))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    return reduce_sum(square(t)) * 0.5


def embedding_lookup(params, ids, name=None, **unused):
    """Rows of ``params`` at ``ids`` (a gather along axis 0)."""
    return gather(params, ids, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of ``x`` over ``axes`` (the variance biased, as TF computes it)."""
    keep = bool(keepdims or keep_dims)
    mean = reduce_mean(x, axis=axes, keepdims=True)
    variance = reduce_mean(square(x - stop_gradient(mean)), axis=axes, keepdims=True)
    if not keep:
        mean, variance = squeeze(mean, axis=axes), squeeze(variance, axis=axes)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset (offset, scale may be None)."""
    inv = rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    y = (x - mean) * inv
    return y + offset if offset is not None else y


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    axis = dim if axis is None else axis
    return x * rsqrt(maximum(reduce_sum(square(x), axis=axis, keepdims=True), epsilon))


def xw_plus_b(x, weights, biases, name=None):
    """matmul(x, weights) + biases."""
    return bias_add(matmul(x, weights), biases, name=name)


def selu(features, name=None):
    """scale * (x if x > 0 else alpha * (exp(x) - 1)), with TF's SELU constants."""
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    x = convert_to_tensor(features)
    return scale * where(greater(x, 0.0), x, alpha * elu(x))


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """TF1's max_pool (NHWC only)."""
    if data_format != "NHWC":
        raise NotImplementedError("weft's pooling is NHWC only, got data_format=%r" % data_format)
    return max_pool2d(value if input is None else input, ksize, strides, padding, name=name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """TF1's avg_pool (NHWC only)."""
    if data_format != "NHWC":
        raise NotImplementedError("weft's pooling is NHWC only, got data_format=%r" % data_format)
    return avg_pool2d(value if input is None else input, ksize, strides, padding, name=name)
