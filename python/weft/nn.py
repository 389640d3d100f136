"""Neural-network ops (NHWC layouts), named as in ``tf.nn``.

    h = weft.nn.relu(weft.nn.conv2d(x, w, strides=1, padding="SAME") + b)
    loss = weft.reduce_mean(weft.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
"""
from .framework import Tensor, convert_to_tensor
from . import ops as _o
from .ops import raw_ops, sigmoid, tanh, cast  # noqa: F401  (re-exported as weft.nn.sigmoid, ...)
from .math import erf, log1p, log_sigmoid, l2_normalize, top_k, in_top_k, softsign  # noqa: F401  (tf.nn.* as tf.math.*)


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


def _over_axis(op, logits, axis, name):
    """op (over the last axis) applied over ``axis``: that axis is swapped to the end and back."""
    x = convert_to_tensor(logits)
    if axis is None or axis == -1:
        return op(x, name=name)
    if x.shape is None:
        raise ValueError("softmax over axis %d needs a tensor of known rank" % axis)
    r = len(x.shape)
    a = axis + r if axis < 0 else axis
    if not 0 <= a < r:
        raise ValueError("softmax: axis %d out of range for shape %s" % (axis, x.shape))
    if a == r - 1:
        return op(x, name=name)
    perm = list(range(r))
    perm[a], perm[-1] = perm[-1], perm[a]
    return _o.transpose(op(_o.transpose(x, perm)), perm)


def softmax(logits, axis=-1, name=None):
    """exp(x) / sum(exp(x)) over ``axis`` (default the last) (op Softmax)."""
    return _over_axis(raw_ops.Softmax, logits, axis, name)


def log_softmax(logits, axis=-1, name=None):
    """x - log(sum(exp(x))) over ``axis`` (default the last) (op LogSoftmax)."""
    return _over_axis(raw_ops.LogSoftmax, logits, axis, name)


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


def _nhwc(data_format, what, layout="NHWC"):
    if data_format not in (None, layout, "channels_last"):
        raise NotImplementedError("weft.nn.%s: weft computes in %s only, got data_format=%r" % (what, layout, data_format))


def conv2d(input, filters, strides=1, padding="VALID", data_format="NHWC", dilations=None, name=None):
    """2-D convolution of ``input`` [N, H, W, C] with ``filters`` [KH, KW, C, F] (op Conv2D).

    strides, dilations: an int, (h, w) or TF's [1, h, w, 1]. padding: "VALID" or "SAME".
    """
    _nhwc(data_format, "conv2d")
    return raw_ops.Conv2D(input, filters, strides=_pair(strides, "strides"), padding=padding.upper(),
                          dilations=_pair(dilations or 1, "dilations"), name=name)


def depthwise_conv2d(input, filter, strides=1, padding="VALID", data_format=None, dilations=None, name=None):
    """Depthwise 2-D convolution with ``filter`` [KH, KW, C, multiplier] (op DepthwiseConv2D)."""
    _nhwc(data_format, "depthwise_conv2d")
    return raw_ops.DepthwiseConv2D(input, filter, strides=_pair(strides, "strides"), padding=padding.upper(),
                                   dilations=_pair(dilations or 1, "dilations"), name=name)


def max_pool2d(input, ksize, strides, padding="VALID", data_format="NHWC", name=None):
    """Max over ``ksize`` windows of ``input`` [N, H, W, C] (op MaxPool)."""
    _nhwc(data_format, "max_pool2d")
    return raw_ops.MaxPool(input, ksize=_pair(ksize, "ksize"), strides=_pair(strides, "strides"),
                           padding=padding.upper(), name=name)


def avg_pool2d(input, ksize, strides, padding="VALID", data_format="NHWC", name=None):
    """Mean over ``ksize`` windows of ``input`` [N, H, W, C] (op AvgPool)."""
    _nhwc(data_format, "avg_pool2d")
    return raw_ops.AvgPool(input, ksize=_pair(ksize, "ksize"), strides=_pair(strides, "strides"),
                           padding=padding.upper(), name=name)


max_pool = max_pool2d
avg_pool = avg_pool2d


def _one(v, what):
    """A 1-D size or stride: an int, [k] or TF's [1, k, 1]."""
    if isinstance(v, int):
        return v
    v = [int(x) for x in v]
    if len(v) == 3 and v[0] == 1 and v[2] == 1:
        return v[1]
    if len(v) != 1:
        raise ValueError("%s must be an int, [k] or [1, k, 1], got %s" % (what, v))
    return v[0]


def conv1d(input, filters, stride=1, padding="VALID", data_format="NWC", dilations=None, name=None):
    """1-D convolution of ``input`` [N, W, C] with ``filters`` [K, C, F]: Conv2D over a height of
    one, as TensorFlow computes it."""
    _nhwc(data_format, "conv1d", "NWC")
    x = _o.expand_dims(input, 1)
    w = _o.expand_dims(filters, 0)
    y = raw_ops.Conv2D(x, w, strides=[1, _one(stride, "stride")], padding=padding.upper(),
                       dilations=[1, _one(dilations or 1, "dilations")])
    return _o.squeeze(y, [1], name=name)


def _pool1d(op, input, ksize, strides, padding, data_format, what):
    _nhwc(data_format, what, "NWC")
    y = op(_o.expand_dims(input, 1), ksize=[1, _one(ksize, "ksize")], strides=[1, _one(strides, "strides")],
           padding=padding.upper())
    return _o.squeeze(y, [1])


def max_pool1d(input, ksize, strides, padding="VALID", data_format="NWC", name=None):
    """Max over ``ksize`` windows of ``input`` [N, W, C]."""
    return _pool1d(raw_ops.MaxPool, input, ksize, strides, padding, data_format, "max_pool1d")


def avg_pool1d(input, ksize, strides, padding="VALID", data_format="NWC", name=None):
    """Mean over ``ksize`` windows of ``input`` [N, W, C]."""
    return _pool1d(raw_ops.AvgPool, input, ksize, strides, padding, data_format, "avg_pool1d")


def dropout(x, rate, noise_shape=None, seed=0, name=None):
    """Zeroes each element with probability ``rate`` and scales the rest by 1 / (1 - rate) (op Dropout)."""
    if noise_shape is not None:
        raise NotImplementedError("weft.nn.dropout: noise_shape is not supported (one draw per element)")
    return raw_ops.Dropout(x, rate=float(rate), seed=int(seed or 0), name=name)[0]


def fused_batch_norm(x, scale, offset, mean, variance, epsilon=1e-3, is_training=True, name=None):
    """Batch norm over the last axis; returns (y, batch_mean, batch_variance) (op FusedBatchNorm)."""
    return raw_ops.FusedBatchNorm(x, scale, offset, mean, variance, epsilon=float(epsilon),
                                  is_training=bool(is_training), name=name)


# ---- composites (TF's tf.nn functions that are formulas over the ops above) --------------------

def _tensors(*xs):
    """xs as tensors; Python values take the dtype of the first tensor among them."""
    first = next((x for x in xs if isinstance(x, Tensor)), None)
    return [x if isinstance(x, Tensor) else convert_to_tensor(x, first.dtype if first is not None else None) for x in xs]


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise cross-entropy of probabilities ``labels`` and ``logits``, computed as TF does
    for stability: max(x, 0) - x * z + log(1 + exp(-|x|))."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs labels= and logits=")
    logits, labels = _tensors(logits, labels)
    return _o.maximum(logits, 0.0) - logits * labels + log1p(_o.exp(-_o.abs(logits)))


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """sigmoid cross-entropy with the positive term weighted by pos_weight:
    (1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))."""
    logits, labels = _tensors(logits, labels)
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    return (1.0 - labels) * logits + log_weight * (log1p(_o.exp(-_o.abs(logits))) + _o.maximum(-logits, 0.0))


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    t = convert_to_tensor(t)
    return _o.reduce_sum(_o.square(t)) / 2.0


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) of x over ``axes``; the variance is the population one (as TF, computed
    around the stop-gradient mean)."""
    x = convert_to_tensor(x)
    axes = [int(axes)] if isinstance(axes, int) else [int(a) for a in axes]
    mean = _o.reduce_mean(x, axes, keepdims=True)
    variance = _o.reduce_mean(_o.square(x - _o.stop_gradient(mean)), axes, keepdims=True)
    if not keepdims:
        mean, variance = _o.squeeze(mean, axes), _o.squeeze(variance, axes)
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset (offset, scale may be None)."""
    x, mean, variance = _tensors(x, mean, variance)
    inv = _o.rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    return x * inv + (offset - mean * inv if offset is not None else -mean * inv)


def gelu(features, approximate=False, name=None):
    """x * Phi(x): exact 0.5 x (1 + erf(x / sqrt 2)), or with approximate=True the tanh form
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))."""
    x = convert_to_tensor(features)
    return raw_ops.Gelu(x, approximate=bool(approximate), name=name)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of ``params`` at ``ids`` (tf.nn.embedding_lookup for one params tensor: op Gather,
    whose gradient scatters into a dense table). An id outside [0, rows) is an
    InvalidArgumentError naming it and the range."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("weft.nn.embedding_lookup: sharded params (a list of %d tensors) are not "
                                      "supported; pass one tensor" % len(params))
        params = params[0]
    if max_norm is not None:
        raise NotImplementedError("weft.nn.embedding_lookup: max_norm is not supported")
    return _o.gather(params, ids, axis=0, name=name)


def silu(features, beta=1.0, name=None):
    """x * sigmoid(beta * x) (tf.nn.swish)."""
    x = convert_to_tensor(features)
    return x * sigmoid(x * beta)


swish = silu


def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """[b, h, w, c*bs*bs] -> [b, h*bs, w*bs, c] (TF's NHWC, DCR order), by reshape and transpose."""
    _nhwc(data_format, "weft.nn.depth_to_space")
    x = convert_to_tensor(input)
    b = int(block_size)
    _, h, w, c = x.shape
    if c is None or c % (b * b):
        raise ValueError("depth_to_space: the channels (%s) must be a multiple of block_size^2 = %d" % (c, b * b))
    y = _o.reshape(x, [-1, h, w, b, b, c // (b * b)])
    y = _o.transpose(y, [0, 1, 3, 2, 4, 5])
    return _o.reshape(y, [-1, h * b, w * b, c // (b * b)])


def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """[b, h*bs, w*bs, c] -> [b, h, w, c*bs*bs] (TF's NHWC), the inverse of depth_to_space."""
    _nhwc(data_format, "weft.nn.space_to_depth")
    x = convert_to_tensor(input)
    b = int(block_size)
    _, h, w, c = x.shape
    if h is None or w is None or h % b or w % b:
        raise ValueError("space_to_depth: height and width (%s, %s) must be known multiples of block_size %d" % (h, w, b))
    y = _o.reshape(x, [-1, h // b, b, w // b, b, c])
    y = _o.transpose(y, [0, 1, 3, 2, 4, 5])
    return _o.reshape(y, [-1, h // b, w // b, b * b * c])


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None,
                     name=None):
    """The gradient of conv2d for its input (a "deconvolution"): ``input`` [N, H, W, C_in],
    ``filters`` [KH, KW, C_out, C_in], ``output_shape`` [N, H', W', C_out] (a list or a 1-D tensor)
    (op Conv2DBackpropInput)."""
    _nhwc(data_format, "conv2d_transpose")
    from .framework import int32
    sizes = output_shape if isinstance(output_shape, Tensor) else _o.cast(convert_to_tensor(
        [int(d) for d in output_shape]), int32)
    if sizes.dtype != int32:
        sizes = _o.cast(sizes, int32)
    y = raw_ops.Conv2DBackpropInput(sizes, filters, input, strides=_pair(strides, "strides"),
                                    padding=padding.upper(), dilations=_pair(dilations or 1, "dilations"), name=name)
    if not isinstance(output_shape, Tensor):
        y = _o.reshape(y, [int(d) for d in output_shape])  # the static shape the list gives
    return y


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC", dilations=None,
                     name=None):
    """conv2d_transpose over a height of one: ``input`` [N, W, C_in], ``filters`` [K, C_out, C_in],
    ``output_shape`` [N, W', C_out]."""
    _nhwc(data_format, "conv1d_transpose", "NWC")
    if isinstance(output_shape, Tensor):
        shape4 = _o.concat([output_shape[:1], convert_to_tensor([1], output_shape.dtype), output_shape[1:]], 0)
    else:
        n, w, c = [int(d) for d in output_shape]
        shape4 = [n, 1, w, c]
    y = conv2d_transpose(_o.expand_dims(input, 1), _o.expand_dims(filters, 0), shape4,
                         [1, _one(strides, "strides")], padding, dilations=[1, _one(dilations or 1, "dilations")])
    return _o.squeeze(y, [1], name=name)


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None, name=None):
    """tf.nn.convolution: conv1d for rank-3 input, conv2d for rank 4."""
    rank = len(input.shape) if getattr(input, "shape", None) is not None else None
    if rank == 3:
        return conv1d(input, filters, strides or 1, padding, data_format or "NWC", dilations, name)
    if rank == 4:
        return conv2d(input, filters, strides or 1, padding, data_format or "NHWC", dilations, name)
    raise NotImplementedError("weft.nn.convolution: input of rank %s (weft has 1-D and 2-D convolutions)" % rank)


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with dilation ``rate`` (TF's atrous convolution)."""
    return conv2d(value, filters, 1, padding, dilations=rate, name=name)


def space_to_batch(input, block_shape, paddings, name=None):
    """tf.nn.space_to_batch (= tf.space_to_batch_nd)."""
    from .manip_ops import space_to_batch_nd
    return space_to_batch_nd(input, block_shape, paddings, name)


def selu(features, name=None):
    """scale * elu(x) with alpha, the self-normalizing constants of Klambauer et al. (TF's)."""
    x = convert_to_tensor(features) if not isinstance(features, Tensor) else features
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    return scale * _o.where(_o.greater(x, _o.zeros_like(x)), x, alpha * elu(x))


def crelu(features, axis=-1, name=None):
    """concat([relu(x), relu(-x)], axis): both signs' activations (channels doubled)."""
    x = convert_to_tensor(features) if not isinstance(features, Tensor) else features
    return _o.concat([relu(x), relu(-x)], axis, name=name)


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, name=None):
    """input / (bias + alpha * sqr_sum) ** beta, sqr_sum the sum of squares over the channels
    within depth_radius of each (the last axis, zero-padded at the ends), as tf.nn.lrn."""
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    r = int(depth_radius)
    rank = len(x.shape)
    sq = _o.pad(_o.square(x), [[0, 0]] * (rank - 1) + [[r, r]])
    c = x.shape[-1]
    if c is None or c < 0:
        raise ValueError("weft.nn.local_response_normalization needs a known channel count, got shape %s" % (x.shape,))
    total = _o.add_n([sq[..., k:k + c] for k in range(2 * r + 1)]) if r > 0 else sq
    return _o.divide(x, _o.pow(bias + alpha * total, beta), name=name)


lrn = local_response_normalization


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets; with compute_full_loss, plus Stirling's approximation
    targets * log(targets) - targets + 0.5 * log(2 pi targets) where targets > 1 (TF's)."""
    from .math import _t, xlogy, log
    t = _t(targets)
    li = _t(log_input, t)
    loss = _o.exp(li) - li * t
    if compute_full_loss:
        stirling = xlogy(t, t) - t + 0.5 * log(2.0 * 3.141592653589793 * _o.maximum(t, _o.ones_like(t)))
        loss = loss + _o.where(_o.greater(t, _o.ones_like(t)), stirling, _o.zeros_like(t))
    return loss


def zero_fraction(value, name=None):
    """The fraction of value's elements that are 0 (a float32 scalar)."""
    from .framework import float32
    v = value if isinstance(value, Tensor) else convert_to_tensor(value)
    return _o.reduce_mean(_o.cast(_o.equal(v, _o.zeros_like(v)), float32), name=name)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """(count, sum(x - shift), sum((x - shift)^2), shift) over axes, for normalize_moments."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    count = _o.cast(_o.reduce_prod(_o.gather(_o.shape(x), list(axes))), x.dtype)
    d = x if shift is None else x - shift
    return count, _o.reduce_sum(d, list(axes), keepdims=keep), _o.reduce_sum(_o.square(d), list(axes),
                                                                           keepdims=keep), shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics."""
    d = 1.0 / counts
    shifted_mean = mean_ss * d
    mean = shifted_mean if shift is None else shifted_mean + shift
    return mean, variance_ss * d - _o.square(shifted_mean)


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None, keep_dims=None):
    """(mean, variance) over axes with each element counted frequency_weights times (broadcast to x)."""
    keep = bool(keepdims or keep_dims)
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    w = frequency_weights if isinstance(frequency_weights, Tensor) else convert_to_tensor(frequency_weights, x.dtype)
    w = w * _o.ones_like(x)
    total = _o.reduce_sum(w, list(axes), keepdims=True)
    mean = _o.reduce_sum(w * x, list(axes), keepdims=True) / total
    var = _o.reduce_sum(w * _o.square(x - mean), list(axes), keepdims=True) / total
    if not keep:
        mean, var = _o.squeeze(mean, list(axes)), _o.squeeze(var, list(axes))
    return mean, var


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None, dilations=None,
         name=None):
    """tf.nn.pool for 1-D and 2-D windows, "MAX" or "AVG" (no dilation)."""
    if dilations not in (None, 1, [1], [1, 1], (1,), (1, 1)):
        raise NotImplementedError("weft.nn.pool: dilations are not supported, got %s" % (dilations,))
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError("weft.nn.pool: pooling_type must be 'MAX' or 'AVG', got %r" % (pooling_type,))
    strides = strides or window_shape
    if len(window_shape) == 1:
        f = max_pool1d if kind == "MAX" else avg_pool1d
        return f(input, window_shape, strides, padding, data_format or "NWC", name=name)
    if len(window_shape) == 2:
        f = max_pool2d if kind == "MAX" else avg_pool2d
        return f(input, window_shape, strides, padding, data_format or "NHWC", name=name)
    raise NotImplementedError("weft.nn.pool: %d-D windows (weft pools in 1-D and 2-D)" % len(window_shape))


def _replicas():
    from . import distribute
    strategy = distribute.get_strategy()  # None outside any strategy's scope: one replica
    return 1 if strategy is None else strategy.num_replicas_in_sync


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size, the global batch defaulting to
    this batch's size times the strategy's replicas in sync (TF's, for custom loops under a
    distribution strategy)."""
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * _o.cast(convert_to_tensor(sample_weight), loss.dtype)
    total = _o.reduce_sum(loss)
    if global_batch_size is None:
        n = _o.cast(_o.shape(loss)[0], loss.dtype) * float(_replicas())
    else:
        n = float(global_batch_size)
    return total / n


def scale_regularization_loss(regularization_loss):
    """regularization_loss / the strategy's replicas in sync (TF's)."""
    loss = _o.add_n(list(regularization_loss)) if isinstance(regularization_loss, (list, tuple)) else \
        convert_to_tensor(regularization_loss)
    return loss / float(_replicas())


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC", dilations=None,
                     name=None):
    """The transpose (gradient) of conv2d: ``input`` [N, H, W, F] to ``output_shape`` [N, OH, OW, C] with
    ``filters`` [KH, KW, C, F] (op Conv2DBackpropInput, as TF)."""
    _nhwc(data_format, "conv2d_transpose")
    shape = _o.cast(output_shape, _o.int32) if isinstance(output_shape, Tensor) else \
        _o.constant([int(d) for d in output_shape], dtype=_o.int32)
    return raw_ops.Conv2DBackpropInput(shape, filters, input, strides=_pair(strides, "strides"),
                                       padding=padding.upper(), dilations=_pair(dilations or 1, "dilations"), name=name)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC", dilations=None,
                     name=None):
    """The transpose of conv1d: ``input`` [N, W, F] to ``output_shape`` [N, OW, C] with filters [K, C, F]
    (conv2d_transpose over a height of one, as TF)."""
    _nhwc(data_format, "conv1d_transpose", "NWC")
    if isinstance(output_shape, Tensor):
        shape = _o.concat([_o.cast(output_shape[:1], _o.int32), _o.constant([1], dtype=_o.int32),
                           _o.cast(output_shape[1:], _o.int32)], 0)
    else:
        n, w, c = (int(d) for d in output_shape)
        shape = [n, 1, w, c]
    y = conv2d_transpose(_o.expand_dims(input, 1), _o.expand_dims(filters, 0), shape,
                         strides=[1, _one(strides, "strides")], padding=padding,
                         dilations=[1, _one(dilations or 1, "dilations")])
    return _o.squeeze(y, [1], name=name)


from ._nn_3d import avg_pool3d, conv3d, max_pool3d, separable_conv2d  # noqa: E402,F401
from ._sampled_losses import nce_loss, sampled_softmax_loss  # noqa: E402,F401
