"""tf.custom_gradient (python/weft/_custom_gradient.py), GradientTape.batch_jacobian and
tf.py_function / tf.numpy_function (python/weft/_py_function.py). Expected values are closed forms
and the examples of TensorFlow's API docs ("TF doc")."""
import numpy as np
import pytest

import weft as tf


@tf.custom_gradient
def log1pexp(x):
    # TF doc (tf.custom_gradient): a numerically stable gradient for log(1 + exp(x)).
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@tf.custom_gradient
def clip_gradient_by_norm(x, norm):
    # TF doc: the identity whose gradient is clipped to `norm`.
    y = tf.identity(x)

    def grad_fn(dresult):
        return [tf.clip_by_norm(dresult, norm), None]
    return y, grad_fn


def test_custom_gradient_replaces_the_gradient_eagerly():
    x = tf.constant(100.)
    with tf.GradientTape() as t:
        t.watch(x)
        y = log1pexp(x)
    # TF doc: the stable gradient at x = 100 is 1.0 (the autodiff of log(1 + exp(x)) gives NaN).
    assert float(t.gradient(y, x)) == pytest.approx(1.0)
    x2 = tf.constant([1.0, -2.0], tf.float64)
    with tf.GradientTape() as t:
        t.watch(x2)
        z = tf.reduce_sum(log1pexp(x2) * tf.constant([2.0, 3.0], tf.float64))
    np.testing.assert_allclose(np.asarray(t.gradient(z, x2)), [2.0, 3.0] / (1 + np.exp(-np.array([1.0, -2.0]))))


def test_custom_gradient_in_a_tf_function_and_chained():
    @tf.function
    def step(v):
        with tf.GradientTape() as t:
            t.watch(v)
            # chained: the upstream ones clipped to norm 1, times 3, through log1pexp's own rule
            y = tf.reduce_sum(clip_gradient_by_norm(log1pexp(v) * 3.0, 1.0))
        return t.gradient(y, v)
    v = np.array([0.0, 1.0], np.float32)
    got = np.asarray(step(v))
    clipped = np.ones(2) / np.sqrt(2.0)  # [1, 1] clipped to norm 1
    np.testing.assert_allclose(got, 3.0 * clipped / (1 + np.exp(-v)), rtol=1e-6)


def test_custom_gradient_with_variables():
    w = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            return dy * 10.0, [dy * 100.0]  # deliberately not the true gradients (w and x)
        return x * w, grad
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = scale(x) * 2.0
    gx, gw = t.gradient(y, [x, w])
    assert float(gx) == pytest.approx(20.0)
    assert float(gw) == pytest.approx(200.0)

    @tf.custom_gradient
    def bad(x):
        return x * w, lambda dy: dy
    with pytest.raises(TypeError, match="grad_fn must accept a keyword argument 'variables'"):
        bad(x)


def test_batch_jacobian_and_jacobian():
    x = tf.constant(np.array([[1., 2.], [3., 4.], [5., 6.]]))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x  # example b: diag(2 x_b)
        z = tf.matmul(x, tf.constant([[1., 2., 3.], [4., 5., 6.]], tf.float64))
    bj = np.asarray(t.batch_jacobian(y, x))
    assert bj.shape == (3, 2, 2)
    for b in range(3):
        np.testing.assert_allclose(bj[b], np.diag(2 * x.numpy()[b]))
    bz = np.asarray(t.batch_jacobian(z, x))
    assert bz.shape == (3, 3, 2)
    np.testing.assert_allclose(bz[1], np.array([[1., 2., 3.], [4., 5., 6.]]).T)
    with pytest.raises(ValueError, match="batch size 3 but source"):
        t.batch_jacobian(y, tf.constant(np.ones((2, 2))))


def test_py_function_and_numpy_function():
    x = tf.constant([1.0, 2.0])
    out = tf.numpy_function(lambda a: np.sort(a)[::-1].astype(np.float32) * 2, [x], tf.float32)
    np.testing.assert_array_equal(out.numpy(), [4.0, 2.0])
    # py_function gets tensors with values; its TF ops are differentiated.
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.py_function(lambda a: a * a * float(a.numpy().sum()), [x], tf.float32)
    np.testing.assert_allclose(np.asarray(t.gradient(tf.reduce_sum(y), x)), [2 * 1 * 3., 2 * 2 * 3.])
    a, b = tf.numpy_function(lambda v: (v + 1, (v > 1)), [np.array([1, 2], np.int32)], [tf.int32, tf.bool])
    np.testing.assert_array_equal(b.numpy(), [False, True])
    with pytest.raises(tf.errors.InvalidArgumentError, match="0-th value returned by <lambda> is float64, but Tout "
                                                              "says float32"):
        tf.numpy_function(lambda v: v.astype(np.float64), [x], tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="returned 1 value\\(s\\) but Tout lists 2"):
        tf.numpy_function(lambda v: v, [x], [tf.float32, tf.float32])
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [2])
        with pytest.raises(tf.errors.UnimplementedError, match="known only when the graph runs"):
            tf.numpy_function(np.sort, [p], tf.float32)
        doubled = tf.py_function(lambda v: v * 2.0, [p], tf.float32)  # TF ops only: part of the graph
        with tf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(doubled, {p: [1., 3.]}), [2., 6.])


def test_numpy_function_in_a_dataset_map_runs_per_element():
    # The tf.data guide's pattern: a numpy function in map (weft runs that map in Python).
    ds = tf.data.Dataset.from_tensor_slices(np.array([[3., 1., 2.], [0., 5., 4.]], np.float32))
    ds = ds.map(lambda x: tf.numpy_function(lambda a: np.sort(a), [x], tf.float32))
    got = [np.asarray(e) for e in ds.as_numpy_iterator()]
    np.testing.assert_array_equal(got, [[1., 2., 3.], [0., 4., 5.]])
    pairs = tf.data.Dataset.from_tensor_slices(np.array([1, 2, 3], np.int64)).map(
        lambda v: tf.py_function(lambda t: t * int(t.numpy()), [v], tf.int64)).batch(3)
    np.testing.assert_array_equal(next(iter(pairs.as_numpy_iterator())), [1, 4, 9])


@tf.RegisterGradient("GuidedReluForTest")
def _guided_relu(op, grad):
    # Guided backpropagation (a published use of gradient_override_map): only positive gradients
    # pass, and only where the input was positive.
    return tf.where(grad > 0., grad * tf.cast(op.inputs[0] > 0., grad.dtype), tf.zeros_like(grad))


def test_register_gradient_with_an_override_map_and_no_gradient():
    g = tf.Graph()
    with g.as_default():
        x = tf.constant([-1., 2., 3.])
        with g.gradient_override_map({"Relu": "GuidedReluForTest"}):
            y = tf.nn.relu(x)
        plain = tf.nn.relu(x)  # outside the map: Relu's own gradient
        w = tf.constant([1., -1., 2.])
        guided, = tf.gradients(tf.reduce_sum(y * w), [x])
        normal, = tf.gradients(tf.reduce_sum(plain * w), [x])
        with tf.compat.v1.Session() as sess:
            got_guided, got_normal = sess.run([guided, normal])
    np.testing.assert_array_equal(got_guided, [0., 0., 2.])
    np.testing.assert_array_equal(got_normal, [0., -1., 2.])
    with pytest.raises(KeyError, match="Registering two gradient with name 'GuidedReluForTest'"):
        tf.RegisterGradient("GuidedReluForTest")(_guided_relu)
    with tf.Graph().as_default() as g2:
        with g2.gradient_override_map({"Relu": "NoSuchGradient"}):
            with pytest.raises(LookupError, match="no gradient registered under 'NoSuchGradient'"):
                tf.nn.relu(tf.constant([1.]))


def test_no_gradient_stops_ops_made_afterwards():
    from weft import _custom_gradient
    with tf.Graph().as_default():
        x = tf.constant([0.5, 1.0])
        before = tf.sin(x)
        tf.no_gradient("Sin")
        try:
            after = tf.sin(x)
        finally:
            _custom_gradient._NO_GRADIENT.discard("Sin")  # the registry is process-wide, as TF's
        g_before, = tf.gradients(tf.reduce_sum(before), [x])
        g_after = tf.gradients(tf.reduce_sum(after), [x])[0]
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(g_before), np.cos([0.5, 1.0]), rtol=1e-6)
    assert g_after is None


def test_py_function_over_a_dataset_of_strings():
    # The tf.data guide's pattern: Python code on file names / text, then numbers for the model.
    ds = tf.data.Dataset.from_tensor_slices(["a bb", "ccc"])
    lengths = ds.map(lambda s: tf.py_function(lambda t: np.int32(len(t.numpy())), [s], tf.int32))
    assert [int(v) for v in lengths.as_numpy_iterator()] == [4, 3]
    upper = ds.map(lambda s: tf.py_function(lambda t: t.numpy().upper(), [s], tf.string))
    assert list(upper.as_numpy_iterator()) == [b"A BB", b"CCC"]
