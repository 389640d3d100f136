"""Keras' eager conveniences on layers (keras/_eager.py): a layer called on numpy data runs it, a
built layer's weights are attributes, an adapted Normalization can be read and saved before any
model is built. Expected values are closed forms on the same numbers (numpy)."""
import numpy as np
import pytest

from weft import keras


def test_layer_called_on_data_uses_the_weights_its_model_holds():
    dense = keras.layers.Dense(2)
    model = keras.Sequential([keras.Input(shape=(3,)), dense])
    model.compile(optimizer="sgd", loss="mse")
    k = np.arange(6, dtype=np.float32).reshape(3, 2)
    b = np.array([0.5, -1.0], np.float32)
    model.set_weights([k, b])
    x = np.array([[1, 2, 3], [0, -1, 4]], np.float32)
    out = dense(x)
    np.testing.assert_allclose(out.numpy(), x @ k + b, rtol=1e-6)
    np.testing.assert_allclose(dense.kernel.numpy(), k)
    assert dense.kernel.name == "dense/kernel" and dense.bias.shape == (2,)


def test_weight_assign_changes_the_model():
    dense = keras.layers.Dense(1, input_shape=(2,))
    model = keras.Sequential([dense])
    model.compile(optimizer="sgd", loss="mse")
    model.predict(np.zeros((1, 2), np.float32))  # built, as the tutorials read weights after a call
    dense.kernel.assign(np.zeros((2, 1)))
    dense.bias.assign([3.0])
    np.testing.assert_allclose(model.predict(np.ones((4, 2), np.float32)), np.full((4, 1), 3.0))


def test_unknown_attribute_names_the_weights():
    dense = keras.layers.Dense(1, input_shape=(2,))
    keras.Sequential([dense]).predict(np.zeros((1, 2), np.float32))
    with pytest.raises(AttributeError, match="kernel, bias"):
        dense.gamma


def test_adapted_normalization_reads_calls_builds_and_saves(tmp_path):
    rng = np.random.default_rng(0)
    data = (rng.normal(size=(200, 4)) * [1, 10, 100, 0.1] + [0, 5, -50, 2]).astype(np.float32)
    norm = keras.layers.Normalization(axis=-1)
    norm.adapt(data)
    # Keras: mean and variance per feature over the adapted data (population variance).
    np.testing.assert_allclose(np.ravel(norm.mean.numpy()), data.mean(axis=0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.ravel(norm.variance.numpy()), data.var(axis=0), rtol=1e-4)
    first = data[:3]
    np.testing.assert_allclose(norm(first).numpy(), (first - data.mean(0)) / data.std(0), rtol=1e-3, atol=1e-4)
    # A Sequential starting with it takes its input shape from adapt (summary works unbuilt by fit).
    model = keras.Sequential([norm, keras.layers.Dense(3, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mean_absolute_error")
    assert model.count_params() == (4 + 4 + 1) + (4 * 3 + 3) + (3 + 1)
    model.fit(data, data[:, :1], epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    again = keras.models.load_model(path)
    np.testing.assert_allclose(again.predict(data[:8]), model.predict(data[:8]), rtol=1e-6)


def test_weight_lists_of_models_and_layers():
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(2,)), keras.layers.BatchNormalization(),
                              keras.layers.Dense(1)])
    # Keras: trainable (kernel, bias, gamma, beta, kernel, bias) then the moving statistics.
    assert [v.name for v in model.trainable_variables] == ["dense/kernel", "dense/bias", "batch_normalization/gamma",
                                                           "batch_normalization/beta", "dense_1/kernel", "dense_1/bias"]
    assert [v.name for v in model.non_trainable_weights] == ["batch_normalization/moving_mean",
                                                             "batch_normalization/moving_variance"]
    assert len(model.weights) == 8 and model.layers[1].trainable_weights[0].shape == (3,)
    np.testing.assert_array_equal(model.layers[1].non_trainable_weights[1].numpy(), np.ones(3))  # variance starts at 1
    assert keras.Sequential([keras.layers.Dense(1)]).weights == []  # not built: no weights yet
