"""Whole-model files (save / load_model), weights lists, configs, clone_model and keras.utils.
Expected values: save -> load gives the same predictions and continues training the same way;
damaged files are errors naming the file; to_categorical / normalize from Keras' docs and closed
forms; the same seed gives the same weights and training (TensorFlow's promise for set_seed)."""
import os
import shutil
import zipfile

import numpy as np
import pytest

import weft
from weft import keras
from weft.keras import layers


def data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 6)).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)


def compile_(model, seed=5):
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.Adam(0.01), metrics=["accuracy"], seed=seed, inter_op_threads=1,
                  intra_op_threads=1)
    return model


def sequential():
    return compile_(keras.Sequential([layers.Dense(8, activation="relu", input_shape=(6,)), layers.Activation("relu"),
                                      layers.Dense(3)]))


def functional():
    x = keras.Input(shape=(6,))
    h = layers.Dense(8, activation="tanh", name="hidden")(x)
    r = layers.Add()([layers.Dense(8)(h), h])
    return compile_(keras.Model(x, layers.Dense(3)(r)))


class Subclassed(keras.Model):
    def __init__(self, hidden=8, **kwargs):
        super().__init__(**kwargs)
        self.hidden = layers.Dense(hidden, activation="relu")
        self.out = layers.Dense(3)

    def call(self, inputs, training=None):
        return self.out(self.hidden(inputs))


def subclassed():
    return compile_(Subclassed(hidden=7))


@pytest.mark.parametrize("make", [sequential, functional, subclassed])
def test_save_load_same_predictions_and_training(make, tmp_path):
    x, y = data()
    model = make()
    model.fit(x, y, epochs=2, verbose=0, shuffle=False)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={"Subclassed": Subclassed})
    assert type(loaded) is type(model) and loaded.step == model.step
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    assert [l.name for l in loaded.layers] == [l.name for l in model.layers]
    # optimizer state (Adam's moments and step) came along: training continues identically
    h1 = model.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
    h2 = loaded.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(h1, h2, rtol=1e-6)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_model_file_format(tmp_path):
    model = sequential()
    model.save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weft"]
        assert b'"format": "weft.keras"' in z.read("metadata.json")
        assert z.read("model.weft")[:8] == b"WEFTCKPT"
    model.save(str(tmp_path / "w.keras"), include_optimizer=False)
    loaded = keras.models.load_model(str(tmp_path / "w.keras"))
    np.testing.assert_array_equal(loaded.get_weights()[0], model.get_weights()[0])
    with pytest.raises(FileExistsError):
        model.save(str(tmp_path / "m.keras"), overwrite=False)


def test_damaged_files_are_errors_naming_the_file(tmp_path):
    model = sequential()
    good = str(tmp_path / "m.keras")
    model.save(good)
    blob = open(good, "rb").read()
    truncated = str(tmp_path / "truncated.keras")
    open(truncated, "wb").write(blob[: len(blob) // 2])
    with pytest.raises(weft.errors.DataLossError, match="truncated.keras"):
        keras.models.load_model(truncated)
    # one byte of the weights member flipped: the zip's CRC-32 catches it
    corrupted = str(tmp_path / "corrupted.keras")
    with zipfile.ZipFile(good) as z:
        info = z.getinfo("model.weft")
    raw = bytearray(blob)
    raw[info.header_offset + 30 + len(info.filename) + 100] ^= 0xFF
    open(corrupted, "wb").write(bytes(raw))
    with pytest.raises(weft.errors.DataLossError, match="corrupted.keras"):
        keras.models.load_model(corrupted)
    # a weights member that is damaged but consistently zipped: the checkpoint's own CRC-32C
    rezipped = str(tmp_path / "rezipped.keras")
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(rezipped, "w") as dst:
        for name in src.namelist():
            content = bytearray(src.read(name))
            if name == "model.weft":
                content[-10] ^= 0xFF
            dst.writestr(name, bytes(content))
    with pytest.raises(weft.errors.DataLossError, match="rezipped.keras"):
        keras.models.load_model(rezipped)
    notmodel = str(tmp_path / "other.keras")
    with zipfile.ZipFile(notmodel, "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(weft.errors.InvalidArgumentError, match="other.keras.*not a weft model"):
        keras.models.load_model(notmodel)
    with pytest.raises(weft.errors.NotFoundError):
        keras.models.load_model(str(tmp_path / "missing.keras"))


def test_weights_from_another_model(tmp_path):
    a, b = sequential(), functional()
    a.save(str(tmp_path / "a.keras"))
    before = [w.copy() for w in b.get_weights()]
    with pytest.raises(weft.errors.InvalidArgumentError, match="a.keras.*another model"):
        b.load_weights(str(tmp_path / "a.keras"))
    for w0, w1 in zip(before, b.get_weights()):  # nothing changed
        np.testing.assert_array_equal(w0, w1)
    # a model with the same layer names but other shapes: InvalidArgument naming the file and shapes
    wide = compile_(keras.Sequential([layers.Dense(9, activation="relu", input_shape=(6,)), layers.Activation("relu"),
                                      layers.Dense(3)]))
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"a.keras.*dense/\w+.*8.*9"):
        wide.load_weights(str(tmp_path / "a.keras"))


def test_save_weights_and_load_weights(tmp_path):
    x, y = data()
    a, b = sequential(), sequential()
    a.fit(x, y, verbose=0)
    a.save_weights(str(tmp_path / "m.weights.h5"))
    b.load_weights(str(tmp_path / "m.weights.h5"))
    np.testing.assert_array_equal(a.predict(x), b.predict(x))
    assert open(tmp_path / "m.weights.h5", "rb").read(8) == b"WEFTCKPT"  # weft's format under Keras' name


def test_get_set_weights_order_and_checks():
    model = sequential()
    w = model.get_weights()
    assert [a.shape for a in w] == [(6, 8), (8,), (8, 3), (3,)]  # Keras' order: kernel, bias per layer
    new = [np.full(a.shape, i, np.float64) for i, a in enumerate(w)]
    model.set_weights(new)
    for i, a in enumerate(model.get_weights()):
        assert a.dtype == np.float32 and np.all(a == i)
    x = np.ones((2, 6), np.float32)
    # relu(x @ 0 + 1) = 1 per hidden unit; output = 8 * 2 + 3
    np.testing.assert_allclose(model.predict(x), np.full((2, 3), 19.0))
    with pytest.raises(ValueError, match=r"dense/kernel.*\(6, 8\).*\(8, 6\)"):
        model.set_weights([np.zeros((8, 6))] + new[1:])
    with pytest.raises(ValueError, match="4 weights"):
        model.set_weights(new[:3])
    assert np.all(model.get_weights()[0] == 0)  # unchanged by the failed calls


def test_layer_and_model_configs():
    d = layers.Dense(4, activation="relu", kernel_initializer=keras.initializers.HeNormal(seed=2), name="d")
    cfg = d.get_config()
    assert cfg["units"] == 4 and cfg["activation"] == "relu" and cfg["name"] == "d"
    again = layers.Dense.from_config(cfg)
    assert again.get_config() == cfg and again.type == "Dense"
    conv = layers.Conv2D(8, (3, 3), strides=2, padding="same")
    assert conv.get_config() == {"filters": 8, "kernel_size": [3, 3], "strides": 2, "padding": "same"}
    for make in (sequential, functional):
        model = make()
        config = model.get_config()
        clone = type(model).from_config(config)
        assert clone.get_config() == config
        assert clone.count_params() == model.count_params()
    assert subclassed().get_config() == {"hidden": 7}
    assert [l.type for l in Subclassed(hidden=3).layers] == ["Dense", "Dense"]  # before its trace
    model = functional()
    again = keras.models.model_from_json(model.to_json())
    assert again.get_config() == model.get_config()


def test_clone_model_same_architecture_new_weights():
    model = functional()
    clone = keras.models.clone_model(model)
    compile_(clone, seed=11)
    assert clone.get_config() == model.get_config()
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])


def test_to_categorical_documented_examples():
    # Keras' docstring: to_categorical([0, 1, 2, 3], num_classes=4) is the 4x4 identity
    np.testing.assert_array_equal(keras.utils.to_categorical([0, 1, 2, 3], num_classes=4), np.eye(4))
    out = keras.utils.to_categorical(np.array([[2], [0]], np.uint8))
    assert out.dtype == np.float32 and out.tolist() == [[0, 0, 1], [1, 0, 0]]
    with pytest.raises(ValueError, match="out of range"):
        keras.utils.to_categorical([3], num_classes=3)


def test_normalize_closed_form():
    np.testing.assert_allclose(keras.utils.normalize(np.array([[3.0, 4.0], [0.0, 0.0]])), [[0.6, 0.8], [0, 0]])
    np.testing.assert_allclose(keras.utils.normalize(np.array([1.0, 3.0]), order=1), [[0.25, 0.75]])


def test_set_random_seed_reproduces_weights_and_training():
    x, y = data()

    def run(seed):
        keras.utils.set_random_seed(seed)
        model = keras.Sequential([layers.Dense(8, activation="relu", input_shape=(6,)), layers.Dropout(0.5),
                                  layers.Dense(3)])
        model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="adam")
        first = model.get_weights()[0].copy()
        perm = np.random.permutation(len(x))  # numpy's generator is seeded too
        hist = model.fit(x[perm], y[perm], epochs=2, verbose=0)
        return first, hist.history["loss"], model.get_weights()[0]

    a, b, c = run(42), run(42), run(43)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]
    np.testing.assert_array_equal(a[2], b[2])
    assert not np.array_equal(a[0], c[0])
    weft.random.set_seed(42)
    assert weft.get_default_graph().seed == 42 and weft.random.get_global_seed() == 42


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot is not installed")
def test_plot_model(tmp_path):
    model = functional()
    keras.utils.plot_model(model, to_file=str(tmp_path / "m.png"), show_shapes=True)
    assert open(tmp_path / "m.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    dot = keras.utils.model_to_dot(model, show_shapes=True)
    assert "hidden (Dense)" in dot and "(None, 8)" in dot and "n1 -> n2" in dot
    keras.utils.plot_model(sequential(), to_file=str(tmp_path / "s.dot"))
    assert os.path.getsize(tmp_path / "s.dot") > 0


def test_subclassed_model_build_call_and_errors():
    model = Subclassed(hidden=5)
    with pytest.raises(ValueError, match="not yet been built"):
        model.summary()
    model.build((None, 6))
    assert model.built and model.output_shape == (None, 3) and model.count_params() == 6 * 5 + 5 + 5 * 3 + 3
    compile_(model)
    out = model(np.ones((2, 6), np.float32))
    assert out.shape == (2, 3)

    class Untraceable(keras.Model):
        def call(self, inputs):
            return np.tanh(inputs)

    with pytest.raises(TypeError, match="Untraceable.call"):
        Untraceable().build((None, 6))


def test_layer_get_and_set_weights():
    model = functional()
    hidden = model.get_layer("hidden")
    kernel, bias = hidden.get_weights()
    assert kernel.shape == (6, 8) and bias.shape == (8,)
    np.testing.assert_array_equal(kernel, model.get_weights()[0])
    hidden.set_weights([np.ones((6, 8)), np.zeros(8)])
    np.testing.assert_array_equal(model.get_weights()[0], np.ones((6, 8)))
    with pytest.raises(ValueError, match=r"hidden/kernel.*\(6, 8\).*\(8, 6\)"):
        hidden.set_weights([np.ones((8, 6)), np.zeros(8)])
    assert layers.Flatten().get_weights() == []
    unused = layers.Dense(3)
    unused(keras.Input((2,)))  # built (its weights declared) but in no compiled model
    with pytest.raises(ValueError, match="compiles"):
        unused.get_weights()


@keras.saving.register_keras_serializable(package="tests")
class Registered(keras.Model):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(units)

    def call(self, inputs):
        return self.dense(inputs)


def test_registered_subclass_loads_without_custom_objects(tmp_path):
    model = Registered(units=2)
    model.build((None, 3))
    model.save(str(tmp_path / "r.keras"))
    loaded = keras.models.load_model(str(tmp_path / "r.keras"))
    assert type(loaded) is Registered and loaded.get_config() == {"units": 2}
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(loaded.predict(x), model.predict(x))
    # a class defined where load_model cannot import it from, and not registered: an error naming it

    class Local(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    local = Local()
    local.build((None, 3))
    local.save(str(tmp_path / "l.keras"))
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"l.keras.*Local.*custom_objects"):
        keras.models.load_model(str(tmp_path / "l.keras"))
    assert type(keras.models.load_model(str(tmp_path / "l.keras"), custom_objects={"Local": Local})) is Local


def test_save_weights_makes_the_parent_directory(tmp_path):
    # As TensorFlow's tutorials rely on: model.save_weights("training_2/cp-0000.weights.h5").
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss="mse")
    path = tmp_path / "training_2" / "cp-0000.weights.h5"
    model.save_weights(str(path))
    again = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    again.compile(optimizer="sgd", loss="mse")
    again.load_weights(str(path))
    for a, b in zip(again.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)
