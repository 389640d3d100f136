"""weft.gradients from Python against central finite differences (float64)."""
import numpy as np
import pytest

import weft
from conftest import numeric_grad


CASES = {
    "square_sum": lambda x: weft.reduce_sum(weft.square(x)),
    "tanh_mean": lambda x: weft.reduce_mean(weft.tanh(x) * x),
    "softmax_ce": lambda x: weft.reduce_sum(weft.nn.softmax_cross_entropy_with_logits(
        labels=np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]), logits=x)),
    "matmul": lambda x: weft.reduce_sum(weft.sigmoid(x @ weft.transpose(x))),
    "slice_pow": lambda x: weft.reduce_sum(x[:, 1:] ** 3.0) + weft.reduce_max(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(graph, sess, name):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal((2, 3))
    x = weft.placeholder(weft.float64, shape=(2, 3), name="x")
    y = CASES[name](x)
    (dx,) = weft.gradients(y, [x])
    got = sess.run(dx, feed_dict={x: x0})
    want = numeric_grad(lambda v: sess.run(y, feed_dict={x: v}), x0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_gradients_of_independent_x_is_none(graph):
    x = weft.placeholder(weft.float32, shape=(2,))
    z = weft.placeholder(weft.float32, shape=(2,))
    assert weft.gradients(weft.reduce_sum(x), [x, z])[1] is None


def test_grad_ys_weights(graph, sess):
    x = weft.placeholder(weft.float64, shape=(3,))
    (dx,) = weft.gradients(x * 2.0, [x], grad_ys=[np.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(sess.run(dx, feed_dict={x: np.zeros(3)}), [2.0, 4.0, 6.0])


def test_conv2d_gradient(graph, sess):
    rng = np.random.default_rng(2)
    x0 = rng.standard_normal((1, 5, 5, 2))
    w = weft.constant(rng.standard_normal((3, 3, 2, 2)))
    x = weft.placeholder(weft.float64, shape=(1, 5, 5, 2))
    y = weft.reduce_sum(weft.square(weft.nn.conv2d(x, w, strides=1, padding="SAME")))
    (dx,) = weft.gradients(y, [x])
    got = sess.run(dx, feed_dict={x: x0})
    want = numeric_grad(lambda v: sess.run(y, feed_dict={x: v}), x0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_grad_ys_none_means_ones(graph, sess):
    x = weft.placeholder(weft.float64, shape=(2,))
    (dx,) = weft.gradients([x * 3.0], [x], grad_ys=[None])
    np.testing.assert_allclose(sess.run(dx, feed_dict={x: np.zeros(2)}), [3.0, 3.0])


def test_recompute_grad_equal_gradients_through_recomputed_copies(graph, sess):
    """tf.recompute_grad(f): the same gradients (float64), computed from copies of f's ops."""
    rng = np.random.default_rng(2)
    x0, w0, v0 = rng.standard_normal((4, 5)), rng.standard_normal((5, 6)), rng.standard_normal((6, 3))
    x = weft.placeholder(weft.float64, shape=(4, 5), name="x")
    w = weft.placeholder(weft.float64, shape=(5, 6), name="w")
    v = weft.placeholder(weft.float64, shape=(6, 3), name="v")

    def block(h):
        return weft.tanh(weft.tanh(h @ w) @ v)

    plain = weft.gradients(weft.reduce_sum(weft.square(block(x))), [x, w, v])
    before = {op.name for op in graph.get_operations()}
    recomputed = weft.gradients(weft.reduce_sum(weft.square(weft.recompute_grad(block)(x))), [x, w, v])
    copies = [op.name for op in graph.get_operations() if op.name not in before and "recompute/" in op.name]
    assert copies, "no recomputed copies in the gradient graph"
    feed = {x: x0, w: w0, v: v0}
    for a, b in zip(sess.run(plain, feed_dict=feed), sess.run(recomputed, feed_dict=feed)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
