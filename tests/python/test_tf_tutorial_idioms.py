"""Idioms of TensorFlow's published tutorials that weft must run as TF does: a subclassed model
whose call unpacks a tuple of inputs (the Transformer tutorial's ``context, x = inputs``), layers
called with their tensors by keyword (``mha(query=x, value=x, key=x)``, ``layer(x=x,
context=ctx)``), a slice bounded by a tensor (``pos_encoding[:, :tf.shape(x)[1]]``), a tensor made
at top level used inside a layer's call (captured as a constant, as TF captures eager tensors),
losses of sequence outputs with ``reduction='none'`` and per-token sample weights, and
``tf.function`` traces that see each call's batch size (``tf.random.normal(shape=mean.shape)``).
Expected values: numpy closed forms."""
import numpy as np
import pytest

import weft as tf


@pytest.fixture(autouse=True)
def tf2(monkeypatch):
    monkeypatch.setattr(tf._values, "graph_mode", [False])  # TF1 tests may have disabled eager


def test_slices_bounded_by_tensors():
    x = tf.constant(np.arange(24).reshape(2, 3, 4))
    n = tf.shape(x)[1]
    np.testing.assert_array_equal(x[:, :n - 1].numpy(), np.arange(24).reshape(2, 3, 4)[:, :2])
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.int32, [None, None])
        k = tf.compat.v1.placeholder(tf.int32, [])
        heads, row, tail = p[:, :tf.shape(p)[0]], p[k], p[:, -k:]
        with tf.compat.v1.Session() as sess:
            a = np.arange(12).reshape(3, 4)
            got = sess.run([heads, row, tail], {p: a, k: 2})
    for g, want in zip(got, [a[:, :3], a[2], a[:, -2:]]):
        np.testing.assert_array_equal(g, want)


class _PositionalEmbedding(tf.keras.layers.Layer):
    def __init__(self, vocab, depth):
        super().__init__()
        self.embedding = tf.keras.layers.Embedding(vocab, depth)
        table = np.arange(64 * depth, dtype=np.float32).reshape(64, depth) / 1000.0
        self.table = tf.cast(table, tf.float32)  # a tensor made outside any trace

    def call(self, x):
        length = tf.shape(x)[1]
        return self.embedding(x) + self.table[tf.newaxis, :length, :]


class _Attend(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.mha = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)

    def call(self, x, context):
        return x + self.mha(query=x, value=context, key=context)


class _TwoInputs(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.src = _PositionalEmbedding(20, 8)
        self.tgt = _PositionalEmbedding(30, 8)
        self.attend = _Attend()
        self.out = tf.keras.layers.Dense(30)

    def call(self, inputs):
        context, x = inputs
        return self.out(self.attend(x=self.tgt(x), context=self.src(context)))


def _masked_loss(label, pred):
    mask = tf.cast(label != 0, tf.float32)
    loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")(label, pred)
    return tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)


def test_subclassed_model_of_a_tuple_input_trains():
    rng = np.random.RandomState(0)
    ctx, tgt = rng.randint(1, 20, (16, 7)), rng.randint(1, 30, (16, 5))
    model = _TwoInputs()
    assert tuple(model((ctx[:3], tgt[:3])).shape) == (3, 5, 30)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=_masked_loss)
    ds = tf.data.Dataset.from_tensor_slices(((ctx, tgt), tgt)).batch(8)
    hist = model.fit(ds, epochs=3, verbose=0).history["loss"]
    assert hist[-1] < hist[0]


class _AddPositions(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.table = tf.cast(np.arange(64 * 3).reshape(1, 64, 3) / 100.0, tf.float32)  # made outside a trace

    def call(self, x):
        return x + self.table[:, :tf.shape(x)[1], :]


def test_a_top_level_tensor_in_a_layer_call_enters_as_its_values():
    x = np.random.RandomState(2).rand(2, 5, 3).astype(np.float32)
    inp = tf.keras.Input((None, 3))
    model = tf.keras.Model(inp, _AddPositions()(inp))
    want = x + np.arange(64 * 3).reshape(1, 64, 3)[:, :5] / 100.0
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-6)
    np.testing.assert_allclose(model.predict(x[:, :2], verbose=0), want[:, :2], rtol=1e-6)


def test_sequence_losses_per_position_and_per_token_weights():
    rng = np.random.RandomState(1)
    y, p = rng.randint(0, 5, (4, 3)), rng.rand(4, 3, 5).astype(np.float32)
    logp = p - np.log(np.exp(p).sum(-1, keepdims=True))
    ref = -np.take_along_axis(logp, y[..., None], -1)[..., 0]
    none = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    for got in (none(y, p), none(tf.constant(y), tf.constant(p))):
        assert tuple(np.shape(got)) == (4, 3)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-5)
    m = (y > 1).astype(np.float32)
    mean = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for got in (mean(y, p, sample_weight=m), mean(tf.constant(y), tf.constant(p), sample_weight=tf.constant(m))):
        np.testing.assert_allclose(float(got), (ref * m).sum() / m.size, rtol=1e-5)
    mse = tf.keras.losses.MeanSquaredError(reduction="none")
    np.testing.assert_allclose(np.asarray(mse(p, p * 0)), (p ** 2).mean(-1), rtol=1e-6)


def test_function_traces_see_the_batch_size():
    shapes = []

    @tf.function
    def noise_like(x):
        shapes.append(tuple(x.shape))
        return x + tf.random.normal(shape=x.shape) * 0.0

    assert noise_like(np.ones((4, 2), np.float32)).shape == (4, 2)
    assert noise_like(np.ones((3, 2), np.float32)).shape == (3, 2)
    assert shapes == [(4, 2), (3, 2)]  # one trace per shape, as TF traces

    relaxed = []

    @tf.function(reduce_retracing=True)
    def double(x):
        relaxed.append(tuple(x.shape))
        return x * 2.0

    double(np.ones((4, 2), np.float32))
    double(np.ones((3, 2), np.float32))
    assert relaxed == [(None, 2)]


def test_layer_called_with_keyword_tensors_and_no_inputs_is_an_error():
    layer = _Attend()
    x = tf.keras.Input((5, 8))
    c = tf.keras.Input((7, 8))
    model = tf.keras.Model([x, c], layer(x=x, context=c))
    assert tuple(model.output_shape) == (None, 5, 8)
    with pytest.raises(TypeError, match="without inputs"):
        layer()
