"""weft.keras: layer shapes and parameter counts, compile/fit/evaluate/predict, weights files,
callbacks, data loaders, and help() text."""
import numpy as np
import pytest

import weft
from weft import keras
from weft.keras import layers


def mnist_cnn():
    return keras.Sequential([
        layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10),
    ])


def blobs(n=512, dim=8, classes=3, seed=0):
    """A small learnable classification set: class means far apart plus noise."""
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((classes, dim)) * 3
    y = rng.integers(0, classes, n)
    x = (means[y] + rng.standard_normal((n, dim))).astype(np.float32)
    return x, y.astype(np.int64)


def small_mlp(seed=3):
    model = keras.Sequential([layers.Dense(16, activation="relu", input_shape=(8,)), layers.Dense(3)])
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.1, momentum=0.9), metrics=["accuracy"], seed=seed,
                  inter_op_threads=1, intra_op_threads=1)
    return model


def test_mnist_cnn_shapes_and_params(capsys):
    model = mnist_cnn()
    assert model.count_params() == 347146
    assert [l.type for l in model.layers] == ["Conv2D", "MaxPool2D", "Flatten", "Dense", "Dense"]
    assert [l.count_params() for l in model.layers] == [320, 0, 0, 346176, 650]
    assert model.input_shape == (None, 28, 28, 1) and model.output_shape == (None, 10)
    model.summary()
    out = capsys.readouterr().out
    assert "Total params: 347,146" in out and "(None, 26, 26, 32)" in out


def test_functional_model_and_shape_errors():
    x = keras.Input(shape=(32, 32, 3))
    h = layers.Conv2D(16, 3, padding="same", activation="relu")(x)
    y = layers.Add()([h, layers.Conv2D(16, 1)(x)])
    out = layers.Dense(10)(layers.GlobalAveragePooling2D()(y))
    model = keras.Model(inputs=x, outputs=out)
    assert h.shape == (None, 32, 32, 16)
    assert model.output_shape == (None, 10)
    assert model.count_params() == 448 + 64 + 170
    with pytest.raises(weft.errors.InvalidArgumentError, match="Dense"):
        layers.Dense(4)(keras.Input(shape=(4, None)))  # Dense wants known features (the last dim)
    assert layers.Dense(3)(keras.Input(shape=(None, 4))).shape == (None, None, 3)  # any number of steps, as Keras


def test_sequential_built_from_data_and_add():
    model = keras.Sequential()
    model.add(layers.Flatten())
    model.add(layers.Dense(3))
    model.compile(loss="sparse_categorical_crossentropy", optimizer="sgd")
    x = np.random.default_rng(0).random((20, 2, 4)).astype(np.float32)
    model.fit(x, np.zeros(20, np.int32), epochs=1, verbose=0)
    assert model.input_shape == (None, 2, 4)
    assert model.count_params() == 8 * 3 + 3


def test_fit_converges_and_evaluate_predict(capfd):
    x, y = blobs()
    model = small_mlp()
    hist = model.fit(x, y, batch_size=32, epochs=5, verbose=1)
    out = capfd.readouterr().out  # the C++ progress bar writes to file descriptor 1
    assert "Epoch 1/5" in out and "accuracy:" in out
    assert hist.epoch == [0, 1, 2, 3, 4]
    assert hist.history["loss"][-1] < hist.history["loss"][0] * 0.5
    loss, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.95 and loss < 0.3
    pred = model.predict(x[:10])
    assert pred.shape == (10, 3) and pred.dtype == np.float32
    np.testing.assert_array_equal(np.argmax(pred, axis=1), y[:10])
    d = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(d) == {"loss", "accuracy"}


def test_save_load_weights_roundtrip(tmp_path):
    x, y = blobs()
    a = small_mlp(seed=3)
    a.fit(x, y, epochs=2, verbose=0)
    path = str(tmp_path / "w.weft")
    a.save_weights(path)
    b = small_mlp(seed=99)  # different initial weights
    assert not np.allclose(a.predict(x), b.predict(x))
    b.load_weights(path)
    np.testing.assert_array_equal(a.predict(x), b.predict(x))
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    assert b.step == a.step > 0
    with pytest.raises(weft.errors.NotFoundError):
        b.load_weights(str(tmp_path / "missing.weft"))


def test_python_callback_and_stop_training():
    x, y = blobs()
    seen = []

    class Recorder(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((epoch, round(logs["loss"], 6)))
            if epoch == 1:
                self.model.stop_training = True

    model = small_mlp()
    hist = model.fit(x, y, epochs=10, verbose=0, callbacks=[Recorder()])
    assert [e for e, _ in seen] == [0, 1] and hist.epoch == [0, 1]
    assert [round(v, 6) for v in hist.history["loss"]] == [l for _, l in seen]


def test_python_callback_exception_propagates():
    class Boom(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            raise RuntimeError("boom at batch %d" % batch)

    x, y = blobs()
    model = small_mlp()
    with pytest.raises(RuntimeError, match="boom at batch 0"):
        model.fit(x, y, epochs=1, verbose=0, callbacks=[Boom()])
    model.fit(x, y, epochs=1, verbose=0)  # still usable


def test_cpp_callbacks(tmp_path):
    x, y = blobs()
    model = small_mlp()
    ckpt = keras.callbacks.ModelCheckpoint(str(tmp_path / "e{epoch}.weft"), monitor="loss")
    csv = keras.callbacks.CSVLogger(str(tmp_path / "log.csv"))
    model.fit(x, y, epochs=2, verbose=0, callbacks=[ckpt, csv], validation_data=(x[:64], y[:64]))
    assert (tmp_path / "e1.weft").exists() and (tmp_path / "e2.weft").exists()
    rows = (tmp_path / "log.csv").read_text().strip().splitlines()
    assert rows[0].startswith("epoch") and "val_loss" in rows[0] and len(rows) == 3


def test_optimizers_losses_schedules():
    sched = keras.optimizers.schedules.CosineDecay(0.1, 100)
    assert sched(0) == pytest.approx(0.1) and sched(100) == pytest.approx(0.0)
    opt = keras.optimizers.SGD(learning_rate=sched, momentum=0.9)
    assert opt.learning_rate_at(50) == pytest.approx(0.05)
    assert "momentum" in repr(keras.optimizers.get("momentum"))
    assert keras.losses.get("mse").name == "mean_squared_error"
    model = keras.Sequential([layers.Dense(1, input_shape=(2,))])
    model.compile(loss=keras.losses.MeanSquaredError(), optimizer=keras.optimizers.Adam(0.05), seed=1)
    x = np.random.default_rng(0).standard_normal((256, 2)).astype(np.float32)
    yv = (x @ np.array([[2.0], [-1.0]], np.float32) + 0.5)
    model.fit(x, yv, epochs=30, verbose=0)
    assert model.evaluate(x, yv, verbose=0) < 0.05


def test_fashion_mnist_load_data():
    (xt, yt), (xs, ys) = keras.datasets.fashion_mnist.load_data()
    assert xt.shape == (60000, 28, 28) and xt.dtype == np.uint8 and yt.shape == (60000,)
    assert xs.shape == (10000, 28, 28) and ys.dtype == np.uint8 and ys.max() == 9
    assert not xt.flags.owndata  # handed over without a copy


def test_mnist_load_data_from_a_directory_and_errors(tmp_path):
    (xt, yt), _ = keras.datasets.mnist.load_data(path=weft._weft.keras.FASHION_MNIST_DIR)
    assert xt.shape == (60000, 28, 28)
    np.savez(tmp_path / "m.npz", x_train=xt[:5], y_train=yt[:5], x_test=xt[:2], y_test=yt[:2])
    (a, b), (c, d) = keras.datasets.mnist.load_data(path=str(tmp_path / "m.npz"))
    assert a.shape == (5, 28, 28) and d.shape == (2,)
    with pytest.raises(weft.errors.NotFoundError, match="no MNIST data"):
        keras.datasets.mnist.load_data(path=str(tmp_path / "absent.npz"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(weft.errors.NotFoundError, match="train-images"):
        keras.datasets.mnist.load_data(path=str(tmp_path / "empty"))


def test_help_tells_what_to_pass():
    doc = layers.Conv2D.__doc__
    for word in ("filters", "kernel_size", "strides", "padding", "activation", "input_shape", "'valid'"):
        assert word in doc, word
    assert "units" in layers.Dense.__doc__
    assert "from_logits" in keras.losses.SparseCategoricalCrossentropy.__doc__
