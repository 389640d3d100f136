"""keras.layers.Discretization and CategoryEncoding against Keras' docstring examples (marked
"Keras doc") and numpy; in models, on data, and with count_weights."""
import numpy as np
import pytest

import weft as tf

X = np.array([[-1.5, 1.0, 3.4, .5], [0.0, 3.0, 1.3, 0.0]])


def test_discretization_boundaries_and_adapt():
    layer = tf.keras.layers.Discretization(bin_boundaries=[0., 1., 2.])
    np.testing.assert_array_equal(np.asarray(layer(X)), [[0, 2, 3, 1], [1, 3, 2, 1]])  # Keras doc
    learned = tf.keras.layers.Discretization(num_bins=4, epsilon=0.01)
    learned.adapt(X)
    np.testing.assert_array_equal(np.asarray(learned(X)), [[0, 2, 3, 1], [1, 3, 2, 1]])  # Keras doc
    np.testing.assert_allclose(learned.bin_boundaries, np.quantile(X, [0.25, 0.5, 0.75]))
    model = tf.keras.Sequential([tf.keras.Input((4,)),
                                 tf.keras.layers.Discretization(bin_boundaries=[0., 1., 2.], output_mode="one_hot")])
    got = model.predict(X.astype(np.float32), verbose=0)
    assert got.shape == (2, 4, 4)
    np.testing.assert_array_equal(got.argmax(-1), [[0, 2, 3, 1], [1, 3, 2, 1]])
    counts = tf.keras.layers.Discretization(bin_boundaries=[0., 1., 2.], output_mode="count")(X)
    np.testing.assert_array_equal(np.asarray(counts), [[1, 1, 1, 1], [0, 2, 1, 1]])
    with pytest.raises(ValueError, match="exactly one of bin_boundaries and num_bins"):
        tf.keras.layers.Discretization()
    with pytest.raises(ValueError, match="call adapt"):
        tf.keras.layers.Discretization(num_bins=3)(X)


def test_category_encoding_modes_and_count_weights():
    one = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")
    np.testing.assert_array_equal(np.asarray(one([3, 2, 0, 1])), np.eye(4)[[3, 2, 0, 1]])  # Keras doc
    multi = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
    np.testing.assert_array_equal(np.asarray(multi([[0, 1], [0, 0], [1, 2], [3, 1]])),
                                  [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]])  # Keras doc
    count = tf.keras.layers.CategoryEncoding(num_tokens=4, output_mode="count")
    np.testing.assert_allclose(np.asarray(count([[0, 1], [0, 0], [1, 2], [3, 1]],
                                                count_weights=[[.1, .2], [.1, .1], [.2, .3], [.4, .2]])),
                               [[.1, .2, 0, 0], [.2, 0, 0, 0], [0, .2, .3, 0], [0, .2, 0, .4]], rtol=1e-6)  # Keras doc
    np.testing.assert_allclose(np.asarray(count([[0, 1], [0, 0]], count_weights=[[2., 3.], [1., 7.]])),
                               [[2, 3, 0, 0], [8, 0, 0, 0]])  # each call reads its own weights
    np.testing.assert_array_equal(np.asarray(count([[0, 0], [3, 3]])), [[2, 0, 0, 0], [0, 0, 0, 2]])
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.CategoryEncoding(5, output_mode="multi_hot"),
                                 tf.keras.layers.Dense(1)])
    assert model.predict(np.array([[0, 4, 4], [1, 2, 3]], np.float32), verbose=0).shape == (2, 1)
    with pytest.raises(ValueError, match="output_mode must be"):
        tf.keras.layers.CategoryEncoding(4, output_mode="tf_idf")
    with pytest.raises(ValueError, match="count_weights is only for output_mode='count'"):
        multi([[0, 1]], count_weights=[[1.0, 1.0]])
