"""tf.debugging checks (at once at top level, an Assert op in functions and TF1 graphs) and the
keras.backend tensor functions. Expected values: TF's API docs, Keras 2's backend formulas
(closed forms written out here) or numpy."""
import numpy as np
import pytest

import weft as tf
from weft.keras import backend as K


@pytest.fixture
def tf2(monkeypatch):
    monkeypatch.setattr(tf._values, "graph_mode", [False])  # TF1 tests may have disabled eager


def test_asserts_fail_at_once_at_top_level_naming_the_values(tf2):
    x = tf.constant([1, 2, 3])
    assert tf.debugging.assert_equal(x, [1, 2, 3]) is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels differ: Condition x == y .*\[1 2 4\]"):
        tf.debugging.assert_equal(x, [1, 2, 4], message="labels differ")
    tf.debugging.assert_less(x, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="x > 0"):
        tf.debugging.assert_positive(x - 1)
    tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.1]))
    with pytest.raises(ValueError, match="must have rank 2. Received rank 1"):
        tf.debugging.assert_rank(x, 2)
    with pytest.raises(TypeError, match="must be of type"):
        tf.debugging.assert_type(x, tf.float32)
    with pytest.raises(ValueError, match="dimension 'N' is 2 in zeros:0 but 3 elsewhere"):
        tf.debugging.assert_shapes([(x, ["N"]), (tf.zeros([2, 4]), ["N", "D"])])


def test_asserts_run_with_every_call_of_a_function_and_as_control_inputs_in_tf1():
    @tf.function
    def double(a):
        tf.debugging.assert_non_negative(a, message="a must be >= 0")
        return a * 2
    np.testing.assert_array_equal(double(np.array([1., 2.], np.float32)).numpy(), [2., 4.])
    with pytest.raises(tf.errors.InvalidArgumentError, match="a must be >= 0: Condition x >= 0"):
        double(np.array([-1., 2.], np.float32))
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None])
        with tf.control_dependencies([tf.debugging.assert_less(p, 5.0)]):
            y = tf.identity(p)
        z = tf.debugging.check_numerics(p, "bad values")
        with tf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {p: [1., 2.]}), [1., 2.])
            with pytest.raises(tf.errors.InvalidArgumentError, match="Condition x < y"):
                sess.run(y, {p: [1., 9.]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="bad values"):
                sess.run(z, {p: [1., np.nan]})


def test_keras_backend_functions_match_their_closed_forms(tf2):
    x = tf.constant([[1., -2.], [3., 4.]])
    v = np.array([[1., -2.], [3., 4.]])
    assert K.mean(x).numpy() == pytest.approx(1.5)
    np.testing.assert_allclose(K.sum(x, axis=1).numpy(), [-1., 7.])
    np.testing.assert_allclose(K.max(x, 0, keepdims=True).numpy(), [[3., 4.]])
    assert K.std(x).numpy() == pytest.approx(np.std(v), rel=1e-6)  # population std
    np.testing.assert_allclose(K.clip(x, 0., 2.).numpy(), np.clip(v, 0, 2))
    np.testing.assert_allclose(K.relu(x, alpha=0.1, max_value=3.).numpy(), [[1., -0.2], [3., 3.]], rtol=1e-6)
    np.testing.assert_allclose(K.dot(x, x).numpy(), v @ v)
    assert K.batch_dot(tf.ones([2, 3, 4]), tf.ones([2, 4, 5])).shape == (2, 3, 5)
    np.testing.assert_allclose(K.repeat_elements(x, 2, 1).numpy(), np.repeat(v, 2, axis=1))
    np.testing.assert_allclose(K.switch(x > 0, x, -x).numpy(), np.abs(v))
    # Keras 2: -(t log(p + eps) + (1 - t) log(1 - p + eps)) with p clipped to [eps, 1 - eps].
    np.testing.assert_allclose(K.binary_crossentropy(tf.constant([1., 0.]), tf.constant([0.9, 0.2])).numpy(),
                               [-np.log(0.9 + 1e-7), -np.log(0.8 + 1e-7)], rtol=1e-5)
    # p normalized over the last axis first: [0.2, 0.6] -> 0.75 for the true class.
    np.testing.assert_allclose(K.categorical_crossentropy(tf.constant([[0., 1.]]), tf.constant([[0.2, 0.6]])).numpy(),
                               [-np.log(0.75)], rtol=1e-6)
    np.testing.assert_allclose(K.sparse_categorical_crossentropy(tf.constant([1]), tf.constant([[0.25, 0.75]])).numpy(),
                               [-np.log(0.75)], rtol=1e-6)
    assert K.int_shape(x) == (2, 2) and K.ndim(x) == 2 and K.dtype(x) == "float32" and K.count_params(x) == 4
    np.testing.assert_array_equal(K.eval(K.variable([1., 2.])), [1., 2.])


def test_a_custom_loss_and_metric_written_with_keras_backend_trains():
    def rmse(y_true, y_pred):
        return K.sqrt(K.mean(K.square(y_pred - y_true), axis=-1))
    rng = np.random.default_rng(0)
    x = rng.random((128, 3)).astype("float32")
    y = (x @ np.array([[1.], [-2.], [0.5]], np.float32)).astype("float32")
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
    m.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=rmse, metrics=[rmse])
    h = m.fit(x, y, epochs=5, batch_size=16, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    # the metric is the loss function itself: the same value per epoch
    np.testing.assert_allclose(h.history["rmse"], h.history["loss"], rtol=1e-5)
