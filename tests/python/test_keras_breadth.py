"""Keras 3 API breadth: the IoU family and the at-threshold metrics, correlation metrics, focal /
Dice / Tversky / generalized cross-entropy losses, the newer activations, Lamb / Adafactor /
LossScaleOptimizer, BackupAndRestore and ProgbarLogger, keras.utils helpers and keras.ops'
numpy-like functions. Expected values: the examples of Keras' docstrings, numpy restatements of
Keras' formulas, and (marked "TF 2.21") values printed by TensorFlow 2.21's Keras 3 on the same
inputs."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft import keras

rng = np.random.default_rng(0)


def _value(x):
    return float(np.asarray(x))


# ---- metrics ---------------------------------------------------------------------------------
def test_iou_metrics_match_keras_docstrings():
    m = keras.metrics.MeanIoU(num_classes=2)
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    assert _value(m.result()) == pytest.approx(1 / 3, rel=1e-6)
    m.reset_state()
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.3, 0.3, 0.1])
    assert _value(m.result()) == pytest.approx(0.23809525, rel=1e-6)
    assert m.name == "mean_io_u"
    m = keras.metrics.IoU(num_classes=2, target_class_ids=[0])
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1], sample_weight=[0.3, 0.3, 0.3, 0.1])
    assert _value(m.result()) == pytest.approx(0.33333325, rel=1e-6)
    m = keras.metrics.BinaryIoU(target_class_ids=[0, 1], threshold=0.3)
    m.update_state([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7])
    assert _value(m.result()) == pytest.approx(1 / 3, rel=1e-6)
    m.reset_state()
    m.update_state([0, 1, 0, 1], [0.1, 0.2, 0.4, 0.7], sample_weight=[0.2, 0.3, 0.4, 0.1])
    assert _value(m.result()) == pytest.approx(0.17361112, rel=1e-6)
    y_true = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [1, 0, 0]])
    y_pred = np.array([[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.5, 0.3, 0.1], [0.1, 0.4, 0.5]])
    m = keras.metrics.OneHotIoU(num_classes=3, target_class_ids=[0, 2])
    m.update_state(y_true, y_pred, sample_weight=[0.1, 0.2, 0.3, 0.4])
    assert _value(m.result()) == pytest.approx(0.07142857, rel=1e-6)
    m = keras.metrics.OneHotMeanIoU(num_classes=3)
    m.update_state(y_true, y_pred, sample_weight=[0.1, 0.2, 0.3, 0.4])
    assert _value(m.result()) == pytest.approx(1 / 21, rel=1e-6)  # Keras' docs round it to 0.048


def test_iou_ignore_class_images_and_bad_ids():
    # TF 2.21: 0.33333334 (ignore_class=2 drops one label) and 0.39999995 (class 1 alone).
    t, p = np.array([[0, 1, 2], [1, 1, 0]]), np.array([[0, 1, 1], [2, 1, 1]])
    m = keras.metrics.MeanIoU(num_classes=3, ignore_class=2)
    m.update_state(t, p)
    assert _value(m.result()) == pytest.approx(1 / 3, rel=1e-6)
    m = keras.metrics.IoU(num_classes=3, target_class_ids=[1])
    m.update_state(t, p)
    assert _value(m.result()) == pytest.approx(0.4, rel=1e-6)
    with pytest.raises(ValueError, match="target class ids"):
        keras.metrics.IoU(num_classes=2, target_class_ids=[2])
    with pytest.raises(ValueError, match="4 labels and 3 predictions"):
        keras.metrics.MeanIoU(2).update_state([0, 1, 1, 0], [0, 1, 1])


def test_at_threshold_metrics_match_keras():
    for cls, value, weights, plain, weighted in (
            (keras.metrics.SensitivityAtSpecificity, 0.5, [1, 1, 2, 2, 1], 0.5, 1 / 3),
            (keras.metrics.SpecificityAtSensitivity, 0.5, [1, 1, 2, 2, 2], 2 / 3, 0.5),
            (keras.metrics.PrecisionAtRecall, 0.5, [2, 2, 2, 1, 1], 0.5, 1 / 3)):
        m = cls(value)
        m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8])
        assert _value(m.result()) == pytest.approx(plain, rel=1e-6), cls.__name__
        m.reset_state()
        m.update_state([0, 0, 0, 1, 1], [0, 0.3, 0.8, 0.3, 0.8], sample_weight=weights)
        assert _value(m.result()) == pytest.approx(weighted, rel=1e-6), cls.__name__
    m = keras.metrics.RecallAtPrecision(0.8)
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    assert _value(m.result()) == pytest.approx(0.5)
    m.reset_state()
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9], sample_weight=[1, 0, 0, 1])
    assert _value(m.result()) == pytest.approx(1.0)
    # TF 2.21 on these (multi-label) arrays, with class_id=1 and 17 thresholds, then flattened.
    r = np.random.default_rng(3)
    yt = (r.random((20, 3)) > 0.5).astype("float32")
    yp = r.random((20, 3)).astype("float32")
    for cls, value, by_class, flat in ((keras.metrics.SensitivityAtSpecificity, 0.6, 0.25, 0.23333333),
                                       (keras.metrics.SpecificityAtSensitivity, 0.7, 0.25, 0.40000001),
                                       (keras.metrics.PrecisionAtRecall, 0.4, 0.47058824, 0.54901963),
                                       (keras.metrics.RecallAtPrecision, 0.6, 0.0, 0.1)):
        m = cls(value, num_thresholds=17, class_id=1)
        m.update_state(yt, yp)
        assert _value(m.result()) == pytest.approx(by_class, abs=1e-6), cls.__name__
        m = cls(value)
        m.update_state(yt, yp)
        assert _value(m.result()) == pytest.approx(flat, abs=1e-6), cls.__name__
        assert cls.from_config(m.get_config()).get_config() == m.get_config()


def test_correlation_metrics_and_metric_functions():
    t, p = [[0, 1, 0.5], [1, 1, 0.2]], [[0.1, 0.9, 0.5], [1, 0.9, 0.2]]
    np.testing.assert_allclose(keras.metrics.pearson_correlation(t, p), [1.0, 0.99339927], rtol=1e-5)
    # TF 2.21: Keras' concordance formula (its covariance centres y_true on y_pred's mean).
    np.testing.assert_allclose(keras.metrics.concordance_correlation(t, p), [0.9756094, 0.98765396], rtol=1e-5)
    m = keras.metrics.PearsonCorrelation()
    m.update_state(t, p)
    assert _value(m.result()) == pytest.approx((1.0 + 0.99339927) / 2, rel=1e-5)
    assert keras.metrics.ConcordanceCorrelation().name == "concordance_correlation"
    assert keras.metrics.MSE is keras.metrics.mse and keras.metrics.KLD is keras.metrics.kld
    np.testing.assert_allclose(keras.metrics.binary_crossentropy([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]),
                               [-np.log(0.4), -(np.log(0.6) + np.log(0.4)) / 2], rtol=1e-5)
    np.testing.assert_allclose(keras.metrics.kullback_leibler_divergence([[0.2, 0.8]], [[0.4, 0.6]]),
                               [0.2 * np.log(0.5) + 0.8 * np.log(0.8 / 0.6)], rtol=1e-5)


def test_python_metrics_in_compile_fit_and_evaluate():
    x = rng.random((64, 8)).astype("float32")
    y = (x.sum(1) > 4).astype("float32")[:, None]
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile("adam", loss="binary_crossentropy",
                  metrics=[keras.metrics.BinaryIoU(target_class_ids=[1]), keras.metrics.PrecisionAtRecall(0.5)])
    hist = model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    assert set(hist.history) == {"loss", "binary_io_u", "precision_at_recall"}
    logs = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
    p = model.predict(x, verbose=0)
    ref = keras.metrics.BinaryIoU(target_class_ids=[1])
    ref.update_state(y, p)
    assert logs["binary_io_u"] == pytest.approx(_value(ref.result()), abs=1e-6)


def test_metrics_serialize_round_trip():
    m = keras.metrics.MeanIoU(num_classes=3, ignore_class=0)
    data = keras.metrics.serialize(m)
    json.dumps(data)
    back = keras.metrics.deserialize(data)
    assert isinstance(back, keras.metrics.MeanIoU) and back.get_config() == m.get_config()
    # Keras' own module name is read too.
    back = keras.metrics.deserialize(dict(data, module="keras.metrics"))
    assert back.num_classes == 3


# ---- losses ----------------------------------------------------------------------------------
def _bce(t, p):
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def test_focal_losses_match_docstrings_and_formulas():
    loss = keras.losses.BinaryFocalCrossentropy(gamma=2.0, from_logits=True)
    assert _value(loss([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8])) == pytest.approx(0.691, abs=1e-3)  # Keras' docs
    t = np.array([[0, 1], [1, 0.]])
    p = np.array([[0.6, 0.4], [0.7, 0.2]])
    ts = t * 0.9 + 0.05
    pt = ts * p + (1 - ts) * (1 - p)
    expected = ((ts * 0.3 + (1 - ts) * 0.7) * (1 - pt) ** 1.5 * _bce(ts, p)).mean(-1).mean()
    loss = keras.losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.5, label_smoothing=0.1)
    assert _value(loss(t, p)) == pytest.approx(expected, rel=1e-5)
    assert _value(loss(t, p)) == pytest.approx(0.11277881, rel=1e-5)  # TF 2.21
    t = np.array([[0, 1, 0], [0, 0, 1.]])
    p = np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]])
    q = np.clip(p / p.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    per = (0.25 * (1 - q) ** 2 * -t * np.log(q)).sum(-1)
    np.testing.assert_allclose(keras.losses.categorical_focal_crossentropy(t, p), per, rtol=1e-5)
    np.testing.assert_allclose(per, [3.20583090e-05, 4.66273481e-01], rtol=1e-4)  # TF 2.21
    loss = keras.losses.CategoricalFocalCrossentropy(alpha=0.5, gamma=1.0, from_logits=True, label_smoothing=0.2)
    assert _value(loss(t, [[1.0, 2.0, -1.0], [0.5, 0.1, 0.3]])) == pytest.approx(0.27952138, rel=1e-5)  # TF 2.21


def test_dice_tversky_and_generalized_ce():
    t = np.array([[1., 0.], [1., 1.]])
    p = np.array([[0.5, 0.2], [0.9, 0.4]])
    dice = 1 - 2 * (t * p).sum() / (t.sum() + p.sum() + 1e-7)
    assert _value(keras.losses.Dice()(t, p)) == pytest.approx(dice, rel=1e-5)
    tp, fp, fn = (t * p).sum(), ((1 - p) * t).sum(), (p * (1 - t)).sum()
    tversky = 1 - tp / (tp + 0.3 * fp + 0.7 * fn + 1e-7)
    assert _value(keras.losses.Tversky(alpha=0.3, beta=0.7)(t, p)) == pytest.approx(tversky, rel=1e-5)
    per_row = 1 - 2 * (t * p).sum(-1) / (t.sum(-1) + p.sum(-1) + 1e-7)
    np.testing.assert_allclose(keras.losses.dice(t, p, axis=-1), per_row, rtol=1e-5)
    gce = keras.losses.CategoricalGeneralizedCrossEntropy(q=0.5)([0, 1], [[0.7, 0.3], [0.2, 0.8]])
    assert _value(gce) == pytest.approx(((1 - 0.7 ** 0.5) / 0.5 + (1 - 0.8 ** 0.5) / 0.5) / 2, rel=1e-5)
    np.testing.assert_allclose(keras.losses.kullback_leibler_divergence([[0.2, 0.8]], [[0.4, 0.6]]),
                               keras.losses.kl_divergence([[0.2, 0.8]], [[0.4, 0.6]]))


def test_python_losses_train_and_serialize():
    x = rng.random((64, 4)).astype("float32")
    y = (x[:, :1] > 0.5).astype("float32")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.05), loss="binary_focal_crossentropy")
    hist = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < hist.history["loss"][0]
    for loss in (keras.losses.BinaryFocalCrossentropy(alpha=0.4), keras.losses.Tversky(alpha=0.2, beta=0.8),
                 keras.losses.Dice(axis=-1)):
        data = keras.losses.serialize(loss)
        back = keras.losses.deserialize(json.loads(json.dumps(data)))
        assert type(back) is type(loss) and back.get_config() == loss.get_config()
    assert keras.losses.deserialize("dice") is keras.losses.dice
    for q in (0, 1):  # Keras: the open interval
        with pytest.raises(ValueError, match="q must be in"):
            keras.losses.CategoricalGeneralizedCrossEntropy(q=q)


# ---- activations -------------------------------------------------------------------------------
_X = np.array([[-2.0, -0.7, -0.3, 0.0, 0.3, 0.7, 1.5, 3.0]], np.float32)
_FORMULAS = {
    "celu": lambda x: np.where(x > 0, x, np.exp(x) - 1),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_shrink": lambda x: np.where(np.abs(x) > 0.5, x, 0),
    "soft_shrink": lambda x: np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
    "tanh_shrink": lambda x: x - np.tanh(x),
    "log_sigmoid": lambda x: -np.log1p(np.exp(-x)),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "glu": lambda x: x[..., :4] / (1 + np.exp(-x[..., 4:])),
}


@pytest.mark.parametrize("name", sorted(_FORMULAS))
def test_new_activations_in_layers_and_on_tensors(name):
    inp = keras.Input((8,))
    model = keras.Model(inp, keras.layers.Activation(name)(inp))
    np.testing.assert_allclose(model.predict(_X, verbose=0), _FORMULAS[name](_X), rtol=1e-5, atol=1e-6)
    fn = keras.activations.get(name)
    np.testing.assert_allclose(np.asarray(fn(tf.constant(_X))), _FORMULAS[name](_X), rtol=1e-5, atol=1e-6)
    assert keras.activations.deserialize(keras.activations.serialize(fn)) is fn


def test_activation_arguments_sparsemax_and_threshold():
    with pytest.raises(NotImplementedError, match="alpha=1.0"):
        keras.activations.celu(tf.constant(_X), alpha=0.5)
    x = np.array([[1.0, 2.0, 0.5, 1.8], [0.1, 0.2, 0.3, 0.4]], np.float32)
    out = np.asarray(keras.activations.sparsemax(tf.constant(x)))
    # The simplex projection: first row tau = (2.0 + 1.8 - 1) / 2 = 1.4; second, every entry in support.
    np.testing.assert_allclose(out, [[0, 0.6, 0, 0.4], [0.1, 0.2, 0.3, 0.4]], atol=1e-6)
    inp = keras.Input((4,))
    model = keras.Model(inp, keras.activations.threshold(inp, 0.5, -1.0))
    np.testing.assert_allclose(model.predict(x, verbose=0), np.where(x > 0.5, x, -1.0))
    dense = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="squareplus")])
    back = keras.models.model_from_json(dense.to_json())
    assert back.layers[0].get_config()["activation"] == "squareplus"


# ---- optimizers ------------------------------------------------------------------------------
def _one_step_model(optimizer, w0):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2, use_bias=False)])
    model.compile(optimizer, loss="mse")
    model.set_weights([w0])
    return model


def test_lamb_and_adafactor_follow_keras_formulas():
    x = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
    y = np.array([[0.5, -0.5], [1.0, 0.0]], np.float32)
    w0 = np.array([[0.3, -0.2], [0.1, 0.4]], np.float32)
    g = 2 * x.T @ (x @ w0 - y) / y.size  # d mean((xw - y)^2) / dw

    model = _one_step_model(keras.optimizers.Lamb(learning_rate=0.1), w0)
    model.train_on_batch(x, y)
    m, v = 0.1 * g, 0.001 * g * g
    update = (m / 0.1) / (np.sqrt(v / 0.001) + 1e-7)
    ratio = np.linalg.norm(w0) / np.linalg.norm(update)
    np.testing.assert_allclose(model.get_weights()[0], w0 - 0.1 * ratio * update, rtol=1e-5)

    model = _one_step_model(keras.optimizers.Adafactor(learning_rate=0.5), w0)
    model.train_on_batch(x, y)
    g2 = g * g + 1e-30
    b2t = 1 - 1.0 ** -0.8  # t = 1: the first step keeps nothing of the (zero) averages
    r = (1 - b2t) * g2.mean(-1)
    c = (1 - b2t) * g2.mean(-2)
    vv = (r / r.mean())[:, None] * c[None, :]
    u = g / np.sqrt(vv)
    u = u / max(1.0, np.sqrt((u * u).mean()) / 1.0)
    alpha = max(1e-3, np.sqrt((w0 * w0).mean())) * min(0.5, 1.0)
    np.testing.assert_allclose(model.get_weights()[0], w0 - alpha * u, rtol=1e-5)
    assert keras.optimizers.get("lamb").name == "Lamb"
    with pytest.raises(tf.errors.InvalidArgumentError, match="beta_2_decay"):
        keras.optimizers.Adafactor(beta_2_decay=0.5)


def test_loss_scale_optimizer_is_a_documented_pass_through_and_serializes():
    w0 = np.array([[0.3, -0.2], [0.1, 0.4]], np.float32)
    x = np.array([[1.0, 2.0]], np.float32)
    y = np.array([[0.0, 1.0]], np.float32)
    a = _one_step_model(keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1)), w0)
    b = _one_step_model(keras.optimizers.SGD(0.1), w0)
    a.train_on_batch(x, y)
    b.train_on_batch(x, y)
    np.testing.assert_array_equal(a.get_weights()[0], b.get_weights()[0])
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(0.01), initial_scale=1024.0)
    back = keras.optimizers.deserialize(json.loads(json.dumps(keras.optimizers.serialize(opt))))
    assert isinstance(back.inner_optimizer, keras.optimizers.Adam) and back.initial_scale == 1024.0
    assert keras.mixed_precision.LossScaleOptimizer is keras.optimizers.LossScaleOptimizer
    adam = keras.optimizers.deserialize(keras.optimizers.serialize(keras.optimizers.Adafactor(clip_threshold=2.0)))
    assert adam.clip_threshold == 2.0


# ---- callbacks -------------------------------------------------------------------------------
def _small_model():
    # The same initial weights every time (compile's seed: no global seed left set for other tests).
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"), keras.layers.Dense(1)])
    model.compile("adam", loss="mse", seed=1)
    return model


def test_backup_and_restore_resumes_an_interrupted_fit(tmp_path):
    x = rng.random((32, 4)).astype("float32")
    y = x.sum(1, keepdims=True)
    reference = _small_model()
    reference.fit(x, y, epochs=4, batch_size=8, verbose=0, shuffle=False)

    class Crash(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            if epoch == 1:
                raise RuntimeError("crash after epoch 2")

    backup = str(tmp_path / "backup")
    with pytest.raises(RuntimeError, match="crash"):
        _small_model().fit(x, y, epochs=4, batch_size=8, verbose=0, shuffle=False,
                           callbacks=[keras.callbacks.BackupAndRestore(backup), Crash()])
    with open(os.path.join(backup, "latest_training_metadata.json")) as f:
        assert json.load(f) == {"epoch": 2}
    resumed = _small_model()  # a new process would start from fresh weights too
    hist = resumed.fit(x, y, epochs=4, batch_size=8, verbose=0, shuffle=False,
                       callbacks=[keras.callbacks.BackupAndRestore(backup)])
    assert hist.epoch == [2, 3]
    for a, b in zip(resumed.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert os.listdir(backup) == []  # a completed fit deletes its backup


def test_progbar_logger_draws_the_bar(capsys):
    x = rng.random((32, 4)).astype("float32")
    model = _small_model()
    model.fit(x, x[:, :1], epochs=2, batch_size=8, callbacks=[keras.callbacks.ProgbarLogger()], verbose=2)
    out = capsys.readouterr().out
    assert out.count("Epoch 1/2") == 1 and out.count("Epoch 2/2") == 1  # fit's own bar is off
    assert "4/4" in out and "loss:" in out


# ---- utils -----------------------------------------------------------------------------------
def test_utils_helpers():
    a, b = keras.Input((3,)), keras.Input((2,))
    out = keras.layers.Dense(1)(keras.layers.Concatenate()([keras.layers.Dense(2)(a), b]))
    assert keras.utils.is_keras_tensor(out) and not keras.utils.is_keras_tensor(np.zeros(2))
    sources = keras.utils.get_source_inputs(out)
    assert len(sources) == 2 and {tuple(s.shape) for s in sources} == {(None, 3), (None, 2)}
    assert keras.utils.pack_x_y_sample_weight(1) == 1
    assert keras.utils.pack_x_y_sample_weight((1, 2)) == ((1, 2),)
    assert keras.utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert keras.utils.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    assert keras.utils.standardize_dtype(None) == "float32"
    assert keras.utils.standardize_dtype(np.int32) == "int32" and keras.utils.standardize_dtype(int) == "int64"
    with pytest.raises(ValueError, match="Invalid dtype"):
        keras.utils.standardize_dtype("float7")
    data = keras.utils.serialize_keras_object(keras.losses.Huber(delta=2.0))
    assert keras.utils.deserialize_keras_object(data).get_config()["delta"] == 2.0
    assert keras.utils.get_registered_name(keras.losses.Huber) == "Huber"
    keras.utils.disable_interactive_logging()
    try:
        assert not keras.utils.is_interactive_logging_enabled()
    finally:
        keras.utils.enable_interactive_logging()
    assert keras.utils.is_interactive_logging_enabled()


# ---- keras.ops ------------------------------------------------------------------------------
def _np(x):
    return np.asarray(x)


def test_ops_numpy_functions_match_numpy():
    o = keras.ops
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], np.float32)
    np.testing.assert_allclose(_np(o.cumsum(x, axis=1)), np.cumsum(x, 1))
    np.testing.assert_allclose(_np(o.cumsum(x)), np.cumsum(x))
    np.testing.assert_allclose(_np(o.cumprod(x, axis=1)), np.cumprod(x, 1), rtol=1e-6)
    np.testing.assert_allclose(_np(o.cumprod(x, axis=0)), np.cumprod(x, 0), rtol=1e-6)
    np.testing.assert_allclose(_np(o.linspace(0.0, 1.0, 5)), np.linspace(0, 1, 5), atol=1e-7)
    np.testing.assert_allclose(_np(o.linspace(0.0, 1.0, 4, endpoint=False)), np.linspace(0, 1, 4, endpoint=False),
                               atol=1e-7)
    special = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(_np(o.isnan(special)), np.isnan(special))
    np.testing.assert_array_equal(_np(o.isinf(special)), np.isinf(special))
    np.testing.assert_array_equal(_np(o.isfinite(special)), np.isfinite(special))
    np.testing.assert_array_equal(_np(o.nan_to_num(special, posinf=9.0)), np.nan_to_num(special, posinf=9.0))
    np.testing.assert_array_equal(_np(o.nan_to_num(special)), np.nan_to_num(special))
    np.testing.assert_allclose(_np(o.moveaxis(np.zeros((2, 3, 4)), 0, -1)).shape, (3, 4, 2))
    np.testing.assert_allclose(_np(o.outer([1.0, 2.0], [3.0, 4.0, 5.0])), np.outer([1, 2], [3, 4, 5]))
    np.testing.assert_allclose(_np(o.inner(x, x)), np.inner(x, x), rtol=1e-6)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    for k in (-1, 0, 2):
        np.testing.assert_allclose(_np(o.diagonal(m, k)), np.diagonal(m, k))
        np.testing.assert_allclose(_np(o.diag(m, k)), np.diag(m, k))
        np.testing.assert_allclose(_np(o.trace(m, k)), np.trace(m, k))
    np.testing.assert_allclose(_np(o.diag(np.array([1.0, 2.0]), 1)), np.diag([1.0, 2.0], 1))
    np.testing.assert_allclose(_np(o.diagonal(np.arange(24.0).reshape(2, 3, 4), 1, 1, 2)),
                               np.diagonal(np.arange(24.0).reshape(2, 3, 4), 1, 1, 2))
    np.testing.assert_allclose(_np(o.tril(m, -1)), np.tril(m, -1))
    np.testing.assert_allclose(_np(o.flip(m, 1)), np.flip(m, 1))
    np.testing.assert_allclose(_np(o.flip(m)), np.flip(m))
    np.testing.assert_allclose(_np(o.roll(m, 2)), np.roll(m, 2))
    np.testing.assert_allclose(_np(o.roll(m, -1, axis=0)), np.roll(m, -1, axis=0))
    np.testing.assert_allclose(_np(o.repeat(m, 2, axis=0)), np.repeat(m, 2, axis=0))
    assert int(_np(o.count_nonzero(np.array([0, 1, 2, 0])))) == 2
    a, b = np.array([0.5, -3.0, 20.0], np.float32), np.array([1.0, 2.0, -1.0], np.float32)
    np.testing.assert_allclose(_np(o.logaddexp(a, b)), np.logaddexp(a, b), rtol=1e-6)
    np.testing.assert_allclose(_np(o.log2(np.array([8.0]))), [3.0], rtol=1e-6)
    np.testing.assert_allclose(_np(o.log10(np.array([1000.0]))), [3.0], rtol=1e-6)
    np.testing.assert_allclose(_np(o.hypot(a, b)), np.hypot(a, b), rtol=1e-6)
    np.testing.assert_allclose(_np(o.reciprocal(b)), 1 / b)
    np.testing.assert_allclose(_np(o.sign(b)), np.sign(b))
    np.testing.assert_allclose(_np(o.cbrt(np.array([-8.0, 27.0]))), [-2.0, 3.0], rtol=1e-6)
    np.testing.assert_allclose(_np(o.trunc(np.array([-1.7, 2.5]))), [-1.0, 2.0])
    np.testing.assert_allclose(_np(o.take_along_axis(m, np.array([[3], [0], [1]]), axis=1)),
                               np.take_along_axis(m, np.array([[3], [0], [1]]), axis=1))
    rows, cols = o.nonzero(np.array([[0, 1], [2, 0]]))
    np.testing.assert_array_equal(_np(rows), [0, 1])
    np.testing.assert_array_equal(_np(cols), [1, 0])
    np.testing.assert_allclose(_np(o.diff(np.array([1.0, 4.0, 9.0, 16.0]), 2)), [2.0, 2.0])
    np.testing.assert_allclose(_np(o.average(m, axis=1, weights=[1.0, 0.0, 0.0, 1.0])),
                               np.average(m, axis=1, weights=[1, 0, 0, 1]))
    np.testing.assert_allclose(_np(o.vstack([np.ones(3), np.zeros(3)])), np.vstack([np.ones(3), np.zeros(3)]))
    np.testing.assert_allclose(_np(o.sinc(np.array([0.0, 0.5]))), np.sinc([0.0, 0.5]), rtol=1e-6)
    t = np.array([-0.9, -0.2, 0.4, 0.8], np.float32)
    for name in ("arcsin", "arccos", "arctan"):
        np.testing.assert_allclose(_np(getattr(o, name)(t)), getattr(np, name)(t), rtol=1e-5, err_msg=name)
    np.testing.assert_allclose(_np(o.arctan2(t, t[::-1].copy())), np.arctan2(t, t[::-1]), rtol=1e-5)
    np.testing.assert_array_equal(_np(o.isclose(np.array([1.0, 1.1]), np.array([1.0, 1.0]))), [True, False])


def test_ops_nn_and_control_flow():
    o = keras.ops
    t = np.array([[0.0, 1.0, 0.0]], np.float32)
    p = np.array([[0.2, 0.5, 0.3]], np.float32)
    np.testing.assert_allclose(_np(o.categorical_crossentropy(t, p)), [-np.log(0.5)], rtol=1e-6)
    np.testing.assert_allclose(_np(o.sparse_categorical_crossentropy(np.array([1]), p)), [-np.log(0.5)], rtol=1e-6)
    np.testing.assert_allclose(_np(o.binary_crossentropy(np.array([1.0, 0.0]), np.array([0.8, 0.4]))),
                               [-np.log(0.8), -np.log(0.6)], rtol=1e-6)
    np.testing.assert_allclose(_np(o.nn.binary_crossentropy(np.array([1.0]), np.array([2.0]), from_logits=True)),
                               [np.log1p(np.exp(-2.0))], rtol=1e-6)
    np.testing.assert_allclose(_np(o.multi_hot(np.array([[0, 2]]), 4)), [[1, 0, 1, 0]])
    assert o.nn.celu is o.celu and o.numpy.cumprod is o.cumprod and o.core.scan is o.scan

    @tf.function
    def loops(x):
        total = o.fori_loop(0, 4, lambda i, acc: acc + o.cast(i, "float32") * x, o.zeros_like(x))
        carry, ys = o.scan(lambda c, e: (c + e, c * e), o.convert_to_tensor(1.0), o.convert_to_tensor([1.0, 2.0, 3.0]))
        branch = o.cond(o.greater(o.sum(x), 0.0), lambda: x * 2.0, lambda: -x)
        count = o.while_loop(lambda i: o.less(i, 5), lambda i: i + 2, o.convert_to_tensor(0))
        return total, carry, ys, branch, count

    total, carry, ys, branch, count = loops(tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(_np(total), [6.0, 12.0])  # (0 + 1 + 2 + 3) * x
    assert float(_np(carry)) == 7.0
    np.testing.assert_allclose(_np(ys), [1.0, 4.0, 12.0])  # carries 1, 2, 4 times 1, 2, 3
    np.testing.assert_allclose(_np(branch), [2.0, 4.0])
    assert int(_np(count)) == 6
    mapped = o.map(lambda e: e * e, o.convert_to_tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(_np(mapped), [1.0, 4.0, 9.0])


def test_ops_inside_a_model():
    o = keras.ops
    inp = keras.Input((3,))
    out = keras.layers.Lambda(lambda t: o.cumprod(t, axis=1) + o.logaddexp(t, o.flip(t, axis=1)))(inp)
    model = keras.Model(inp, out)
    x = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), np.cumprod(x, 1) + np.logaddexp(x, x[:, ::-1]),
                               rtol=1e-5)


def test_more_ops_match_numpy():
    o = keras.ops
    a = np.array([1.0, np.nan, -3.0, 4.0], np.float32)
    b = np.array([2.0, 5.0, np.nan, -4.0], np.float32)
    np.testing.assert_array_equal(_np(o.fmax(a, b)), np.fmax(a, b))
    np.testing.assert_array_equal(_np(o.fmin(a, b)), np.fmin(a, b))
    assert float(_np(o.nansum(a))) == pytest.approx(np.nansum(a))
    assert float(_np(o.nanmean(a))) == pytest.approx(np.nanmean(a))
    assert float(_np(o.nanmax(a))) == np.nanmax(a) and float(_np(o.nanmin(a))) == np.nanmin(a)
    np.testing.assert_allclose(_np(o.fmod(np.array([-7.0, 7.0]), np.array([3.0, -3.0]))), np.fmod([-7.0, 7.0], [3, -3]))
    np.testing.assert_array_equal(_np(o.fmod(np.array([-7, 7]), np.array([3, -3]))), np.fmod([-7, 7], [3, -3]))
    inf = np.array([np.inf, -np.inf, 1.0], np.float32)
    np.testing.assert_array_equal(_np(o.isposinf(inf)), np.isposinf(inf))
    np.testing.assert_array_equal(_np(o.isneginf(inf)), np.isneginf(inf))
    assert bool(_np(o.allclose(np.ones(3), np.ones(3) + 1e-9))) and not bool(_np(o.allclose(np.ones(2), np.zeros(2))))
    np.testing.assert_allclose(_np(o.logaddexp2(np.array([1.0]), np.array([3.0]))), np.logaddexp2(1.0, 3.0), rtol=1e-6)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    for k in range(4):
        np.testing.assert_array_equal(_np(o.rot90(m, k)), np.rot90(m, k))
    np.testing.assert_array_equal(_np(o.fliplr(m)), np.fliplr(m))
    np.testing.assert_array_equal(_np(o.flipud(m)), np.flipud(m))
    np.testing.assert_allclose(_np(o.trapezoid(np.array([1.0, 2.0, 4.0]))), 1.5 + 3.0)  # (1+2)/2 + (2+4)/2
    np.testing.assert_allclose(_np(o.trapezoid(np.array([1.0, 2.0, 4.0]), x=np.array([0.0, 1.0, 3.0]))), 1.5 + 6.0)
    np.testing.assert_array_equal(_np(o.kron(m, np.eye(2, dtype=np.float32))), np.kron(m, np.eye(2)))
    np.testing.assert_array_equal(_np(o.diagflat(np.array([[1.0, 2.0]]))), np.diagflat([[1.0, 2.0]]))
    np.testing.assert_array_equal(_np(o.isin(np.array([1, 2, 3, 4]), np.array([2, 4]))), [False, True, False, True])
    np.testing.assert_allclose(_np(o.geomspace(1.0, 1000.0, 4)), np.geomspace(1, 1000, 4), rtol=1e-5)
    parts = o.array_split(np.arange(7.0), 3)
    assert [list(_np(p)) for p in parts] == [list(p) for p in np.array_split(np.arange(7.0), 3)]
    assert [list(_np(p)) for p in o.vsplit(np.arange(4.0), [1, 3])] == [[0.0], [1.0, 2.0], [3.0]]
    rows, cols = o.unravel_index(np.array([5, 7]), (3, 4))
    np.testing.assert_array_equal(_np(rows), [1, 1])
    np.testing.assert_array_equal(_np(cols), [1, 3])
    np.testing.assert_array_equal(_np(o.scatter(np.array([[0], [2], [0]]), np.array([1.0, 2.0, 3.0]), (4,))),
                                  [4.0, 0.0, 2.0, 0.0])
    np.testing.assert_array_equal(_np(o.saturate_cast(np.array([300.0, -5.0, 7.9]), "uint8")), [255, 0, 7])
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    ref = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(_np(o.rms_normalization(x)), ref, rtol=1e-5)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(_np(o.layer_normalization(x)), (x - mu) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    img = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    np.testing.assert_array_equal(_np(o.max_pool(img, 2)), img.reshape(1, 2, 2, 2, 2, 1).max((2, 4)))
    np.testing.assert_allclose(_np(o.average_pool(img, 2)), img.reshape(1, 2, 2, 2, 2, 1).mean((2, 4)))


def test_dot_product_attention_matches_its_formula():
    q = rng.standard_normal((2, 3, 2, 4)).astype("float32")
    k = rng.standard_normal((2, 5, 2, 4)).astype("float32")
    v = rng.standard_normal((2, 5, 2, 4)).astype("float32")
    logits = np.einsum("btnh,bsnh->bnts", q, k) / 2.0
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(_np(keras.ops.dot_product_attention(q, k, v)), np.einsum("bnts,bsnh->btnh", w, v),
                               rtol=1e-5, atol=1e-6)
    causal = np.where(np.tril(np.ones((3, 5), bool)), logits, -1e9)
    w = np.exp(causal - causal.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(_np(keras.ops.dot_product_attention(q, k, v, is_causal=True)),
                               np.einsum("bnts,bsnh->btnh", w, v), rtol=1e-5, atol=1e-6)


def test_thresholded_relu_layer_and_its_config(tmp_path):
    inp = keras.Input((5,))
    model = keras.Model(inp, keras.layers.ThresholdedReLU(theta=0.5)(inp))
    x = np.array([[-1.0, 0.5, 0.6, 2.0, 0.0]], np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), np.where(x > 0.5, x, 0))
    path = str(tmp_path / "m.keras")
    model.save(path)
    back = keras.models.load_model(path)
    np.testing.assert_array_equal(back.predict(x, verbose=0), np.where(x > 0.5, x, 0))


def test_initializers_and_regularizers_serialize():
    data = keras.regularizers.serialize(keras.regularizers.L1L2(0.1, 0.2))
    assert keras.regularizers.deserialize(json.loads(json.dumps(data))).get_config() == {"l1": 0.1, "l2": 0.2}
    data = keras.initializers.serialize(keras.initializers.HeNormal(seed=3))
    assert data["class_name"] == "HeNormal" and data["config"] == {"seed": 3}
    back = keras.initializers.deserialize({"module": "keras.initializers", "class_name": "Constant",
                                           "config": {"value": 2.5}})
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer=back)])
    np.testing.assert_array_equal(model.get_weights()[0], np.full((2, 1), 2.5, np.float32))


def test_backend_functions():
    K = keras.backend
    scores = tf.constant([[0.1, 0.9, 0.0], [0.8, 0.15, 0.05]])
    np.testing.assert_array_equal(_np(K.in_top_k(scores, tf.constant([1, 1]), 1)), [True, False])
    np.testing.assert_array_equal(_np(keras.ops.in_top_k(tf.constant([1, 1]), scores, 2)), [True, True])
    np.testing.assert_array_equal(_np(K.arange(4)), [0, 1, 2, 3])
    np.testing.assert_allclose(_np(K.cumprod(tf.constant([1.0, -2.0, 3.0]))), [1.0, -2.0, -6.0])
    np.testing.assert_array_equal(_np(K.reverse(tf.constant([1, 2, 3]), 0)), [3, 2, 1])
    assert K.is_float_dtype("float32") and K.is_int_dtype(np.int64) and not K.is_int_dtype("float16")
    assert K.result_type("int32", "float32") == "float64"  # numpy's promotion
    first = K.get_uid("k25")
    assert K.get_uid("k25") == first + 1
    np.testing.assert_allclose(_np(K.foldl(lambda a, x: a + x, tf.constant([1.0, 2.0, 3.0]))), 6.0)
    assert _np(K.temporal_padding(tf.ones([1, 2, 1]), (1, 2))).shape == (1, 5, 1)
    assert _np(K.spatial_2d_padding(tf.ones([1, 2, 2, 1]))).shape == (1, 4, 4, 1)
    t, p = np.array([[0.0, 1.0]]), np.array([[0.6, 0.4]])
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    np.testing.assert_allclose(_np(K.binary_focal_crossentropy(t, p)), (1 - (t * p + (1 - t) * (1 - p))) ** 2 * bce,
                               rtol=1e-5)
    K.print_tensor(tf.constant([1.0]), "value:")


def test_ctc_loss_matches_tf_and_trains():
    logits = np.random.default_rng(7).standard_normal((3, 6, 4)).astype("float32")
    labels = np.array([[1, 2, 0], [3, 3, 0], [2, 0, 0]], np.int32)
    # TF 2.21's keras.losses.ctc / CTC() on these inputs.
    np.testing.assert_allclose(keras.losses.ctc(labels, logits), [6.757511, 5.3243036, 5.8300705], rtol=1e-5)
    assert _value(keras.losses.CTC()(labels, logits)) == pytest.approx(5.9706283, rel=1e-5)
    # TF 2.21's keras.ops.ctc_loss with per-example label counts and time steps.
    np.testing.assert_allclose(keras.ops.ctc_loss(labels, logits, np.array([2, 1, 1]), np.array([6, 4, 3])),
                               [6.757511, 4.0194535, 3.3332624], rtol=1e-5)
    # TF 2.21's tf.keras.backend.ctc_batch_cost: probabilities, the last class the blank.
    e = np.exp(logits - logits.max(-1, keepdims=True))
    probs = (e / e.sum(-1, keepdims=True)).astype("float32")
    cost = keras.backend.ctc_batch_cost(np.array([[1, 2, 0], [0, 0, 1], [2, 1, 1]]), probs, np.array([[6], [4], [5]]),
                                        np.array([[2], [3], [1]]))
    np.testing.assert_allclose(cost, [[3.780618], [5.464526], [4.7826476]], rtol=1e-5)
    # A repeated label needs a blank between: with 2 steps, [3, 3] is impossible (huge loss).
    assert float(np.asarray(keras.losses.ctc(np.array([[3, 3]]), logits[:1, :2]))[0]) > 1e20
    x = rng.standard_normal((8, 6, 3)).astype("float32")
    y = np.tile(np.array([[1, 2, 0]], np.int32), (8, 1))
    model = keras.Sequential([keras.Input((6, 3)), keras.layers.Dense(4)])
    model.compile(keras.optimizers.Adam(0.05), loss=keras.losses.CTC())
    hist = model.fit(x, y, epochs=10, batch_size=8, verbose=0)
    assert hist.history["loss"][-1] < 0.7 * hist.history["loss"][0]


def test_disabled_interactive_logging_prints_lines_not_a_redrawn_bar(capfd):
    x = rng.random((32, 4)).astype("float32")
    model = _small_model()
    keras.utils.disable_interactive_logging()
    try:
        model.fit(x, x[:, :1], epochs=2, batch_size=8, verbose=1)
        bar = keras.utils.Progbar(4)
        for i in range(4):
            bar.update(i + 1, [("loss", 1.0)])
    finally:
        keras.utils.enable_interactive_logging()
    out = capfd.readouterr().out  # fit's lines come from C++: the file descriptor's output
    assert "\r" not in out and "Epoch 2/2" in out
    assert "4/4 - 0s - loss: 1.0000\n" in out  # the Progbar's one-line form (verbose=2), not a redrawn bar


@pytest.mark.parametrize("make", [lambda: keras.optimizers.Adafactor(learning_rate=0.01, clip_threshold=2.0),
                                  lambda: keras.optimizers.Lamb(0.02, beta_1=0.8),
                                  lambda: keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))])
def test_new_optimizers_and_activations_survive_save_and_load(tmp_path, make):
    x = rng.random((16, 4)).astype("float32")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="glu"),
                              keras.layers.Dense(1, activation="sparse_plus")])
    model.compile(make(), loss="mse")
    model.fit(x, x[:, :1], epochs=2, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    back = keras.models.load_model(path)
    assert type(back.optimizer) is type(model.optimizer)
    assert back.optimizer.get_config() == model.optimizer.get_config()
    assert int(np.asarray(back.optimizer.iterations)) == 2
    np.testing.assert_array_equal(back.predict(x, verbose=0), model.predict(x, verbose=0))
    model.fit(x, x[:, :1], epochs=1, verbose=0, shuffle=False)
    back.fit(x, x[:, :1], epochs=1, verbose=0, shuffle=False)  # the slots came back too: the same next step
    np.testing.assert_allclose(back.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


def test_statistics_and_search_ops_match_numpy():
    o = keras.ops
    x = rng.standard_normal((4, 7)).astype("float32")
    for q in (0.0, 0.3, 0.5, 1.0):
        np.testing.assert_allclose(_np(o.quantile(x, q, axis=1)), np.quantile(x, q, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(o.quantile(x, [0.25, 0.75])), np.quantile(x, [0.25, 0.75]), rtol=1e-5)
    np.testing.assert_allclose(_np(o.quantile(x, [0.25, 0.75], axis=0, keepdims=True)),
                               np.quantile(x, [0.25, 0.75], axis=0, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(o.median(x, axis=0)), np.median(x, axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(o.percentile(x, 90)), np.percentile(x, 90), rtol=1e-5)
    np.testing.assert_allclose(_np(o.corrcoef(x)), np.corrcoef(x), rtol=1e-4, atol=1e-5)
    seq = np.array([1.0, 2.0, 2.0, 5.0], np.float32)
    vals = np.array([0.0, 2.0, 3.0, 9.0], np.float32)
    for side in ("left", "right"):
        np.testing.assert_array_equal(_np(o.searchsorted(seq, vals, side=side)), np.searchsorted(seq, vals, side=side))
    np.testing.assert_array_equal(_np(o.digitize(vals, seq)), np.digitize(vals, seq))
    np.testing.assert_array_equal(_np(o.bincount(np.array([0, 2, 2, 5]))), np.bincount([0, 2, 2, 5]))
    np.testing.assert_allclose(_np(o.bincount(np.array([0, 2, 2]), weights=np.array([0.5, 1.0, 2.0]))),
                               np.bincount([0, 2, 2], weights=[0.5, 1.0, 2.0]))
    a, b = rng.standard_normal((5, 3)).astype("float32"), rng.standard_normal((5, 3)).astype("float32")
    np.testing.assert_allclose(_np(o.cross(a, b)), np.cross(a, b), rtol=1e-5, atol=1e-6)
    d = np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(-1))
    np.testing.assert_allclose(_np(o.cdist(a, b)), d, rtol=1e-5)
    np.testing.assert_allclose(_np(o.cdist(a, b, p=1)), np.abs(a[:, None] - b[None]).sum(-1), rtol=1e-5)
    np.testing.assert_allclose(_np(o.vander(np.array([1.0, 2.0, 3.0]))), np.vander([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(_np(o.vander(np.array([1.0, 2.0]), 3, increasing=True)),
                               np.vander([1.0, 2.0], 3, increasing=True))


def test_utils_config():
    config = keras.utils.Config(learning_rate=0.1, layers=[4, 2])
    config.momentum = 0.9
    config["epochs"] = 3
    assert config.learning_rate == 0.1 and config["momentum"] == 0.9 and len(config) == 4
    assert json.loads(config.to_json()) == {"learning_rate": 0.1, "layers": [4, 2], "momentum": 0.9, "epochs": 3}
    config.freeze()
    with pytest.raises(ValueError, match="frozen"):
        config.epochs = 4
    with pytest.raises(AttributeError, match="Unknown attribute"):
        config.missing
    config.unfreeze()
    del config.momentum
    assert "momentum" not in config and config.as_dict()["epochs"] == 3


def test_mean_iou_on_a_segmentation_model():
    # The segmentation tutorials' use: per-pixel class scores against (batch, h, w, 1) masks.
    x = rng.random((8, 4, 4, 2)).astype("float32")
    y = (x[..., :1] > 0.5).astype("int32")
    model = keras.Sequential([keras.Input((4, 4, 2)), keras.layers.Conv2D(2, 1, activation="softmax")])
    model.compile("adam", loss="sparse_categorical_crossentropy",
                  metrics=[keras.metrics.MeanIoU(num_classes=2, sparse_y_pred=False)])
    model.fit(x, y, epochs=1, batch_size=4, verbose=0)
    logs = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    pred = model.predict(x, verbose=0).argmax(-1).ravel()
    truth = y.ravel()
    ious = [((pred == c) & (truth == c)).sum() / ((pred == c) | (truth == c)).sum()
            for c in (0, 1) if ((pred == c) | (truth == c)).any()]
    assert logs["mean_io_u"] == pytest.approx(np.mean(ious), abs=1e-6)
