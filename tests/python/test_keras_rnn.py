"""Keras' recurrent layers from Python (weft.keras.layers.LSTM, GRU, SimpleRNN, Bidirectional,
TimeDistributed): the same weights give TensorFlow 2.21's outputs (tests/train/golden/rnn_tf.json,
made by make_rnn_golden.py beside it), models with them train, save and load, and the
arguments weft does not support are errors naming them."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft import errors, keras
from weft.keras import layers

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "train", "golden", "rnn_tf.json")
B, T, I, H = 2, 5, 3, 4


@pytest.fixture(scope="module")
def golden():
    with open(GOLDEN) as f:
        return json.load(f)


def _check(golden, name, layer, y_shape):
    model = keras.Sequential([keras.Input(shape=(T, I)), layer])
    n = len(model.get_weights())
    weights = [np.array(golden["%s.w%d" % (name, k)], np.float32).reshape(w.shape)
               for k, w in enumerate(model.get_weights())]
    assert n == len([k for k in golden if k.startswith(name + ".w")])
    model.set_weights(weights)
    x = np.array(golden[name + ".x"], np.float32).reshape(B, T, I)
    y = model.predict(x, verbose=0)
    np.testing.assert_allclose(y, np.array(golden[name + ".y"], np.float32).reshape(y_shape), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name,make,y_shape", [
    ("lstm", lambda: layers.LSTM(H, return_sequences=True), (B, T, H)),
    ("lstm_backwards", lambda: layers.LSTM(H, return_sequences=True, go_backwards=True), (B, T, H)),
    ("gru", lambda: layers.GRU(H, return_sequences=True), (B, T, H)),
    ("gru_reset_before", lambda: layers.GRU(H, return_sequences=True, reset_after=False), (B, T, H)),
    ("gru_backwards_state", lambda: layers.GRU(H, go_backwards=True), (B, H)),
    ("simple_rnn", lambda: layers.SimpleRNN(H, return_sequences=True), (B, T, H)),
    ("simple_rnn_backwards", lambda: layers.SimpleRNN(H, go_backwards=True, activation="relu"), (B, H)),
    ("bidi_lstm_concat", lambda: layers.Bidirectional(layers.LSTM(H, return_sequences=True)), (B, T, 2 * H)),
    ("bidi_gru_sum", lambda: layers.Bidirectional(layers.GRU(H), merge_mode="sum"), (B, H)),
])
def test_outputs_match_tensorflow(golden, name, make, y_shape):
    _check(golden, name, make(), y_shape)


def test_weights_and_summary_are_keras():
    model = keras.Sequential([keras.Input(shape=(7, 5)), layers.LSTM(6, return_sequences=True),
                              layers.GRU(3), layers.Dense(2)])
    shapes = [w.shape for w in model.get_weights()]
    assert shapes == [(5, 24), (6, 24), (24,), (6, 9), (3, 9), (2, 9), (3, 2), (2,)]
    assert model.count_params() == 4 * 6 * (5 + 6 + 1) + 3 * 3 * (6 + 3 + 2) + 3 * 2 + 2
    # unit_forget_bias: the forget gate's bias starts at one
    np.testing.assert_array_equal(model.get_weights()[2], np.r_[np.zeros(6), np.ones(6), np.zeros(12)])


def _sequences(n, seed):
    """Class 1 when the first half of the sequence sums higher than the second: needs memory."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 8, 2)).astype(np.float32)
    y = (x[:, :4].sum(axis=(1, 2)) > x[:, 4:].sum(axis=(1, 2))).astype(np.int32)
    return x, y


def test_lstm_classifier_trains_saves_and_loads(tmp_path):
    x, y = _sequences(512, 1)
    tf.random.set_seed(3)
    model = keras.Sequential([keras.Input(shape=(8, 2)), layers.Bidirectional(layers.LSTM(16)),
                              layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=6, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.85
    want = model.predict(x[:16], verbose=0)
    model.save(tmp_path / "rnn.keras")
    loaded = keras.models.load_model(tmp_path / "rnn.keras")
    np.testing.assert_allclose(loaded.predict(x[:16], verbose=0), want, rtol=1e-6, atol=1e-6)
    model.save_weights(tmp_path / "rnn.weights.h5")
    other = keras.Sequential([keras.Input(shape=(8, 2)), layers.Bidirectional(layers.LSTM(16)), layers.Dense(2)])
    other.load_weights(tmp_path / "rnn.weights.h5")
    np.testing.assert_allclose(other.predict(x[:16], verbose=0), want, rtol=1e-6, atol=1e-6)


def test_time_distributed_dense_is_one_dense_per_step():
    model = keras.Sequential([keras.Input(shape=(6, 3)), layers.TimeDistributed(layers.Dense(2))])
    assert model.output_shape == (None, 6, 2)
    x = np.random.default_rng(0).normal(size=(3, 6, 3)).astype(np.float32)
    w, b = model.get_weights()
    np.testing.assert_allclose(model.predict(x, verbose=0), x @ w + b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs,message", [
    ({"recurrent_dropout": 0.1}, "recurrent_dropout 0.1 is not supported"),
    ({"stateful": True}, "stateful=True is not supported"),
    ({"kernel_regularizer": keras.regularizers.l2(0.1)}, "kernel_regularizer is not supported"),
    ({"activation": "gelu"}, "activation 'gelu' is not supported"),
])
def test_unsupported_arguments_are_errors(kwargs, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        layers.LSTM(3, **kwargs)


def test_unknown_keyword_is_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'unitz'"):
        layers.GRU(3, unitz=4)


@pytest.mark.parametrize("name,cell,kwargs,y_shape", [
    ("lstm", lambda: layers.LSTMCell(H), {"return_sequences": True}, (B, T, H)),
    ("gru_reset_before", lambda: layers.GRUCell(H, reset_after=False), {"return_sequences": True}, (B, T, H)),
    ("simple_rnn_backwards", lambda: layers.SimpleRNNCell(H, activation="relu"), {"go_backwards": True}, (B, H)),
])
def test_rnn_of_a_cell_is_the_layer(golden, name, cell, kwargs, y_shape):
    _check(golden, name, layers.RNN(cell(), **kwargs), y_shape)


def test_cell_arguments_are_checked_where_the_cell_is_made():
    # Cells called by themselves and RNN over lists of cells: test_keras_rnn_cells.py.
    with pytest.raises(errors.InvalidArgumentError, match="activation 'gelu' is not supported"):
        layers.GRUCell(3, activation="gelu")


def test_model_config_round_trips_recurrent_layers(tmp_path):
    model = keras.Sequential([keras.Input(shape=(4, 2)), layers.RNN(layers.GRUCell(3, reset_after=False)),
                              layers.Dense(1)])
    x = np.random.default_rng(2).normal(size=(5, 4, 2)).astype(np.float32)
    model.save(tmp_path / "cell.keras")
    loaded = keras.models.load_model(tmp_path / "cell.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6, atol=1e-6)


def test_bidirectional_sequences_of_unknown_length():
    # keras.io's bidirectional LSTM on IMDB: Input(shape=(None,), dtype="int32"). The backward
    # direction reverses time at run time; a sequence of any length gives what a model built for
    # that fixed length gives with the same weights.
    def build(steps):
        inputs = keras.Input(shape=(steps,), dtype="int32")
        x = layers.Embedding(20, 6, name="emb")(inputs)
        x = layers.Bidirectional(layers.LSTM(4, return_sequences=True), name="bi")(x)
        return keras.Model(inputs, layers.Bidirectional(layers.LSTM(3), name="bi2")(x))

    free, fixed = build(None), build(7)
    fixed.set_weights(free.get_weights())
    ids = np.random.default_rng(5).integers(0, 20, (3, 7)).astype(np.int32)
    np.testing.assert_allclose(free.predict(ids, verbose=0), fixed.predict(ids, verbose=0), rtol=1e-5, atol=1e-6)
    assert free.predict(ids[:, :4], verbose=0).shape == (3, 6)
