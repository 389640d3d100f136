"""Smaller TF names: tf.repeat, tf.math composites (tan, sinh, cosh, asinh, acosh, atanh, erfc,
rint, reciprocal_no_nan, softsign), tf.nn.depth_to_space / space_to_depth / compute_average_loss /
scale_regularization_loss, TF2's initializer classes, tf.get_logger, tf.autograph,
tf.get_static_value, tf.inside_function / init_scope. Expected values: TF's API doc examples
("TF doc") or numpy."""
import logging

import numpy as np
import pytest

import weft as tf


def test_repeat_doc_examples():
    # TF doc (tf.repeat)
    np.testing.assert_array_equal(tf.repeat([[1, 2], [3, 4]], repeats=[2, 3], axis=0).numpy(),
                                  [[1, 2], [1, 2], [3, 4], [3, 4], [3, 4]])
    np.testing.assert_array_equal(tf.repeat([[1, 2], [3, 4]], repeats=[2, 3], axis=1).numpy(),
                                  [[1, 1, 2, 2, 2], [3, 3, 4, 4, 4]])
    np.testing.assert_array_equal(tf.repeat(3, repeats=4).numpy(), [3, 3, 3, 3])
    np.testing.assert_array_equal(tf.repeat([[1, 2], [3, 4]], repeats=2).numpy(), [1, 1, 2, 2, 3, 3, 4, 4])
    with tf.Graph().as_default():  # an unknown dimension with one count
        p = tf.compat.v1.placeholder(tf.float32, [None, 2])
        with tf.compat.v1.Session() as sess:
            got = sess.run(tf.repeat(p, 2, axis=0), {p: [[1., 2.], [3., 4.]]})
    np.testing.assert_array_equal(got, [[1, 2], [1, 2], [3, 4], [3, 4]])
    with pytest.raises(ValueError, match="must be a non-negative int or 2 of them"):
        tf.repeat([[1, 2], [3, 4]], repeats=[1, 2, 3], axis=0)


def test_math_composites_match_numpy_and_have_gradients():
    x = np.array([-0.7, 0.2, 0.5])
    for fn, ref in ((tf.math.tan, np.tan), (tf.math.sinh, np.sinh), (tf.math.cosh, np.cosh),
                    (tf.math.asinh, np.arcsinh), (tf.math.atanh, np.arctanh), (tf.math.rint, np.rint),
                    (tf.math.softsign, lambda v: v / (1 + np.abs(v)))):
        np.testing.assert_allclose(fn(tf.constant(x)).numpy(), ref(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.math.acosh(tf.constant([1.5, 3.0], tf.float64)).numpy(), np.arccosh([1.5, 3.0]))
    np.testing.assert_allclose(tf.math.erfc(tf.constant([0.0, 1.0], tf.float64)).numpy(), [1.0, 0.157299207050285])
    # TF doc (tf.math.reciprocal_no_nan): [2, 0.5, 0, 1] -> [0.5, 2, 0, 1]
    np.testing.assert_array_equal(tf.math.reciprocal_no_nan(tf.constant([2.0, 0.5, 0, 1])).numpy(), [0.5, 2, 0, 1])
    with tf.GradientTape() as tape:
        v = tf.Variable(tf.constant([0.3], tf.float64))
        y = tf.math.asinh(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 1 / np.sqrt(1 + 0.09), rtol=1e-9)


def test_depth_to_space_space_to_depth_and_average_losses():
    # TF doc (tf.nn.depth_to_space): [1, 1, 1, 4] with block 2 -> [1, 2, 2, 1]
    got = tf.nn.depth_to_space(np.array([[[[1, 2, 3, 4]]]], np.float32), 2)
    np.testing.assert_array_equal(got.numpy(), [[[[1], [2]], [[3], [4]]]])
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    np.testing.assert_array_equal(tf.nn.depth_to_space(tf.nn.space_to_depth(x, 2), 2).numpy(), x)
    # TF doc (tf.nn.space_to_depth): [1, 2, 2, 1] -> [1, 1, 1, 4]
    np.testing.assert_array_equal(tf.nn.space_to_depth(np.array([[[[1], [2]], [[3], [4]]]], np.float32), 2).numpy(),
                                  [[[[1, 2, 3, 4]]]])
    assert tf.nn.compute_average_loss(tf.constant([1., 2., 3., 4.])).numpy() == pytest.approx(2.5)
    assert tf.nn.compute_average_loss(tf.constant([1., 2.]), global_batch_size=4).numpy() == pytest.approx(0.75)
    assert tf.nn.compute_average_loss(tf.constant([1., 2.]), sample_weight=[1., 0.]).numpy() == pytest.approx(0.5)
    assert tf.nn.scale_regularization_loss(tf.constant(3.0)).numpy() == pytest.approx(3.0)


def test_tf2_initializers_are_callable_and_serve_keras_layers():
    np.testing.assert_array_equal(tf.constant_initializer(2.0)(shape=[2]).numpy(), [2., 2.])
    np.testing.assert_array_equal(tf.zeros_initializer()(shape=(2, 2), dtype=tf.float64).numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(tf.ones_initializer()(shape=[3]).numpy(), [1., 1., 1.])
    draws = tf.random_uniform_initializer(-0.1, 0.1, seed=3)(shape=[1000]).numpy()
    assert draws.min() >= -0.1 and draws.max() <= 0.1 and abs(draws.mean()) < 0.01

    class Dense(tf.Module):  # TF's "Introduction to modules" pattern
        def __init__(self, i, o):
            self.w = tf.Variable(tf.random_normal_initializer()(shape=(i, o)))
            self.b = tf.Variable(tf.zeros_initializer()(shape=(o,)))

        def __call__(self, x):
            return tf.matmul(x, self.w) + self.b
    d = Dense(3, 2)
    np.testing.assert_allclose(d(tf.ones([1, 3])).numpy(), d.w.numpy().sum(0, keepdims=True), rtol=1e-6)
    layer = tf.keras.layers.Dense(2, kernel_initializer=tf.constant_initializer(0.5))
    np.testing.assert_allclose(layer(np.ones((1, 3), np.float32)).numpy(), [[1.5, 1.5]])
    with pytest.raises(ValueError, match="draws floats"):
        tf.ones_initializer()(shape=[2], dtype=tf.int32)


def test_logger_autograph_static_values_and_function_scopes():
    assert tf.get_logger() is logging.getLogger("tensorflow")

    @tf.autograph.experimental.do_not_convert
    def f(x):
        return x + 1
    assert f(1) == 2
    with pytest.raises(NotImplementedError, match="does not convert"):
        tf.autograph.to_graph(f)
    np.testing.assert_array_equal(tf.get_static_value(tf.constant([1, 2]) * 2), [2, 4])
    with tf.Graph().as_default():
        assert tf.get_static_value(tf.compat.v1.placeholder(tf.float32)) is None
    assert not tf.inside_function()

    @tf.function
    def inside(x):
        with tf.init_scope():
            pass
        return x * 2 if tf.inside_function() else x
    np.testing.assert_array_equal(inside(np.ones(2, np.float32)).numpy(), [2., 2.])
