"""fit / evaluate / predict with Keras' options. Expected values are closed forms: a model whose
weights start at zero predicts 0, so with MSE each example's loss is y^2 (and with a learning
rate of 0 it stays so), and with zero logits the cross-entropy is ln(classes)."""
import math

import numpy as np
import pytest

import weft
from weft import keras
from weft.keras import layers


def zero_model(lr=0.0, inputs=2, units=1, loss="mse", metrics=None):
    model = keras.Sequential([layers.Dense(units, kernel_initializer="zeros", input_shape=(inputs,))])
    model.compile(loss=loss, optimizer=keras.optimizers.SGD(lr), metrics=metrics, inter_op_threads=1,
                  intra_op_threads=1)
    return model


def test_validation_split_takes_the_last_fraction():
    x = np.ones((10, 2), np.float32)
    y = np.arange(10, dtype=np.float32).reshape(10, 1)
    hist = zero_model().fit(x, y, epochs=2, batch_size=4, validation_split=0.2, verbose=0)
    # train: y 0..7 -> mean y^2 = 140 / 8; validation: y 8, 9 -> (64 + 81) / 2
    assert hist.history["loss"] == pytest.approx([17.5, 17.5])
    assert hist.history["val_loss"] == pytest.approx([72.5, 72.5])
    assert hist.epoch == [0, 1] and sorted(hist.history) == ["loss", "val_loss"]
    # Keras splits at floor(N * (1 - split)): 10 * 0.75 = 7.5 -> 7 training examples
    hist = zero_model().fit(x, y, epochs=1, validation_split=0.25, verbose=0)
    assert hist.history["val_loss"] == pytest.approx([(49 + 64 + 81) / 3])
    with pytest.raises(ValueError, match="validation_split"):
        zero_model().fit(x[:1], y[:1], validation_split=0.5, verbose=0)


def test_validation_data_and_history():
    x = np.ones((4, 2), np.float32)
    y = np.full((4, 1), 2.0, np.float32)
    hist = zero_model().fit(x, y, epochs=3, initial_epoch=1, validation_data=(x, 3 * y), verbose=0)
    assert hist.epoch == [1, 2] and hist.history["val_loss"] == pytest.approx([36.0, 36.0])
    assert isinstance(hist, keras.callbacks.History)


def test_class_weight_scales_each_examples_loss():
    # Keras' reduction: sum(weight * loss) / batch size; class from round(y)
    x = np.ones((4, 2), np.float32)
    y = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    hist = zero_model().fit(x, y, batch_size=4, class_weight={1: 2.0, 3: 0.5}, verbose=0)
    assert hist.history["loss"] == pytest.approx([(0 + 2 * 1 + 4 + 0.5 * 9) / 4])
    # sparse labels, zero logits over 3 classes: each loss is ln 3
    model = zero_model(inputs=2, units=3, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                       metrics=["accuracy"])
    labels = np.array([0, 1, 2, 0], np.int64)
    hist = model.fit(x, labels, batch_size=4, class_weight={0: 3.0}, verbose=0)
    assert hist.history["loss"] == pytest.approx([(3 + 1 + 1 + 3) * math.log(3) / 4], rel=1e-6)
    # metrics are not weighted (argmax of equal logits is class 0: two of four right)
    assert hist.history["accuracy"] == pytest.approx([0.5])
    # one-hot labels map to their argmax
    onehot = keras.utils.to_categorical(labels, 3)
    model = zero_model(inputs=2, units=3, loss=keras.losses.CategoricalCrossentropy(from_logits=True))
    hist = model.fit(x, onehot, batch_size=4, class_weight={2: 5.0}, verbose=0)
    assert hist.history["loss"] == pytest.approx([(1 + 1 + 5 + 1) * math.log(3) / 4], rel=1e-6)


def test_sample_weight_and_its_errors():
    x = np.ones((4, 2), np.float32)
    y = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    hist = zero_model().fit(x, y, batch_size=2, sample_weight=np.array([1.0, 0.0, 2.0, 0.0]), shuffle=False,
                            verbose=0)
    # batches {0, 1}: (0 + 0) / 2; {2, 3}: (2 * 4 + 0) / 2; the epoch mean weighs batches by size
    assert hist.history["loss"] == pytest.approx([2.0])
    with pytest.raises(ValueError, match="class_weight and sample_weight"):
        zero_model().fit(x, y, sample_weight=np.ones(4), class_weight={0: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="sample_weight has shape"):
        zero_model().fit(x, y, sample_weight=np.ones(3), verbose=0)


def test_sample_weight_trains_like_a_weighted_loss():
    # One step of SGD on loss = w_i * (k - y)^2 / N with kernel k (x = 1, no bias): the gradient is
    # 2 * sum(w_i * (k - y_i)) / N, so k moves by lr * 2 * sum(w_i * y_i) / N from zero.
    model = keras.Sequential([layers.Dense(1, use_bias=False, kernel_initializer="zeros", input_shape=(1,))])
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.1))
    y = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    model.fit(np.ones((4, 1), np.float32), y, batch_size=4, sample_weight=np.array([4.0, 3.0, 2.0, 1.0]), verbose=0)
    assert model.get_weights()[0][0, 0] == pytest.approx(0.1 * 2 * (4 + 6 + 6 + 4) / 4)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.float32, np.float64])
def test_label_dtypes(dtype):
    model = zero_model(inputs=2, units=3, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = np.ones((6, 2), np.uint8)
    hist = model.fit(x, np.array([0, 1, 2, 2, 1, 0], dtype), verbose=0)
    assert hist.history["loss"] == pytest.approx([math.log(3)], rel=1e-6)


def test_evaluate_return_values():
    x = np.ones((4, 2), np.float32)
    y = np.full((4, 1), 2.0, np.float32)
    assert zero_model().evaluate(x, y, verbose=0) == pytest.approx(4.0)  # no metrics: the loss alone
    model = zero_model(metrics=["mse"])
    loss, mse = model.evaluate(x, y, verbose=0)
    assert loss == pytest.approx(4.0) and mse == pytest.approx(4.0)
    assert model.evaluate(x, y, verbose=0, return_dict=True) == pytest.approx({"loss": 4.0, "mse": 4.0})


def test_predict_in_batches():
    model = keras.Sequential([layers.Dense(3, input_shape=(5,))])
    model.compile(loss="mse", optimizer="sgd", seed=4)
    x = np.random.default_rng(1).standard_normal((10, 5))
    w, b = model.get_weights()
    for batch_size in (1, 3, 32):
        out = model.predict(x, batch_size=batch_size, verbose=0)
        assert isinstance(out, np.ndarray) and out.shape == (10, 3) and out.dtype == np.float32
        np.testing.assert_allclose(out, x.astype(np.float32) @ w + b, rtol=1e-5, atol=1e-6)


def test_bad_inputs_name_both_shapes():
    model = zero_model()
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"x has shape \(4, 3\).*input is \(-1, 2\)|"
                       r"x has shape.*3.*model's input"):
        model.fit(np.ones((4, 3), np.float32), np.ones((4, 1), np.float32), verbose=0)
    with pytest.raises(ValueError, match="x has 4 examples.*y has 3"):
        model.fit(np.ones((4, 2), np.float32), np.ones((3, 1), np.float32), verbose=0)
    with pytest.raises(TypeError, match="numeric"):
        model.fit(np.array([["a", "b"]]), np.ones((1, 1)), verbose=0)
    with pytest.raises(TypeError):
        model.fit(np.ones((4, 2)), np.ones((4, 1)), epochz=3)


def test_predict_without_compile_and_compile_keeps_weights():
    model = keras.Sequential([layers.Flatten(input_shape=(2, 2)), layers.Dense(3)])
    x = np.random.default_rng(0).standard_normal((5, 2, 2)).astype(np.float32)
    out = model.predict(x, verbose=0)  # Keras predicts with an uncompiled model
    w, b = model.get_weights()
    np.testing.assert_allclose(out, x.reshape(5, 4) @ w + b, rtol=1e-5, atol=1e-6)
    # TensorFlow's quickstart calls the uncompiled model on data: model(x[:1]).numpy()
    np.testing.assert_array_equal(model(x[:1]).numpy(), out[:1])
    with pytest.raises(RuntimeError, match="compile"):
        model.fit(x, np.zeros((5, 3)), verbose=0)
    model.compile(loss="mse", optimizer="sgd")  # as in Keras, compile does not reset the weights
    np.testing.assert_array_equal(model.get_weights()[0], w)


def test_sequential_nests_a_trained_model():
    # TensorFlow's classification tutorial: probability_model = Sequential([model, Softmax()])
    model = keras.Sequential([layers.Dense(3, input_shape=(4,))])
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd", seed=2)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    model.fit(x, np.array([0, 1, 2, 0, 1, 2]), verbose=0)
    probability_model = keras.Sequential([model, layers.Activation("softmax")])
    logits = model.predict(x, verbose=0)
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probability_model.predict(x, verbose=0), expected, rtol=1e-5)

    # training the outer model reaches the inner one, and the other way round (shared layers)
    probability_model.compile(loss="sparse_categorical_crossentropy", optimizer=keras.optimizers.SGD(0.5))
    probability_model.fit(x, np.array([0, 1, 2, 0, 1, 2]), verbose=0)
    np.testing.assert_array_equal(model.get_weights()[0], probability_model.get_weights()[0])
    model.fit(x, np.array([0, 1, 2, 0, 1, 2]), verbose=0)
    logits = model.predict(x, verbose=0)
    expected = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probability_model.predict(x, verbose=0), expected, rtol=1e-5)


def test_models_sharing_layers_share_weights():
    # keras.io's autoencoder: the encoder and decoder models share the autoencoder's layers, so
    # they predict with the weights the autoencoder was trained to.
    rng = np.random.default_rng(3)
    x = rng.random((32, 8)).astype(np.float32)
    inputs = keras.Input(shape=(8,))
    # bias 1: the three ReLUs start alive whatever the random kernel (all three dead -- zeros
    # before and after training -- happened with some draws)
    encoded = layers.Dense(3, activation="relu", bias_initializer="ones")(inputs)
    decoded = layers.Dense(8, activation="sigmoid")(encoded)
    autoencoder = keras.Model(inputs, decoded)
    encoder = keras.Model(inputs, encoded)
    encoded_input = keras.Input(shape=(3,))
    decoder = keras.Model(encoded_input, autoencoder.layers[-1](encoded_input))
    autoencoder.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
    before = encoder.predict(x, verbose=0)  # compiles the encoder: it takes the autoencoder's weights
    autoencoder.fit(x, x, epochs=3, verbose=0)
    after = encoder.predict(x, verbose=0)
    assert not np.array_equal(before, after)
    np.testing.assert_allclose(decoder.predict(after, verbose=0), autoencoder.predict(x, verbose=0), rtol=1e-5,
                               atol=1e-6)
    # a model called on a KerasTensor is a layer of the outer model, sharing its weights too
    outer_in = keras.Input(shape=(8,))
    outer = keras.Model(outer_in, decoder(encoder(outer_in)))
    np.testing.assert_allclose(outer.predict(x, verbose=0), autoencoder.predict(x, verbose=0), rtol=1e-5,
                               atol=1e-6)
    # layer.set_weights reaches every model that has the layer
    autoencoder.layers[-1].set_weights([np.zeros((3, 8)), np.zeros(8)])
    np.testing.assert_allclose(decoder.predict(after, verbose=0), np.full((32, 8), 0.5))


def test_sequential_pop_and_layers_before_build():
    # Keras' Sequential guide: three Dense layers added without an input shape, pop, 2 remain
    model = keras.Sequential()
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    model.pop()
    assert len(model.layers) == 2
    x = np.ones((3, 5), np.float32)
    assert model.predict(x, verbose=0).shape == (3, 3)
    first = model.get_weights()[0]
    model.add(layers.Dense(6))
    assert model.predict(x, verbose=0).shape == (3, 6)
    model.pop()
    np.testing.assert_array_equal(model.get_weights()[0], first)  # the others keep their weights
    assert model.predict(x, verbose=0).shape == (3, 3)


def test_on_batch_methods():
    model = zero_model(lr=0.0, metrics=["mse"])
    x = np.ones((4, 2), np.uint8)  # converted as fit converts
    y = np.array([[0], [1], [2], [3]], np.int64)
    assert model.train_on_batch(x, y, sample_weight=np.array([0, 1, 1, 0])) == pytest.approx([(1 + 4) / 4, 3.5])
    assert model.train_on_batch(x, y, return_dict=True) == pytest.approx({"loss": 3.5, "mse": 3.5})
    assert model.test_on_batch(x, y) == pytest.approx([3.5, 3.5])
    np.testing.assert_array_equal(model.predict_on_batch(x), np.zeros((4, 1)))
