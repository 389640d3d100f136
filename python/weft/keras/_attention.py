"""Keras layers written as weft custom layers (keras.layers.Layer subclasses of weft ops):
``Attention`` (Luong dot-product), ``AdditiveAttention`` (Bahdanau), ``Dot`` / ``dot``,
``UnitNormalization``, ``GroupNormalization``, ``ThresholdedReLU``. Their formulas are Keras 3's (keras/src/layers/...),
restated below; their weights are ordinary layer weights (saved, trained, mirrored).

Attention layers take ``[query, value]`` or ``[query, value, key]`` (key defaults to value) of
shapes [batch, Tq, dim] and [batch, Tv, dim]; ``use_causal_mask=True`` at call masks position
j > i (scores lowered by 1e9 before the softmax, as Keras); ``return_attention_scores=True``
returns ``(output, weights)``. Keras masks (``mask=``) are not supported (weft custom layers take
none): a NotImplementedError says so.
"""
from .. import framework as _fw
from ._custom import Layer


def _split(inputs, what):
    if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
        raise ValueError("%s takes [query, value] or [query, value, key]; got %r" % (what, inputs))
    q, v = inputs[0], inputs[1]
    return q, v, inputs[2] if len(inputs) == 3 else v


class _BaseAttention(Layer):
    def _finish(self, scores, value, training, use_causal_mask, return_attention_scores):
        tf = _fw.api()
        if use_causal_mask:
            tq, tv = tf.shape(scores)[-2], tf.shape(scores)[-1]
            # row i may attend to j <= i (Keras' lower-triangular causal mask)
            allowed = tf.expand_dims(tf.range(tq), -1) >= tf.expand_dims(tf.range(tv), 0)
            scores = scores - 1.0e9 * (1.0 - tf.cast(allowed, scores.dtype))
        weights = tf.nn.softmax(scores, axis=-1)
        if training and self.dropout > 0:
            weights = tf.nn.dropout(weights, rate=self.dropout, seed=self.seed)
        out = tf.matmul(weights, value)
        return (out, weights) if return_attention_scores else out


class Attention(_BaseAttention):
    """Dot-product attention: scores = query . key^T (times a trainable scalar ``scale`` with
    use_scale); ``score_mode="concat"``: scores = concat_score_weight * sum(tanh(scale * (q + k)))
    over the feature axis; weights = softmax(scores); output = weights . value."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError("Attention: score_mode must be 'dot' or 'concat', got %r" % (score_mode,))
        self.use_scale, self.score_mode, self.dropout, self.seed = use_scale, score_mode, float(dropout), seed

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale", shape=(), initializer="ones") if self.use_scale else None
        self.concat_score_weight = (self.add_weight(name="concat_score_weight", shape=(), initializer="ones")
                                    if self.score_mode == "concat" else None)

    def call(self, inputs, training=None, return_attention_scores=False, use_causal_mask=False):
        tf = _fw.api()
        q, v, k = _split(inputs, "Attention")
        if self.score_mode == "dot":
            scores = tf.matmul(q, k, transpose_b=True)
            if self.scale is not None:
                scores = scores * self.scale
        else:
            qe, ke = tf.expand_dims(q, -2), tf.expand_dims(k, -3)
            s = qe + ke if self.scale is None else self.scale * (qe + ke)
            scores = self.concat_score_weight * tf.reduce_sum(tf.tanh(s), axis=-1)
        return self._finish(scores, v, training, use_causal_mask, return_attention_scores)


class AdditiveAttention(_BaseAttention):
    """Bahdanau attention: scores = sum(scale * tanh(q + k)) over the feature axis (``scale`` a
    trainable vector of the feature size with use_scale, glorot_uniform as Keras); weights =
    softmax(scores); output = weights . value."""

    def __init__(self, use_scale=True, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.use_scale, self.dropout, self.seed = use_scale, float(dropout), seed

    def build(self, input_shape):
        dim = input_shape[0][-1]
        self.scale = self.add_weight(name="scale", shape=(dim,), initializer="glorot_uniform") \
            if self.use_scale else None

    def call(self, inputs, training=None, return_attention_scores=False, use_causal_mask=False):
        tf = _fw.api()
        q, v, k = _split(inputs, "AdditiveAttention")
        t = tf.tanh(tf.expand_dims(q, -2) + tf.expand_dims(k, -3))
        scores = tf.reduce_sum(t if self.scale is None else self.scale * t, axis=-1)
        return self._finish(scores, v, training, use_causal_mask, return_attention_scores)


class Dot(Layer):
    """The dot product of two inputs along ``axes`` (an int or a pair), per sample; ``normalize``
    L2-normalizes both along those axes first (cosine proximity). [b, n] . [b, n] -> [b, 1];
    [b, t, d] . [b, u, d] with axes 2 -> [b, t, u] (Keras' batch_dot)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        self.axes, self.normalize = axes, bool(normalize)

    def call(self, inputs):
        tf = _fw.api()
        from .backend import batch_dot
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("Dot takes a list of 2 inputs; got %r" % (inputs,))
        x, y = inputs
        axes = (self.axes, self.axes) if isinstance(self.axes, int) else tuple(self.axes)
        axes = (axes[0] % len(x.shape), axes[1] % len(y.shape))
        if self.normalize:
            x, y = tf.nn.l2_normalize(x, axis=axes[0]), tf.nn.l2_normalize(y, axis=axes[1])
        return batch_dot(x, y, axes)


def dot(inputs, axes, normalize=False, **kwargs):
    """The functional form of Dot."""
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


class UnitNormalization(Layer):
    """x / sqrt(max(sum(x^2 over axis), 1e-12)) (Keras 3)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        tf = _fw.api()
        axis = list(self.axis) if isinstance(self.axis, (list, tuple)) else self.axis
        square_sum = tf.reduce_sum(tf.square(inputs), axis=axis, keepdims=True)
        return inputs * tf.math.rsqrt(tf.maximum(square_sum, 1e-12))


class GroupNormalization(Layer):
    """Group normalization (Wu & He): the channels (``axis``, default last) split into ``groups``;
    mean and variance over each sample's group (all other non-batch axes and the group's channels);
    then gamma / beta per channel (``scale`` / ``center``). Channels must be known and divisible by
    groups."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        self.groups, self.axis, self.epsilon = int(groups), axis, float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer

    def build(self, input_shape):
        rank = len(input_shape)
        axis = self.axis % rank
        if axis != rank - 1:
            raise NotImplementedError("GroupNormalization: weft normalizes the last axis (channels_last); got axis=%r"
                                      % (self.axis,))
        c = input_shape[-1]
        if c is None or c % self.groups:
            raise ValueError("GroupNormalization: number of groups (%d) must divide the number of channels (%s)"
                             % (self.groups, c))
        self.gamma = self.add_weight(name="gamma", shape=(c,), initializer=self.gamma_initializer) \
            if self.scale else None
        self.beta = self.add_weight(name="beta", shape=(c,), initializer=self.beta_initializer) \
            if self.center else None

    def call(self, inputs):
        tf = _fw.api()
        c = inputs.shape[-1]
        shape = tf.shape(inputs)
        cg = c // self.groups
        if len(inputs.shape) > 2:  # [B, spatial..., C] -> [B, S, G, C/G]: statistics over S and C/G
            grouped = tf.reshape(inputs, tf.concat([shape[:1], tf.constant([-1, self.groups, cg])], 0))
            axes = [1, 3]
        else:  # [B, C] -> [B, G, C/G]
            grouped = tf.reshape(inputs, tf.concat([shape[:1], tf.constant([self.groups, cg])], 0))
            axes = [2]
        mean = tf.reduce_mean(grouped, axis=axes, keepdims=True)
        var = tf.reduce_mean(tf.square(grouped - mean), axis=axes, keepdims=True)
        y = tf.reshape((grouped - mean) * tf.math.rsqrt(var + self.epsilon), shape)
        if self.gamma is not None:
            y = y * self.gamma
        if self.beta is not None:
            y = y + self.beta
        return y


class ThresholdedReLU(Layer):
    """x where x > theta, else 0 (Keras 2's layer; theta=1.0)."""

    def __init__(self, theta=1.0, **kwargs):
        super().__init__(**kwargs)
        if theta is None or float(theta) < 0:
            raise ValueError("ThresholdedReLU: theta must be a number >= 0, got %r" % (theta,))
        self.theta = float(theta)

    def call(self, inputs):
        tf = _fw.api()
        return tf.where(tf.greater(inputs, self.theta), inputs, tf.zeros_like(inputs))
