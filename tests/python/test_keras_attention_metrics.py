"""keras.layers Attention / AdditiveAttention / Dot / UnitNormalization / GroupNormalization
against numpy restatements of Keras 3's formulas, and the metrics MeanAbsolutePercentageError,
Poisson, Hinge, SquaredHinge, KLDivergence, CosineSimilarity against the examples of Keras' docs."""
import numpy as np
import pytest

import weft as tf

rng = np.random.default_rng(0)


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_attention_layers_match_their_formulas_and_train():
    q = rng.standard_normal((2, 3, 4)).astype("f")
    v = rng.standard_normal((2, 5, 4)).astype("f")
    Q, V = tf.keras.Input((3, 4)), tf.keras.Input((5, 4))
    dot_model = tf.keras.Model([Q, V], tf.keras.layers.Attention()([Q, V]))
    np.testing.assert_allclose(dot_model.predict([q, v], verbose=0), _softmax(q @ v.transpose(0, 2, 1)) @ v,
                               atol=1e-5)
    add_model = tf.keras.Model([Q, V], tf.keras.layers.AdditiveAttention()([Q, V]))
    scale = add_model.get_weights()[0]
    assert scale.shape == (4,)
    scores = (scale * np.tanh(q[:, :, None, :] + v[:, None, :, :])).sum(-1)
    np.testing.assert_allclose(add_model.predict([q, v], verbose=0), _softmax(scores) @ v, atol=1e-5)
    causal = tf.keras.Model(Q, tf.keras.layers.Attention(use_scale=True)([Q, Q], use_causal_mask=True))
    s = q @ q.transpose(0, 2, 1) - 1e9 * (1 - np.tril(np.ones((3, 3))))
    np.testing.assert_allclose(causal.predict(q, verbose=0), _softmax(s) @ q, atol=1e-5)
    add_model.compile(optimizer=tf.keras.optimizers.SGD(0.5), loss="mse")
    h = add_model.fit([q, v], np.zeros((2, 3, 4), "f"), epochs=3, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    with pytest.raises(ValueError, match="score_mode"):
        tf.keras.layers.Attention(score_mode="bilinear")


def test_dot_unit_and_group_normalization_match_their_formulas():
    A, B = tf.keras.Input((4,)), tf.keras.Input((4,))
    a, b = rng.standard_normal((3, 4)).astype("f"), rng.standard_normal((3, 4)).astype("f")
    cos = tf.keras.Model([A, B], tf.keras.layers.Dot(axes=1, normalize=True)([A, B]))
    want = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    np.testing.assert_allclose(cos.predict([a, b], verbose=0)[:, 0], want, atol=1e-5)
    np.testing.assert_allclose(tf.keras.Model([A, B], tf.keras.layers.dot([A, B], axes=1)).predict([a, b], verbose=0),
                               (a * b).sum(1, keepdims=True), atol=1e-5)
    unit = tf.keras.Model(A, tf.keras.layers.UnitNormalization()(A))
    np.testing.assert_allclose(unit.predict(a, verbose=0), a / np.linalg.norm(a, axis=1, keepdims=True), atol=1e-6)
    X = tf.keras.Input((4, 4, 6))
    x = rng.standard_normal((2, 4, 4, 6)).astype("f")
    gn = tf.keras.Model(X, tf.keras.layers.GroupNormalization(groups=2)(X))
    xg = x.reshape(2, 16, 2, 3)
    want = ((xg - xg.mean((1, 3), keepdims=True)) / np.sqrt(xg.var((1, 3), keepdims=True) + 1e-3)).reshape(x.shape)
    np.testing.assert_allclose(gn.predict(x, verbose=0), want, atol=1e-5)
    with pytest.raises(ValueError, match="must divide the number of channels"):
        tf.keras.Model(X, tf.keras.layers.GroupNormalization(groups=4)(X))


@pytest.mark.parametrize("metric, y_true, y_pred, want", [
    # Keras' docstring examples
    (tf.keras.metrics.CosineSimilarity(axis=1), [[0., 1.], [1., 1.]], [[1., 0.], [1., 1.]], 0.49999997),
    (tf.keras.metrics.KLDivergence(), [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 0.45814306),
    (tf.keras.metrics.Hinge(), [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 1.3),
    (tf.keras.metrics.SquaredHinge(), [[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]], 1.86),
    (tf.keras.metrics.Poisson(), [[0, 1], [0, 0]], [[1, 1], [0, 0]], 0.49999997),
    (tf.keras.metrics.MeanAbsolutePercentageError(), [[0, 1], [0, 0]], [[1, 1], [0, 0]], 250000000.0),
])
def test_more_metrics_give_the_keras_doc_values(metric, y_true, y_pred, want):
    metric.reset_state()
    metric.update_state(np.array(y_true, "f"), np.array(y_pred, "f"))
    assert float(metric.result()) == pytest.approx(want, rel=1e-5)
