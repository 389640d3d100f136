"""Neural-network ops (NHWC layouts), named as in ``tf.nn``.

    h = weft.nn.relu(weft.nn.conv2d(x, w, strides=1, padding="SAME") + b)
    loss = weft.reduce_mean(weft.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
"""
from .framework import Tensor, convert_to_tensor
from .ops import raw_ops, sigmoid, tanh, cast  # noqa: F401  (re-exported as weft.nn.sigmoid, ...)


def _pair(v, what):
    """TF accepts 1, [1, 1] or [1, 1, 1, 1] (NHWC) for strides and sizes; weft's ops take (h, w)."""
    if isinstance(v, int):
        return [v, v]
    v = [int(x) for x in v]
    if len(v) == 4:
        if v[0] != 1 or v[3] != 1:
            raise ValueError("%s over the batch or channel dim is not supported: %s" % (what, v))
        return v[1:3]
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise ValueError("%s must be an int, 2 or 4 values, got %s" % (what, v))
    return v


def relu(features, name=None):
    """max(features, 0) (op Relu)."""
    return raw_ops.Relu(features, name=name)


def relu6(features, name=None):
    """min(max(features, 0), 6) (op Relu6)."""
    return raw_ops.Relu6(features, name=name)


def leaky_relu(features, alpha=0.2, name=None):
    """features if > 0 else alpha * features (op LeakyRelu)."""
    return raw_ops.LeakyRelu(features, alpha=float(alpha), name=name)


def elu(features, name=None):
    """features if > 0 else exp(features) - 1 (op Elu)."""
    return raw_ops.Elu(features, name=name)


def softplus(features, name=None):
    """log(1 + exp(features)) (op Softplus)."""
    return raw_ops.Softplus(features, name=name)


def softmax(logits, axis=-1, name=None):
    """exp(x) / sum(exp(x)) over the last axis (op Softmax)."""
    if axis not in (-1, None):
        raise NotImplementedError("weft.nn.softmax works over the last axis only")
    return raw_ops.Softmax(logits, name=name)


def log_softmax(logits, axis=-1, name=None):
    """x - log(sum(exp(x))) over the last axis (op LogSoftmax)."""
    if axis not in (-1, None):
        raise NotImplementedError("weft.nn.log_softmax works over the last axis only")
    return raw_ops.LogSoftmax(logits, name=name)


def softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-row cross-entropy of probability ``labels`` [batch, classes] and ``logits``."""
    logits = convert_to_tensor(logits)
    return raw_ops.SoftmaxCrossEntropyWithLogits(logits, convert_to_tensor(labels, logits.dtype if not isinstance(labels, Tensor) else None), name=name)[0]


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Per-row cross-entropy of class indices ``labels`` [batch] (int32/int64) and ``logits`` [batch, classes]."""
    return raw_ops.SparseSoftmaxCrossEntropyWithLogits(logits, labels, name=name)[0]


def bias_add(value, bias, name=None):
    """value + bias along the last axis (op BiasAdd)."""
    return raw_ops.BiasAdd(value, bias, name=name)


def conv2d(input, filters, strides=1, padding="VALID", dilations=None, name=None):
    """2-D convolution of ``input`` [N, H, W, C] with ``filters`` [KH, KW, C, F] (op Conv2D).

    strides, dilations: an int, (h, w) or TF's [1, h, w, 1]. padding: "VALID" or "SAME".
    """
    return raw_ops.Conv2D(input, filters, strides=_pair(strides, "strides"), padding=padding.upper(),
                          dilations=_pair(dilations or 1, "dilations"), name=name)


def depthwise_conv2d(input, filter, strides=1, padding="VALID", dilations=None, name=None):
    """Depthwise 2-D convolution with ``filter`` [KH, KW, C, multiplier] (op DepthwiseConv2D)."""
    return raw_ops.DepthwiseConv2D(input, filter, strides=_pair(strides, "strides"), padding=padding.upper(),
                                   dilations=_pair(dilations or 1, "dilations"), name=name)


def max_pool2d(input, ksize, strides, padding="VALID", name=None):
    """Max over ``ksize`` windows of ``input`` [N, H, W, C] (op MaxPool)."""
    return raw_ops.MaxPool(input, ksize=_pair(ksize, "ksize"), strides=_pair(strides, "strides"),
                           padding=padding.upper(), name=name)


def avg_pool2d(input, ksize, strides, padding="VALID", name=None):
    """Mean over ``ksize`` windows of ``input`` [N, H, W, C] (op AvgPool)."""
    return raw_ops.AvgPool(input, ksize=_pair(ksize, "ksize"), strides=_pair(strides, "strides"),
                           padding=padding.upper(), name=name)


max_pool = max_pool2d
avg_pool = avg_pool2d


def dropout(x, rate, seed=0, name=None):
    """Zeroes each element with probability ``rate`` and scales the rest by 1 / (1 - rate) (op Dropout)."""
    return raw_ops.Dropout(x, rate=float(rate), seed=int(seed or 0), name=name)[0]


def fused_batch_norm(x, scale, offset, mean, variance, epsilon=1e-3, is_training=True, name=None):
    """Batch norm over the last axis; returns (y, batch_mean, batch_variance) (op FusedBatchNorm)."""
    return raw_ops.FusedBatchNorm(x, scale, offset, mean, variance, epsilon=float(epsilon),
                                  is_training=bool(is_training), name=name)
