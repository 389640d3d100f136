"""tf.TensorArray (python/weft/tensor_array.py): eager, in tf.function, in a Python loop over a
static tf.range and carried through tf.while_loop, with gradients. Expected values are
TensorFlow 2.21's outputs for the same calls (noted "TF") or closed forms."""
import numpy as np
import pytest

import weft as tf


def test_write_read_stack_and_unwritten_zeros():
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, [1., 2.])
    assert ta.element_shape.as_list() == [2]
    assert int(ta.size()) == 3
    np.testing.assert_array_equal(ta.read(0).numpy(), [1., 2.])
    np.testing.assert_array_equal(ta.read(1).numpy(), [0., 0.])  # TF: an unwritten index reads zeros
    np.testing.assert_array_equal(ta.stack().numpy(), [[1., 2.], [0., 0.], [0., 0.]])
    ints = tf.TensorArray(tf.int32, size=2).write(0, 1).write(1, 2)
    np.testing.assert_array_equal(ints.stack().numpy(), [1, 2])
    assert tf.TensorArray(tf.float32, size=2, element_shape=[3]).stack().numpy().shape == (2, 3)
    # Overwriting an index keeps the last value (TF: [2., 0.]).
    np.testing.assert_array_equal(tf.TensorArray(tf.float32, size=2).write(0, 1.).write(0, 2.).stack().numpy(), [2., 0.])


def test_errors_name_the_array_and_what_is_wrong():
    ta = tf.TensorArray(tf.float32, size=3).write(0, [1., 2.])
    with pytest.raises(tf.errors.OutOfRangeError, match="index 5 but the array is not resizeable and its size 3"):
        ta.write(5, [1., 2.])
    with pytest.raises(ValueError, match=r"incompatible shape for value \(\(3,\)\), expected \(\(2,\)\)"):
        ta.write(1, [1., 2., 3.])
    with pytest.raises(tf.errors.InvalidArgumentError, match="dtype is float32 but write was given a int32"):
        ta.write(1, tf.constant([1, 2]))
    with pytest.raises(tf.errors.OutOfRangeError, match="read index 3"):
        ta.read(3)
    with pytest.raises(ValueError, match="never written and the element shape is not fully known"):
        tf.TensorArray(tf.float32, size=2).read(0)
    with pytest.raises(ValueError, match="cannot unstack 3 tensors into a TensorArray of static size 2"):
        tf.TensorArray(tf.float32, size=2).unstack([1., 2., 3.])
    once = tf.TensorArray(tf.float32, size=2).write(0, 1.)
    once.read(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="could not read index 0 twice"):
        once.read(0)
    with pytest.raises(ValueError, match="size must be given"):
        tf.TensorArray(tf.float32)


def test_dynamic_size_unstack_scatter_gather_concat_split():
    dyn = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(2, 1.0)
    assert int(dyn.size()) == 3
    np.testing.assert_array_equal(dyn.stack().numpy(), [0., 0., 1.])  # TF
    un = tf.TensorArray(tf.float32, size=2).unstack([[1., 2.], [3., 4.]])
    np.testing.assert_array_equal(un.read(1).numpy(), [3., 4.])
    np.testing.assert_array_equal(un.gather([1, 0]).numpy(), [[3., 4.], [1., 2.]])
    sc = tf.TensorArray(tf.float32, size=3).scatter([2, 0], [[1.], [2.]])
    np.testing.assert_array_equal(sc.stack().numpy(), [[2.], [0.], [1.]])  # TF
    ragged = tf.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False).write(0, [1., 2.]).write(1, [3.])
    np.testing.assert_array_equal(ragged.concat().numpy(), [1., 2., 3.])  # TF
    sp = tf.TensorArray(tf.float32, size=2).split([1., 2., 3.], [1, 2])
    np.testing.assert_array_equal(sp.read(1).numpy(), [2., 3.])  # TF
    np.testing.assert_array_equal(sp.concat().numpy(), [1., 2., 3.])


def test_python_loop_over_a_static_range_in_a_tf_function():
    @tf.function
    def f():
        ta = tf.TensorArray(tf.float32, size=4)
        for i in tf.range(4):
            ta = ta.write(i, tf.cast(i, tf.float32) * 2.)
        return ta.stack()
    np.testing.assert_array_equal(np.asarray(f()), [0., 2., 4., 6.])  # TF: f(tf.constant(4))


def _decode(x, n, dynamic):
    """A seq2seq-style decoding loop: h_{i+1} = tanh(h_i * w), every h written to the array."""
    ta = tf.TensorArray(tf.float64, size=0 if dynamic else n, dynamic_size=dynamic, element_shape=[2])

    def body(i, h, ta):
        h = tf.tanh(h * x)
        return i + 1, h, ta.write(i, h)
    _, _, ta = tf.while_loop(lambda i, h, ta: i < n, body, (tf.constant(0), tf.constant([0.5, -1.0], tf.float64), ta))
    return ta.stack()


def _decode_np(w, n):
    h, out = np.array([0.5, -1.0]), []
    for _ in range(n):
        h = np.tanh(h * w)
        out.append(h)
    return np.array(out)


@pytest.mark.parametrize("dynamic", [False, True])
def test_while_loop_carries_the_array_and_differentiates(dynamic):
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float64, [])
        n = tf.compat.v1.placeholder(tf.int32, [])
        st = _decode(x, n, dynamic)
        loss = tf.reduce_sum(st * tf.constant([[1.0, 2.0]], tf.float64))
        g = tf.gradients(loss, [x])[0]
        with tf.compat.v1.Session() as sess:
            got, dx = sess.run([st, g], {x: 0.7, n: 4})
    np.testing.assert_allclose(got, _decode_np(0.7, 4), rtol=1e-12)
    f = lambda w: float(np.sum(_decode_np(w, 4) * [1.0, 2.0]))  # noqa: E731
    np.testing.assert_allclose(dx, (f(0.7 + 1e-6) - f(0.7 - 1e-6)) / 2e-6, rtol=1e-6)


def test_gradients_through_write_stack_and_read_with_a_tape():
    x = tf.Variable([1., 2., 3.])
    with tf.GradientTape() as t:
        ta = tf.TensorArray(tf.float32, size=3)
        for i in range(3):
            ta = ta.write(i, x[i] * x[i])
        y = tf.reduce_sum(ta.stack() * [1., 2., 3.]) + ta.read(2)
    # TF gives [2, 8, 18] for the stack term; read(2) adds d(x2^2) = 6.
    np.testing.assert_allclose(np.asarray(t.gradient(y, x)), [2., 8., 24.])


def test_run_time_index_write_and_read_in_a_graph():
    with tf.Graph().as_default():
        i = tf.compat.v1.placeholder(tf.int32, [])
        ta = tf.TensorArray(tf.float32, size=3, element_shape=[2]).write(i, [5., 6.])
        r = ta.read(i)
        with tf.compat.v1.Session() as sess:
            st, got = sess.run([ta.stack(), r], {i: 1})
    np.testing.assert_array_equal(st, [[0., 0.], [5., 6.], [0., 0.]])
    np.testing.assert_array_equal(got, [5., 6.])


@pytest.mark.parametrize("static_size", [True, False])
def test_while_loop_learns_an_unknown_element_shape_from_the_body(static_size):
    # TF's usual loop: tf.TensorArray(tf.float32, size=n) without element_shape, written in the body.
    with tf.Graph().as_default():
        n = tf.compat.v1.placeholder(tf.int32, [])
        x = tf.compat.v1.placeholder(tf.float32, [3, 2])
        ta = tf.TensorArray(tf.float32, size=3 if static_size else n)
        _, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, x[i] * 2.)), (0, ta))
        st = ta.stack()
        assert ta.element_shape.as_list() == [2]
        assert list(st.shape)[1:] == [2]
        with tf.compat.v1.Session() as sess:
            got = sess.run(st, {n: 3, x: np.arange(6).reshape(3, 2)})
            if static_size:
                none = sess.run(st, {n: 0, x: np.zeros((3, 2))})  # no iteration: zeros of the learned shape
                np.testing.assert_array_equal(none, np.zeros((3, 2)))
    np.testing.assert_array_equal(got, np.arange(6).reshape(3, 2) * 2.)


def test_dynamic_rnn_pattern_reads_and_writes_in_the_loop():
    # TF's dynamic_rnn loop: inputs unstacked into one array, read at i, outputs written at i.
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float64, [5, 3])
        w = tf.compat.v1.placeholder(tf.float64, [])
        inputs = tf.TensorArray(tf.float64, size=5).unstack(x)
        outputs = tf.TensorArray(tf.float64, size=5)

        def body(i, h, out):
            h = tf.tanh(inputs.read(i) + w * h)
            return i + 1, h, out.write(i, h)
        _, _, outputs = tf.while_loop(lambda i, h, out: i < 5, body,
                                      (tf.constant(0), tf.zeros([3], tf.float64), outputs))
        y = tf.reduce_sum(outputs.stack())
        gx, gw = tf.gradients(y, [x, w])
        xv = np.linspace(-1, 1, 15).reshape(5, 3)
        with tf.compat.v1.Session() as sess:
            got, dx, dw = sess.run([y, gx, gw], {x: xv, w: 0.5})

    def f(xs, wv):
        h, total = np.zeros(3), 0.0
        for t in range(5):
            h = np.tanh(xs[t] + wv * h)
            total += h.sum()
        return total
    assert got == pytest.approx(f(xv, 0.5), rel=1e-12)
    assert dw == pytest.approx((f(xv, 0.5 + 1e-6) - f(xv, 0.5 - 1e-6)) / 2e-6, rel=1e-6)
    e = np.zeros((5, 3))
    e[2, 1] = 1e-6
    assert dx[2, 1] == pytest.approx((f(xv + e, 0.5) - f(xv - e, 0.5)) / 2e-6, rel=1e-6)


def test_top_level_loop_over_a_static_range_inside_a_tape():
    w = tf.Variable(3.0)
    with tf.GradientTape() as t:
        ta = tf.TensorArray(tf.float32, size=3)
        for i in tf.range(3):
            ta = ta.write(i, w * tf.cast(i, tf.float32))
        loss = tf.reduce_sum(ta.stack())
    assert float(loss) == pytest.approx(9.0)  # 3 * (0 + 1 + 2)
    assert float(t.gradient(loss, w)) == pytest.approx(3.0)
