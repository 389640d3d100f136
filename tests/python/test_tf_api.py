"""The TensorFlow op-level namespace (tf.math, top-level composites, tf.nn and tf.random
additions) under `import weft as tf`. Expected values are the examples in TensorFlow's API
docstrings (marked "TF doc"), closed forms, or numpy."""
import numpy as np
import pytest

import weft as tf
from conftest import numeric_grad


def run(sess, *ts, feed=None):
    out = sess.run(list(ts), feed_dict=feed)
    return out[0] if len(ts) == 1 else out


def check_grad(sess, fn, x0, rtol=1e-5, atol=1e-7):
    x = tf.placeholder(tf.float64, shape=x0.shape)
    fx = fn(x)
    y = tf.reduce_sum(fx * np.random.default_rng(3).standard_normal(tuple(fx.shape)))  # random weights
    (dx,) = tf.gradients(y, [x])
    got = sess.run(dx, feed_dict={x: x0})
    want = numeric_grad(lambda v: sess.run(y, feed_dict={x: v}), x0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ---- tf.math ----------------------------------------------------------------------------------

def test_math_namespace_aliases_the_top_level_functions():
    for name in ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "log", "exp", "sqrt", "rsqrt",
                 "square", "abs", "pow", "maximum", "minimum", "sigmoid", "tanh", "sign", "argmax", "argmin", "equal",
                 "add", "multiply", "subtract"):
        assert getattr(tf.math, name) is getattr(tf, name), name
    for name in ("log1p", "floor", "round", "is_nan", "is_finite", "cumsum", "top_k", "count_nonzero",
                 "confusion_matrix", "reduce_std", "reduce_variance", "l2_normalize", "softplus", "divide"):
        assert callable(getattr(tf.math, name)), name


def test_elementwise_docstring_examples(graph, sess):
    x = tf.constant([5.0, 4.8, 6.8, np.inf, np.nan])
    fin, nan, inf = run(sess, tf.math.is_finite(x), tf.math.is_nan(x), tf.math.is_inf(x))
    assert fin.tolist() == [True, True, True, False, False]  # TF doc (is_finite)
    assert nan.tolist() == [False, False, False, False, True]
    assert inf.tolist() == [False, False, False, True, False]
    # TF doc (round): halves to even
    assert run(sess, tf.math.round(tf.constant([0.9, 2.5, 2.3, 1.5, -4.5]))).tolist() == [1.0, 2.0, 2.0, 2.0, -4.0]
    v = np.array([-1.7, -1.5, -0.2, 0.2, 1.5, 1.7, 2.0], np.float32)
    assert run(sess, tf.math.floor(v)).tolist() == np.floor(v).tolist()
    assert run(sess, tf.math.ceil(v)).tolist() == np.ceil(v).tolist()
    small = np.array([1e-10, 0.5, -0.5], np.float64)
    lp, em = run(sess, tf.math.log1p(small), tf.math.expm1(small))
    np.testing.assert_allclose(lp, np.log1p(small), rtol=1e-15)
    np.testing.assert_allclose(em, np.expm1(small), rtol=1e-15)
    sp = run(sess, tf.math.softplus(tf.constant([-1.0, 0.0, 1.0])))
    np.testing.assert_allclose(sp, np.log1p(np.exp([-1.0, 0.0, 1.0])), rtol=1e-6)
    # TF's / on integers is true division
    assert run(sess, tf.math.divide(tf.constant([7, -7]), 2)).tolist() == [3.5, -3.5]
    assert run(sess, tf.math.floordiv(tf.constant([7, -7]), 2)).tolist() == [3, -4]  # as Python's //
    assert run(sess, tf.math.floormod(tf.constant([7.0, -7.0]), 3.0)).tolist() == [1.0, 2.0]
    assert run(sess, tf.math.divide_no_nan(tf.constant([3.0, 1.0]), tf.constant([0.0, 2.0]))).tolist() == [0.0, 0.5]
    assert run(sess, tf.math.squared_difference(tf.constant([1.0, 5.0]), 3.0)).tolist() == [4.0, 4.0]
    np.testing.assert_allclose(run(sess, tf.math.xlogy(tf.constant([0.0, 2.0]), tf.constant([0.0, 3.0]))),
                               [0.0, 2 * np.log(3.0)], rtol=1e-6)


def test_reductions_docstring_examples(graph, sess):
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    got = run(sess, tf.math.reduce_std(x), tf.math.reduce_std(x, 0), tf.math.reduce_std(x, 1),
              tf.math.reduce_variance(x), tf.math.reduce_variance(x, 0), tf.math.reduce_variance(x, 1))
    want = [1.118034, [1.0, 1.0], [0.5, 0.5], 1.25, [1.0, 1.0], [0.25, 0.25]]  # TF doc
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    b = tf.constant([[True, True], [False, False]])
    got = run(sess, tf.reduce_any(b), tf.reduce_any(b, 0), tf.reduce_any(b, 1),
              tf.reduce_all(b), tf.reduce_all(b, 0), tf.reduce_all(b, 1))
    assert [np.asarray(g).tolist() for g in got] == [True, [True, True], [True, False], False, [False, False],
                                                     [True, False]]  # TF doc
    c = tf.constant([[0, 1, 0], [1, 1, 0]])
    got = run(sess, tf.math.count_nonzero(c), tf.math.count_nonzero(c, 0), tf.math.count_nonzero(c, 1),
              tf.math.count_nonzero(c, 1, keepdims=True), tf.math.count_nonzero(c, [0, 1]))
    assert [np.asarray(g).tolist() for g in got] == [3, [1, 2, 0], [1, 2], [[1], [2]], 3]  # TF doc
    z = np.array([[0.0, 1000.0], [-np.inf, 1.0]])
    got = run(sess, tf.reduce_logsumexp(tf.constant(z), 1))
    np.testing.assert_allclose(got, [1000.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(run(sess, tf.math.reduce_euclidean_norm(tf.constant([3.0, 4.0]))), 5.0)


def test_cumsum_top_k_in_top_k(graph, sess):
    v = tf.constant([2, 4, 6, 8])
    got = run(sess, tf.math.cumsum(v), tf.math.cumsum(v, exclusive=True), tf.math.cumsum(v, reverse=True),
              tf.math.cumsum(v, exclusive=True, reverse=True))
    assert [g.tolist() for g in got] == [[2, 6, 12, 20], [0, 2, 6, 12], [20, 18, 14, 8], [18, 14, 8, 0]]  # TF doc
    res = tf.math.top_k([1, 2, 98, 1, 1, 99, 3, 1, 3, 96, 4, 1], k=3)
    vals, idx = run(sess, res.values, res.indices)
    assert vals.tolist() == [99, 98, 96] and idx.tolist() == [5, 2, 9]  # TF doc
    assert idx.dtype == np.int32
    pred = tf.constant([[0.1, 0.8, 0.1], [0.5, 0.2, 0.3], [0.2, 0.2, 0.2], [np.nan, 0.5, 0.1]])
    got = run(sess, tf.math.in_top_k(tf.constant([1, 2, 0, 0]), pred, 1), tf.nn.in_top_k([1, 2, 0, 1], pred, 2))
    assert got[0].tolist() == [True, False, True, False]  # ties at the k-th value count; a NaN target never
    assert got[1].tolist() == [True, True, True, True]


def test_confusion_matrix_l2_normalize(graph, sess):
    cm = run(sess, tf.math.confusion_matrix([1, 2, 4], [2, 2, 4], num_classes=5))
    assert cm.tolist() == [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 0, 1]]  # TF doc
    w = run(sess, tf.math.confusion_matrix([0, 1, 1], [0, 1, 0], num_classes=2, weights=[1.0, 2.0, 3.0],
                                           dtype=tf.float32))
    assert w.tolist() == [[1.0, 0.0], [3.0, 2.0]]
    labels = tf.placeholder(tf.int32, [None])  # values only known at run time: num_classes is needed
    with pytest.raises(ValueError, match="num_classes"):
        tf.math.confusion_matrix(labels, [1, 0])
    got = run(sess, tf.math.l2_normalize(tf.constant([3.0, 4.0])), tf.nn.l2_normalize(tf.constant([[3.0], [4.0]]), 0))
    np.testing.assert_allclose(got[0], [0.6, 0.8], rtol=1e-6)  # TF doc
    np.testing.assert_allclose(got[1], [[0.6], [0.8]], rtol=1e-6)
    assert run(sess, tf.math.l2_normalize(tf.zeros([2]))).tolist() == [0.0, 0.0]


def test_math_gradients(graph, sess):
    x0 = np.random.default_rng(0).uniform(0.1, 2.0, (2, 3))
    check_grad(sess, tf.math.log1p, x0)
    check_grad(sess, lambda x: tf.math.reduce_std(x, 1), x0)
    check_grad(sess, lambda x: tf.math.l2_normalize(x, 1), x0)
    check_grad(sess, lambda x: tf.math.cumsum(x, 1, exclusive=True), x0)
    check_grad(sess, lambda x: tf.math.top_k(x, 2).values, x0)
    check_grad(sess, lambda x: tf.reduce_logsumexp(x, 0), x0)


# ---- top-level composites ---------------------------------------------------------------------

def test_range_linspace_eye(graph, sess):
    assert run(sess, tf.range(3, 18, 3)).tolist() == [3, 6, 9, 12, 15]  # TF doc
    r = run(sess, tf.range(3, 1, -0.5))
    assert r.tolist() == [3, 2.5, 2, 1.5] and r.dtype == np.float32  # TF doc
    assert run(sess, tf.range(5)).tolist() == [0, 1, 2, 3, 4]
    n = tf.placeholder(tf.int32, shape=())
    dyn = tf.range(n)
    assert dyn.shape == (None,)
    assert run(sess, dyn, feed={n: 4}).tolist() == [0, 1, 2, 3]
    assert run(sess, tf.range(1, n, 2), feed={n: 6}).tolist() == [1, 3, 5]
    with pytest.raises(tf.errors.InvalidArgumentError, match="delta must not be 0"):
        sess.run(tf.range(0, n, 0), feed_dict={n: 3})
    np.testing.assert_allclose(run(sess, tf.linspace(10.0, 12.0, 3)), [10.0, 11.0, 12.0])  # TF doc
    got = run(sess, tf.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=0), tf.linspace([0.0, 5.0], [10.0, 40.0], 5, axis=-1))
    np.testing.assert_allclose(got[0], [[0, 5], [2.5, 13.75], [5, 22.5], [7.5, 31.25], [10, 40]])  # TF doc
    np.testing.assert_allclose(got[1], [[0, 2.5, 5, 7.5, 10], [5, 13.75, 22.5, 31.25, 40]])  # TF doc
    assert run(sess, tf.eye(2, num_columns=3)).tolist() == [[1, 0, 0], [0, 1, 0]]  # TF doc
    assert run(sess, tf.eye(2, batch_shape=[3])).shape == (3, 2, 2)


def test_stack_unstack(graph, sess):
    x, y, z = tf.constant([1, 4]), tf.constant([2, 5]), tf.constant([3, 6])
    assert run(sess, tf.stack([x, y, z])).tolist() == [[1, 4], [2, 5], [3, 6]]  # TF doc
    assert run(sess, tf.stack([x, y, z], axis=1)).tolist() == [[1, 2, 3], [4, 5, 6]]  # TF doc
    assert run(sess, tf.stack([x, y], axis=-1)).tolist() == [[1, 2], [4, 5]]
    m = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert [a.tolist() for a in run(sess, *tf.unstack(m))] == [[1, 2, 3], [4, 5, 6]]  # TF doc
    assert [a.tolist() for a in run(sess, *tf.unstack(m, axis=1))] == [[1, 4], [2, 5], [3, 6]]
    with pytest.raises(ValueError, match="num="):
        tf.unstack(tf.placeholder(tf.float32, shape=(None, 2)))


def test_clipping(graph, sess):
    t = tf.constant([[-10.0, -1.0, 0.0], [0.0, 2.0, 10.0]])
    assert run(sess, tf.clip_by_value(t, clip_value_min=-1, clip_value_max=1)).tolist() == \
        [[-1.0, -1.0, 0.0], [0.0, 1.0, 1.0]]  # TF doc
    some = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    np.testing.assert_allclose(run(sess, tf.clip_by_norm(some, 10.0)), some)  # TF doc: unchanged
    np.testing.assert_allclose(run(sess, tf.clip_by_norm(tf.constant([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2.0)),
                               [[0.26967996, 0.5393599, 0.80903983, 1.0787199, 1.3483998]], rtol=1e-6)  # TF doc
    np.testing.assert_allclose(run(sess, tf.clip_by_norm(tf.constant(some), 2.0)), some * 2 / np.sqrt(91.0), rtol=1e-6)
    np.testing.assert_allclose(run(sess, tf.clip_by_norm(tf.constant(some), 1.0, axes=[1])),
                               some / np.linalg.norm(some, axis=1, keepdims=True), rtol=1e-6)
    a, b = tf.constant([3.0, 0.0]), tf.constant([[4.0]])
    (ca, cb), gn = tf.clip_by_global_norm([a, b], 1.0)
    got = run(sess, ca, cb, gn)
    np.testing.assert_allclose(got[2], 5.0)
    np.testing.assert_allclose(got[0], [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(got[1], [[0.8]], rtol=1e-6)
    x0 = np.array([[-2.0, 0.5, 3.0]])
    check_grad(sess, lambda x: tf.clip_by_value(x, -1.0, 1.0), x0)
    check_grad(sess, lambda x: tf.clip_by_norm(x, 1.0), x0)
    np.testing.assert_allclose(run(sess, tf.norm(tf.constant([[3.0, 4.0]]), axis=1)), [5.0])


def test_gather_nd_boolean_mask(graph, sess):
    params = tf.constant([[1, 2], [3, 4]])
    assert run(sess, tf.gather_nd(params, [[0, 0], [1, 1]])).tolist() == [1, 4]  # TF doc (['a', 'd'])
    assert run(sess, tf.gather_nd(params, [[1], [0]])).tolist() == [[3, 4], [1, 2]]  # TF doc
    cube = np.arange(24).reshape(2, 3, 4).astype(np.float64)
    idx = np.array([[[1, 2], [0, 1]], [[0, 0], [1, 0]]])
    np.testing.assert_array_equal(run(sess, tf.gather_nd(cube, idx)), cube[idx[..., 0], idx[..., 1]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="gather_nd_index_out_of_range"):
        sess.run(tf.gather_nd(params, [[0, 2]]))  # dim 1 has size 2: no silent aliasing of [1, 0]
    assert run(sess, tf.boolean_mask([0, 1, 2, 3], [True, False, True, False])).tolist() == [0, 2]  # TF doc
    assert run(sess, tf.boolean_mask(tf.constant([[1, 2], [3, 4], [5, 6]]), np.array([True, False, True]))).tolist() \
        == [[1, 2], [5, 6]]  # TF doc
    m = tf.placeholder(tf.bool, shape=(None,))
    x = tf.placeholder(tf.float64, shape=(None, 2))
    masked = tf.boolean_mask(x, m)
    assert masked.shape == (None, 2)
    xv = np.arange(8.0).reshape(4, 2)
    mv = np.array([False, True, True, False])
    np.testing.assert_array_equal(run(sess, masked, feed={x: xv, m: mv}), xv[mv])
    (dx,) = tf.gradients(tf.reduce_sum(masked * 3.0), [x])
    np.testing.assert_array_equal(run(sess, dx, feed={x: xv, m: mv}), 3.0 * mv[:, None] * np.ones((4, 2)))
    assert run(sess, tf.where(tf.constant([[True, False], [False, True]]))).tolist() == [[0, 0], [1, 1]]


def test_sort_argsort_tensordot(graph, sess):
    a = [1, 10, 26.9, 2.8, 166.32, 62.3]
    np.testing.assert_allclose(run(sess, tf.sort(a)), [1, 2.8, 10, 26.9, 62.3, 166.32], rtol=1e-6)  # TF doc
    np.testing.assert_allclose(run(sess, tf.sort(a, direction="DESCENDING")), [166.32, 62.3, 26.9, 10, 2.8, 1],
                               rtol=1e-6)  # TF doc
    mat = tf.constant([[3, 2, 1], [2, 1, 3], [1, 3, 2]])
    assert run(sess, tf.sort(mat, axis=-1)).tolist() == [[1, 2, 3]] * 3  # TF doc
    assert run(sess, tf.sort(mat, axis=0)).tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]  # TF doc
    assert run(sess, tf.argsort(a)).tolist() == [0, 3, 1, 2, 5, 4]  # TF doc
    assert run(sess, tf.argsort(a, direction="DESCENDING")).tolist() == [4, 5, 2, 1, 3, 0]  # TF doc
    assert run(sess, tf.sort(tf.constant(np.array([3, 200, 0], np.uint8)))).tolist() == [0, 3, 200]
    with pytest.raises(ValueError, match="direction"):
        tf.sort(a, direction="UP")
    with pytest.raises(TypeError, match="bool"):
        tf.sort([True, False])
    rng = np.random.default_rng(5)
    p, q = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    np.testing.assert_allclose(run(sess, tf.tensordot(p, q, [[1, 2], [1, 0]])), np.tensordot(p, q, [[1, 2], [1, 0]]),
                               rtol=1e-12)
    np.testing.assert_allclose(run(sess, tf.tensordot(p, q[:, :, 0].T, 2)), np.tensordot(p, q[:, :, 0].T, 2),
                               rtol=1e-12)
    check_grad(sess, lambda x: tf.sort(x, axis=0) * np.arange(6.0).reshape(2, 3), rng.standard_normal((2, 3)))


def test_tensor_shape_and_newaxis(graph, sess):
    s = tf.TensorShape([None, 3])
    assert s.as_list() == [None, 3] and s.rank == 2 and not s.is_fully_defined() and s[1] == 3
    assert s == (None, 3) and tf.placeholder(tf.float32, shape=(None, 3)).shape == s
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert s.merge_with([5, None]).as_list() == [5, 3]
    assert tf.TensorShape([2, 3]).num_elements() == 6 and tf.TensorShape(None).rank is None
    assert tf.newaxis is None
    assert run(sess, tf.constant([1, 2])[:, tf.newaxis]).tolist() == [[1], [2]]


# ---- tf.nn ------------------------------------------------------------------------------------

def test_nn_composites(graph, sess):
    logits = tf.constant([1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0])
    labels = tf.constant([0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5])
    np.testing.assert_allclose(run(sess, tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)),
                               [1.3132617, 0.3132617, 0.6931472, 0.3132617, 1.3132617, 0.6931472, 0.6931472],
                               rtol=1e-6)  # TF doc
    np.testing.assert_allclose(run(sess, tf.nn.l2_loss(tf.constant([1.0, 2.0, 3.0]))), 7.0)
    x = np.array([-3.0, -1.0, 0.0, 1.0, 3.0], np.float32)
    np.testing.assert_allclose(run(sess, tf.nn.gelu(x)), [-0.00404951, -0.15865529, 0.0, 0.8413447, 2.9959507],
                               rtol=1e-5, atol=1e-7)  # TF doc
    x64 = x.astype(np.float64)
    tanh_form = 0.5 * x64 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x64 + 0.044715 * x64 ** 3)))
    np.testing.assert_allclose(run(sess, tf.nn.gelu(x, approximate=True)), tanh_form, rtol=1e-5, atol=1e-7)
    data = np.random.default_rng(2).standard_normal((4, 3))
    mean, var = run(sess, *tf.nn.moments(tf.constant(data), axes=[0]))
    np.testing.assert_allclose(mean, data.mean(0), rtol=1e-12)
    np.testing.assert_allclose(var, data.var(0), rtol=1e-12)
    scale, offset = np.array([1.0, 2.0, 0.5]), np.array([0.0, 1.0, -1.0])
    bn = tf.nn.batch_normalization(tf.constant(data), mean, var, offset, scale, 1e-3)
    np.testing.assert_allclose(run(sess, bn), (data - mean) / np.sqrt(var + 1e-3) * scale + offset, rtol=1e-9, atol=1e-12)
    v, i = run(sess, *tf.nn.top_k(tf.constant([[1.0, 3.0, 2.0]]), k=2))
    assert v.tolist() == [[3.0, 2.0]] and i.tolist() == [[1, 2]]
    check_grad(sess, lambda z: tf.nn.sigmoid_cross_entropy_with_logits(labels=np.array([[0.0, 1.0, 0.3]]), logits=z),
               np.array([[-2.0, 0.5, 3.0]]))
    check_grad(sess, lambda z: tf.nn.moments(z, [1])[1], data[:2])


# ---- tf.random --------------------------------------------------------------------------------

def test_random_shuffle_truncated_normal_categorical(graph, sess):
    x = tf.constant(np.arange(20).reshape(10, 2))
    s = tf.random.shuffle(x)
    a, b = run(sess, s), run(sess, s)
    for v in (a, b):
        assert sorted(v[:, 0].tolist()) == list(range(0, 20, 2)) and (v[:, 1] == v[:, 0] + 1).all()
    assert not (a == b).all() or not (a == np.arange(20).reshape(10, 2)).all()  # 1 / 10! to fail by chance
    t = run(sess, tf.random.truncated_normal([20000], stddev=2.0))
    assert np.abs(t).max() <= 4.0 and abs(t.mean()) < 0.05
    logits = tf.math.log([[0.5, 0.5], [0.1, 0.9]])
    draws = run(sess, tf.random.categorical(logits, 4000))
    assert draws.shape == (2, 4000) and draws.dtype == np.int64
    assert abs(draws[0].mean() - 0.5) < 0.05 and abs(draws[1].mean() - 0.9) < 0.03
    assert run(sess, tf.random.categorical([[-1e9, 0.0, -1e9]], 5)).tolist() == [[1] * 5]


def test_random_uniform_integers_and_run_time_shapes(graph, sess):
    ints = run(sess, tf.random.uniform([5000], 2, 7, dtype=tf.int32))
    assert ints.dtype == np.int32 and set(ints.tolist()) == {2, 3, 4, 5, 6}
    with pytest.raises(ValueError, match="maxval"):
        tf.random.uniform([3], dtype=tf.int64)
    x = tf.placeholder(tf.float32, shape=(None, 3))
    u = tf.random.uniform(tf.shape(x), minval=-2.0, maxval=tf.constant(2.0))
    n = tf.random.normal([tf.shape(x)[0], 2000], mean=1.0, stddev=3.0)
    uv, nv = run(sess, u, n, feed={x: np.zeros((4, 3), np.float32)})
    assert uv.shape == (4, 3) and uv.min() >= -2.0 and uv.max() < 2.0 and len(set(uv.ravel().tolist())) == 12
    assert nv.shape == (4, 2000) and abs(nv.mean() - 1.0) < 0.1 and abs(nv.std() - 3.0) < 0.1
    with pytest.raises(NotImplementedError, match="Python ints"):
        tf.random.truncated_normal(tf.shape(x))


def test_sin_cos(graph, sess):
    v = np.array([0.0, 0.5, -2.0, 3.0])
    s, c = run(sess, tf.math.sin(v), tf.math.cos(v))
    np.testing.assert_allclose(s, np.sin(v), rtol=1e-15)
    np.testing.assert_allclose(c, np.cos(v), rtol=1e-15)
    check_grad(sess, lambda z: tf.math.sin(z) * tf.math.cos(z), v.reshape(2, 2))


def test_softmax_over_any_axis(graph, sess):
    v = np.random.default_rng(6).standard_normal((2, 3, 4))
    for axis in (0, 1, -1, 2):
        e = np.exp(v - v.max(axis, keepdims=True))
        want = e / e.sum(axis, keepdims=True)
        got, lg = run(sess, tf.nn.softmax(v, axis=axis), tf.nn.log_softmax(v, axis=axis))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(lg, np.log(want), rtol=1e-12, atol=1e-12)
    check_grad(sess, lambda z: tf.nn.softmax(z, axis=0), v[0])


def test_compat_v1_divide_and_div(graph, sess):
    import weft.compat.v1 as v1
    got = run(sess, v1.divide(7, 2), v1.div(-7, 2), v1.div(7.0, 2.0))
    assert [np.asarray(g).tolist() for g in got] == [3.5, -4, 3.5]  # tf.divide is x / y; tf.div is Python 2's
    assert v1.math.top_k is tf.math.top_k and v1.math.reduce_sum(tf.constant([[1, 2]]), reduction_indices=1,
                                                                 keep_dims=True).shape == (1, 1)


def test_floordiv_and_mod_operators_round_as_python(graph, sess):
    # Python's (and TF's) `//` rounds toward -inf and `%` takes the divisor's sign.
    x = tf.constant([7, -7, 5], dtype=tf.int32)
    y = tf.constant([2.5, -7.5])
    got = sess.run([x % 3, x // 2, 10 % x, -7 // x, y % 2.0, y // 2])
    np.testing.assert_array_equal(got[0], [1, 2, 2])
    np.testing.assert_array_equal(got[1], [3, -4, 2])
    np.testing.assert_array_equal(got[2], [3, -4, 0])
    np.testing.assert_array_equal(got[3], [-1, 1, -2])
    np.testing.assert_allclose(got[4], [0.5, 0.5])
    np.testing.assert_allclose(got[5], [1.0, -4.0])


def test_set_shape_and_ensure_shape_merge_static_shapes_and_check_the_step():
    # TF doc (Tensor.set_shape): the static shape becomes the merge; incompatible is a ValueError.
    ds = tf.data.Dataset.from_tensor_slices(np.arange(24, dtype=np.float32).reshape(4, 6)).batch(2)

    def split(x):
        x = tf.reshape(x, [-1, 3, 2])
        inputs = x[:, :2, :]
        inputs.set_shape([None, 2, None])
        assert inputs.shape.as_list() == [None, 2, 2]
        return inputs
    got = next(iter(ds.map(split)))
    np.testing.assert_array_equal(got.numpy(), np.arange(12, dtype=np.float32).reshape(2, 3, 2)[:, :2])
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, None)
        p.set_shape([None, 3])
        assert p.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match="not compatible"):
            p.set_shape([2])
        e = tf.ensure_shape(tf.compat.v1.placeholder(tf.float32, None), [2, None])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(p * 2, {p: [[1., 2., 3.]]}), [[2., 4., 6.]])
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"not compatible with the ensured \[2,\?\]"):
                sess.run(e, {e.op.inputs[0]: np.zeros([3, 1], np.float32)})
