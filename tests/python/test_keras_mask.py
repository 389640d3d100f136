"""Keras masks: Embedding(mask_zero=True) and Masking before LSTM, GRU, SimpleRNN, Bidirectional
and GlobalAveragePooling1D (masked steps keep the previous state and output), against
TensorFlow 2.21's values (data/keras_mask_reference.json, made by data/gen_keras_mask_reference.py)."""
import json
import os

import numpy as np
import pytest

import weft as tf

keras = tf.keras
L = keras.layers
REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras_mask_reference.json")))
A = lambda v: np.array(v, np.float32)  # noqa: E731
IDS = np.array(REF["ids"], np.int32)

BUILD = {
    "lstm_seq_state": lambda e: L.LSTM(2, return_sequences=True, return_state=True, name="rnn")(e),
    "gru_back_state": lambda e: L.GRU(2, return_state=True, go_backwards=True, name="rnn")(e),
    "gru_back_seq": lambda e: L.GRU(2, return_sequences=True, go_backwards=True, name="rnn")(e),
    "simple_seq": lambda e: L.SimpleRNN(2, return_sequences=True, name="rnn")(e),
    "stacked_dense": lambda e: L.LSTM(2, name="rnn2")(L.Dense(3, name="d")(L.LSTM(3, return_sequences=True, name="rnn")(e))),
    "pool": lambda e: L.GlobalAveragePooling1D()(L.Dense(2, name="d")(e)),
    "train_lstm": lambda e: L.Dense(2, name="head")(L.LSTM(3, name="rnn")(e)),
}


def _model(name, steps=None):
    inp = keras.Input((steps,), dtype="int32")
    emb = L.Embedding(7, 3, mask_zero=True, name="emb")(inp)
    if name == "bidirectional_seq":
        return keras.Model(inp, L.Bidirectional(L.LSTM(2, return_sequences=True), name="bi")(emb))
    return keras.Model(inp, BUILD[name](emb))


@pytest.mark.parametrize("name", sorted(REF["cases"]))
def test_masked_steps_match_tensorflow(name):
    case = REF["cases"][name]
    m = _model(name, 5 if name == "bidirectional_seq" else None)
    m.set_weights([A(w) for w in case["weights"]])
    got = m.predict(IDS, verbose=0)
    got = got if isinstance(got, list) else [got]
    assert len(got) == len(case["outputs"])
    for g, w in zip(got, case["outputs"]):
        np.testing.assert_allclose(g, A(w), rtol=1e-4, atol=1e-5)


def test_one_sgd_step_through_a_masked_lstm_matches_tensorflow():
    case = REF["cases"]["train_lstm"]
    m = _model("train_lstm")
    m.set_weights([A(w) for w in case["weights"]])
    m.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
    loss = m.train_on_batch(IDS, A(case["y"]))
    assert float(np.ravel(loss)[0]) == pytest.approx(case["loss"], rel=1e-4)
    for g, w in zip(m.get_weights(), case["after"]):
        np.testing.assert_allclose(g, A(w), rtol=1e-4, atol=1e-5)


def test_masking_layer_matches_tensorflow():
    x = A(REF["masking"]["x"])
    inp = keras.Input((4, 2))
    m = keras.Model(inp, L.LSTM(2, return_sequences=True, name="rnn")(L.Masking(0.0)(inp)))
    m.set_weights([A(w) for w in REF["masking"]["weights"]])
    np.testing.assert_allclose(m.predict(x, verbose=0), A(REF["masking"]["output"]), rtol=1e-4, atol=1e-5)
    m2 = keras.Model(inp, L.SimpleRNN(2, name="rnn")(L.Masking(-1.0)(inp)))
    m2.set_weights([A(w) for w in REF["masking_value"]["weights"]])
    np.testing.assert_allclose(m2.predict(x, verbose=0), A(REF["masking_value"]["output"]), rtol=1e-4, atol=1e-5)


def test_masking_needs_steps():
    with pytest.raises(tf.errors.InvalidArgumentError, match="expects \\(batch, steps, features\\)"):
        L.Masking()(keras.Input((4,)))


def test_add_keeps_a_step_either_mask_keeps_as_tensorflow():
    r = REF["merge"]
    a_in, b_in = keras.Input((None,), dtype="int32"), keras.Input((None,), dtype="int32")
    added = L.Add()([L.Embedding(7, 3, mask_zero=True, name="ea")(a_in),
                     L.Embedding(7, 3, mask_zero=True, name="eb")(b_in)])
    m = keras.Model([a_in, b_in], L.GRU(2, return_sequences=True, name="rnn")(added))
    m.set_weights([A(w) for w in r["weights"]])
    got = m.predict([IDS, np.array(r["ids_b"], np.int32)], verbose=0)
    np.testing.assert_allclose(got, A(r["output"]), rtol=1e-4, atol=1e-5)
