"""tf.math segment reductions, searchsorted and histograms, and tf.linalg inverses, determinants
and solvers, against numpy (np.linalg, closed forms) and TensorFlow's docstring examples (marked
"TF doc"); gradients against finite differences or their closed forms."""
import numpy as np
import pytest

import weft as tf


def test_segment_max_min_prod_docstring_examples(graph, sess):
    u = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
    ids = tf.constant([0, 1, 0])
    assert sess.run(tf.math.unsorted_segment_max(u, ids, num_segments=2)).tolist() == [[4, 3, 3, 4], [5, 6, 7, 8]]
    assert sess.run(tf.math.unsorted_segment_min(u, ids, num_segments=2)).tolist() == [[1, 2, 2, 1], [5, 6, 7, 8]]
    assert sess.run(tf.math.unsorted_segment_prod(u, ids, num_segments=2)).tolist() == \
        [[4, 6, 6, 4], [5, 6, 7, 8]]  # TF doc (all three)
    c = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    sorted_ids = tf.constant([0, 0, 1])
    assert sess.run(tf.math.segment_max(c, sorted_ids)).tolist() == [[4, 3, 3, 4], [5, 6, 7, 8]]  # TF doc
    assert sess.run(tf.math.segment_min(c, sorted_ids)).tolist() == [[1, 2, 2, 1], [5, 6, 7, 8]]  # TF doc
    assert sess.run(tf.math.segment_prod(c, sorted_ids)).tolist() == [[4, 6, 6, 4], [5, 6, 7, 8]]  # TF doc
    # An empty segment: the dtype's lowest value for max (TF's rule), 1 for prod.
    got = sess.run(tf.math.unsorted_segment_max(tf.constant([1.0, 2.0]), [0, 0], 2))
    assert got[0] == 2.0 and got[1] == np.finfo(np.float32).min
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    np.testing.assert_allclose(sess.run(tf.math.unsorted_segment_sqrt_n(x, [0, 0, 1], 3)),
                               [[4 / np.sqrt(2), 6 / np.sqrt(2)], [5, 6], [0, 0]], rtol=1e-6)


def test_segment_gradients(graph, sess):
    data = tf.constant([3.0, 1.0, 3.0, 2.0, 0.0, 5.0])
    ids = [0, 0, 0, 1, 2, 2]
    g_max, = tf.gradients(tf.reduce_sum(tf.math.unsorted_segment_max(data, ids, 3)), [data])
    g_prod, = tf.gradients(tf.reduce_sum(tf.math.unsorted_segment_prod(data, ids, 3)), [data])
    g_min, = tf.gradients(tf.reduce_sum(tf.math.segment_min(data, ids)), [data])
    gm, gp, gn = sess.run([g_max, g_prod, g_min])
    np.testing.assert_allclose(gm, [0.5, 0, 0.5, 1, 0, 1])  # ties share the gradient (TF)
    np.testing.assert_allclose(gp, [3, 9, 3, 1, 5, 0])       # product of the others; x = 0 gets them
    np.testing.assert_allclose(gn, [0, 1, 0, 1, 1, 0])


def test_searchsorted_and_histograms(graph, sess):
    seq = [[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]]
    vals = [[2, 4, 9], [0, 2, 6]]
    assert sess.run(tf.searchsorted(seq, vals)).tolist() == [[1, 2, 2], [0, 1, 5]]  # TF doc
    assert sess.run(tf.searchsorted(seq, vals, side="right")).tolist() == [[1, 2, 4], [0, 2, 5]]
    s = np.sort(np.random.RandomState(0).rand(50))
    v = np.random.RandomState(1).rand(20)
    got = sess.run(tf.searchsorted(s, v, out_type=tf.int64))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.searchsorted(s, v, side="left"))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        tf.searchsorted(seq, vals, side="middle")
    new_values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]
    assert sess.run(tf.histogram_fixed_width(new_values, [0.0, 5.0], nbins=5)).tolist() == [2, 1, 1, 0, 2]  # TF doc
    assert sess.run(tf.histogram_fixed_width_bins(new_values, [0.0, 5.0], nbins=5)).tolist() == \
        [0, 0, 1, 2, 4, 4]  # TF doc


def test_inverse_determinant_slogdet(graph, sess):
    rs = np.random.RandomState(2)
    a = rs.randn(3, 4, 4) + 4 * np.eye(4)
    inv, det, (sign, logabs) = sess.run([tf.linalg.inv(a), tf.linalg.det(a), tf.linalg.slogdet(a)])
    np.testing.assert_allclose(inv, np.linalg.inv(a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(det, np.linalg.det(a), rtol=1e-10)
    ref_sign, ref_log = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign, ref_sign)
    np.testing.assert_allclose(logabs, ref_log, rtol=1e-10)
    np.testing.assert_allclose(sess.run(tf.linalg.inv(a, adjoint=True)), np.linalg.inv(np.swapaxes(a, 1, 2)),
                               rtol=1e-10, atol=1e-12)
    f32 = sess.run(tf.linalg.inv(a.astype(np.float32)))
    assert f32.dtype == np.float32
    spd = a[0] @ a[0].T
    np.testing.assert_allclose(sess.run(tf.linalg.logdet(spd)), np.log(np.linalg.det(spd)), rtol=1e-10)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Input is not invertible"):
        sess.run(tf.linalg.inv(np.array([[1.0, 2.0], [2.0, 4.0]])))
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be square matrices"):
        tf.linalg.det(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="float32 or float64"):
        tf.linalg.inv(np.eye(2, dtype=np.int32))


def test_solvers(graph, sess):
    rs = np.random.RandomState(3)
    a = rs.randn(2, 3, 3) + 3 * np.eye(3)
    b = rs.randn(2, 3, 2)
    np.testing.assert_allclose(sess.run(tf.linalg.solve(a, b)), np.linalg.solve(a, b), rtol=1e-10)
    np.testing.assert_allclose(sess.run(tf.linalg.solve(a, b, adjoint=True)),
                               np.linalg.solve(np.swapaxes(a, 1, 2), b), rtol=1e-10)
    low = np.tril(a)
    np.testing.assert_allclose(sess.run(tf.linalg.triangular_solve(a, b, lower=True)), np.linalg.solve(low, b),
                               rtol=1e-10)
    np.testing.assert_allclose(sess.run(tf.linalg.triangular_solve(a, b, lower=False)),
                               np.linalg.solve(np.triu(a), b), rtol=1e-10)
    # lstsq: overdetermined (least squares) and underdetermined (minimum norm), and with an L2 penalty.
    tall, rhs = rs.randn(6, 3), rs.randn(6, 2)
    np.testing.assert_allclose(sess.run(tf.linalg.lstsq(tall, rhs)), np.linalg.lstsq(tall, rhs, rcond=None)[0],
                               rtol=1e-8)
    wide, rhs2 = rs.randn(2, 5), rs.randn(2, 1)
    np.testing.assert_allclose(sess.run(tf.linalg.lstsq(wide, rhs2)), np.linalg.lstsq(wide, rhs2, rcond=None)[0],
                               rtol=1e-8)
    ridge = np.linalg.solve(tall.T @ tall + 0.5 * np.eye(3), tall.T @ rhs)
    np.testing.assert_allclose(sess.run(tf.linalg.lstsq(tall, rhs, l2_regularizer=0.5)), ridge, rtol=1e-10)
    with pytest.raises(ValueError, match=r"matrix \[2,3,3\] and rhs \[2,4,2\]"):
        tf.linalg.solve(a, np.zeros((2, 4, 2)))


def test_linalg_gradients_closed_forms(graph, sess):
    rs = np.random.RandomState(4)
    a_val = rs.randn(3, 3) + 3 * np.eye(3)
    b_val = rs.randn(3, 1)
    a, b = tf.constant(a_val), tf.constant(b_val)
    inv_t = np.linalg.inv(a_val).T
    g_det, = tf.gradients(tf.linalg.det(a), [a])
    g_log, = tf.gradients(tf.linalg.slogdet(a)[1], [a])
    g_inv, = tf.gradients(tf.reduce_sum(tf.linalg.inv(a)), [a])
    g_sa, g_sb = tf.gradients(tf.reduce_sum(tf.linalg.solve(a, b)), [a, b])
    gd, gl, gi, gsa, gsb = sess.run([g_det, g_log, g_inv, g_sa, g_sb])
    np.testing.assert_allclose(gd, np.linalg.det(a_val) * inv_t, rtol=1e-10)  # d det / dA = det A^-T
    np.testing.assert_allclose(gl, inv_t, rtol=1e-10)
    ones = np.ones((3, 3))
    np.testing.assert_allclose(gi, -inv_t @ ones @ inv_t, rtol=1e-10)  # -A^-T 1 A^-T
    x = np.linalg.solve(a_val, b_val)
    db = np.linalg.solve(a_val.T, np.ones((3, 1)))
    np.testing.assert_allclose(gsb, db, rtol=1e-10)
    np.testing.assert_allclose(gsa, -db @ x.T, rtol=1e-10)


def test_band_part_is_the_op_with_tensors_and_gradient(graph, sess):
    x = np.arange(16, dtype=np.float32).reshape(4, 4) - 5
    got = sess.run(tf.linalg.band_part(x, 1, -1))  # TF doc's band rule: i - j <= 1, any j - i
    np.testing.assert_array_equal(got, np.triu(x, -1))
    lo = tf.placeholder(tf.int64, shape=())
    got = sess.run(tf.linalg.band_part(x, lo, 0), feed_dict={lo: 0})
    np.testing.assert_array_equal(got, np.diag(np.diag(x)))
    xt = tf.constant(x)
    g, = tf.gradients(tf.reduce_sum(tf.linalg.band_part(xt, -1, 0)), [xt])
    np.testing.assert_array_equal(sess.run(g), np.tril(np.ones((4, 4))))


def test_cumulative_logsumexp_against_numpy_and_gradient(graph, sess):
    x = np.array([[-1000.0, 0.0, 1.0, 2.0], [3.0, -5.0, 700.0, 1.0]])

    def ref(v, axis, exclusive=False, reverse=False):
        v = np.moveaxis(v, axis, -1)
        if reverse:
            v = v[..., ::-1]
        out = np.logaddexp.accumulate(v, axis=-1)
        if exclusive:
            out = np.concatenate([np.full(out[..., :1].shape, -np.inf), out[..., :-1]], -1)
        if reverse:
            out = out[..., ::-1]
        return np.moveaxis(out, -1, axis)
    for axis in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                got = sess.run(tf.math.cumulative_logsumexp(x, axis=axis, exclusive=exclusive, reverse=reverse))
                np.testing.assert_allclose(got, ref(x, axis, exclusive, reverse), rtol=1e-12)
    xv = np.array([0.5, -1.0, 2.0, 0.25])
    xt = tf.constant(xv)
    g, = sess.run(tf.gradients(tf.reduce_sum(tf.math.cumulative_logsumexp(xt)), [xt]))
    # d/dx_j sum_i lse(x_0..x_i) = sum_{i >= j} exp(x_j - lse_i)
    lse = np.logaddexp.accumulate(xv)
    np.testing.assert_allclose(g, [sum(np.exp(xv[j] - lse[i]) for i in range(j, 4)) for j in range(4)], rtol=1e-12)


def test_bincount_axis_and_binary_output(graph, sess):
    data = np.array([[1, 2, 3, 0], [0, 0, 1, 2]], dtype=np.int32)
    assert sess.run(tf.math.bincount(data, axis=-1)).tolist() == [[1, 1, 1, 1], [2, 1, 1, 0]]  # TF doc
    assert sess.run(tf.math.bincount(data, axis=-1, binary_output=True)).tolist() == \
        [[1, 1, 1, 1], [1, 1, 1, 0]]  # TF doc
    values = np.array([1, 1, 2, 3, 2, 4, 4, 5])
    assert sess.run(tf.math.bincount(values)).tolist() == [0, 2, 2, 1, 2, 1]  # TF doc
    weights = np.array([1, 5, 0, 1, 0, 5, 4, 5])
    assert sess.run(tf.math.bincount(values, weights=weights)).tolist() == [0, 6, 0, 1, 9, 5]  # TF doc
    with pytest.raises(ValueError, match="axis must be None, 0 or -1"):
        tf.math.bincount(data, axis=1)
