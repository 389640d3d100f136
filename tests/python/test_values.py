"""TensorFlow 2 style values of graph tensors (weft/_values.py) and weft.function: expected values
are the examples of TensorFlow's API docs (tf.nn.softmax, tf.math.argmax, tf.reduce_sum)."""
import numpy as np
import pytest

import weft as tf


def test_numpy_of_tensors_computed_from_constants():
    np.testing.assert_allclose(tf.nn.softmax([-1, 0., 1.]).numpy(), [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)
    assert tf.math.argmax(tf.constant([2, 20, 30, 3, 6])).numpy() == 2
    x = tf.constant([[1, 1, 1], [1, 1, 1]])
    assert tf.reduce_sum(x).numpy() == 6 and int(tf.reduce_sum(x)) == 6
    np.testing.assert_array_equal(tf.reduce_sum(x, 0).numpy(), [2, 2, 2])
    assert float(tf.constant(2.5) * 2) == 5.0
    np.testing.assert_array_equal(np.asarray(tf.constant([1, 2]) + 1), [2, 3])


def test_a_random_tensor_keeps_its_value():
    r = tf.random.normal([4], seed=3)
    np.testing.assert_array_equal(r.numpy(), r.numpy())


def test_placeholders_and_variables_name_what_is_missing():
    x = tf.placeholder(tf.float32, [None], name="images")
    with pytest.raises(ValueError, match="placeholder 'images'"):
        (x * 2).numpy()

def test_variables_read_in_the_graphs_session_or_the_default_one():
    # TensorFlow 2 style: a variable has its initial value without any Session (TF doc:
    # tf.Variable(3.0) * 2 is 6).
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="w")
        assert (v * 2).numpy() == 6.0
        w = tf.Variable([1.0, 2.0])  # made later: initialized at its first read
        np.testing.assert_array_equal((w + v).numpy(), [4.0, 5.0])
        with tf.Session() as sess:  # a default session holds its own values
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign(10.0))
            assert (v * 2).numpy() == 20.0
        assert (v * 2).numpy() == 6.0


def test_map_functions_still_refuse_numpy():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.float32))
    with pytest.raises(TypeError, match="numpy"):
        ds.map(lambda e: e * float(e.numpy()))


def test_function_runs_as_written_and_checks_its_signature():
    @tf.function
    def double_sum(x):
        return tf.reduce_sum(x * 2)
    assert double_sum(np.ones(3, np.float32)).numpy() == 6.0
    inc = tf.function(lambda x: x + 1, input_signature=[tf.TensorSpec([None], tf.float32)])
    np.testing.assert_array_equal(inc(tf.constant([1., 2.])).numpy(), [2., 3.])
    with pytest.raises(ValueError, match="input_signature"):
        inc(tf.constant([[1.]]))


def test_counts_of_constant_values_infer_their_size():
    # tf.math.confusion_matrix's and tf.math.bincount's documented examples (no num_classes / minlength).
    np.testing.assert_array_equal(tf.math.confusion_matrix([1, 2, 4], [2, 2, 4]).numpy(),
                                  [[0, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 0],
                                   [0, 0, 0, 0, 1]])
    values = tf.constant([1, 1, 2, 3, 2, 4, 4, 5])
    np.testing.assert_array_equal(tf.math.bincount(values).numpy(), [0, 2, 2, 1, 2, 1])
    np.testing.assert_array_equal(tf.math.bincount(values, minlength=8).numpy(), [0, 2, 2, 1, 2, 1, 0, 0])
    labels = tf.placeholder(tf.int32, [None])
    with pytest.raises(ValueError, match="num_classes"):
        tf.math.confusion_matrix(labels, labels)


def test_gradient_tape_over_graph_tensors():
    # TensorFlow's autodiff guide: d(x^2)/dx at 3 is 6; the w, b example with w = ones, b = zeros,
    # x = [[1, 2, 3]]: y = [6, 6], loss = mean(y^2), dl/dy = y, dl/dw = x^T y, dl/db = y.
    x = tf.constant(3.0)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert g.gradient(y, x).numpy() == 6.0
    with pytest.raises(RuntimeError, match="non-persistent"):
        g.gradient(y, x)
    w, b = tf.constant(np.ones((3, 2), np.float32)), tf.constant(np.zeros(2, np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([w, b])  # constants: differentiated once watched, as TF's tape
        loss = tf.reduce_mean((tf.constant([[1., 2., 3.]]) @ w + b) ** 2)
    grads = tape.gradient(loss, {"w": w, "b": b})
    np.testing.assert_allclose(grads["w"].numpy(), [[6, 6], [12, 12], [18, 18]])
    np.testing.assert_allclose(grads["b"].numpy(), [6, 6])
    other = tf.constant(1.0)
    assert tape.gradient(loss, [w, other])[1] is None
    assert tape.gradient(loss, [other], unconnected_gradients="zero")[0].numpy() == 0.0


def test_gradient_tape_differentiates_a_keras_model_called_on_data():
    # An eager tape (weft/_recorder.py): d mean(x @ k + b) / dk = x^T / N, / db = 1.
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(x))
    dk, db = tape.gradient(loss, model.trainable_variables)
    np.testing.assert_allclose(dk.numpy(), [[2.0], [3.0]], rtol=1e-6)
    np.testing.assert_allclose(db.numpy(), [1.0], rtol=1e-6)


def test_tensors_from_one_random_draw_agree_whichever_is_read_first():
    # As eager TF: x is drawn once, and y = 3x + 2 is computed from that draw (TF's "Basic
    # training loops" guide builds its data this way).
    x = tf.random.normal([1000])
    noise = tf.random.uniform([1000])
    y = x * 3.0 + 2.0 + noise
    y_first = y.numpy()
    np.testing.assert_allclose(y_first, x.numpy() * 3.0 + 2.0 + noise.numpy(), rtol=1e-6, atol=1e-6)
    a = tf.random.uniform([50])
    b = a * 2.0
    np.testing.assert_allclose(a.numpy() * 2.0, b.numpy(), rtol=1e-6)


def test_equality_is_elementwise_in_tf2_code_and_identity_in_tf1_graphs(monkeypatch):
    # TF2 (tf.Tensor.__eq__ docs): `==` is tf.math.equal where ops run eagerly or a function is
    # traced; shapes that cannot broadcast give a scalar False; None compares unequal. (TF1 tests
    # earlier in the process may have called disable_eager_execution.)
    monkeypatch.setattr(tf._values, "graph_mode", [False])
    a, b = tf.constant([1, 2]), tf.constant([1, 3])
    np.testing.assert_array_equal((a == b).numpy(), [True, False])
    np.testing.assert_array_equal((a != b).numpy(), [False, True])
    np.testing.assert_array_equal((a == 1).numpy(), [True, False])
    assert not (a == tf.constant([1, 2, 3])).numpy()
    assert (a == None) is False and (a != None) is True  # noqa: E711

    @tf.function
    def accuracy(labels, logits):
        return tf.reduce_mean(tf.cast(tf.argmax(logits, 1) == labels, tf.float32))
    logits = tf.constant([[1., 0, 0], [0, 1, 0], [1, 0, 0]])
    assert accuracy(tf.constant([0, 1, 2], tf.int64), logits).numpy() == pytest.approx(2 / 3)
    # TF1 graphs (legacy graph mode): identity, so tensors stay usable as feed_dict keys.
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2])
        y = x * 2
        assert (x == y) is False and (x != y) is True and {x: 1}[x] == 1
        with tf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, feed_dict={x: [1., 2.]}), [2., 4.])
