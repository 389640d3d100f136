"""TF1's graph-mode dataset iterators (weft/data/_graph_iterator.py): each Session.run that needs
get_next() takes the next element, the end is OutOfRangeError, initializers restart, a
reinitializable iterator switches datasets; as TensorFlow 1's Iterator documents."""
import numpy as np
import pytest

import weft.compat.v1 as tf


@pytest.fixture
def graph():
    g = tf.Graph()
    with g.as_default():
        yield g


def test_one_shot_iterator_takes_one_element_per_run_then_ends(graph):
    ds = tf.data.Dataset.from_tensor_slices((np.arange(5, dtype=np.float32), np.arange(5) * 10)).batch(2)
    x, y = tf.data.make_one_shot_iterator(ds).get_next()
    assert x.dtype == tf.float32 and x.shape[1:] == () and y.dtype == tf.int64
    total = x * 2
    with tf.Session() as sess:
        a, b = sess.run([total, y])  # one element for the whole run
        np.testing.assert_array_equal(a, [0, 2])
        np.testing.assert_array_equal(b, [0, 10])
        np.testing.assert_array_equal(sess.run(x), [2, 3])
        np.testing.assert_array_equal(sess.run(y, feed_dict={x: [9.0]}), [40])  # y still takes the next element
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
            sess.run(x)
        assert sess.run(tf.constant(1.0)) == 1.0  # runs that do not need the iterator are unaffected


def test_initializable_iterator_restarts_and_must_be_initialized(graph):
    ds = tf.data.Dataset.range(3)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="initializer"):
            sess.run(nxt)
        for _ in range(2):
            sess.run(it.initializer)
            seen = []
            while True:
                try:
                    seen.append(int(sess.run(nxt)))
                except tf.errors.OutOfRangeError:
                    break
            assert seen == [0, 1, 2]


def test_reinitializable_iterator_switches_datasets(graph):
    train = tf.data.Dataset.from_tensor_slices(np.ones((4, 2), np.float32)).batch(2)
    val = tf.data.Dataset.from_tensor_slices(np.zeros((3, 2), np.float32)).batch(3)
    it = tf.data.Iterator.from_structure(tf.float32, (None, 2))
    batch = it.get_next()
    assert batch.shape == (None, 2)
    to_train, to_val = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as sess:
        sess.run(to_train)
        np.testing.assert_array_equal(sess.run(tf.reduce_sum(batch)), 4.0)
        sess.run(to_val)
        assert sess.run(batch).shape == (3, 2)
    with pytest.raises(TypeError, match="do not match"):
        it.make_initializer(tf.data.Dataset.range(3))


def test_training_loop_over_a_repeated_dataset(graph):
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(64, 3)).astype(np.float32)
    ys = xs @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    x, y = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices((xs, ys)).batch(16).repeat()).get_next()
    w = tf.Variable(np.zeros((3, 1), np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(300):
            sess.run(step)
        np.testing.assert_allclose(sess.run(w).ravel(), [1.0, -2.0, 0.5], atol=1e-3)
