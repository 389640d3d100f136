"""Makes rnn_tf.json: Keras (TensorFlow 2.21) outputs and gradients of recurrent layers, for
tests/train/rnn_layers_test.cc. Run with the TensorFlow of bench/.venv:

    bench/.venv/bin/python tests/train/golden/make_rnn_golden.py

Each case sets fixed weights (uniform, seeded) on a Keras layer, runs it on a fixed input x
(2 sequences of 5 steps, 3 features) and records, flattened row-major: x, the weights in Keras'
order, the output y, a fixed r, and the gradients of sum(y * r) with respect to x and to every
weight (d_x, d_w0, d_w1, ...). Cases with return_state also record the states (state0, ...).
"""
import json
import os

import numpy as np
import tensorflow as tf

B, T, I, H = 2, 5, 3, 4


def case(name, make, return_state=False):
    rng = np.random.default_rng(sum(map(ord, name)))
    x = rng.uniform(-1, 1, (B, T, I)).astype(np.float32)
    layer = make()
    layer(x)  # builds the weights
    weights = [rng.uniform(-0.6, 0.6, w.shape).astype(np.float32) for w in layer.weights]
    layer.set_weights(weights)
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        out = layer(xt)
        states = []
        if return_state:
            out, states = out[0], list(out[1:])
        r = tf.constant(rng.uniform(-1, 1, out.shape).astype(np.float32))
        loss = tf.reduce_sum(out * r)
    grads = tape.gradient(loss, [xt] + layer.trainable_weights)
    rec = {"x": x, "y": out.numpy(), "r": r.numpy(), "d_x": grads[0].numpy()}
    for i, w in enumerate(weights):
        rec["w%d" % i] = w
        rec["d_w%d" % i] = grads[i + 1].numpy()
    for i, s in enumerate(states):
        rec["state%d" % i] = s.numpy()
    return {name + "." + k: [float(v) for v in np.asarray(a).ravel()] for k, a in rec.items()}


L = tf.keras.layers
cases = {}
for name, make, state in [
    ("lstm", lambda: L.LSTM(H, return_sequences=True), False),
    ("lstm_backwards", lambda: L.LSTM(H, return_sequences=True, go_backwards=True), False),
    ("lstm_state", lambda: L.LSTM(H, return_state=True), True),
    ("lstm_backwards_state", lambda: L.LSTM(H, return_state=True, go_backwards=True), True),
    ("gru", lambda: L.GRU(H, return_sequences=True), False),
    ("gru_reset_before", lambda: L.GRU(H, return_sequences=True, reset_after=False), False),
    ("gru_backwards_state", lambda: L.GRU(H, go_backwards=True, return_state=True), True),
    ("simple_rnn", lambda: L.SimpleRNN(H, return_sequences=True), False),
    ("simple_rnn_backwards", lambda: L.SimpleRNN(H, go_backwards=True, activation="relu"), False),
    ("bidi_lstm_concat", lambda: L.Bidirectional(L.LSTM(H, return_sequences=True)), False),
    ("bidi_gru_sum", lambda: L.Bidirectional(L.GRU(H), merge_mode="sum"), False),
]:
    cases.update(case(name, make, state))
cases["_made_by"] = "tests/train/golden/make_rnn_golden.py with TensorFlow %s, Keras %s" % (
    tf.__version__, tf.keras.__version__ if hasattr(tf.keras, "__version__") else "?")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_tf.json"), "w") as f:
    # One key per line, float32 values with 9 significant digits (exact round trip).
    f.write("{\n" + ",\n".join("%s: %s" % (json.dumps(k), json.dumps(v) if isinstance(v, str) else
                                           "[" + ", ".join("%.9g" % e for e in v) + "]")
                                for k, v in cases.items()) + "\n}\n")
