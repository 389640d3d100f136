"""More of TF's smaller names: inverse trigonometric and special functions (tf.math.asin, atan2,
lgamma, digamma, ndtri, erfinv, cumprod, ...), tf.dynamic_partition / dynamic_stitch,
space_to_batch_nd / batch_to_space, reverse_sequence, unravel_index, tf.nn.conv2d_transpose /
selu / crelu / lrn / moments helpers, tf.errors' codes and TF-style constructors, and Keras layers
called on eager tensors. Expected values: TF's API doc examples ("TF doc"), Python's math module or
numpy closed forms."""
import math

import numpy as np
import pytest

import weft as tf


def test_inverse_trig_and_special_functions():
    x = np.array([-0.9, -0.3, 0.0, 0.4, 0.95])
    for fn, ref in ((tf.math.asin, np.arcsin), (tf.math.acos, np.arccos), (tf.math.atan, np.arctan),
                    (tf.asin, np.arcsin), (tf.atan, np.arctan)):
        np.testing.assert_allclose(fn(tf.constant(x)).numpy(), ref(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.atan2([1., -1., 1.], [-1., -1., 0.]).numpy(), np.arctan2([1, -1, 1], [-1, -1, 0]),
                               rtol=1e-6)
    np.testing.assert_allclose(tf.math.lgamma(tf.constant([0.5, 3., 10.], tf.float64)).numpy(),
                               [math.lgamma(v) for v in (0.5, 3., 10.)], rtol=1e-12)
    # digamma(1) = -Euler's gamma, digamma(2) = 1 - gamma
    np.testing.assert_allclose(tf.math.digamma(tf.constant([1., 2.], tf.float64)).numpy(),
                               [-0.5772156649015329, 0.4227843350984671], rtol=1e-12)
    np.testing.assert_allclose(tf.math.ndtri([0.5, 0.975]).numpy(), [0.0, 1.959963984540054], atol=1e-6)
    inv = tf.math.erfinv(tf.constant(x[:-1], tf.float64)).numpy()
    np.testing.assert_allclose([math.erf(v) for v in inv], x[:-1], atol=1e-12)
    np.testing.assert_allclose(tf.math.erfcinv(tf.constant([0.5, 1.0, 1.5], tf.float64)).numpy(),
                               [0.4769362762044699, 0.0, -0.4769362762044699], atol=1e-12)
    # lbeta([a, b]) = lgamma(a) + lgamma(b) - lgamma(a + b)
    np.testing.assert_allclose(tf.math.lbeta(tf.constant([[2., 3.]], tf.float64)).numpy(), [math.log(1 / 12)])
    np.testing.assert_array_equal(tf.math.xdivy([0., 2.], [0., 4.]).numpy(), [0., 0.5])
    np.testing.assert_allclose(tf.math.xlog1py([0., 2.], [-1., 1.]).numpy(), [0., 2 * math.log(2)])


def test_gradients_of_the_new_ops():
    v = tf.Variable([0.3, -0.5])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.asin(v) + tf.atan(v) + tf.math.lgamma(v + 2.0) + tf.atan2(v, 2.0))
    x2 = np.array([0.09, 0.25])
    want = 1 / np.sqrt(1 - x2) + 1 / (1 + x2)
    g = tape.gradient(y, v).numpy()
    # d/dx lgamma(x + 2) = digamma(x + 2); d/dx atan2(x, 2) = 2 / (x^2 + 4)
    dig = tf.math.digamma(tf.constant([2.3, 1.5], tf.float64)).numpy()
    np.testing.assert_allclose(g, want + dig + 2 / (x2 + 4), rtol=1e-5)


def test_cumprod_and_permutation_helpers():
    # TF doc (tf.math.cumprod)
    np.testing.assert_array_equal(tf.math.cumprod([2, 3, 4]).numpy(), [2, 6, 24])
    np.testing.assert_array_equal(tf.math.cumprod([2, 3, 4], exclusive=True).numpy(), [1, 2, 6])
    np.testing.assert_allclose(tf.math.cumprod([2., 3., 4.], reverse=True).numpy(), [24, 12, 4])
    np.testing.assert_allclose(tf.math.cumprod([1., -2., 3., 0., 5.]).numpy(), [1, -2, -6, 0, 0])
    # TF doc (tf.math.invert_permutation)
    np.testing.assert_array_equal(tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy(), [2, 4, 3, 0, 1])
    assert tf.math.is_non_decreasing([1, 2, 2]).numpy() and not tf.math.is_strictly_increasing([1, 2, 2]).numpy()
    assert float(tf.math.polyval([2., 0., 1.], 3.)) == 19.0
    # TF doc (tf.unravel_index)
    np.testing.assert_array_equal(tf.unravel_index([1, 5, 7], [3, 3]).numpy(), [[0, 1, 2], [1, 2, 1]])
    np.testing.assert_array_equal(tf.unravel_index(1621, [6, 7, 8, 9]).numpy(), [3, 1, 4, 1])
    y, idx, count = tf.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])  # TF doc
    np.testing.assert_array_equal(count.numpy(), [2, 1, 3, 1, 2])
    np.testing.assert_array_equal(tf.truncatediv([-7, 7], [2, 2]).numpy(), [-3, 3])
    np.testing.assert_array_equal(tf.truncatemod([-7., 7.], [2., 2.]).numpy(), [-1., 1.])


def test_dynamic_partition_and_stitch_doc_examples():
    parts = tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)  # TF doc
    np.testing.assert_array_equal(parts[0].numpy(), [10, 20, 50])
    np.testing.assert_array_equal(parts[1].numpy(), [30, 40])
    merged = tf.dynamic_stitch([[6, 4, 1], [[2, 3], [0, 5]]],  # TF doc
                               [[[61, 62], [41, 42], [11, 12]], [[[21, 22], [31, 32]], [[1, 2], [51, 52]]]])
    np.testing.assert_array_equal(merged.numpy(), [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52],
                                                   [61, 62]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than once"):
        tf.dynamic_stitch([[0, 1], [1]], [[1., 2.], [3.]]).numpy()


def test_space_to_batch_round_trip_and_doc_example():
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4, 1)
    y = tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])
    # TF doc (tf.space_to_batch_nd, example 3 without padding): batch order is the block offset
    np.testing.assert_array_equal(y.numpy()[..., 0], [[[1, 3], [9, 11]], [[2, 4], [10, 12]], [[5, 7], [13, 15]],
                                                      [[6, 8], [14, 16]]])
    np.testing.assert_array_equal(tf.batch_to_space(y, [2, 2], [[0, 0], [0, 0]]).numpy(), x)
    z = tf.space_to_batch_nd(np.ones((2, 3, 2, 1), np.float32), [2, 2], [[1, 0], [0, 0]])
    assert tuple(z.shape) == (8, 2, 1, 1)
    np.testing.assert_array_equal(tf.batch_to_space(z, [2, 2], [[1, 0], [0, 0]]).numpy(), np.ones((2, 3, 2, 1)))


def test_reverse_sequence_doc_example():
    x = np.arange(1, 9).reshape(2, 4)
    np.testing.assert_array_equal(tf.reverse_sequence(x, [3, 2], seq_axis=1, batch_axis=0).numpy(),
                                  [[3, 2, 1, 4], [6, 5, 7, 8]])


def test_shape_helpers_and_casts():
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]), tf.TensorShape([4, 1])).as_list() == [None, 4, 3]
    np.testing.assert_array_equal(tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]).numpy(), [2, 4, 3])
    with pytest.raises(ValueError, match="Incompatible"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    np.testing.assert_array_equal(tf.saturate_cast([300., -5., 7.], tf.uint8).numpy(), [255, 0, 7])
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            assert tf.get_current_name_scope() == "outer/inner"
    assert tf.double == tf.float64 and tf.half == tf.float16


def test_nn_functions():
    np.testing.assert_allclose(tf.nn.selu([-1., 1.]).numpy(), [1.0507009873554805 * 1.6732632423543772 * (np.exp(-1) - 1),
                                                              1.0507009873554805], rtol=1e-6)
    np.testing.assert_array_equal(tf.nn.crelu([[1., -2.]]).numpy(), [[1., 0., 0., 2.]])
    assert float(tf.nn.zero_fraction([0., 1., 0., 2.])) == 0.5
    # lrn over 3 channels of ones, radius 1: sums 2, 3, 2 -> 1 / (1 + s)
    np.testing.assert_allclose(tf.nn.lrn(np.ones((1, 1, 1, 3), np.float32), 1, 1., 1., 1.).numpy().ravel(),
                               [1 / 3, 1 / 4, 1 / 3], rtol=1e-6)
    t, li = np.array([0., 2., 3.]), np.array([0.5, 0.1, 1.0])
    full = np.exp(li) - li * t + np.where(t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0)
    np.testing.assert_allclose(tf.nn.log_poisson_loss(t, li, compute_full_loss=True).numpy(), full, rtol=1e-6)
    x = np.random.RandomState(0).rand(4, 3)
    c, m, v, _ = tf.nn.sufficient_statistics(tf.constant(x), [0])
    mean, var = tf.nn.normalize_moments(c, m, v, None)
    np.testing.assert_allclose(mean.numpy(), x.mean(0))
    np.testing.assert_allclose(var.numpy(), x.var(0))
    w = np.array([[1.], [2.], [1.], [0.]])
    mean, var = tf.nn.weighted_moments(tf.constant(x), [0], w)
    np.testing.assert_allclose(mean.numpy(), (w * x).sum(0) / w.sum())


def test_conv2d_transpose_is_the_adjoint_of_conv2d():
    rng = np.random.RandomState(1)
    x, w = rng.rand(2, 3, 3, 2).astype(np.float32), rng.rand(3, 3, 4, 2).astype(np.float32)
    y = tf.nn.conv2d_transpose(x, w, [2, 6, 6, 4], strides=2, padding="SAME")
    assert tuple(y.shape) == (2, 6, 6, 4)
    # <conv2d(u, w), x> = <u, conv2d_transpose(x, w)> for any u
    u = rng.rand(2, 6, 6, 4).astype(np.float32)
    lhs = float(np.sum(tf.nn.conv2d(u, w, strides=2, padding="SAME").numpy() * x))
    assert abs(lhs - float(np.sum(u * y.numpy()))) < 1e-3 * abs(lhs)
    y1 = tf.nn.conv1d_transpose(x[:, 0], w[0], [2, 6, 4], strides=2, padding="SAME")
    assert tuple(y1.shape) == (2, 6, 4)


def test_errors_module_as_tensorflows():
    e = tf.errors.InvalidArgumentError(None, None, "bad value")
    assert e.message == "bad value" and e.error_code == tf.errors.INVALID_ARGUMENT == 3
    assert isinstance(e, tf.errors.OpError) and isinstance(e, ValueError)
    assert tf.errors.UnknownError("x").error_code == tf.errors.UNKNOWN
    with pytest.raises(tf.errors.OpError) as info:
        (tf.constant([1., 2.]) + tf.constant([1., 2., 3.])).numpy()
    assert info.value.error_code == tf.errors.INVALID_ARGUMENT


def test_keras_layers_on_eager_tensors_keep_shapes():
    dense = tf.keras.layers.Dense(3, kernel_initializer="ones")
    y = dense(tf.ones([2, 4]))
    assert tuple(y.shape) == (2, 3)
    np.testing.assert_array_equal(y.numpy(), np.full((2, 3), 4.0))
    np.testing.assert_array_equal(dense(tf.ones([5, 4]) * 2).numpy()[0], [8., 8., 8.])
    assert dense.kernel.shape == (4, 3)
    gen = tf.keras.Sequential([tf.keras.layers.Dense(12, input_shape=(4,)), tf.keras.layers.Reshape((2, 2, 3)),
                               tf.keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same")])
    out = gen(tf.random.normal([3, 4]), training=False)
    assert tuple(out.shape) == (3, 4, 4, 2)  # the batch too, as TF's eager tensors
