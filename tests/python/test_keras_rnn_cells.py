"""Keras' recurrent cells called by themselves and keras.layers.RNN over any cell
(python/weft/keras/_cells.py): a cell step against its closed form written out here in numpy and
against TensorFlow 2.21's sequence outputs (tests/train/golden/rnn_tf.json, stepped through one
step at a time), one set of weights for a cell and the RNN wrapping it, the time-series
tutorial's FeedBack model training with fit, custom cells (keras.io's MinimalRNNCell) and stacks
of cells unrolled, gradients of a step by finite differences, and bad states named."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft import errors, keras
from weft.keras import layers

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "train", "golden", "rnn_tf.json")
rng = np.random.default_rng(7)


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def lstm_step(x, h, c, k, r, b):
    """Keras' LSTMCell: z = x k + h r + b, gates i, f, c, o."""
    z = x @ k + h @ r + b
    i, f, g, o = np.split(z, 4, axis=1)
    c2 = _sig(f) * c + _sig(i) * np.tanh(g)
    h2 = _sig(o) * np.tanh(c2)
    return h2, c2


def gru_step(x, h, k, r, b, reset_after=True):
    """Keras' GRUCell, gates z, r, h: reset_after (bias (2, 3u)) applies r to h r_h + b_h."""
    u = h.shape[1]
    if reset_after:
        xz, xr, xh = np.split(x @ k + b[0], 3, axis=1)
        hz, hr, hh = np.split(h @ r + b[1], 3, axis=1)
        z, rr = _sig(xz + hz), _sig(xr + hr)
        cand = np.tanh(xh + rr * hh)
    else:
        xz, xr, xh = np.split(x @ k + b, 3, axis=1)
        z, rr = _sig(xz + h @ r[:, :u]), _sig(xr + h @ r[:, u:2 * u])
        cand = np.tanh(xh + (rr * h) @ r[:, 2 * u:])
    return z * h + (1 - z) * cand


def _f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def _step_model(cell, features, units, states):
    x = keras.Input(shape=(features,))
    hs = [keras.Input(shape=(units,)) for _ in range(states)]
    out, new = cell(x, hs)
    new = new if isinstance(new, list) else [new]
    return keras.Model([x] + hs, [out] + new)


def test_lstm_cell_step_is_the_closed_form():
    cell = layers.LSTMCell(3)
    assert cell.state_size == [3, 3] and cell.output_size == 3
    model = _step_model(cell, 4, 3, 2)
    k, r, b = _f32(4, 12), _f32(3, 12), _f32(12)
    model.set_weights([k, r, b])
    x, h, c = _f32(5, 4), _f32(5, 3), _f32(5, 3)
    out, h2, c2 = model.predict([x, h, c], verbose=0)
    want_h, want_c = lstm_step(x, h, c, k, r, b)
    np.testing.assert_allclose(out, want_h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h2, want_h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c2, want_c, rtol=1e-5, atol=1e-5)
    # On data, as Keras' eager call: (output, [h, c]) with the model's weights (the same layer).
    got, states = cell(x, [h, c])
    assert isinstance(states, list) and len(states) == 2
    np.testing.assert_allclose(got, want_h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(states[1], want_c, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_cell_step_is_the_closed_form(reset_after):
    cell = layers.GRUCell(3, reset_after=reset_after)
    model = _step_model(cell, 2, 3, 1)
    k, r = _f32(2, 9), _f32(3, 9)
    b = _f32(2, 9) if reset_after else _f32(9)
    model.set_weights([k, r, b])
    x, h = _f32(4, 2), _f32(4, 3)
    out, h2 = model.predict([x, h], verbose=0)
    np.testing.assert_allclose(out, gru_step(x, h, k, r, b, reset_after), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(h2, out)
    # Keras: a state given as a tensor (not a list) comes back as a tensor.
    y, state = cell(x, h)
    assert not isinstance(state, list)
    np.testing.assert_allclose(state, out, rtol=1e-6, atol=1e-6)


def test_simple_rnn_cell_step_is_the_closed_form():
    cell = layers.SimpleRNNCell(2, activation="relu")
    model = _step_model(cell, 3, 2, 1)
    k, r, b = _f32(3, 2), _f32(2, 2), _f32(2)
    model.set_weights([k, r, b])
    x, h = _f32(6, 3), _f32(6, 2)
    out, _ = model.predict([x, h], verbose=0)
    np.testing.assert_allclose(out, np.maximum(x @ k + h @ r + b, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,make", [
    ("lstm", lambda: layers.LSTMCell(4)),
    ("gru", lambda: layers.GRUCell(4)),
    ("gru_reset_before", lambda: layers.GRUCell(4, reset_after=False)),
    ("simple_rnn", lambda: layers.SimpleRNNCell(4)),
])
def test_cell_stepped_by_hand_gives_tensorflows_sequence(name, make):
    # TensorFlow 2.21's LSTM / GRU / SimpleRNN(return_sequences=True) outputs for these weights;
    # the cell, called once per step from zero states, gives each step's output.
    with open(GOLDEN) as f:
        golden = json.load(f)
    B, T, I, H = 2, 5, 3, 4
    cell = make()
    x = np.array(golden[name + ".x"], np.float32).reshape(B, T, I)
    states = cell.get_initial_state(batch_size=B)
    cell(x[:, 0], states)  # builds the layer (its weights exist from here)
    shapes = [tuple(w.shape) for w in cell.trainable_weights]
    cell.set_weights([np.array(golden["%s.w%d" % (name, k)], np.float32).reshape(s) for k, s in enumerate(shapes)])
    want = np.array(golden[name + ".y"], np.float32).reshape(B, T, H)
    for t in range(T):
        y, states = cell(x[:, t], states)
        np.testing.assert_allclose(y, want[:, t], rtol=2e-5, atol=2e-5)


def test_cell_and_its_rnn_share_weights():
    cell = layers.LSTMCell(3)
    rnn = layers.RNN(cell, return_state=True)
    x = _f32(2, 4, 2)
    y, h, c = rnn(x)  # the RNN first: it builds the weights
    k2, r2, b2 = _f32(2, 12), _f32(3, 12), _f32(12)
    cell.kernel.assign(k2)  # through the cell ...
    cell.recurrent_kernel.assign(r2)
    rnn.bias.assign(b2)  # ... and through the RNN
    hh, cc = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32)
    for t in range(4):
        hh, cc = lstm_step(x[:, t], hh, cc, k2, r2, b2)
    y, h, c = rnn(x)
    np.testing.assert_allclose(y, hh, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, cc, rtol=1e-5, atol=1e-5)
    out, (h1, c1) = cell(x[:, 0], [hh, cc])
    np.testing.assert_allclose(out, lstm_step(x[:, 0], hh, cc, k2, r2, b2)[0], rtol=1e-5, atol=1e-5)
    # The cell called first, then wrapped: the same layer still.
    cell2 = layers.GRUCell(2)
    cell2(x[:, 0], [np.zeros((2, 2), np.float32)])
    assert layers.RNN(cell2) is cell2._cpp
    with pytest.raises(NotImplementedError, match="already wrapped by an RNN"):
        layers.RNN(cell, return_sequences=True)


# ---- The time-series tutorial's FeedBack model (tensorflow.org/tutorials/structured_data/time_series) --
class FeedBack(keras.Model):
    def __init__(self, units, out_steps, num_features):
        super().__init__()
        self.out_steps = out_steps
        self.units = units
        self.lstm_cell = keras.layers.LSTMCell(units)
        self.lstm_rnn = keras.layers.RNN(self.lstm_cell, return_state=True)
        self.dense = keras.layers.Dense(num_features)

    def warmup(self, inputs):
        x, *state = self.lstm_rnn(inputs)
        prediction = self.dense(x)
        return prediction, state

    def call(self, inputs, training=None):
        predictions = []
        prediction, state = self.warmup(inputs)
        predictions.append(prediction)
        for n in range(1, self.out_steps):
            x = prediction
            x, state = self.lstm_cell(x, states=state, training=training)
            prediction = self.dense(x)
            predictions.append(prediction)
        predictions = tf.stack(predictions)
        return tf.transpose(predictions, [1, 0, 2])


def _windows(n_in, n_out, features):
    t = np.arange(400, dtype=np.float64)
    series = np.stack([np.sin(2 * np.pi * t / 24 + p) for p in range(features)], -1).astype(np.float32)
    idx = np.arange(0, len(series) - n_in - n_out)
    return (np.stack([series[i:i + n_in] for i in idx]), np.stack([series[i + n_in:i + n_in + n_out] for i in idx]))


def test_feedback_model_trains_and_predicts_as_numpy():
    tf.keras.utils.set_random_seed(1)
    x, y = _windows(6, 4, 2)
    model = FeedBack(units=8, out_steps=4, num_features=2)
    model.compile(loss=keras.losses.MeanSquaredError(), optimizer=keras.optimizers.Adam(0.01),
                  metrics=[keras.metrics.MeanAbsoluteError()])
    history = model.fit(x, y, epochs=4, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0], losses
    # One LSTM's weights (not two), then the Dense's.
    assert [tuple(v.shape) for v in model.trainable_variables] == [(2, 32), (8, 32), (32,), (8, 2), (2,)]
    k, r, b, dk, db = [np.asarray(v) for v in model.trainable_variables]
    xs = x[:7]
    h = c = np.zeros((7, 8), np.float32)
    for t in range(6):
        h, c = lstm_step(xs[:, t], h, c, k, r, b)
    preds = [h @ dk + db]
    for _ in range(3):
        h, c = lstm_step(preds[-1], h, c, k, r, b)
        preds.append(h @ dk + db)
    np.testing.assert_allclose(model.predict(xs, verbose=0), np.stack(preds, 1), rtol=1e-4, atol=1e-4)


# ---- keras.layers.RNN over a custom cell and stacks of cells ---------------------------------------
class MinimalRNNCell(keras.layers.Layer):
    """keras.io's "Working with RNNs" example cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                name="recurrent_kernel")
        self.built = True

    def call(self, inputs, states):
        prev_output = states[0]
        h = tf.matmul(inputs, self.kernel)
        output = h + tf.matmul(prev_output, self.recurrent_kernel)
        return output, [output]


def _minimal(x, k, r, backwards=False):
    h = np.zeros((x.shape[0], k.shape[1]), np.float32)
    outs = []
    for t in (range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])):
        h = x[:, t] @ k + h @ r
        outs.append(h)
    return np.stack(outs, 1), h


@pytest.mark.parametrize("backwards", [False, True])
def test_rnn_over_a_custom_cell(backwards):
    inp = keras.Input(shape=(5, 3))
    seq, state = layers.RNN(MinimalRNNCell(4), return_sequences=True, return_state=True,
                            go_backwards=backwards)(inp)
    model = keras.Model(inp, [seq, state])
    k, r = _f32(3, 4) * 0.5, _f32(4, 4) * 0.5
    model.set_weights([k, r])
    x = _f32(2, 5, 3)
    got_seq, got_state = model.predict(x, verbose=0)
    want_seq, want_state = _minimal(x, k, r, backwards)
    np.testing.assert_allclose(got_seq, want_seq, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_state, want_state, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backwards", [False, True])
def test_sequences_of_unknown_length_run_in_a_while_loop(backwards):
    # Input(shape=(None, features)): the steps after the first run in a tf.while_loop; outputs
    # and gradients are those of the same cells unrolled over a known length.
    def build(steps):
        inp = keras.Input(shape=(steps, 2))
        seq, h, c, m = layers.RNN([layers.LSTMCell(3), MinimalRNNCell(2)], return_sequences=True, return_state=True,
                                  go_backwards=backwards)(inp)
        return keras.Model(inp, [seq, c])
    known, loop = build(4), build(None)
    weights = [_f32(*w.shape) * 0.5 for w in known.get_weights()]
    known.set_weights(weights)
    loop.set_weights(weights)
    x = _f32(3, 4, 2)
    for a, b in zip(loop.predict(x, verbose=0), known.predict(x, verbose=0)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    grads = []
    for model in (known, loop):
        with tf.GradientTape() as tape:
            seq, c = model(x)
            loss = tf.reduce_sum(seq * seq) + tf.reduce_sum(c)
        grads.append([np.asarray(g) for g in tape.gradient(loss, model.trainable_variables)])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert loop.predict(_f32(2, 7, 2), verbose=0)[0].shape == (2, 7, 2)  # any length


def test_custom_cell_by_itself_and_initial_state():
    cell = MinimalRNNCell(3)
    x, h = keras.Input(shape=(2,)), keras.Input(shape=(3,))
    out, new = cell(x, [h])
    assert isinstance(new, list) and len(new) == 1
    step = keras.Model([x, h], out)
    k, r = _f32(2, 3), _f32(3, 3)
    step.set_weights([k, r])
    xv, hv = _f32(4, 2), _f32(4, 3)
    np.testing.assert_allclose(step.predict([xv, hv], verbose=0), xv @ k + hv @ r, rtol=1e-5, atol=1e-5)
    y, state = cell(xv, hv)  # on data; a state given alone comes back alone
    np.testing.assert_allclose(state, xv @ k + hv @ r, rtol=1e-5, atol=1e-5)
    # RNN(cell, initial_state=...): the sequence starts from the given state.
    seq, h0 = keras.Input(shape=(3, 2)), keras.Input(shape=(3,))
    model = keras.Model([seq, h0], layers.RNN(MinimalRNNCell(3))(seq, initial_state=[h0]))
    model.set_weights([k, r])
    xs = _f32(4, 3, 2)
    want = hv
    for t in range(3):
        want = xs[:, t] @ k + want @ r
    np.testing.assert_allclose(model.predict([xs, hv], verbose=0), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"MinimalRNNCell '.*': expects 1 state\(s\) of widths \[3\].*got 2"):
        cell(xv, [hv, hv])


def test_rnn_over_stacked_cells():
    cells = [layers.LSTMCell(3), MinimalRNNCell(2)]
    stacked = layers.StackedRNNCells(cells)
    assert stacked.state_size == [[3, 3], 2] and stacked.output_size == 2
    inp = keras.Input(shape=(4, 2))
    model = keras.Model(inp, layers.RNN(stacked)(inp))
    shapes = [tuple(w.shape) for w in model.get_weights()]
    assert shapes == [(2, 12), (3, 12), (12,), (3, 2), (2, 2)]
    k, r, b, mk, mr = _f32(2, 12), _f32(3, 12), _f32(12), _f32(3, 2) * 0.5, _f32(2, 2) * 0.5
    model.set_weights([k, r, b, mk, mr])
    x = _f32(3, 4, 2)
    h = c = np.zeros((3, 3), np.float32)
    m = np.zeros((3, 2), np.float32)
    for t in range(4):
        h, c = lstm_step(x[:, t], h, c, k, r, b)
        m = h @ mk + m @ mr
    np.testing.assert_allclose(model.predict(x, verbose=0), m, rtol=1e-5, atol=1e-5)
    # A list of cells is a stack; it trains.
    model2 = keras.Sequential([keras.Input(shape=(4, 2)), layers.RNN([layers.GRUCell(3), layers.SimpleRNNCell(2)]),
                               layers.Dense(1)])
    model2.compile(loss="mse", optimizer=keras.optimizers.Adam(0.05))
    yy = x.sum(axis=(1, 2))[:, None]
    losses = model2.fit(np.repeat(x, 8, 0), np.repeat(yy, 8, 0), epochs=6, verbose=0).history["loss"]
    assert losses[-1] < losses[0]


def test_lstm_cell_step_gradient_by_finite_differences():
    cell = layers.LSTMCell(2)
    model = _step_model(cell, 3, 2, 2)
    x, h, c = _f32(2, 3), _f32(2, 2), _f32(2, 2)
    w = _f32(2, 2)
    weights = [v.astype(np.float64) for v in (_f32(3, 8) * 0.5, _f32(2, 8) * 0.5, _f32(8) * 0.5)]
    model.set_weights([v.astype(np.float32) for v in weights])
    with tf.GradientTape() as tape:
        out, h2, c2 = model([x, h, c])
        loss = tf.reduce_sum(out * w) + tf.reduce_sum(c2 * w)
    grads = [np.asarray(g) for g in tape.gradient(loss, model.trainable_variables)]

    def numpy_loss(ws):  # the closed form in float64
        hh, cc = lstm_step(x, h, c, *ws)
        return float(np.sum(hh * w) + np.sum(cc * w))

    eps = 1e-6
    for i, base in enumerate(weights):
        fd = np.zeros_like(base)
        for j in np.ndindex(base.shape):
            plus = [v.copy() for v in weights]
            minus = [v.copy() for v in weights]
            plus[i][j] += eps
            minus[i][j] -= eps
            fd[j] = (numpy_loss(plus) - numpy_loss(minus)) / (2 * eps)
        np.testing.assert_allclose(grads[i], fd, rtol=1e-3, atol=1e-4)


def test_bad_states_name_the_cell_and_shapes():
    cell = layers.LSTMCell(3, name="my_cell")
    x = keras.Input(shape=(4,))
    with pytest.raises(ValueError, match=r"LSTMCell 'my_cell': expects 2 state\(s\) of shape \(batch, 3\).*got 1: "
                                         r"shapes \[\(None, 3\)\]"):
        cell(x, [keras.Input(shape=(3,))])
    with pytest.raises(errors.InvalidArgumentError, match=r"LSTMCell 'my_cell': states\[1\] must be \(batch, units\) "
                                                          r"= \(None, 3\), got \[\?,5\]"):
        cell(x, [keras.Input(shape=(3,)), keras.Input(shape=(5,))])
    with pytest.raises(TypeError, match="cell\\(inputs, states\\)"):
        cell(x)
    with pytest.raises(TypeError, match="a cell is an LSTMCell"):
        layers.RNN(layers.Dense(3))
    with pytest.raises(ValueError, match="number of features must be known"):
        layers.RNN(MinimalRNNCell(2))(keras.Input(shape=(4, None)))


def test_models_with_cell_steps_save_and_load(tmp_path):
    # An RNN's warm-up then a step of the same cell (the FeedBack shape, functional), and a step alone.
    cell = layers.LSTMCell(3)
    seq = keras.Input(shape=(5, 2))
    y, h, c = layers.RNN(cell, return_state=True)(seq)
    out, _ = cell(layers.Dense(2)(y), [h, c])
    model = keras.Model(seq, out)
    step_cell = layers.GRUCell(2)
    x, s = keras.Input(shape=(3,)), keras.Input(shape=(2,))
    step = keras.Model([x, s], step_cell(x, [s])[0])
    xs, xv, sv = _f32(4, 5, 2), _f32(4, 3), _f32(4, 2)
    for m, data in ((model, xs), (step, [xv, sv])):
        m.save(tmp_path / ("%s.keras" % m.name))
        loaded = keras.models.load_model(tmp_path / ("%s.keras" % m.name))
        np.testing.assert_allclose(loaded.predict(data, verbose=0), m.predict(data, verbose=0), rtol=1e-6, atol=1e-6)
