"""Writes keras_mask_reference.json: Embedding(mask_zero=True) and Masking followed by LSTM, GRU,
SimpleRNN, Bidirectional and GlobalAveragePooling1D (masked steps keep the previous state and
output), and one SGD step through a masked LSTM, computed by TensorFlow 2.21 / Keras 3 (run with
a TensorFlow venv: python gen_keras_mask_reference.py > keras_mask_reference.json).
test_keras_mask.py checks weft against it; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import numpy as np, keras

rng = np.random.default_rng(7)
L = keras.layers
f32 = lambda *s: rng.uniform(-0.7, 0.7, s).astype(np.float32)  # noqa: E731
# Padding at the end, at the start, in the middle, and a row with no kept step.
ids = np.array([[3, 1, 4, 0, 0], [0, 0, 2, 5, 1], [6, 0, 2, 0, 3], [0, 0, 0, 0, 0]], np.int32)
out = {"ids": ids.tolist(), "cases": {}}


def case(name, build, train=False):
    inp = keras.Input((None,), dtype="int32")
    outs = build(L.Embedding(7, 3, mask_zero=True, name="emb")(inp))
    m = keras.Model(inp, outs)
    w = [f32(*v.shape) for v in m.weights]
    m.set_weights(w)
    res = {"weights": [v.tolist() for v in w], "outputs": [np.asarray(o).tolist() for o in
                                                          (lambda p: list(p) if isinstance(p, (list, tuple)) else [p])(m.predict(ids, verbose=0))]}
    if train:
        y = f32(4, 2)
        m.compile(optimizer=keras.optimizers.SGD(0.5), loss="mse")
        res["y"] = y.tolist()
        res["loss"] = float(m.train_on_batch(ids, y))
        res["after"] = [v.tolist() for v in m.get_weights()]
    out["cases"][name] = res


case("lstm_seq_state", lambda e: L.LSTM(2, return_sequences=True, return_state=True, name="rnn")(e))
case("gru_back_state", lambda e: L.GRU(2, return_state=True, go_backwards=True, name="rnn")(e))
case("gru_back_seq", lambda e: L.GRU(2, return_sequences=True, go_backwards=True, name="rnn")(e))
case("simple_seq", lambda e: L.SimpleRNN(2, return_sequences=True, name="rnn")(e))
case("stacked_dense", lambda e: L.LSTM(2, name="rnn2")(L.Dense(3, name="d")(L.LSTM(3, return_sequences=True, name="rnn")(e))))
case("pool", lambda e: L.GlobalAveragePooling1D()(L.Dense(2, name="d")(e)))
case("train_lstm", lambda e: L.Dense(2, name="head")(L.LSTM(3, name="rnn")(e)), train=True)
# Bidirectional needs known steps in weft: a fixed-length input.
inp = keras.Input((5,), dtype="int32")
bi = L.Bidirectional(L.LSTM(2, return_sequences=True), name="bi")(L.Embedding(7, 3, mask_zero=True, name="emb")(inp))
m = keras.Model(inp, bi)
w = [f32(*v.shape) for v in m.weights]
m.set_weights(w)
out["cases"]["bidirectional_seq"] = {"weights": [v.tolist() for v in w], "outputs": [m.predict(ids, verbose=0).tolist()]}
# Masking(mask_value) on float features.
x = f32(3, 4, 2)
x[0, 2:] = 0.0
x[1, 0] = 0.0
x[2, 1] = -1.0
inp = keras.Input((4, 2))
m = keras.Model(inp, L.LSTM(2, return_sequences=True, name="rnn")(L.Masking(0.0)(inp)))
w = [f32(*v.shape) for v in m.weights]
m.set_weights(w)
out["masking"] = {"x": x.tolist(), "weights": [v.tolist() for v in w], "output": m.predict(x, verbose=0).tolist()}
m2 = keras.Model(inp, L.SimpleRNN(2, name="rnn")(L.Masking(-1.0)(inp)))
w2 = [f32(*v.shape) for v in m2.weights]
m2.set_weights(w2)
out["masking_value"] = {"weights": [v.tolist() for v in w2], "output": m2.predict(x, verbose=0).tolist()}
# Two masked embeddings added: Keras' Merge.compute_mask keeps a step either keeps (ops.any).
a_in, b_in = keras.Input((None,), dtype="int32"), keras.Input((None,), dtype="int32")
added = L.Add()([L.Embedding(7, 3, mask_zero=True, name="ea")(a_in), L.Embedding(7, 3, mask_zero=True, name="eb")(b_in)])
m3 = keras.Model([a_in, b_in], L.GRU(2, return_sequences=True, name="rnn")(added))
w3 = [f32(*v.shape) for v in m3.weights]
m3.set_weights(w3)
ids_b = np.array([[1, 2, 3, 4, 0], [5, 0, 2, 2, 1], [1, 1, 0, 1, 1], [2, 2, 2, 2, 2]], np.int32)
out["merge"] = {"ids_b": ids_b.tolist(), "weights": [v.tolist() for v in w3],
                "output": m3.predict([ids, ids_b], verbose=0).tolist()}
print(json.dumps(out, separators=(",", ":")))
