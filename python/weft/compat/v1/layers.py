"""``tf.compat.v1.layers``: TF1's functional layers, built with ``get_variable`` in a variable scope
named after the layer ("dense", "dense_1", ... or ``name``), as TF1 names their variables
("dense/kernel", "dense/bias")."""
import numpy as np

from ...framework import Tensor
from ...framework import constant
from ...nn import bias_add, conv2d as _conv2d, max_pool2d, avg_pool2d, fused_batch_norm
from ...ops import cast, fill, identity, matmul, maximum, reshape, size, where
from .nn import dropout as _nn_dropout
from .variable_scope import get_variable, ones_initializer, variable_scope, zeros_initializer


def _activate(y, activation):
    return activation(y) if activation is not None else y


def _scope(name, default, reuse):
    return variable_scope(name, default_name=default, reuse=reuse)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
          kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
          bias_constraint=None, trainable=True, name=None, reuse=None):
    """activation(inputs @ kernel + bias) over the last axis; kernel [in, units] (glorot_uniform by
    default), bias [units] (zeros)."""
    n_in = inputs.shape[-1] if inputs.shape else None
    if n_in is None:
        raise ValueError("layers.dense: the last dimension of the inputs %s must be known, got shape %s" %
                         (inputs.name, inputs.shape))
    if len(inputs.shape) != 2:
        raise ValueError("layers.dense: weft's dense takes [batch, features] inputs, got shape %s" % (inputs.shape,))
    with _scope(name, "dense", reuse):
        kernel = get_variable("kernel", [n_in, units], dtype=inputs.dtype, initializer=kernel_initializer,
                              trainable=trainable)
        y = matmul(inputs, kernel)
        if use_bias:
            bias = get_variable("bias", [units], dtype=inputs.dtype, initializer=bias_initializer or zeros_initializer(),
                                trainable=trainable)
            y = bias_add(y, bias)
        return _activate(y, activation)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None, bias_initializer=None,
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """A 2-D convolution over NHWC ``inputs`` with a [kh, kw, in, filters] kernel (channels_last only)."""
    if data_format != "channels_last":
        raise NotImplementedError("weft's conv2d is channels_last (NHWC) only, got %r" % data_format)
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
    n_in = inputs.shape[-1]
    if n_in is None:
        raise ValueError("layers.conv2d: the channel dimension of %s must be known, got shape %s" %
                         (inputs.name, inputs.shape))
    with _scope(name, "conv2d", reuse):
        kernel = get_variable("kernel", [kh, kw, n_in, filters], dtype=inputs.dtype, initializer=kernel_initializer,
                              trainable=trainable)
        y = _conv2d(inputs, kernel, strides=strides, padding=padding.upper(), dilations=dilation_rate)
        if use_bias:
            bias = get_variable("bias", [filters], dtype=inputs.dtype, initializer=bias_initializer or zeros_initializer(),
                                trainable=trainable)
            y = bias_add(y, bias)
        return _activate(y, activation)


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    if data_format != "channels_last":
        raise NotImplementedError("weft's pooling is channels_last (NHWC) only, got %r" % data_format)
    return max_pool2d(inputs, pool_size, strides, padding.upper(), name=name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last", name=None):
    if data_format != "channels_last":
        raise NotImplementedError("weft's pooling is channels_last (NHWC) only, got %r" % data_format)
    return avg_pool2d(inputs, pool_size, strides, padding.upper(), name=name)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                        moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                        beta_constraint=None, gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """Batch norm over the last axis, TF1's way: variables gamma, beta, moving_mean and
    moving_variance; in training (a Python bool, or a bool tensor choosing per run) it normalizes
    with the batch's statistics and puts the moving-average updates (the variance Bessel-corrected,
    as TF's fused kernel gives it) in the UPDATE_OPS collection, which the program runs with its
    train op (``with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS))``)."""
    rank = len(inputs.shape) if inputs.shape is not None else None
    if rank is None or axis not in (-1, rank - 1):
        raise NotImplementedError("weft's batch_normalization normalizes over the last axis (channels_last), got "
                                  "axis=%r for shape %s" % (axis, inputs.shape))
    if renorm or virtual_batch_size or adjustment:
        raise NotImplementedError("weft's batch_normalization has no renorm, virtual_batch_size or adjustment")
    c = inputs.shape[-1]
    if c is None:
        raise ValueError("batch_normalization: the last dimension of %s must be known" % inputs.name)
    dt = inputs.dtype
    with _scope(name, "batch_normalization", reuse):
        gamma = get_variable("gamma", [c], dtype=dt, initializer=gamma_initializer or ones_initializer(),
                             trainable=trainable) if scale else fill([c], constant(1, dtype=dt))
        beta = get_variable("beta", [c], dtype=dt, initializer=beta_initializer or zeros_initializer(),
                            trainable=trainable) if center else fill([c], constant(0, dtype=dt))
        mean = get_variable("moving_mean", [c], dtype=dt, initializer=moving_mean_initializer or zeros_initializer(),
                            trainable=False)
        var = get_variable("moving_variance", [c], dtype=dt,
                           initializer=moving_variance_initializer or ones_initializer(), trainable=False)
        inference = fused_batch_norm(inputs, gamma, beta, mean, var, epsilon=epsilon, is_training=False)[0]
        if training is False:
            return inference
        y, batch_mean, batch_var = fused_batch_norm(inputs, gamma, beta, mean, var, epsilon=epsilon, is_training=True)
        n = cast(size(inputs), dt) / float(c)
        unbiased = batch_var * n / maximum(n - 1.0, 1.0)
        g = inputs.graph
        updates = g.__dict__.setdefault("_tf1_update_ops", [])  # names: the graph holds no op objects
        for v, batch in ((mean, batch_mean), (var, unbiased)):
            with g.device(None), g.device(v.op.device or None):
                updates.append(v.assign(v * momentum + batch * (1.0 - momentum)).op.name)
        return y if training is True else where(training, y, inference)


def flatten(inputs, name=None, data_format="channels_last"):
    """[batch, ...] -> [batch, product of the other dims] (which must be known)."""
    rest = inputs.shape[1:]
    if any(d is None for d in rest):
        raise ValueError("layers.flatten: the non-batch dims of %s must be known, got shape %s" %
                         (inputs.name, inputs.shape))
    return reshape(inputs, [-1, int(np.prod(rest))], name=name)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Drops with probability ``rate`` when ``training`` (a Python bool, or a bool tensor such as a
    placeholder: then both paths are built and the tensor picks one per run), else passes
    ``inputs`` through."""
    if isinstance(training, Tensor):
        return where(training, _nn_dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed), inputs, name=name)
    if training:
        return _nn_dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed, name=name)
    return identity(inputs, name=name)


__all__ = ["dense", "conv2d", "max_pooling2d", "average_pooling2d", "batch_normalization", "flatten", "dropout"]
