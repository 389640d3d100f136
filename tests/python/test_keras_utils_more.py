"""keras.utils' sequence helpers, PyDataset / Sequence and generators as fit inputs, get_file,
Progbar, custom_object_scope. Expected values: Keras' docstring examples and closed forms."""
import math
import os

import numpy as np
import pytest

import weft as tf
from weft import keras

SEQ = [[1], [2, 3], [4, 5, 6]]


def test_pad_sequences_docstring_examples():
    pad = keras.utils.pad_sequences
    np.testing.assert_array_equal(pad(SEQ), [[0, 0, 1], [0, 2, 3], [4, 5, 6]])
    assert pad(SEQ).dtype == np.int32
    np.testing.assert_array_equal(pad(SEQ, value=-1), [[-1, -1, 1], [-1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(pad(SEQ, padding="post"), [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(pad(SEQ, maxlen=2), [[0, 1], [2, 3], [5, 6]])
    np.testing.assert_array_equal(pad(SEQ, maxlen=2, truncating="post"), [[0, 1], [2, 3], [4, 5]])
    out = keras.preprocessing.sequence.pad_sequences([[0.5, 1.5], []], maxlen=3, dtype="float32", value=9)
    np.testing.assert_array_equal(out, [[9, 0.5, 1.5], [9, 9, 9]])
    with pytest.raises(ValueError, match="Padding type"):
        pad(SEQ, padding="middle")
    with pytest.raises(ValueError, match="dtype=object"):
        pad([["a"]], value="x")


def test_timeseries_windows_docstring_example_1():
    # Keras: indices 0..98, sequence_length=10, sampling_rate=2, sequence_stride=3.
    data = np.arange(100)
    ds = keras.utils.timeseries_dataset_from_array(data[:-1], None, sequence_length=10, sampling_rate=2,
                                                   sequence_stride=3, batch_size=None)
    windows = [np.asarray(w) for w in ds]
    np.testing.assert_array_equal(windows[0], [0, 2, 4, 6, 8, 10, 12, 14, 16, 18])
    np.testing.assert_array_equal(windows[1], [3, 5, 7, 9, 11, 13, 15, 17, 19, 21])
    np.testing.assert_array_equal(windows[2], [6, 8, 10, 12, 14, 16, 18, 20, 22, 24])
    np.testing.assert_array_equal(windows[-1], [78, 80, 82, 84, 86, 88, 90, 92, 94, 96])
    assert len(windows) == 27  # starts 0, 3, ..., 78


def test_timeseries_targets_docstring_examples_2_and_3():
    data = np.arange(200, dtype=np.float32)
    ds = keras.utils.timeseries_dataset_from_array(data[:-10], data[10:], sequence_length=10)
    inputs, targets = next(iter(ds))
    np.testing.assert_array_equal(inputs[0], data[:10])
    assert targets[0] == data[10]
    assert inputs.shape == (128, 10) and ds.cardinality() == 2  # 181 windows in batches of 128
    X = np.arange(100)
    Y = X * 2
    xs = keras.utils.timeseries_dataset_from_array(X, None, sequence_length=20, sequence_stride=20)
    ys = keras.utils.timeseries_dataset_from_array(Y, None, sequence_length=20, sequence_stride=20)
    for inputs, targets in zip(xs, ys):
        np.testing.assert_array_equal(inputs[0], X[:20])
        np.testing.assert_array_equal(targets[1], Y[20:40])
        break


def test_timeseries_start_end_and_shuffle():
    data = np.arange(50).reshape(50, 1)
    ds = keras.utils.timeseries_dataset_from_array(data, np.arange(50), sequence_length=5, start_index=10,
                                                   end_index=30, batch_size=4)
    xs, ys = zip(*[(np.asarray(x), np.asarray(y)) for x, y in ds])
    x, y = np.concatenate(xs), np.concatenate(ys)
    assert x.shape == (16, 5, 1)  # starts 10..25: the window must end before 30
    np.testing.assert_array_equal(x[:, 0, 0], np.arange(10, 26))
    np.testing.assert_array_equal(y, np.arange(10, 26))
    sh = keras.utils.timeseries_dataset_from_array(data, np.arange(50), sequence_length=5, shuffle=True, seed=3,
                                                   batch_size=8)
    x, y = map(np.concatenate, zip(*[(np.asarray(a), np.asarray(b)) for a, b in sh]))
    np.testing.assert_array_equal(np.sort(x[:, 0, 0]), np.arange(46))
    np.testing.assert_array_equal(x[:, 0, 0], y)  # windows stay with their targets
    np.testing.assert_array_equal(x[:, :, 0] - x[:, :1, 0], np.tile(np.arange(5), (46, 1)))
    with pytest.raises(ValueError, match="end_index"):
        keras.utils.timeseries_dataset_from_array(data, None, 5, end_index=50)


def test_split_dataset():
    left, right = keras.utils.split_dataset(np.arange(10), left_size=0.8)
    assert [int(v) for v in left] == list(range(8)) and [int(v) for v in right] == [8, 9]
    left, right = keras.utils.split_dataset((np.arange(6), np.arange(6) * 10), right_size=2)
    assert len(list(left)) == 4 and [(int(a), int(b)) for a, b in right] == [(4, 40), (5, 50)]


def _linear_data():
    rng = np.random.RandomState(0)
    x = rng.randn(256, 4).astype(np.float32)
    return x, x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)


def _model(lr=0.1):
    m = keras.Sequential([keras.layers.Dense(1, input_shape=(4,))])
    m.compile(loss="mse", optimizer=keras.optimizers.SGD(lr))
    return m


class Batches(keras.utils.PyDataset):
    def __init__(self, x, y, batch_size, **kwargs):
        super().__init__(**kwargs)
        self.x, self.y, self.batch_size = x, y, batch_size
        self.calls, self.ends, self.begins = [], 0, 0

    def __len__(self):
        return math.ceil(len(self.x) / self.batch_size)

    def __getitem__(self, i):
        self.calls.append(i)
        s = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.x[s], self.y[s]

    def on_epoch_begin(self):
        self.begins += 1

    def on_epoch_end(self):
        self.ends += 1


def test_fit_on_pydataset_matches_arrays_without_shuffle():
    x, y = _linear_data()
    a, b = _model(), _model()
    b.set_weights(a.get_weights())
    seq = Batches(x, y, 32)
    ha = a.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    hb = b.fit(seq, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(hb.history["loss"], ha.history["loss"], rtol=1e-5)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-5)
    assert seq.ends == 2 and seq.begins == 2
    assert seq.calls[1:] == list(range(8)) * 2  # calls[0]: the peek for the element signature
    np.testing.assert_allclose(b.evaluate(Batches(x, y, 64), verbose=0), a.evaluate(x, y, verbose=0), rtol=1e-5)
    np.testing.assert_allclose(b.predict(Batches(x, y, 50), verbose=0), a.predict(x, verbose=0), rtol=1e-5)


def test_fit_on_sequence_shuffles_batches_each_epoch():
    x, y = _linear_data()
    seq = Batches(x, y, 32)
    assert keras.utils.Sequence is keras.utils.PyDataset
    _model().fit(seq, epochs=2, verbose=0)
    first, second = seq.calls[1:9], seq.calls[9:17]
    assert sorted(first) == list(range(8)) and sorted(second) == list(range(8))
    assert first != second  # a new order per epoch (fit's shuffle=True, Keras' default)


def test_fit_on_generators():
    x, y = _linear_data()

    def forever():
        while True:
            for i in range(0, 256, 32):
                yield x[i:i + 32], y[i:i + 32]
    m = _model()
    h = m.fit(forever(), steps_per_epoch=8, epochs=20, verbose=0)
    assert len(h.history["loss"]) == 20 and h.history["loss"][-1] < 1e-3
    assert m.evaluate(forever(), steps=4, verbose=0) < 1e-3
    assert m.predict((x[i:i + 64] for i in range(0, 256, 64)), verbose=0).shape == (256, 1)

    # A finite generator: the first epoch uses it up; Keras then stops ("ran out of data").
    def weighted():
        for i in range(0, 256, 32):
            yield x[i:i + 32], y[i:i + 32], np.ones(32, np.float32)
    h = _model().fit(weighted(), epochs=3, verbose=0)
    assert len(h.history["loss"]) == 1
    # Zero sample weights: nothing to learn from, the weights stay as they were.
    m = _model()
    w0 = m.get_weights()
    m.fit(((x[:32], y[:32], np.zeros(32, np.float32)) for _ in range(3)), epochs=1, verbose=0)
    np.testing.assert_allclose(m.get_weights()[0], w0[0])


def test_validation_freq():
    x, y = _linear_data()
    h = _model().fit(x, y, epochs=4, validation_data=(x, y), validation_freq=2, verbose=0)
    assert len(h.history["loss"]) == 4 and len(h.history["val_loss"]) == 2
    h = _model().fit(x, y, epochs=3, validation_data=(x, y), validation_freq=[1, 3], verbose=0)
    assert len(h.history["val_loss"]) == 2


def test_get_file_reads_the_cache_only(tmp_path):
    url = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/imdb.npz"
    with pytest.raises(FileNotFoundError, match=r"imdb\.npz.*Download https://"):
        keras.utils.get_file(origin=url, cache_dir=str(tmp_path))
    os.makedirs(tmp_path / "datasets")
    (tmp_path / "datasets" / "imdb.npz").write_bytes(b"abc")
    path = keras.utils.get_file(origin=url, cache_dir=str(tmp_path),
                                file_hash="900150983cd24fb0d6963f7d28e17f72")  # md5("abc")
    assert path == str(tmp_path / "datasets" / "imdb.npz")
    with pytest.raises(ValueError, match="hash"):
        keras.utils.get_file("imdb.npz", url, cache_dir=str(tmp_path), file_hash="0" * 32)


def test_progbar_shows_running_means(capsys):
    bar = keras.utils.Progbar(4, verbose=1, interval=0)
    bar.update(1, values=[("loss", 1.0)])
    bar.update(3, values=[("loss", 4.0)])  # covers 2 steps: mean (1 + 2 * 4) / 3 = 3
    bar.add(1, values=[("loss", 7.0)])     # (9 + 7) / 4 = 4
    out = capsys.readouterr().out
    assert "loss: 3.0000" in out and out.rstrip().endswith("loss: 4.0000")
    assert "4/4 [==============================]" in out


def test_custom_object_scope():
    class Twice(keras.layers.Layer):
        pass
    with keras.utils.custom_object_scope({"Twice": Twice}):
        from weft.keras import _config
        assert _config.lookup(None, "Twice") is Twice
    with pytest.raises(ValueError, match="unknown Keras object"):
        _config.lookup(None, "Twice")


def test_evaluate_with_sample_weight_is_keras_weighted_mean():
    x, y = _linear_data()
    m = _model()
    m.set_weights([np.array([[1.0], [0.0], [0.0], [1.0]], np.float32), np.array([0.5], np.float32)])
    w = np.linspace(0.0, 2.0, 256).astype(np.float32)
    err = (x @ np.array([[1.0], [0.0], [0.0], [1.0]]) + 0.5 - y)[:, 0] ** 2
    want = float(np.sum(w * err) / 256)  # Keras: sum(w * loss) / examples
    np.testing.assert_allclose(m.evaluate(x, y, sample_weight=w, batch_size=50, verbose=0), want, rtol=1e-5)
    batches = ((x[i:i + 64], y[i:i + 64], w[i:i + 64]) for i in range(0, 256, 64))
    np.testing.assert_allclose(m.evaluate(batches, verbose=0), want, rtol=1e-5)
    np.testing.assert_allclose(m.test_on_batch(x, y, sample_weight=w), want, rtol=1e-5)
    np.testing.assert_allclose(m.evaluate(x, y, verbose=0), float(np.mean(err)), rtol=1e-5)
    with pytest.raises(ValueError, match="one weight per example"):
        m.evaluate(x, y, sample_weight=w[:10], verbose=0)


def test_tf2_generator_methods_delegate():
    x, y = _linear_data()
    m = _model()
    with pytest.warns(DeprecationWarning, match="fit_generator"):
        h = m.fit_generator(Batches(x, y, 32), epochs=2, verbose=0)
    assert len(h.history["loss"]) == 2
    with pytest.warns(DeprecationWarning):
        np.testing.assert_allclose(m.evaluate_generator(Batches(x, y, 32)), m.evaluate(x, y, verbose=0), rtol=1e-5)
    with pytest.warns(DeprecationWarning):
        assert m.predict_generator(Batches(x, y, 32)).shape == (256, 1)
