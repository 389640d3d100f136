"""``tf.compat.v1.nn``: weft.nn plus the TF1 spellings graph-mode programs use."""
from ...nn import *  # noqa: F401,F403
from ...nn import max_pool2d, avg_pool2d, softmax_cross_entropy_with_logits
from ...framework import Tensor, convert_to_tensor
from ...nn import bias_add, elu
from ... import nn as _nn
from ...ops import cast, gather, greater, less, matmul, raw_ops, where
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
    return _nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name=name)


def embedding_lookup(params, ids, name=None, **unused):
    """Rows of ``params`` at ``ids`` (a gather along axis 0)."""
    return gather(params, ids, name=name)


def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """(mean, variance) of ``x`` over ``axes`` (the variance biased, as TF computes it)."""
    return _nn.moments(x, axes, keepdims=bool(keepdims or keep_dims), name=name)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon)); TF1's dim= for axis."""
    return _nn.l2_normalize(x, dim if axis is None else axis, epsilon, name=name)


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
