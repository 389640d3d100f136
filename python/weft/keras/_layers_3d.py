"""Keras' volumetric layers and Conv1DTranspose, written as weft custom layers over weft.nn's
composites (_nn_3d.py): ``Conv3D``, ``MaxPooling3D`` / ``MaxPool3D``, ``AveragePooling3D`` /
``AvgPool3D``, ``GlobalAveragePooling3D`` / ``GlobalMaxPooling3D`` (and their ``*Pool3D`` aliases),
``UpSampling3D``, ``ZeroPadding3D``, ``Conv1DTranspose``. Keras 3's arguments and defaults,
channels_last only; their weights are ordinary layer weights (kernel, then bias)."""
from .. import framework as _fw
from . import activations as _activations
from ._custom import Layer


def _triple(v, what):
    if isinstance(v, int):
        return (v, v, v)
    v = tuple(int(x) for x in v)
    if len(v) != 3:
        raise ValueError("%s must be an int or a tuple of 3 ints, got %r" % (what, v))
    return v


def _channels_last(data_format, what):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("%s: weft computes channels_last only, got data_format=%r" % (what, data_format))


class Conv3D(Layer):
    """3-D convolution over (batch, depth, height, width, channels): kernel (kd, kh, kw, in, filters)."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv3D")
        if groups != 1:
            raise NotImplementedError("Conv3D: groups other than 1 are not supported by weft")
        if activity_regularizer is not None:
            raise NotImplementedError("Conv3D: activity_regularizer is not supported by weft")
        self.filters, self.kernel_size = int(filters), _triple(kernel_size, "Conv3D kernel_size")
        self.strides = _triple(strides, "Conv3D strides")
        self.dilation_rate = _triple(dilation_rate, "Conv3D dilation_rate")
        if padding not in ("valid", "same"):
            raise ValueError("Conv3D: padding must be 'valid' or 'same', got %r" % (padding,))
        self.padding, self.activation, self.use_bias = padding, _activations.get(activation), use_bias
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, kernel_constraint,
                      bias_constraint)

    def build(self, input_shape):
        if len(input_shape) != 5 or input_shape[-1] is None:
            raise ValueError("Conv3D expects inputs (batch, depth, height, width, channels) with known channels, got "
                             "%s" % (tuple(input_shape),))
        k_init, b_init, k_reg, b_reg, k_con, b_con = self._init
        self.kernel = self.add_weight(name="kernel", shape=self.kernel_size + (int(input_shape[-1]), self.filters),
                                      initializer=k_init, regularizer=k_reg, constraint=k_con)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=b_init, regularizer=b_reg,
                                    constraint=b_con) if self.use_bias else None

    def call(self, inputs):
        tf = _fw.api()
        y = tf.nn.conv3d(inputs, self.kernel, strides=self.strides, padding=self.padding.upper(),
                         dilations=self.dilation_rate)
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)


class _Pool3D(Layer):
    _is_max = True

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        what = type(self).__name__
        _channels_last(data_format, what)
        self.pool_size = _triple(pool_size, what + " pool_size")
        self.strides = self.pool_size if strides is None else _triple(strides, what + " strides")
        if padding not in ("valid", "same"):
            raise ValueError("%s: padding must be 'valid' or 'same', got %r" % (what, padding))
        self.padding = padding

    def call(self, inputs):
        tf = _fw.api()
        pool = tf.nn.max_pool3d if self._is_max else tf.nn.avg_pool3d
        return pool(inputs, self.pool_size, self.strides, self.padding.upper())


class MaxPooling3D(_Pool3D):
    """Max over pool_size windows of (batch, depth, height, width, channels)."""
    _is_max = True


class AveragePooling3D(_Pool3D):
    """Mean over pool_size windows (same padding: over the window's part inside the input)."""
    _is_max = False


class _GlobalPool3D(Layer):
    _is_max = True

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, type(self).__name__)
        self.keepdims = bool(keepdims)

    def call(self, inputs):
        tf = _fw.api()
        reduce = tf.reduce_max if self._is_max else tf.reduce_mean
        return reduce(inputs, axis=[1, 2, 3], keepdims=self.keepdims)


class GlobalMaxPooling3D(_GlobalPool3D):
    """The max over depth, height and width: (batch, channels)."""
    _is_max = True


class GlobalAveragePooling3D(_GlobalPool3D):
    """The mean over depth, height and width: (batch, channels)."""
    _is_max = False


class UpSampling3D(Layer):
    """Each voxel repeated size = (d, h, w) times along depth, height and width."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "UpSampling3D")
        self.size = _triple(size, "UpSampling3D size")

    def call(self, inputs):
        tf = _fw.api()
        y = inputs
        for axis, n in zip((1, 2, 3), self.size):
            if n != 1:
                y = tf.repeat(y, n, axis=axis)
        return y


class ZeroPadding3D(Layer):
    """Zeros added before and after depth, height and width: padding an int, 3 ints or 3 pairs."""

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "ZeroPadding3D")
        if isinstance(padding, int):
            pads = [(padding, padding)] * 3
        else:
            padding = list(padding)
            if len(padding) != 3:
                raise ValueError("ZeroPadding3D: padding must be an int, 3 ints or 3 pairs, got %r" % (padding,))
            pads = [(int(p), int(p)) if isinstance(p, int) else tuple(int(v) for v in p) for p in padding]
        self.padding = tuple(pads)

    def call(self, inputs):
        tf = _fw.api()
        return tf.pad(inputs, [[0, 0]] + [list(p) for p in self.padding] + [[0, 0]])


class Conv1DTranspose(Layer):
    """The transposed 1-D convolution: (batch, steps, channels) to (batch, new_steps, filters), kernel
    (kernel_size, filters, in_channels) as Keras; new_steps = steps * stride ('same') or
    (steps - 1) * stride + kernel_size ('valid')."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None, data_format=None,
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(data_format, "Conv1DTranspose")
        if output_padding is not None or dilation_rate not in (1, (1,), [1]):
            raise NotImplementedError("Conv1DTranspose: output_padding and dilation_rate other than 1 are not "
                                      "supported by weft")
        if activity_regularizer is not None:
            raise NotImplementedError("Conv1DTranspose: activity_regularizer is not supported by weft")
        one = lambda v: int(v[0]) if isinstance(v, (tuple, list)) else int(v)  # noqa: E731
        self.filters, self.kernel_size, self.strides = int(filters), one(kernel_size), one(strides)
        if padding not in ("valid", "same"):
            raise ValueError("Conv1DTranspose: padding must be 'valid' or 'same', got %r" % (padding,))
        self.padding, self.activation, self.use_bias = padding, _activations.get(activation), use_bias
        self._init = (kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, kernel_constraint,
                      bias_constraint)

    def build(self, input_shape):
        k_init, b_init, k_reg, b_reg, k_con, b_con = self._init
        self.kernel = self.add_weight(name="kernel", shape=(self.kernel_size, self.filters, int(input_shape[-1])),
                                      initializer=k_init, regularizer=k_reg, constraint=k_con)
        self.bias = self.add_weight(name="bias", shape=(self.filters,), initializer=b_init, regularizer=b_reg,
                                    constraint=b_con) if self.use_bias else None

    def call(self, inputs):
        tf = _fw.api()
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError("Conv1DTranspose needs the number of steps known, got input shape %s" % (inputs.shape,))
        steps = int(steps)
        out = steps * self.strides if self.padding == "same" else \
            (steps - 1) * self.strides + self.kernel_size
        shape = tf.stack([tf.shape(inputs)[0], out, self.filters])
        y = tf.nn.conv1d_transpose(inputs, self.kernel, shape, strides=self.strides, padding=self.padding.upper())
        y = tf.reshape(y, [-1, out, self.filters])
        if self.bias is not None:
            y = y + self.bias
        return self.activation(y)


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalMaxPool3D, GlobalAvgPool3D = GlobalMaxPooling3D, GlobalAveragePooling3D
