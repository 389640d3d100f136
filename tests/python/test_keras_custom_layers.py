"""Keras custom layers (``class X(keras.layers.Layer)``, keras.io "Making new layers and models via
subclassing") and TensorFlow ops on KerasTensors, run with ``import weft as tf``. Expected values
are closed forms computed with numpy from the layers' own weights (a Linear layer is x @ w + b, an
add_loss term is its formula), parameter counts are Keras' formulas, and training must reduce
the loss."""
import os
import sys

import numpy as np
import pytest

import weft as tf
from weft import keras
from weft.keras import layers

# keras.io's TransformerBlock and TokenAndPositionEmbedding, as written there (the example's copy).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from keras_transformer_text import TokenAndPositionEmbedding, TransformerBlock  # noqa: E402

RNG = np.random.default_rng(0)


class Linear(keras.layers.Layer):  # keras.io: weights created in build
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal", trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units})
        return config


class LinearInit(keras.layers.Layer):  # keras.io: weights created in __init__ from input_dim
    def __init__(self, units=32, input_dim=32):
        super().__init__()
        self.w = self.add_weight(shape=(input_dim, units), initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(units,), initializer="zeros", trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b


class ComputeSum(keras.layers.Layer):  # keras.io: a non-trainable weight updated in call
    def __init__(self, input_dim):
        super().__init__()
        self.total = self.add_weight(initializer="zeros", shape=(input_dim,), trainable=False)

    def call(self, inputs):
        self.total.assign_add(tf.reduce_sum(inputs, axis=0))
        return self.total


class MLPBlock(keras.layers.Layer):  # keras.io: a layer made of layers
    def __init__(self):
        super().__init__()
        self.linear_1 = Linear(32)
        self.linear_2 = Linear(32)
        self.linear_3 = Linear(1)

    def call(self, inputs):
        x = tf.nn.relu(self.linear_1(inputs))
        x = tf.nn.relu(self.linear_2(x))
        return self.linear_3(x)


class ActivityRegularizationLayer(keras.layers.Layer):  # keras.io: add_loss in call
    def __init__(self, rate=1e-2):
        super().__init__()
        self.rate = rate

    def call(self, inputs):
        self.add_loss(self.rate * tf.reduce_sum(inputs))
        return inputs


def test_linear_in_build_is_x_at_w_plus_b_and_eager_call_returns_values():
    x = RNG.normal(size=(3, 2)).astype(np.float32)
    layer = Linear(4)
    y = layer(x)
    assert y.shape == (3, 4) and layer.built
    assert [w.shape for w in layer.weights] == [(2, 4), (4,)]
    assert layer.weights == [layer.w, layer.b] and len(layer.trainable_weights) == 2
    np.testing.assert_allclose(y, x @ layer.w.numpy() + layer.b.numpy(), rtol=1e-5, atol=1e-6)
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    layer.w.assign(w)
    layer.b.assign(np.ones(4, np.float32))
    np.testing.assert_allclose(layer(x), x @ w + 1.0, rtol=1e-5, atol=1e-5)


def test_linear_with_weights_made_in_init():
    layer = LinearInit(4, 2)
    assert layer.weights == [layer.w, layer.b]  # before any call, as Keras
    x = np.ones((2, 2), np.float32)
    y = layer(x)
    np.testing.assert_allclose(y, x @ layer.w.numpy(), rtol=1e-5, atol=1e-6)  # bias initialized to zeros


def test_non_trainable_weight_updated_by_each_call():
    my_sum = ComputeSum(2)
    x = np.ones((2, 2), np.float32)
    np.testing.assert_allclose(my_sum(x), [2.0, 2.0])
    np.testing.assert_allclose(my_sum(x), [4.0, 4.0])
    assert len(my_sum.weights) == 1 and len(my_sum.non_trainable_weights) == 1
    assert my_sum.trainable_weights == []


def test_layer_of_layers_tracks_the_sublayers_weights():
    mlp = MLPBlock()
    y = mlp(np.ones((3, 64), np.float32))
    assert y.shape == (3, 1)
    assert len(mlp.weights) == 6 and len(mlp.trainable_weights) == 6
    assert mlp.count_params() == 64 * 32 + 32 + 32 * 32 + 32 + 32 + 1


def test_shared_sublayer_weights_count_once():
    class Twice(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(3)

        def call(self, x):
            return self.dense(self.dense(x))

    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, Twice()(inp))
    assert model.count_params() == 3 * 3 + 3
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    y = model.predict(x, verbose=0)
    w, b = model.layers[0].get_weights()
    np.testing.assert_allclose(y, (x @ w + b) @ w + b, rtol=1e-5, atol=1e-5)


def test_add_loss_joins_the_model_loss():
    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, ActivityRegularizationLayer(0.1)(inp))
    model.compile("sgd", "mse")
    x = RNG.normal(size=(8, 3)).astype(np.float32)
    y = RNG.normal(size=(8, 3)).astype(np.float32)
    loss = model.evaluate(x, y, batch_size=8, verbose=0)
    np.testing.assert_allclose(loss, np.mean((x - y) ** 2) + 0.1 * x.sum(), rtol=1e-5)


def test_training_argument_is_the_pass_mode():
    class Scale(keras.layers.Layer):
        def call(self, x, training=False):
            return x * (2.0 if training else 1.0)

    inp = keras.Input(shape=(2,))
    model = keras.Model(inp, Scale()(inp))
    model.compile("sgd", "mse")
    x = RNG.normal(size=(4, 2)).astype(np.float32)
    zeros = np.zeros_like(x)
    np.testing.assert_allclose(model.evaluate(x, zeros, batch_size=4, verbose=0), np.mean(x ** 2), rtol=1e-5)
    np.testing.assert_allclose(model.train_on_batch(x, zeros), np.mean((2 * x) ** 2), rtol=1e-5)
    np.testing.assert_allclose(model.predict(x, verbose=0), x)


def test_keras_io_text_classification_transformer_trains():
    maxlen, vocab, embed = 8, 20, 32
    inputs = layers.Input(shape=(maxlen,))
    emb = TokenAndPositionEmbedding(maxlen, vocab, embed)
    x = emb(inputs)
    x = TransformerBlock(embed, 2, 32)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(2, activation="softmax")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    # Keras' counts: embeddings (vocab + maxlen) * D; attention 3 * (D*H*D + H*D) + H*D*D + D; the
    # feed-forward block 2 * (D*D + D); two LayerNormalizations 2 * 2D; the head D*2 + 2.
    D, H = embed, 2
    assert model.count_params() == (vocab + maxlen) * D + 3 * (D * H * D + H * D) + H * D * D + D + \
        2 * (D * D + D) + 4 * D + 2 * D + 2
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    xs = RNG.integers(0, vocab, (256, maxlen)).astype(np.float32)
    ys = (xs[:, 0] < vocab / 2).astype(np.int32)
    history = model.fit(xs, ys, batch_size=32, epochs=4, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0] * 0.9, losses
    # The embedding layer's weights: its two sublayers', under their names.
    assert [w.path for w in emb.weights] == ["token_and_position_embedding/embedding/embeddings",
                                             "token_and_position_embedding/embedding_1/embeddings"]


class Sampling(layers.Layer):  # keras.io's VAE
    def call(self, inputs):
        z_mean, z_log_var = inputs
        epsilon = tf.random.normal(shape=tf.shape(z_mean))
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


class KLDivergence(layers.Layer):
    def call(self, inputs):
        z_mean, z_log_var = inputs
        kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var), axis=1))
        self.add_loss(kl)
        return z_mean


def test_vae_sampling_and_kl_loss_train():
    inp = keras.Input(shape=(6,))
    h = layers.Dense(16, activation="relu")(inp)
    z_mean, z_log_var = layers.Dense(2)(h), layers.Dense(2)(h)
    z_mean = KLDivergence()([z_mean, z_log_var])
    z = Sampling()([z_mean, z_log_var])
    out = layers.Dense(6)(layers.Dense(16, activation="relu")(z))
    vae = keras.Model(inp, out)
    vae.compile(keras.optimizers.Adam(0.01), "mse")
    x = RNG.normal(size=(128, 6)).astype(np.float32)
    losses = vae.fit(x, x, batch_size=32, epochs=5, verbose=0).history["loss"]
    assert losses[-1] < losses[0], losses
    # The KL term is the formula on the encoder's outputs (checked on one batch at inference, where
    # Sampling still draws).
    enc = keras.Model(inp, z_log_var)
    assert enc.predict(x[:4], verbose=0).shape == (4, 2)


def test_vae_sampling_draws_with_the_formula():
    inp = keras.Input(shape=(2,))
    z = Sampling()([inp, inp * 0.0 + np.log(4.0)])  # z = mean + 2 * N(0, 1)
    model = keras.Model(inp, z)
    x = np.zeros((4000, 2), np.float32)
    draws = model.predict(x, batch_size=4000, verbose=0)
    assert abs(draws.mean()) < 0.15 and abs(draws.std() - 2.0) < 0.1


def test_custom_layer_in_sequential_and_in_subclassed_model():
    seq = keras.Sequential([keras.Input(shape=(4,)), Linear(8), layers.Activation("relu"), Linear(1)])
    seq.compile("adam", "mse")
    x = RNG.normal(size=(64, 4)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True)
    assert seq.count_params() == 4 * 8 + 8 + 8 + 1

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.block = MLPBlock()

        def call(self, inputs):
            return self.block(inputs) + tf.reduce_mean(inputs, axis=1, keepdims=True)

    net = Net()
    net.compile(keras.optimizers.Adam(0.01), "mse")
    for model in (seq, net):
        before = model.evaluate(x, y, verbose=0)
        model.fit(x, y, batch_size=16, epochs=5, verbose=0)
        assert model.evaluate(x, y, verbose=0) < before


def test_get_config_and_model_file_with_custom_objects(tmp_path):
    layer = Linear(64, name="lin")
    config = layer.get_config()
    assert config["units"] == 64 and config["name"] == "lin"
    assert Linear.from_config(config).units == 64
    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, Linear(2)(inp))
    model.compile("sgd", "mse")
    x = RNG.normal(size=(5, 3)).astype(np.float32)
    model.fit(x, np.ones((5, 2), np.float32), verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    back = keras.models.load_model(path, custom_objects={"Linear": Linear})
    np.testing.assert_allclose(back.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert isinstance(back.layers[0], Linear) and back.layers[0].units == 2


def test_tf_ops_on_keras_tensors_become_layers(tmp_path):
    inp = keras.Input(shape=(4, 3))
    a = layers.Dense(3)(inp)
    y = -(inp + a) * 2.0 - 1.0
    y = tf.reduce_mean(y, axis=1)
    z = tf.concat([y, tf.nn.relu(y)], axis=-1)
    z = tf.expand_dims(z, 1)[:, 0] / 2.0
    z = 1.0 - z @ np.ones((6, 2), np.float32)
    model = keras.Model(inp, z)
    x = RNG.normal(size=(5, 4, 3)).astype(np.float32)
    y = model.predict(x, verbose=0)
    w, b = model.layers[0].get_weights()
    ref = np.mean(-(x + (x @ w + b)) * 2.0 - 1.0, axis=1)
    ref = 1.0 - np.concatenate([ref, np.maximum(ref, 0)], -1) / 2.0 @ np.ones((6, 2), np.float32)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="not iterable"):
        list(inp)
    # The ops' layers save as TF-Keras names them, with their arguments (slices, arrays, axes).
    assert [layer.get_config()["function"] for layer in model.layers[1:4]] == [
        "tf.__operators__.add", "tf.math.negative", "tf.math.multiply"]
    model.save(str(tmp_path / "ops.keras"))
    np.testing.assert_allclose(keras.models.load_model(str(tmp_path / "ops.keras")).predict(x, verbose=0), y,
                               rtol=1e-6)
    model.compile(keras.optimizers.Adam(0.01), "mse")
    target = RNG.normal(size=(5, 2)).astype(np.float32)
    losses = model.fit(x, target, batch_size=5, epochs=10, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_untraceable_call_names_the_layer_and_the_construct():
    class UsesNumpy(keras.layers.Layer):
        def call(self, x):
            return np.tanh(x)

    class Branches(keras.layers.Layer):
        def call(self, x):
            if tf.reduce_sum(x) > 0:
                return x
            return -x

    inp = keras.Input(shape=(2,))
    with pytest.raises(TypeError, match="UsesNumpy.*numpy"):
        UsesNumpy()(inp)
    with pytest.raises(TypeError, match="Branches.*bool"):
        Branches()(inp)


def test_a_weight_of_another_layer_is_named():
    inner = LinearInit(2, 2)

    class Borrows(keras.layers.Layer):
        def call(self, x):
            return tf.matmul(x, inner.w)

    with pytest.raises(TypeError, match="weight 'variable'.*LinearInit.*Borrows"):
        Borrows()(keras.Input(shape=(2,)))


def test_bad_weights_and_outputs_are_errors():
    class NestedOutputs(keras.layers.Layer):
        def call(self, x):
            return x, (x, x)

    class LateWeight(keras.layers.Layer):
        def call(self, x):
            return x * self.add_weight(shape=(2,))

    inp = keras.Input(shape=(2,))
    with pytest.raises(NotImplementedError, match="NestedOutputs.*flat tuple"):
        NestedOutputs()(inp)
    with pytest.raises(RuntimeError, match="LateWeight.add_weight.*build"):
        LateWeight()(inp)
    with pytest.raises(ValueError, match="fully known"):
        LinearInit(2, None)


def test_sgd_step_on_a_custom_layer_weight_is_the_closed_form_gradient():
    inp = keras.Input(shape=(2,))
    model = keras.Model(inp, Linear(1)(inp))
    model.compile(keras.optimizers.SGD(0.1), "mse")
    w, b = np.array([[0.5], [-1.0]], np.float32), np.array([0.25], np.float32)
    model.set_weights([w, b])
    x = np.array([[1, 2], [3, -1], [0, 1]], np.float32)
    y = np.array([[1], [0], [2]], np.float32)
    model.train_on_batch(x, y)
    err = x @ w + b - y  # d mean(err^2) / dw = 2 / N * x^T err
    new_w, new_b = model.get_weights()
    np.testing.assert_allclose(new_w, w - 0.1 * 2 / 3 * x.T @ err, rtol=1e-5)
    np.testing.assert_allclose(new_b, b - 0.1 * 2 / 3 * err.sum(0), rtol=1e-5)


def test_weight_regularizer_joins_the_loss():
    class Scaled(keras.layers.Layer):
        def build(self, input_shape):
            self.k = self.add_weight(shape=(input_shape[-1],), initializer="ones",
                                     regularizer=keras.regularizers.l2(0.1), name="k")

        def call(self, x):
            return x * self.k

    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, Scaled()(inp))
    model.compile("sgd", "mse")
    x = RNG.normal(size=(4, 3)).astype(np.float32)
    # k = 1: the output is x; the penalty is 0.1 * sum(k^2) = 0.3.
    np.testing.assert_allclose(model.evaluate(x, np.zeros_like(x), batch_size=4, verbose=0),
                               np.mean(x ** 2) + 0.3, rtol=1e-5)
    assert [w.path for w in model.layers[0].weights] == ["scaled/k"]


def test_batch_normalization_sublayer_updates_its_moving_mean_in_training():
    class Normed(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.bn = layers.BatchNormalization(momentum=0.5)

        def call(self, x, training=False):
            return self.bn(x, training=training)

    inp = keras.Input(shape=(2,))
    normed = Normed()
    model = keras.Model(inp, normed(inp))
    model.compile(keras.optimizers.SGD(0.0), "mse")  # only the moving statistics change
    assert len(normed.trainable_weights) == 2 and len(normed.non_trainable_weights) == 2
    x = np.array([[1, 2], [3, 6]], np.float32)
    model.train_on_batch(x, np.zeros_like(x))
    moving_mean = [w for w in normed.weights if w.name.endswith("moving_mean")][0]
    np.testing.assert_allclose(moving_mean.numpy(), 0.5 * x.mean(0), rtol=1e-5)  # 0.5 * 0 + 0.5 * batch mean
    # Inference uses the moving statistics (mean 0.5 * batch mean, variance 0.5 + 0.5 * batch variance).
    var = 0.5 + 0.5 * x.var(0)
    np.testing.assert_allclose(model.predict(x, verbose=0), (x - 0.5 * x.mean(0)) / np.sqrt(var + 1e-3), rtol=1e-4)


def test_custom_layer_applied_twice_in_a_model_shares_its_weights_and_saves(tmp_path):
    a = keras.Input(shape=(64,))
    block = MLPBlock()
    out = block(a) + block(a * 2.0)
    model = keras.Model(a, out)
    assert model.count_params() == 64 * 32 + 32 + 32 * 32 + 32 + 32 + 1
    x = RNG.normal(size=(3, 64)).astype(np.float32)
    y = model.predict(x, verbose=0)
    np.testing.assert_allclose(y, block(x) + block(2 * x), rtol=1e-5, atol=1e-5)
    # Saved and loaded: the nested custom layers by class and config, their weights by their names,
    # the TF ops (+, *) by name and arguments.
    path = str(tmp_path / "mlp.keras")
    model.save(path)
    back = keras.models.load_model(path, custom_objects={"MLPBlock": MLPBlock, "Linear": Linear})
    np.testing.assert_allclose(back.predict(x, verbose=0), y, rtol=1e-6)


def test_inline_custom_layers_live_as_long_as_their_model():
    import gc
    inp = keras.Input(shape=(3,))
    model = keras.Model(inp, layers.Dense(2)(Linear(4)(inp) * 2.0))
    gc.collect()
    assert isinstance(model.layers[0], Linear) and model.layers[0].units == 4
    assert type(model.layers[1]).__name__ == "TFOpLambda" and model.layers[2].type == "Dense"
    assert model.layers[0].weights[0].shape == (3, 4)


def test_keras_ops_and_linalg_on_keras_tensors(tmp_path):
    inp = keras.Input(shape=(4,))
    y = tf.linalg.matmul(keras.ops.mean(keras.ops.square(inp), axis=1, keepdims=True), np.ones((1, 2), np.float32))
    model = keras.Model(inp, y)
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    want = (x ** 2).mean(1, keepdims=True) @ np.ones((1, 2), np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-5)
    model.save(str(tmp_path / "ops.keras"))
    np.testing.assert_allclose(keras.models.load_model(str(tmp_path / "ops.keras")).predict(x, verbose=0), want,
                               rtol=1e-5)


def test_custom_layers_in_a_custom_training_loop():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.block = MLPBlock()

        def call(self, x):
            return self.block(x)

    model = Net()
    model.build((None, 4))
    opt, mse = keras.optimizers.Adam(0.01), keras.losses.MeanSquaredError()
    x = RNG.normal(size=(64, 4)).astype(np.float32)
    y = x.sum(1, keepdims=True)

    @tf.function
    def step(a, b):
        with tf.GradientTape() as tape:
            loss = mse(b, model(a, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    losses = [float(step(x, y)) for _ in range(10)]
    assert len(model.trainable_variables) == 6 and losses[-1] < losses[0]
    with pytest.raises(TypeError, match="Linear: called on graph tensors outside a model"):
        tf.function(lambda a: Linear(2)(a))(x)


def test_a_sublayer_on_a_tensor_of_unknown_rank_is_named():
    class Unknown(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(2)

        def call(self, x):
            return self.dense(tf.squeeze(x))  # squeezing a batch dim that may be 1: the rank is unknown

    with pytest.raises(Exception, match="Dense 'dense' is applied to .* whose rank is unknown"):
        Unknown()(keras.Input(shape=(3,)))


def test_tf_variables_held_by_a_layer_become_its_weights():
    class LinearV(keras.layers.Layer):  # tf.keras 2's guide: weights as tf.Variable in __init__
        def __init__(self, units=4, input_dim=3):
            super().__init__()
            w0 = np.arange(input_dim * units, dtype=np.float32).reshape(input_dim, units)
            self.w = tf.Variable(initial_value=w0, trainable=True)
            self.b = tf.Variable(initial_value=tf.ones((units,)), trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    layer = LinearV()
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    y = layer(x)
    assert [w.name for w in layer.trainable_weights] == ["w"] and [w.name for w in layer.non_trainable_weights] == ["b"]
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(layer.w.numpy(), w)
    np.testing.assert_allclose(y, x @ w + 1.0, rtol=1e-5, atol=1e-5)


def test_a_custom_layer_takes_every_output_of_an_rnn_with_return_state():
    # Keras: GRU(return_state=True) returns [output, state]; inside a custom layer's call too.
    class LastTwice(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.rnn = tf.keras.layers.GRU(3, return_sequences=True, return_state=True)

        def call(self, x):
            seq, state = self.rnn(x)
            return tf.concat([seq[:, -1, :], state], axis=-1)
    inp = tf.keras.Input((5, 2))
    model = tf.keras.Model(inp, LastTwice()(inp))
    out = model.predict(np.random.default_rng(0).standard_normal((4, 5, 2)).astype("float32"), verbose=0)
    assert out.shape == (4, 6)
    np.testing.assert_allclose(out[:, :3], out[:, 3:], rtol=1e-6)  # the last output is the final state


class _Attention(tf.keras.layers.Layer):
    """TF's NMT tutorial's BahdanauAttention: call(query, values) -> (context, weights)."""

    def __init__(self, units):
        super().__init__()
        self.W1, self.W2, self.V = (tf.keras.layers.Dense(units), tf.keras.layers.Dense(units),
                                    tf.keras.layers.Dense(1))

    def call(self, query, values):
        score = self.V(tf.nn.tanh(self.W1(tf.expand_dims(query, 1)) + self.W2(values)))
        weights = tf.nn.softmax(score, axis=1)
        return tf.reduce_sum(weights * values, axis=1), weights


def _bahdanau(q, v, w):
    """numpy: the layer above from its weights [W1 k, W1 b, W2 k, W2 b, V k, V b]."""
    s = np.tanh((q @ w[0] + w[1])[:, None, :] + v @ w[2] + w[3]) @ w[4] + w[5]
    e = np.exp(s - s.max(1, keepdims=True))
    a = e / e.sum(1, keepdims=True)
    return (a * v).sum(1), a


def test_a_custom_layer_of_several_arguments_and_outputs():
    rng = np.random.default_rng(1)
    q_in, v_in = tf.keras.Input((4,)), tf.keras.Input((5, 4))
    ctx, att = _Attention(3)(q_in, v_in)
    model = tf.keras.Model([q_in, v_in], [ctx, att])
    q, v = rng.standard_normal((2, 4)).astype("float32"), rng.standard_normal((2, 5, 4)).astype("float32")
    got_ctx, got_att = model.predict([q, v], verbose=0)
    want_ctx, want_att = _bahdanau(q, v, model.get_weights())
    np.testing.assert_allclose(got_ctx, want_ctx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_att, want_att, rtol=1e-5, atol=1e-6)
    layer = _Attention(3)
    layer(q_in, v_in)
    with pytest.raises(TypeError, match="traced with 2 positional tensors; got 3"):
        layer(q_in, v_in, v_in)


def test_subclassed_models_called_with_several_tensors_in_a_custom_loop():
    # TF's NMT tutorial shape: encoder(x, hidden) -> (output, state); decoder(x, hidden, enc_output).
    class Encoder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(12, 4)
            self.gru = tf.keras.layers.GRU(6, return_sequences=True, return_state=True)

        def call(self, x, hidden):
            return self.gru(self.embedding(x), initial_state=hidden)

    class Decoder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.attention = _Attention(6)
            self.fc = tf.keras.layers.Dense(12)

        def call(self, hidden, enc_output):
            context, weights = self.attention(hidden, enc_output)
            return self.fc(tf.concat([context, hidden], axis=-1)), weights

    encoder, decoder = Encoder(), Decoder()
    opt = tf.keras.optimizers.Adam(0.05)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y, h0):
        with tf.GradientTape() as tape:
            enc_out, state = encoder(x, h0)
            logits, _ = decoder(state, enc_out)
            loss = loss_fn(y, logits)
        variables = encoder.trainable_variables + decoder.trainable_variables
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss
    rng = np.random.default_rng(2)
    x = rng.integers(0, 12, (8, 5)).astype("int32")
    y = x[:, 0].astype("int32")  # learnable: the first token
    losses = [float(step(x, y, np.zeros((8, 6), np.float32))) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]
    with pytest.raises(TypeError, match="built for call with 2 tensor arguments; got 3"):
        encoder(x, np.zeros((8, 6), np.float32), x)
