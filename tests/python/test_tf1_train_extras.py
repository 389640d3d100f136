"""TF1's learning-rate decay functions (tf.compat.v1.train.*_decay) and
tf.train.ExponentialMovingAverage. Expected values: the formulas in TF1's documentation, by hand."""
import math

import numpy as np
import pytest

import weft as weft_pkg
import weft.compat.v1 as tf


@pytest.fixture
def v1(monkeypatch):
    monkeypatch.setattr(weft_pkg._values, "graph_mode", [True])
    with tf.Graph().as_default() as g:
        yield g


def _at(steps, make):
    step = tf.placeholder(tf.int64, [])
    lr = make(step)
    with tf.Session() as sess:
        return [float(sess.run(lr, {step: s})) for s in steps]


def test_decay_formulas(v1):
    np.testing.assert_allclose(_at([0, 100, 101, 300], lambda s: tf.train.piecewise_constant(s, [100, 200], [1., .5, .1])),
                               [1., 1., .5, .1])
    np.testing.assert_allclose(_at([0, 50, 100, 200], lambda s: tf.train.polynomial_decay(0.1, s, 100, 0.01, power=2.)),
                               [0.1, 0.09 * 0.25 + 0.01, 0.01, 0.01], rtol=1e-6)
    np.testing.assert_allclose(_at([150], lambda s: tf.train.polynomial_decay(0.1, s, 100, 0.01, cycle=True)),
                               [0.09 * 0.25 + 0.01], rtol=1e-6)  # decay_steps grows to 200
    np.testing.assert_allclose(_at([0, 10], lambda s: tf.train.natural_exp_decay(1., s, 10, 0.5)), [1., math.exp(-0.5)],
                               rtol=1e-6)
    np.testing.assert_allclose(_at([15], lambda s: tf.train.inverse_time_decay(1., s, 10, 0.5, staircase=True)),
                               [1 / 1.5], rtol=1e-6)
    np.testing.assert_allclose(_at([0, 50, 100, 150], lambda s: tf.train.cosine_decay(1., s, 100, alpha=0.1)),
                               [1., 0.55, 0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(_at([0, 10, 30], lambda s: tf.train.cosine_decay_restarts(1., s, 10)),
                               [1., 1., 1.], rtol=1e-6)  # restarts at 10 and 10 + 20


def test_exponential_moving_average(v1):
    w = tf.Variable([1., 2.])
    ema = tf.train.ExponentialMovingAverage(decay=0.9)
    step = tf.assign_add(w, [1., 1.])
    maintain = ema.apply([w])
    shadow = ema.average(w)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        sess.run(maintain)  # w = [2, 3]; shadow = [1, 2] - 0.1 * ([1, 2] - [2, 3])
        np.testing.assert_allclose(sess.run(shadow), [1.1, 2.1], rtol=1e-6)
    assert ema.average_name(w) == "Variable/ExponentialMovingAverage"
    capped = tf.train.ExponentialMovingAverage(0.999, num_updates=0)  # decay min(0.999, 1/10)
    v = tf.Variable([0.])
    op = capped.apply([v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(v, [10.]))
        sess.run(op)
        np.testing.assert_allclose(sess.run(capped.average(v)), [9.0], rtol=1e-6)
