"""Optimizers on a gathered variable (an Embedding's table) follow Keras 3 on TensorFlow: TF hands
the gradient over as IndexedSlices, one row per occurrence, and the optimizers square those rows
before summing them, so a row looked up twice adds g1^2 + g2^2 to Adam's v, not (g1 + g2)^2
(train/optimizers.cc, OccurrenceSquares). Expected values: TensorFlow 2.21's run of the same two
steps (w row 1 after two apply_gradients of loss = sum(gather(w, [1, 1]) * c)), kept as data."""
import numpy as np
import pytest

import weft as tf

K = tf.keras.optimizers
# name: (optimizer, row 1 after two steps with index 1 looked up twice, the same gradient summed once)
TF_2_21 = {
    "adam": (lambda: K.Adam(0.1), [-0.25297987, -0.26832575], [-0.19999819, -0.19999824]),
    "rmsprop": (lambda: K.RMSprop(0.1), [-0.69019055, -0.7320576], [-0.54564345, -0.5456435]),
    "rmsprop_centered": (lambda: K.RMSprop(0.1, centered=True, momentum=0.5), [-1.0024929, -1.0822248],
                         [-0.75490636, -0.7549064]),
    "adagrad": (lambda: K.Adagrad(0.1), [-0.2150833, -0.2285799], [-0.1702894, -0.17052303]),
    "nadam": (lambda: K.Nadam(0.1), [-0.2322852, -0.24637568], [-0.18363757, -0.18363759]),
    "adamax": (lambda: K.Adamax(0.1), [-0.19999996, -0.19999996], [-0.19999996, -0.19999996]),
    "adadelta": (lambda: K.Adadelta(1.0), [-0.0036005, -0.0038189], [-0.00284644, -0.00284644]),
    "ftrl": (lambda: K.Ftrl(0.1), [-0.21508329, -0.22857986], [-0.17028941, -0.17052302]),
    "adamw": (lambda: K.AdamW(0.1), [-0.25292927, -0.2682721], [-0.19995818, -0.19995824]),
    "lion": (lambda: K.Lion(0.1), [-0.2, -0.2], [-0.2, -0.2]),
    "amsgrad": (lambda: K.Adam(0.1, amsgrad=True), [-0.25297987, -0.26832575], [-0.19999819, -0.19999824]),
    "sgd_momentum": (lambda: K.SGD(0.1, momentum=0.9), [-1.16, -1.74], [-1.16, -1.74]),
}


@pytest.fixture(autouse=True)
def tf2(monkeypatch):
    monkeypatch.setattr(tf._values, "graph_mode", [False])  # TF1 tests may have disabled eager


def _row_after_two_steps(make, indices, weights):
    w = tf.Variable(np.zeros((3, 2), np.float32))
    opt = make()
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(w, np.array(indices)) * np.array(weights, np.float32))
        opt.apply_gradients([(tape.gradient(loss, w), w)])
    return w.numpy()


@pytest.mark.parametrize("name", sorted(TF_2_21))
def test_gathered_rows_update_as_tensorflow(name):
    make, twice, once = TF_2_21[name]
    got = _row_after_two_steps(make, [1, 1], [[1., 2.], [3., 4.]])
    np.testing.assert_allclose(got[1], twice, rtol=2e-5, atol=1e-6)
    np.testing.assert_array_equal(got[[0, 2]], 0.0)  # rows never looked up stay
    np.testing.assert_allclose(_row_after_two_steps(make, [1], [[4., 6.]])[1], once, rtol=2e-5, atol=1e-6)


# With a second, dense variable b (loss + sum(b * [1, 2])): clipnorm keeps TF's rows (its norm is over
# them); global_clipnorm takes its norm over the rows too but hands dense gradients on (TF 2.21).
TF_2_21_CLIPPED = {
    "adam_clipnorm": (lambda: K.Adam(0.1, clipnorm=1.0), [-0.25297892, -0.26832506], [-0.19999734, -0.19999769]),
    "sgd_clipnorm": (lambda: K.SGD(0.1, clipnorm=1.0), [-0.14605935, -0.21908903], [-0.11094004, -0.16641007]),
    "adam_global": (lambda: K.Adam(0.1, global_clipnorm=1.0), [-0.19999753, -0.19999781], [-0.19999731, -0.19999765]),
    "sgd_global": (lambda: K.SGD(0.1, global_clipnorm=1.0), [-0.13522469, -0.20283702], [-0.10596259, -0.15894388]),
}


@pytest.mark.parametrize("name", sorted(TF_2_21_CLIPPED))
def test_clipped_gathered_rows_as_tensorflow(name):
    make, twice, once = TF_2_21_CLIPPED[name]

    def run(indices, weights):
        w, b = tf.Variable(np.zeros((3, 2), np.float32)), tf.Variable(np.zeros((2,), np.float32))
        opt = make()
        for _ in range(2):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(w, np.array(indices)) * np.array(weights, np.float32)) + \
                    tf.reduce_sum(b * np.array([1., 2.], np.float32))
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return w.numpy()[1]
    # Adam's epsilon term differs from TF's by ~1e-6 on clipped gradients (dense ones too).
    np.testing.assert_allclose(run([1, 1], [[1., 2.], [3., 4.]]), twice, rtol=1e-5)
    np.testing.assert_allclose(run([1], [[4., 6.]]), once, rtol=1e-5)
