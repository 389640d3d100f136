"""tf.einsum, tf.linalg, scatter_nd, segment sums, conv1d, TF2's broadcasting where, shapes from
tensors, and keras.ops. Expected values: numpy (einsum, triangles, convolution as a sum), the
examples of TensorFlow's API docs ("TF doc"), closed forms, and central differences."""
import numpy as np
import pytest

import weft as tf
from weft.keras import ops as kops
from conftest import numeric_grad

RNG = np.random.default_rng(7)

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bqhd,bkhd->bhqk", [(2, 3, 4, 5), (2, 6, 4, 5)]),   # attention logits
    ("bhqk,bkhd->bqhd", [(2, 4, 3, 6), (2, 6, 4, 5)]),   # attention output
    ("abc,cde->abde", [(2, 3, 4), (4, 5, 6)]),           # Keras EinsumDense
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->ji", [(3, 4)]), ("ijk->", [(2, 3, 4)]),
    ("i,j->ij", [(3,), (4,)]), ("i,i->", [(3,), (3,)]), ("ij,j", [(3, 4), (4,)]), ("ij,ij->i", [(3, 4), (3, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("bij,jk->bik", [(1, 3, 4), (4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("bxy,bxz->yz", [(2, 3, 4), (2, 3, 5)]),
    ("b i j , b j k -> b i k", [(2, 3, 4), (2, 4, 5)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(graph, sess, eq, shapes):
    xs = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    got = sess.run(tf.einsum(eq, *[tf.constant(x) for x in xs]))
    want = np.einsum(eq.replace(" ", ""), *xs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_einsum_gradient_by_finite_differences(graph, sess):
    b = RNG.standard_normal((2, 4, 3))
    x = tf.placeholder(tf.float64, (2, 3, 4))
    y = tf.reduce_sum(tf.einsum("bij,bjk->bik", x, tf.constant(b)) ** 2)
    (dx,) = tf.gradients(y, [x])
    x0 = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(sess.run(dx, {x: x0}), numeric_grad(lambda v: sess.run(y, {x: v}), x0), rtol=1e-5)


def test_einsum_unknown_batch_dims(graph, sess):
    q = tf.placeholder(tf.float32, (None, 5, 2, 4))
    k = tf.placeholder(tf.float32, (None, 6, 2, 4))
    s = tf.einsum("bqhd,bkhd->bhqk", q, k)
    assert s.shape == (None, 2, 5, 6)
    q0, k0 = RNG.standard_normal((3, 5, 2, 4)), RNG.standard_normal((3, 6, 2, 4))
    np.testing.assert_allclose(sess.run(s, {q: q0, k: k0}), np.einsum("bqhd,bkhd->bhqk", q0, k0), rtol=1e-4, atol=1e-5)


def test_einsum_bad_equations_name_the_problem(graph):
    a = tf.ones((2, 3))
    with pytest.raises(ValueError, match="names 2 operands, got 1"):
        tf.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="rank 2"):
        tf.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="letter 'j' is 3 in one operand and 4"):
        tf.einsum("ij,jk->ik", a, tf.ones((4, 5)))
    with pytest.raises(ValueError, match="output letter 'z' is in no operand"):
        tf.einsum("ij->z", a)


def test_linalg_band_part_doc_example_and_causal_mask(graph, sess):
    # TF doc: band_part(input, 1, -1) and (2, 1) of the 4x4 matrix with rows [0 1 2 3], [-1 0 1 2], ...
    m = np.array([[0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1], [-3, -2, -1, 0]], np.float32)
    up = [[0, 1, 2, 3], [-1, 0, 1, 2], [0, -1, 0, 1], [0, 0, -1, 0]]
    band = [[0, 1, 0, 0], [-1, 0, 1, 0], [-2, -1, 0, 1], [0, -2, -1, 0]]
    np.testing.assert_array_equal(sess.run(tf.linalg.band_part(m, 1, -1)), up)
    np.testing.assert_array_equal(sess.run(tf.linalg.band_part(m, 2, 1)), band)
    x = tf.placeholder(tf.float32, (None, None))
    np.testing.assert_array_equal(sess.run(tf.linalg.band_part(x, -1, 0), {x: np.ones((3, 4), np.float32)}),
                                  np.tril(np.ones((3, 4))))


def test_linalg_diagonals_trace_matvec(graph, sess):
    m = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    sq = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    dp, tr, dg, sd, mv, mt = sess.run([tf.linalg.diag_part(m), tf.linalg.trace(sq), tf.linalg.diag([1.0, 2.0]),
                                       tf.linalg.set_diag(sq, np.zeros((2, 3), np.float32)),
                                       tf.linalg.matvec(m, np.ones((2, 4), np.float32)), tf.linalg.matrix_transpose(m)])
    np.testing.assert_allclose(dp, np.diagonal(m, axis1=1, axis2=2))
    np.testing.assert_allclose(tr, np.trace(sq, axis1=1, axis2=2), rtol=1e-6)
    np.testing.assert_array_equal(dg, np.diag([1.0, 2.0]))
    np.testing.assert_allclose(sd, sq * (1 - np.eye(3)))
    np.testing.assert_allclose(mv, m.sum(-1), rtol=1e-6)
    np.testing.assert_array_equal(mt, m.transpose(0, 2, 1))
    with pytest.raises(NotImplementedError, match="no matrix decompositions beyond LU"):
        tf.linalg.cholesky(sq)


def test_scatter_nd_doc_examples_and_bad_index(graph, sess):
    # TF doc: scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8]) = [0, 11, 0, 10, 9, 0, 0, 12]
    got = sess.run(tf.scatter_nd([[4], [3], [1], [7]], tf.constant([9, 10, 11, 12], tf.float32), [8]))
    np.testing.assert_array_equal(got, [0, 11, 0, 10, 9, 0, 0, 12])
    dup = sess.run(tf.scatter_nd([[1], [1]], tf.constant([2.0, 3.0]), [3]))
    np.testing.assert_array_equal(dup, [0, 5, 0])  # repeated indices add up (TF doc)
    rows = sess.run(tf.scatter_nd([[0], [2]], tf.constant([[5.0, 5.0], [6.0, 6.0]]), [4, 2]))
    np.testing.assert_array_equal(rows, [[5, 5], [0, 0], [6, 6], [0, 0]])
    # TF doc: tensor_scatter_nd_update([1..8], [[4], [3], [1], [7]], [9, 10, 11, 12]) = [1, 11, 3, 10, 9, 6, 7, 12]
    base = tf.constant([1, 2, 3, 4, 5, 6, 7, 8], tf.float32)
    upd = sess.run(tf.tensor_scatter_nd_update(base, [[4], [3], [1], [7]], tf.constant([9, 10, 11, 12], tf.float32)))
    np.testing.assert_array_equal(upd, [1, 11, 3, 10, 9, 6, 7, 12])
    add = sess.run(tf.tensor_scatter_nd_add(base, [[4], [3], [1], [7]], tf.constant([9, 10, 11, 12], tf.float32)))
    np.testing.assert_array_equal(add, [1, 13, 3, 14, 14, 6, 7, 20])
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        sess.run(tf.scatter_nd([[8]], tf.constant([1.0]), [8]))


def test_segment_sums_and_means(graph, sess):
    # TF doc: segment_sum([[1,2,3,4],[4,3,2,1],[5,6,7,8]], [0,0,1]) = [[5,5,5,5],[5,6,7,8]]
    c = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]], tf.float32)
    s, m = sess.run([tf.math.segment_sum(c, [0, 0, 1]), tf.math.segment_mean(c, [0, 0, 1])])
    np.testing.assert_array_equal(s, [[5, 5, 5, 5], [5, 6, 7, 8]])
    np.testing.assert_array_equal(m, [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]])
    um = sess.run(tf.math.unsorted_segment_mean(tf.constant([1.0, 2.0, 3.0]), [1, 1, 0], 3))
    np.testing.assert_array_equal(um, [3, 1.5, 0])  # an empty segment's mean is 0


def test_conv1d_and_1d_pools_against_numpy(graph, sess):
    x = RNG.standard_normal((2, 7, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4)).astype(np.float32)
    got = sess.run(tf.nn.conv1d(x, w, stride=2, padding="VALID"))
    want = np.stack([np.einsum("nkc,kcf->nf", x[:, t:t + 3], w) for t in range(0, 5, 2)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    seq = np.arange(6, dtype=np.float32).reshape(1, 6, 1)
    mx, av = sess.run([tf.nn.max_pool1d(seq, 2, 2), tf.nn.avg_pool1d(seq, 3, 3, "VALID")])
    np.testing.assert_array_equal(mx.ravel(), [1, 3, 5])
    np.testing.assert_array_equal(av.ravel(), [1, 4])
    with pytest.raises(NotImplementedError, match="NWC only"):
        tf.nn.conv1d(x, w, 1, "SAME", data_format="NCW")


def test_where_broadcasts_as_tf2(graph, sess):
    # TF doc (tf.where): where([True, False, False, True], [1, 2, 3, 4], [100]) = [1, 100, 100, 4]
    got = sess.run(tf.where([True, False, False, True], tf.constant([1.0, 2, 3, 4]), tf.constant([100.0])))
    np.testing.assert_array_equal(got, [1, 100, 100, 4])
    x = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(sess.run(tf.where(x > 2, x, 0.0)), [[0, 0, 0], [3, 4, 5]])
    g, = tf.gradients(tf.reduce_sum(tf.where(x > 2, x * 2.0, 0.0)), [x])
    np.testing.assert_array_equal(sess.run(g), [[0, 0, 0], [2, 2, 2]])


def test_shapes_from_tensors(graph, sess):
    x = tf.placeholder(tf.float32, (None, 6, 32))
    heads = tf.reshape(x, [tf.shape(x)[0], -1, 4, 8])   # the transformer tutorial's split_heads
    assert heads.shape == (None, None, 4, 8)
    back = tf.reshape(tf.transpose(heads, [0, 2, 1, 3]), (tf.shape(x)[0], -1, 32))
    assert back.shape == (None, None, 32)
    z, o, f = tf.zeros([tf.shape(x)[0], 5]), tf.ones(tf.shape(x)), tf.ones(3)
    assert z.shape == (None, 5) and f.shape == (3,)
    x0 = RNG.standard_normal((2, 6, 32)).astype(np.float32)
    h, zz, oo = sess.run([heads, z, o], {x: x0})
    np.testing.assert_array_equal(h, x0.reshape(2, 6, 4, 8))
    assert zz.shape == (2, 5) and not zz.any() and oo.shape == (2, 6, 32) and (oo == 1).all()


def test_keras_ops(graph, sess):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = tf.constant(x)
    out = sess.run([kops.mean(t, axis=0), kops.max(t, axis=1, keepdims=True), kops.concatenate([t, t], axis=1),
                    kops.arange(1, 7, 2), kops.take(t, [0, 2], axis=0), kops.tril(t), kops.triu(t, 1),
                    kops.argmax(t, axis=1), kops.swapaxes(t, 0, 1), kops.where(t > 5, t, 0.0), kops.std(t)])
    want = [x.mean(0), x.max(1, keepdims=True), np.concatenate([x, x], 1), np.arange(1, 7, 2), x[[0, 2]], np.tril(x),
            np.triu(x, 1), x.argmax(1), x.T, np.where(x > 5, x, 0), x.std()]
    for g, w in zip(out, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    assert kops.shape(t) == (3, 4)
    p = tf.placeholder(tf.float32, (None, 4))
    b, four = kops.shape(p)
    assert four == 4 and sess.run(b, {p: np.zeros((5, 4), np.float32)}) == 5
    with pytest.raises(AttributeError, match="keras.ops.fft is not in weft"):
        kops.fft
