"""Writes keras_seq2seq_reference.json: recurrent layers with return_state and initial_state, and
one SGD step of a two-input, two-output encoder-decoder (the loss on the decoder's outputs and
on the encoder's final h, so gradients flow through the final states), and MultiHeadAttention's
return_attention_scores, computed by TensorFlow
2.21 / Keras 3 (run with a TensorFlow venv: python gen_keras_seq2seq_reference.py >
keras_seq2seq_reference.json). test_keras_seq2seq.py checks weft against it; the tests never
import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import numpy as np, keras

rng = np.random.default_rng(19)
L = keras.layers
f32 = lambda *s: rng.uniform(-0.6, 0.6, s).astype(np.float32)  # noqa: E731
out = {}

# Encoder-decoder: LSTM(5, return_state) -> decoder LSTM(5, return_sequences, return_state,
# initial_state=[h, c]) -> Dense(4); outputs [dense, encoder h]; mse on both; one SGD(0.1) step.
enc_in, dec_in = keras.Input((4, 3), name="enc"), keras.Input((3, 2), name="dec")
e_out, e_h, e_c = L.LSTM(5, return_state=True, name="encoder")(enc_in)
d_seq, d_h, d_c = L.LSTM(5, return_sequences=True, return_state=True, name="decoder")(dec_in, initial_state=[e_h, e_c])
y = L.Dense(4, name="head")(d_seq)
m = keras.Model([enc_in, dec_in], [y, e_h])
weights = {l.name: [f32(*w.shape) for w in l.weights] for l in m.layers if l.weights}
for l in m.layers:
    if l.weights:
        l.set_weights(weights[l.name])
a, b = f32(6, 4, 3), f32(6, 3, 2)
t1, t2 = f32(6, 3, 4), f32(6, 5)
before = m.predict([a, b], verbose=0)
m.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
loss = m.train_on_batch([a, b], [t1, t2])
out["seq2seq"] = {"weights": {k: [w.tolist() for w in v] for k, v in weights.items()}, "a": a.tolist(),
                  "b": b.tolist(), "t1": t1.tolist(), "t2": t2.tolist(),
                  "pred": [p.tolist() for p in before], "loss": float(np.ravel(loss)[0]),
                  "after": {l.name: [w.tolist() for w in l.get_weights()] for l in m.layers if l.weights}}

# Each layer with return_state (and initial_state for GRU / SimpleRNN / Bidirectional).
x = f32(3, 5, 4)
cases = {}
for name, make, states in [("gru", lambda: L.GRU(3, return_state=True, name="rnn"), 1),
                           ("gru_seq_back", lambda: L.GRU(3, return_state=True, return_sequences=True, go_backwards=True, name="rnn"), 1),
                           ("simple", lambda: L.SimpleRNN(3, return_state=True, name="rnn"), 1),
                           ("lstm", lambda: L.LSTM(3, return_state=True, name="rnn"), 2),
                           ("bi_lstm", lambda: L.Bidirectional(L.LSTM(3, return_state=True), name="rnn"), 4),
                           ("bi_gru_seq", lambda: L.Bidirectional(L.GRU(2, return_state=True, return_sequences=True), name="rnn"), 2)]:
    layer = make()
    inp = keras.Input((5, 4))
    units = 2 if name == "bi_gru_seq" else 3
    st_in = [keras.Input((units,)) for _ in range(states)]
    outs = layer(inp, initial_state=st_in)
    model = keras.Model([inp] + st_in, outs)
    w = [f32(*v.shape) for v in layer.weights]
    layer.set_weights(w)
    s0 = [f32(3, units) for _ in range(states)]
    with_state = model.predict([x] + s0, verbose=0)
    zero = keras.Model(inp, make_zero := layer(inp)).predict(x, verbose=0)
    cases[name] = {"weights": [v.tolist() for v in w], "initial_state": [v.tolist() for v in s0],
                   "outputs": [v.tolist() for v in with_state], "outputs_zero_state": [v.tolist() for v in zero]}
out["layers"] = cases
out["x"] = x.tolist()
# MultiHeadAttention(return_attention_scores=True): (output, scores) with an attention_mask.
q_in, v_in, m_in = keras.Input((4, 5)), keras.Input((3, 5)), keras.Input((4, 3))
mha = L.MultiHeadAttention(2, 3, name="mha")
o, sc = mha(q_in, v_in, attention_mask=m_in, return_attention_scores=True)
mm = keras.Model([q_in, v_in, m_in], [o, sc])
w = [f32(*v.shape) for v in mha.weights]
mha.set_weights(w)
q, v = f32(2, 4, 5), f32(2, 3, 5)
mask = (rng.uniform(size=(2, 4, 3)) > 0.3).astype(np.float32)
mask[:, :, 0] = 1.0
res = mm.predict([q, v, mask], verbose=0)
out["attention"] = {"weights": [a.tolist() for a in w], "q": q.tolist(), "v": v.tolist(), "mask": mask.tolist(),
                    "output": res[0].tolist(), "scores": res[1].tolist()}
print(json.dumps(out, separators=(",", ":")))
