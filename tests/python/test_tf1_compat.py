"""TF1 graph mode, the weft.compat.v1 namespace: variable scopes and layers, losses, nn and math
composites, dropout with a fed keep_prob, batch normalization, cond, seeds, feeds, flags and gfile
(expected values from closed forms and numpy; TF1's documented behaviour)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import weft
import weft.compat.v1 as tf


def test_variable_scope_get_variable_and_layers():
    g = weft.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        h = tf.layers.dense(x, 3, activation=tf.nn.relu)
        y = tf.layers.dense(h, 2, name="out")
        assert {v.op.name for v in tf.trainable_variables()} == {"dense/kernel", "dense/bias", "out/kernel", "out/bias"}
        with tf.variable_scope("s"):
            a = tf.get_variable("a", [2], initializer=tf.ones_initializer())
        with pytest.raises(ValueError, match="already exists, disallowed"):
            with tf.variable_scope("s"):
                tf.get_variable("a", [2])
        with tf.variable_scope("s", reuse=True):
            assert tf.get_variable("a").op.name == "s/a"
            with pytest.raises(ValueError, match="does not exist"):
                tf.get_variable("b", [2])
        with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
            assert tf.get_variable("a", [2]) == a
            assert tf.get_variable("c", [1]).op.name == "s/c"
        tf.set_random_seed(7)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            k = sess.run(g.get_tensor_by_name("dense/kernel:0"))
            limit = np.sqrt(6.0 / (4 + 3))  # glorot_uniform, TF1's default initializer
            assert k.shape == (4, 3) and np.all(np.abs(k) <= limit) and np.std(k) > 0
            np.testing.assert_array_equal(sess.run(a), [1.0, 1.0])
            assert sess.run(y, {x: np.ones((5, 4), np.float32)}).shape == (5, 2)


def test_set_random_seed_repeats_initializers_and_random_ops():
    def run():
        g = weft.Graph()
        with g.as_default():
            tf.set_random_seed(42)
            w = tf.get_variable("w", [3, 4])
            n = tf.random_normal([5])
            u = tf.random.uniform([2], seed=3)
            with tf.Session(graph=g) as sess:
                sess.run(tf.global_variables_initializer())
                return sess.run([w, n, u])
    a, b = run(), run()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[1][:2], a[2])


def test_dropout_with_a_fed_keep_prob_and_a_training_tensor():
    g = weft.Graph()
    with g.as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 1000])
        keep_prob = tf.placeholder(tf.float32)
        y = tf.nn.dropout(x, keep_prob)
        dx, = tf.gradients(tf.reduce_sum(y * 3.0), [x])
        training = tf.placeholder_with_default(False, shape=())
        z = tf.layers.dropout(x, rate=0.5, training=training)
        with tf.Session(graph=g) as sess:
            xv = np.ones((20, 1000), np.float32)
            yv, dxv = sess.run([y, dx], {x: xv, keep_prob: 0.25})
            assert set(np.unique(yv)) == {0.0, 4.0}                      # kept values scaled by 1 / 0.25
            assert abs((yv != 0).mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / yv.size)
            np.testing.assert_array_equal(dxv, 3.0 * yv)                 # dy * mask / keep_prob
            np.testing.assert_array_equal(sess.run(y, {x: xv, keep_prob: 1.0}), xv)
            np.testing.assert_array_equal(sess.run(z, {x: xv}), xv)       # not training: the identity
            zt = sess.run(z, {x: xv, training: True})
            assert set(np.unique(zt)) == {0.0, 2.0}


def test_batch_normalization_uses_batch_statistics_and_updates_moving_averages():
    xv = np.array([[1.0, 10.0], [2.0, 14.0], [6.0, 12.0]], np.float32)
    mean, var = xv.mean(0), xv.var(0)
    g = weft.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        training = tf.placeholder(tf.bool, [])
        y = tf.layers.batch_normalization(x, momentum=0.9, training=training)
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        assert len(update_ops) == 2
        names = {v.op.name for v in tf.global_variables()}
        assert names == {"batch_normalization/" + n for n in ("gamma", "beta", "moving_mean", "moving_variance")}
        assert {v.op.name for v in tf.trainable_variables()} == {"batch_normalization/gamma", "batch_normalization/beta"}
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            got, _ = sess.run([y, update_ops], {x: xv, training: True})
            np.testing.assert_allclose(got, (xv - mean) / np.sqrt(var + 1e-3), rtol=1e-5, atol=1e-6)
            mm = 0.1 * mean                                   # 0.9 * 0 + 0.1 * batch mean
            mv = 0.9 * 1.0 + 0.1 * var * 3 / 2                # the unbiased batch variance
            np.testing.assert_allclose(sess.run(y, {x: xv, training: False}), (xv - mm) / np.sqrt(mv + 1e-3), rtol=1e-5, atol=1e-6)


def test_cond_picks_a_branch_and_runs_only_its_state_changes():
    g = weft.Graph()
    with g.as_default():
        p = tf.placeholder(tf.bool, [])
        x = tf.placeholder(tf.float32, [3])
        out = tf.cond(p, lambda: (x * 2.0, {"s": tf.reduce_sum(x)}), lambda: (x - 1.0, {"s": tf.constant(0.0)}))
        dx, = tf.gradients(out[0], [x])
        v = tf.Variable(np.zeros(3, np.float32))
        assigned = tf.cond(p, lambda: v.assign(x), lambda: x)  # the Assign runs only when p holds
        with pytest.raises(ValueError, match="different structures"):
            tf.cond(p, lambda: [x, x], lambda: x)
        assert tf.cond(True, lambda: 1, lambda: 2) == 1
        with tf.Session(graph=g) as sess:
            xv = np.array([1.0, 2.0, 3.0], np.float32)
            a, d = sess.run([out, dx], {p: True, x: xv})
            np.testing.assert_array_equal(a[0], [2.0, 4.0, 6.0])
            assert a[1]["s"] == 6.0 and d.tolist() == [2.0, 2.0, 2.0]
            b, d = sess.run([out, dx], {p: False, x: xv})
            np.testing.assert_array_equal(b[0], [0.0, 1.0, 2.0])
            assert b[1]["s"] == 0.0 and d.tolist() == [1.0, 1.0, 1.0]
            sess.run(v.initializer)
            sess.run(assigned, {p: False, x: xv})
            np.testing.assert_array_equal(sess.run(v), [0.0, 0.0, 0.0])
            sess.run(assigned, {p: True, x: xv})
            np.testing.assert_array_equal(sess.run(v), xv)


def test_tf1_composites_match_numpy():
    a = np.array([[1.0, -2.0, 0.0], [3.0, 0.5, -1.0]], np.float32)
    g = weft.Graph()
    with g.as_default(), tf.Session(graph=g) as sess:
        t = tf.constant(a)
        mean, var = tf.nn.moments(t, axes=[0])
        got = sess.run({
            "stack": tf.stack([t, t * 2.0], axis=1), "unstack": tf.unstack(t, axis=1), "log1p": tf.log1p(tf.abs(t)),
            "nonzero": tf.count_nonzero(t, axis=1), "lse": tf.reduce_logsumexp(t, axis=1), "norm": tf.norm(t),
            "mean": mean, "var": var, "l2n": tf.nn.l2_normalize(t, axis=1), "selu": tf.nn.selu(t),
            "bn": tf.nn.batch_normalization(t, mean, var, 1.0, 2.0, 1e-3),
            "xwb": tf.nn.xw_plus_b(t, tf.constant(np.ones((3, 1), np.float32)), tf.constant([0.5])),
            "nan": tf.is_nan(t / t)})
    np.testing.assert_allclose(got["stack"], np.stack([a, 2 * a], axis=1))
    for i, u in enumerate(got["unstack"]):
        np.testing.assert_allclose(u, a[:, i])
    np.testing.assert_allclose(got["log1p"], np.log1p(np.abs(a)), rtol=1e-6)
    assert got["nonzero"].tolist() == [2, 3]
    np.testing.assert_allclose(got["lse"], np.log(np.exp(a).sum(1)), rtol=1e-6)
    np.testing.assert_allclose(got["norm"], np.sqrt((a ** 2).sum()), rtol=1e-6)
    np.testing.assert_allclose(got["mean"], a.mean(0), rtol=1e-6)
    np.testing.assert_allclose(got["var"], a.var(0), rtol=1e-6)
    np.testing.assert_allclose(got["l2n"], a / np.sqrt((a ** 2).sum(1, keepdims=True)), rtol=1e-6)
    selu = 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 * (np.exp(a) - 1))
    np.testing.assert_allclose(got["selu"], selu, rtol=1e-6)
    np.testing.assert_allclose(got["bn"], (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-3) * 2.0 + 1.0, rtol=1e-5)
    np.testing.assert_allclose(got["xwb"], a.sum(1, keepdims=True) + 0.5, rtol=1e-6)
    assert got["nan"].tolist() == [[False, False, True], [False, False, False]]


def test_clipping_matches_closed_forms():
    g = weft.Graph()
    with g.as_default(), tf.Session(graph=g) as sess:
        a, b = np.array([3.0, 4.0], np.float32), np.array([12.0], np.float32)
        (ca, cb), norm = tf.clip_by_global_norm([tf.constant(a), tf.constant(b)], 6.5)
        got = sess.run([ca, cb, norm, tf.clip_by_value(tf.constant(a), 3.5, 3.8), tf.clip_by_norm(tf.constant(a), 2.5)])
    np.testing.assert_allclose(got[0], a * 6.5 / 13.0, rtol=1e-6)
    np.testing.assert_allclose(got[1], b * 6.5 / 13.0, rtol=1e-6)
    np.testing.assert_allclose(got[2], 13.0, rtol=1e-6)
    np.testing.assert_allclose(got[3], [3.5, 3.8], rtol=1e-6)
    np.testing.assert_allclose(got[4], a / 2.0, rtol=1e-6)


def test_losses_match_closed_forms():
    labels = np.array([[1.0, 0.0], [0.0, 2.0]], np.float32)
    pred = np.array([[0.5, 1.0], [1.0, 1.0]], np.float32)
    logits = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 0.3]], np.float32)
    classes = np.array([0, 2], np.int32)
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    z = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]], np.float32)
    g = weft.Graph()
    with g.as_default(), tf.Session(graph=g) as sess:
        got = sess.run([tf.losses.mean_squared_error(labels, pred), tf.losses.absolute_difference(labels, pred),
                        tf.losses.mean_squared_error(labels, pred, weights=2.0),
                        tf.losses.sparse_softmax_cross_entropy(classes, logits),
                        tf.losses.softmax_cross_entropy(np.eye(3, dtype=np.float32)[classes], logits),
                        tf.losses.sigmoid_cross_entropy(z, logits),
                        tf.losses.huber_loss(labels, pred)])
    err = pred - labels
    sig = 1 / (1 + np.exp(-logits))
    huber = np.where(np.abs(err) <= 1, 0.5 * err ** 2, np.abs(err) - 0.5)
    want = [np.mean(err ** 2), np.mean(np.abs(err)), 2 * np.mean(err ** 2), -np.mean(logp[[0, 1], classes]),
            -np.mean(logp[[0, 1], classes]), np.mean(-z * np.log(sig) - (1 - z) * np.log(1 - sig)), np.mean(huber)]
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_feeds_are_converted_within_their_kind_and_v1_spellings():
    g = weft.Graph()
    with g.as_default():
        x = tf.placeholder("float", [None, 2])          # TF1's "float" is float32
        n = tf.placeholder(tf.int32, [None])
        s = tf.reduce_sum(x, reduction_indices=1, keep_dims=True)
        m = tf.argmax(x, dimension=1)
        with pytest.raises(ValueError, match="both 'axis' and 'reduction_indices'"):
            tf.reduce_sum(x, axis=0, reduction_indices=1)
        with tf.Session(graph=g) as sess:
            xv = np.array([[1.0, 3.0], [4.0, 2.0]])      # float64, as numpy makes it
            got_s, got_m = sess.run([s, m], {x: xv})
            assert got_s.dtype == np.float32 and got_s.tolist() == [[4.0], [6.0]] and got_m.tolist() == [1, 0]
            assert sess.run(n * 2, {n: np.array([1, 2], np.int64)}).tolist() == [2, 4]
            with pytest.raises(weft.errors.InvalidArgumentError, match="float64"):
                sess.run(n * 2, {n: np.array([1.5, 2.0])})


def test_app_run_parses_flags_and_gfile(tmp_path):
    script = """
import weft.compat.v1 as tf
flags = tf.app.flags
flags.DEFINE_string("job_name", "", "ps or worker")
flags.DEFINE_integer("task_index", 0, "task")
flags.DEFINE_boolean("sync", True, "sync")
flags.DEFINE_float("lr", 0.1, "rate")
FLAGS = flags.FLAGS
def main(argv):
    d = argv[1]
    if tf.gfile.Exists(d):
        tf.gfile.DeleteRecursively(d)
    tf.gfile.MakeDirs(d + "/sub")
    print(argv[1:], FLAGS.job_name, FLAGS.task_index, FLAGS.sync, FLAGS.lr, tf.gfile.ListDirectory(d))
if __name__ == "__main__":
    tf.app.run()
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "d"), "--job_name=ps", "--task_index", "2",
                          "--nosync", "--lr=0.5"], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['%s'] ps 2 False 0.5 ['sub']" % (tmp_path / "d")


def test_streaming_metrics_accumulate_over_batches_in_local_variables():
    g = weft.Graph()
    with g.as_default():
        y = tf.placeholder(tf.int64, [None])
        p = tf.placeholder(tf.int64, [None])
        v = tf.placeholder(tf.float32, [None])
        acc, acc_op = tf.metrics.accuracy(labels=y, predictions=p)
        mean, mean_op = tf.metrics.mean(v, weights=tf.constant([1.0, 3.0]))
        prec, prec_op = tf.metrics.precision(labels=y, predictions=p)
        rec, rec_op = tf.metrics.recall(labels=y, predictions=p)
        w = tf.Variable(1.0, name="w")
        assert {x.op.name for x in tf.local_variables()} >= {"accuracy/total", "accuracy/count"}
        assert [x.op.name for x in tf.global_variables()] == ["w"]          # not checkpointed
        with tf.Session(graph=g) as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            assert sess.run(acc) == 0.0                                     # nothing seen yet: 0, not NaN
            sess.run([acc_op, prec_op, rec_op], {y: [1, 0, 1], p: [1, 1, 1]})
            sess.run([acc_op, prec_op, rec_op], {y: [0, 1], p: [0, 0]})
            sess.run(mean_op, {v: [2.0, 4.0]})
            sess.run(mean_op, {v: [0.0, 8.0]})
            np.testing.assert_allclose(sess.run([acc, mean, prec, rec]),
                                       [3 / 5, (2 + 12 + 0 + 24) / 8, 2 / 3, 2 / 3], rtol=1e-6)
            sess.run(tf.local_variables_initializer())                      # a reset, as in TF
            assert sess.run(acc) == 0.0 and sess.run(w) == 1.0
