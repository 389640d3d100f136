"""The sequence pieces as TensorFlow programs use them: keras.layers.Embedding,
keras.layers.MultiHeadAttention (Keras' call arguments, masks, causal), tf.nn.embedding_lookup and
tf.math.unsorted_segment_sum. Expected values come from TensorFlow's documentation, closed forms,
or TensorFlow 2.21 kept as data in tests/train/golden/attention_tf.json (made by
make_attention_tf.py beside it)."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft import keras
from weft.keras import layers

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "train", "golden", "attention_tf.json")


def golden():
    with open(GOLDEN) as f:
        return json.load(f)


def test_embedding_rows_shapes_and_bad_ids():
    emb = layers.Embedding(input_dim=5, output_dim=2, input_length=3)  # input_length: Keras 2's, ignored
    ids = keras.Input(shape=(3,))
    model = keras.Model(ids, emb(ids))
    assert model.output_shape == (None, 3, 2)
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    model.compile(loss="mse")  # weft creates the weights' values when the model compiles
    emb.set_weights([table])
    got = model.predict(np.array([[4, 0, 2], [1, 1, 3]]), verbose=0)
    np.testing.assert_array_equal(got, table[[[4, 0, 2], [1, 1, 3]]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[4\] = 5 is out of range \[0, 5\)"):
        model.predict(np.array([[4, 0, 2], [1, 5, 3]]), verbose=0)
    # Keras' docstring: Embedding(1000, 64) on (32, 10) ids -> (32, 10, 64).
    assert layers.Embedding(1000, 64)(np.random.randint(1000, size=(32, 10))).shape == (32, 10, 64)


def test_embedding_trains():
    # Ids 0..7; the label is whether the first id is even: the table must learn it.
    rng = np.random.default_rng(0)
    x = rng.integers(0, 8, size=(256, 4))
    y = (x[:, 0] % 2 == 0).astype(np.float32)
    model = keras.Sequential([keras.Input(shape=(4,)), layers.Embedding(8, 4), layers.Flatten(),
                              layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy", metrics=["accuracy"])
    hist = model.fit(x, y, epochs=15, batch_size=32, verbose=0)
    assert hist.history["accuracy"][-1] > 0.95


def test_unsorted_segment_sum_and_embedding_lookup(sess):
    # tf.math.unsorted_segment_sum's documented example.
    c = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8], [4, 3, 2, 1]])
    out = sess.run(tf.math.unsorted_segment_sum(c, tf.constant([0, 1, 0]), num_segments=2))
    np.testing.assert_array_equal(out, [[5, 5, 5, 5], [5, 6, 7, 8]])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 2 is out of range \[0, 2\)"):
        sess.run(tf.math.unsorted_segment_sum(c, tf.constant([0, 2, 0]), num_segments=2))
    params = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
    np.testing.assert_array_equal(sess.run(tf.nn.embedding_lookup(params, [2, 0])), [[4, 5], [0, 1]])


def _set_golden_weights(layer, g, prefix):
    layer.set_weights([np.array(g["%s_w%d" % (prefix, i)], np.float32).reshape(w[1])
                       for i, w in enumerate(layer.weights)])


def test_multi_head_attention_matches_tensorflow():
    # Causal self-attention (a weft model has one input; the cross-attention case with a mask is
    # checked against the same data in tests/train/layers_seq_test.cc).
    g = golden()
    x = np.array(g["causal_query"], np.float32).reshape(2, 5, 6)
    causal = layers.MultiHeadAttention(num_heads=2, key_dim=4)
    xi = keras.Input(shape=(5, 6))
    model = keras.Model(xi, causal(xi, xi, use_causal_mask=True))
    assert model.output_shape == (None, 5, 6)
    model.compile(loss="mse")
    _set_golden_weights(causal, g, "causal")
    want = np.array(g["causal_output"]).reshape(2, 5, 6)
    np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="return_attention_scores=true differs from its first call"):
        causal(xi, xi, use_causal_mask=True, return_attention_scores=True)
    with pytest.raises(Exception, match="differs from its first call"):
        causal(xi, xi)
    with pytest.raises(Exception, match="attention_axes"):
        layers.MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(2,))
    # Keras' parameter count of MultiHeadAttention(2, 3, value_dim=2, output_shape=4) on (4, 5) / (3, 5).
    cross = layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, output_shape=4)
    qi = keras.Input(shape=(4, 5))
    assert keras.Model(qi, cross(qi, qi)).output_shape == (None, 4, 4)
    assert cross.count_params() == 116


def test_causal_transformer_block_trains():
    # A one-block causal language model on a repeating sequence: next-token accuracy must get high.
    seq = np.tile(np.arange(6), 40)
    x = np.stack([seq[i:i + 8] for i in range(200)])
    y = np.stack([seq[i + 1:i + 9] for i in range(200)])
    ids = keras.Input(shape=(8,))
    h = layers.Embedding(6, 16)(ids)
    a = layers.MultiHeadAttention(num_heads=2, key_dim=8)(h, h, use_causal_mask=True)
    h = layers.LayerNormalization()(layers.Add()([h, a]))
    out = layers.Dense(6)(h)
    model = keras.Model(ids, out)
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    hist = model.fit(x, y, epochs=10, batch_size=20, verbose=0)
    assert hist.history["accuracy"][-1] > 0.9
