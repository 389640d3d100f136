"""tf.random.log_uniform_candidate_sampler, tf.nn.nce_loss and tf.nn.sampled_softmax_loss against
TF's documented formulas: the log-uniform law and expected counts, and the losses recomputed in
numpy from the same sampled classes (fixed through sampled_values)."""
import numpy as np
import pytest

import weft as tf


def p_log_uniform(c, range_max):
    return (np.log(c + 2.0) - np.log(c + 1.0)) / np.log(range_max + 1.0)


def test_log_uniform_candidate_sampler(graph, sess):
    labels = tf.constant([[1], [5]], tf.int64)
    s = tf.random.log_uniform_candidate_sampler(labels, num_true=1, num_sampled=8, unique=True, range_max=20, seed=3)
    cand, tc, sc = sess.run(s)
    assert cand.dtype == np.int64 and cand.shape == (8,) and len(set(cand.tolist())) == 8
    assert cand.min() >= 0 and cand.max() < 20 and tc.shape == (2, 1) and sc.shape == (8,)
    assert ((sc > 0) & (sc <= 1)).all()
    again = sess.run(s)[0]
    assert not np.array_equal(again, cand)  # new draws every run
    w = tf.random.log_uniform_candidate_sampler(labels, 1, 5, False, 20)
    _, tc, sc = sess.run(w)
    np.testing.assert_allclose(tc[:, 0], 5 * p_log_uniform(np.array([1, 5]), 20), rtol=1e-6)
    # TF's word2vec call, its result used as data.
    neg, _, _ = tf.random.log_uniform_candidate_sampler(true_classes=[[3]], num_true=1, num_sampled=4, unique=True,
                                                         range_max=10, seed=42, name="negative_sampling")
    assert len(set(sess.run(neg).tolist())) == 4


def test_nce_and_sampled_softmax_against_numpy(graph, sess):
    rs = np.random.RandomState(0)
    num_classes, dim, batch = 10, 4, 3
    w, b = rs.randn(num_classes, dim), rs.randn(num_classes)
    x = rs.randn(batch, dim)
    labels = np.array([[2], [7], [4]])
    sampled = np.array([0, 4, 9], np.int64)
    tcount = np.full((batch, 1), 0.5)
    scount = np.array([0.8, 0.3, 0.1])
    sv = (tf.constant(sampled), tf.constant(tcount), tf.constant(scount))

    true_logits = np.einsum("bd,bd->b", x, w[labels[:, 0]])[:, None] + b[labels] - np.log(tcount)
    sampled_logits = x @ w[sampled].T + b[sampled] - np.log(scount)
    targets = np.concatenate([np.ones((batch, 1)), np.zeros((batch, 3))], 1)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    nce_ref = (np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-np.abs(logits)))).sum(1)
    got = sess.run(tf.nn.nce_loss(w, b, labels, x, num_sampled=3, num_classes=num_classes, sampled_values=sv))
    np.testing.assert_allclose(got, nce_ref, rtol=1e-10)

    hit = sampled_logits.copy()
    hit[2, 1] += -np.finfo(np.float32).max  # row 2's label 4 was also sampled: an accidental hit
    logits = np.concatenate([true_logits, hit], 1)
    m = logits.max(1, keepdims=True)
    ssm_ref = -(logits[:, 0] - (m[:, 0] + np.log(np.exp(logits - m).sum(1))))
    got = sess.run(tf.nn.sampled_softmax_loss(w, b, labels, x, num_sampled=3, num_classes=num_classes,
                                              sampled_values=sv))
    np.testing.assert_allclose(got, ssm_ref, rtol=1e-10)
    # With the sampler: a word2vec-style step lowers the loss.
    wv = tf.Variable(rs.randn(num_classes, dim) * 0.1)
    bv = tf.Variable(np.zeros(num_classes))
    loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(wv, bv, labels, x, num_sampled=4, num_classes=num_classes))
    gw, gb = tf.gradients(loss, [wv, bv])
    step = [wv.assign_sub(0.5 * gw), bv.assign_sub(0.5 * gb)]
    sess.run(tf.global_variables_initializer())
    full = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[:, 0],
                                                                        logits=tf.matmul(x, wv, transpose_b=True) + bv))
    before = sess.run(full)
    for _ in range(30):
        sess.run(step)
    assert sess.run(full) < before
    with pytest.raises(NotImplementedError, match="no sharded list"):
        tf.nn.nce_loss([w, w], b, labels, x, 3, num_classes)
