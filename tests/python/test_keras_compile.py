"""Keras losses, metrics, optimizers and learning-rate schedules (issue 16), against Keras'
documented examples, closed forms, and numbers computed by TensorFlow 2.21 / Keras 3 kept as
data in tests/python/data/keras_compile_reference.json (never from weft itself)."""
import json
import math
import os

import numpy as np
import pytest

import weft
from weft import keras

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras_compile_reference.json")))
L, M, O = keras.losses, keras.metrics, keras.optimizers
S = O.schedules


# ---- losses -------------------------------------------------------------------------------------

def test_loss_docstring_examples():
    # Keras' docstrings: each loss object called on arrays returns the batch mean.
    assert float(L.CategoricalCrossentropy()([[0, 1, 0], [0, 0, 1]], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])) == \
        pytest.approx(1.177, abs=1e-3)
    assert float(L.SparseCategoricalCrossentropy()([1, 2], [[0.05, 0.95, 0], [0.1, 0.8, 0.1]])) == \
        pytest.approx(1.177, abs=1e-3)
    assert float(L.BinaryCrossentropy()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]])) == pytest.approx(0.815, abs=1e-3)
    assert float(L.MeanSquaredError()([[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]])) == pytest.approx(0.5)
    assert float(L.MeanAbsoluteError()([[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]])) == pytest.approx(0.5)
    assert float(L.Huber()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]])) == pytest.approx(0.155, abs=1e-3)
    # The TF quickstart's `loss_fn(y, logits).numpy()`: a closed form, -log softmax(logits)[y].
    logits = np.array([[1.0, 2.0, -1.0]], np.float32)
    v = L.SparseCategoricalCrossentropy(from_logits=True)(np.array([1]), logits).numpy()
    assert v == pytest.approx(-(2.0 - math.log(math.exp(1) + math.exp(2) + math.exp(-1))), rel=1e-6)


def test_losses_match_tensorflow():
    ref = REF["losses"]
    yt = np.array([[0, 1, 0], [0, 0, 1]], np.float32)
    yp = np.array([[0.05, 0.95, 0], [0.1, 0.8, 0.1]], np.float32)
    logits = np.array([[1.0, 2.0, -1.0], [0.5, -0.3, 2.2]], np.float32)
    bt = np.array([[0, 1], [0, 0]], np.float32)
    bp = np.array([[0.6, 0.4], [0.4, 0.6]], np.float32)
    got = {
        "cce_ls": L.CategoricalCrossentropy(label_smoothing=0.1)(yt, yp),
        "cce_logits": L.CategoricalCrossentropy(from_logits=True)(yt, logits),
        # Keras renormalizes probabilities that do not sum to 1, then clips.
        "cce_unnorm": L.CategoricalCrossentropy()(yt, np.array([[0.1, 0.9, 0.5], [0.2, 0.2, 0.2]], np.float32)),
        "scce_col": L.SparseCategoricalCrossentropy()(np.array([[1], [2]]), yp),  # (n, 1) labels
        "scce_logits": L.SparseCategoricalCrossentropy(from_logits=True)(np.array([1, 2]), logits),
        "bce_logits": L.BinaryCrossentropy(from_logits=True)(bt, np.array([[-18.6, 0.51], [2.94, -12.8]], np.float32)),
        "bce_ls": L.BinaryCrossentropy(label_smoothing=0.2)(bt, bp),
        # 0 and 1 probabilities are clipped by epsilon 1e-7: finite.
        "bce_extreme": L.BinaryCrossentropy()(bt, np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)),
        "bce_vec": L.BinaryCrossentropy()(np.array([0., 1., 1.]), np.array([[0.2], [0.7], [0.9]], np.float32)),
        "huber_d": L.Huber(delta=0.3)(bt, np.array([[0.6, 1.9], [-0.4, 0.1]], np.float32)),
    }
    for k, v in got.items():
        assert float(v) == pytest.approx(ref[k], rel=1e-5, abs=1e-6), k


def test_loss_functions_names_and_reductions():
    per = L.mean_squared_error([[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]])
    np.testing.assert_allclose(per, [0.5, 0.5])
    np.testing.assert_allclose(L.binary_crossentropy([[1.0]], [[0.8]]), [-math.log(0.8)], rtol=1e-6)
    y, p = [[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]]
    assert float(L.MeanSquaredError(reduction="sum")(y, p)) == pytest.approx(1.0)
    np.testing.assert_allclose(L.MeanSquaredError(reduction="none")(y, p), [0.5, 0.5])
    # Keras: sample weights scale each example, then the mean over the batch.
    assert float(L.MeanSquaredError()(y, p, sample_weight=[0.7, 0.3])) == pytest.approx(0.25)
    for name, want in [("sparse_categorical_crossentropy", "sparse_categorical_crossentropy"),
                       ("categorical_crossentropy", "categorical_crossentropy"), ("mse", "mean_squared_error"),
                       ("mae", "mean_absolute_error"), ("binary_crossentropy", "binary_crossentropy"),
                       ("huber", "huber"), ("MeanSquaredError", "mean_squared_error")]:
        assert L.get(name)._cpp.name == want
    assert L.get(L.binary_crossentropy)._cpp.name == "binary_crossentropy"
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"unknown loss 'focal' \(known: .*binary_crossentropy"):
        L.get("focal")
    with pytest.raises(ValueError, match="reduction"):
        L.MeanSquaredError(reduction="mean")


# ---- metrics ------------------------------------------------------------------------------------

def test_metric_docstring_examples_and_accumulation():
    ref = REF["metrics"]
    m = M.AUC(num_thresholds=3)
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    assert float(m.result()) == pytest.approx(0.75)  # Keras' docstring
    assert float(M.Precision()([0, 1, 1, 1], [1, 0, 1, 1])) == pytest.approx(2 / 3)
    assert float(M.Recall()([0, 1, 1, 1], [1, 0, 1, 1])) == pytest.approx(2 / 3)
    assert float(M.BinaryAccuracy()([[1], [1], [0], [0]], [[0.98], [1], [0], [0.6]])) == pytest.approx(0.75)
    assert float(M.Accuracy()([[1], [2], [3], [4]], [[0], [2], [3], [4]])) == pytest.approx(0.75)  # exact equality
    assert float(M.CategoricalAccuracy()([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])) == 0.5
    assert float(M.SparseCategoricalAccuracy()([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])) == 0.5
    assert float(M.TopKCategoricalAccuracy(k=1)([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])) == 0.5
    assert float(M.SparseTopKCategoricalAccuracy(k=1)([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]])) == 0.5
    # Two batches accumulate confusion counts (TensorFlow's numbers), not a mean of batch values.
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1, 0, 0], np.float32)
    p = np.array([0.1, 0.8, 0.35, 0.4, 0.9, 0.05, 0.6, 0.55, 0.7, 0.2], np.float32)
    for cls, key in [(M.AUC, "auc200_2batches"), (M.Precision, "precision_2batches"), (M.Recall, "recall_2batches")]:
        m = cls()
        m.update_state(y[:6], p[:6])
        m.update_state(y[6:], p[6:])
        assert float(m.result()) == pytest.approx(ref[key], abs=1e-6), key
        m.reset_state()
        assert float(m.result()) == 0.0
    m = M.AUC(curve="PR")  # precision-recall, Keras' interpolation
    m.update_state(y[:6], p[:6])
    m.update_state(y[6:], p[6:])
    assert float(m.result()) == pytest.approx(ref["pr_auc_2batches"], abs=1e-6)
    assert float(M.AUC(num_thresholds=3, curve="PR")([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])) == \
        pytest.approx(ref["pr_auc_3"], abs=1e-6)
    counts = []
    for cls in (M.TruePositives, M.FalsePositives, M.TrueNegatives, M.FalseNegatives):
        m = cls()
        m.update_state(y[:6], p[:6])
        m.update_state(y[6:], p[6:])
        counts.append(float(m.result()))
    assert counts == ref["counts_2batches"]
    # top-k: TF's in_top_k counts ties at the boundary as in.
    assert float(M.SparseTopKCategoricalAccuracy(k=1)([0], [[0.5, 0.5, 0.0]])) == 1.0


def _model(units, activation, seed=1):
    inp = keras.Input(shape=(3,))
    return keras.Model(inp, keras.layers.Dense(units, activation=activation)(inp))


X = np.random.default_rng(0).standard_normal((40, 3)).astype(np.float32)


@pytest.mark.parametrize("loss,units,labels,metric,kind", [
    # (loss, output units, labels, metric string, the accuracy Keras resolves it to: see
    # keras_compile_reference.json's accuracy_resolution, recorded from Keras' compile)
    ("mse", 1, np.random.default_rng(1).integers(0, 2, (40, 1)).astype(np.float32), "accuracy", "binary"),
    ("binary_crossentropy", 1, np.random.default_rng(1).integers(0, 2, 40).astype(np.float32), "acc", "binary"),
    ("sparse_categorical_crossentropy", 3, np.random.default_rng(2).integers(0, 3, 40), "accuracy", "sparse"),
    ("sparse_categorical_crossentropy", 3, np.random.default_rng(2).integers(0, 3, (40, 1)), "accuracy", "sparse"),
    ("categorical_crossentropy", 3, np.eye(3, dtype=np.float32)[np.random.default_rng(3).integers(0, 3, 40)],
     "accuracy", "categorical"),
    ("mse", 3, np.eye(3, dtype=np.float32)[np.random.default_rng(3).integers(0, 3, 40)], "accuracy", "categorical"),
])
def test_accuracy_resolution(loss, units, labels, metric, kind):
    model = _model(units, "sigmoid" if units == 1 else "softmax")
    model.compile(optimizer="sgd", loss=loss, metrics=[metric])
    logs = model.evaluate(X, labels, batch_size=7, verbose=0, return_dict=True)
    assert set(logs) == {"loss", metric}  # logged under the string given, as Keras
    assert model.metrics_names == ["loss", metric]
    assert model.evaluate(X, labels, batch_size=7, verbose=0) == [logs["loss"], logs[metric]]
    pred = model.predict(X)
    if kind == "binary":
        want = np.mean((pred > 0.5).astype(np.float32) == labels.reshape(pred.shape))
    elif kind == "sparse":
        want = np.mean(pred.argmax(1) == labels.reshape(-1))
    else:
        want = np.mean(pred.argmax(1) == labels.argmax(1))
    assert logs[metric] == pytest.approx(want, abs=1e-6)


def test_metric_objects_in_fit_and_evaluate_accumulate_over_the_epoch():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (64, 1)).astype(np.float32)
    x = (X[:1] + rng.standard_normal((64, 3)) + y).astype(np.float32)
    model = _model(1, "sigmoid")
    model.compile(optimizer=O.Adam(0.01), loss="binary_crossentropy",
                  metrics=[M.AUC(), M.Precision(), M.Recall(name="rec"), "binary_accuracy", "mse"])
    hist = model.fit(x, y, batch_size=16, epochs=2, verbose=0, validation_data=(x, y))
    assert {"loss", "auc", "precision", "rec", "binary_accuracy", "mse", "val_loss", "val_auc", "val_precision",
            "val_rec", "val_binary_accuracy", "val_mse"} == set(hist.history)
    logs = model.evaluate(x, y, batch_size=10, verbose=0, return_dict=True)
    pred = model.predict(x)
    # Evaluated in batches of 10, the values are those of the whole set at once (accumulated counts).
    for obj, key in [(M.AUC(), "auc"), (M.Precision(), "precision"), (M.Recall(), "rec")]:
        assert logs[key] == pytest.approx(float(obj(y, pred)), abs=1e-6), key
    assert logs["mse"] == pytest.approx(float(np.mean((pred - y) ** 2)), rel=1e-5)
    tp = np.sum((pred > 0.5) & (y > 0))
    assert logs["precision"] == pytest.approx(tp / max(np.sum(pred > 0.5), 1), abs=1e-6)
    assert hist.history["val_auc"][-1] == pytest.approx(logs["auc"], abs=1e-6)
    assert model.evaluate(x, y, verbose=0)[0] == pytest.approx(logs["loss"], rel=1e-5)


def test_top_k_metric_in_compile():
    labels = np.eye(5, dtype=np.float32)[np.random.default_rng(5).integers(0, 5, 40)]
    model = _model(5, "softmax")
    model.compile(optimizer="adam", loss="categorical_crossentropy",
                  metrics=["top_k_categorical_accuracy", M.TopKCategoricalAccuracy(k=2, name="top2")])
    logs = model.evaluate(X, labels, verbose=0, return_dict=True)
    pred = model.predict(X)
    rank = (pred > (pred * labels).sum(1, keepdims=True)).sum(1)
    assert logs["top_k_categorical_accuracy"] == pytest.approx(np.mean(rank < 5))
    assert logs["top2"] == pytest.approx(np.mean(rank < 2))


def test_metric_errors_name_what_is_wrong():
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"unknown metric 'f1' \(known: .*auc"):
        M.get("f1")
    model = _model(3, "softmax")
    with pytest.raises(weft.errors.InvalidArgumentError, match="auc.*labels of shape"):
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", metrics=["auc"])
        model.evaluate(X, np.zeros(40), verbose=0)
    with pytest.raises(NotImplementedError, match="summation_method"):
        M.AUC(summation_method="minoring")


# ---- optimizers ---------------------------------------------------------------------------------

OPT_X = np.array([[1., 2., -1.], [0.5, -1., 2.], [-2., 0.3, 1.], [1.5, 1., 0.]], np.float32)
OPT_Y = np.array([[1., -1.], [0., 2.], [1., 1.], [-1., 0.5]], np.float32)
OPTIMIZERS = {
    "sgd": lambda: O.SGD(0.1), "sgd_m": lambda: O.SGD(0.1, momentum=0.9),
    "sgd_n": lambda: O.SGD(0.1, momentum=0.9, nesterov=True), "adam": lambda: O.Adam(0.1),
    "adam_ams": lambda: O.Adam(0.1, amsgrad=True), "adamw": lambda: O.AdamW(0.1, weight_decay=0.1),
    "rmsprop": lambda: O.RMSprop(0.1), "rmsprop_mc": lambda: O.RMSprop(0.1, momentum=0.5, centered=True),
    "adagrad": lambda: O.Adagrad(0.1), "sgd_clipnorm": lambda: O.SGD(0.1, clipnorm=0.5),
    "sgd_clipvalue": lambda: O.SGD(0.1, clipvalue=0.1), "sgd_gclip": lambda: O.SGD(0.1, global_clipnorm=0.5),
    "adam_expdecay": lambda: O.Adam(S.ExponentialDecay(0.1, 2, 0.5)),
    "sgd_m_piecewise": lambda: O.SGD(S.PiecewiseConstantDecay([1, 2], [0.1, 0.05, 0.01]), momentum=0.9),
}


def _dense_model(opt):
    inp = keras.Input(shape=(3,))
    init = keras.initializers
    out = keras.layers.Dense(2, kernel_initializer=init.Constant(0.1), bias_initializer=init.Constant(-0.05))(inp)
    model = keras.Model(inp, out)
    model.compile(optimizer=opt, loss="mse")
    return model


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_tensorflow(name):
    # Four full-batch steps of a Dense(2) layer under MSE; TensorFlow's weights after them.
    model = _dense_model(OPTIMIZERS[name]())
    model.fit(OPT_X, OPT_Y, batch_size=4, epochs=4, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    ref = REF["optimizers"][name]
    np.testing.assert_allclose(kernel, ref["kernel"], atol=1e-5)  # float32 rounding of 4 steps
    np.testing.assert_allclose(bias, ref["bias"], atol=1e-5)  # float32 rounding of 4 steps


def test_adagrad_first_step_closed_form():
    # One step from w: acc = 0.1 + g^2; w -= lr * g / sqrt(acc + 1e-7) with g the MSE gradient.
    model = _dense_model(O.Adagrad(0.5))
    w0, b0 = np.full((3, 2), 0.1, np.float32), np.full(2, -0.05, np.float32)
    g_w = 2 * OPT_X.T @ (OPT_X @ w0 + b0 - OPT_Y) / OPT_Y.size
    model.train_on_batch(OPT_X, OPT_Y)
    np.testing.assert_allclose(model.get_weights()[0], w0 - 0.5 * g_w / np.sqrt(0.1 + g_w ** 2 + 1e-7), rtol=1e-5)


def test_optimizer_names_defaults_and_errors():
    for name, cls, lr in [("sgd", "SGD", 0.01), ("adam", "Adam", 0.001), ("adamw", "AdamW", 0.001),
                          ("rmsprop", "RMSprop", 0.001), ("adagrad", "Adagrad", 0.001)]:
        opt = O.get(name)
        assert opt.name == cls and float(opt.learning_rate) == pytest.approx(lr)
    assert O.AdamW().weight_decay == pytest.approx(0.004) and O.Adam().epsilon == pytest.approx(1e-7)
    assert O.legacy.Adam is O.Adam and O.experimental.AdamW is O.AdamW
    assert O.RMSprop().rho == pytest.approx(0.9) and O.Adagrad().initial_accumulator_value == pytest.approx(0.1)
    with pytest.raises(weft.errors.InvalidArgumentError, match=r"unknown optimizer 'lbfgs' \(known: .*rmsprop"):
        O.get("lbfgs")
    with pytest.raises(weft.errors.InvalidArgumentError, match="only one of clipnorm"):
        O.SGD(clipnorm=1.0, clipvalue=0.5)
    with pytest.raises(weft.errors.InvalidArgumentError, match="momentum must be in"):
        O.SGD(momentum=1.5)


def test_learning_rate_is_readable_and_settable_between_steps():
    opt = O.SGD(0.1)
    model = _dense_model(opt)
    assert model.optimizer is opt and float(opt.learning_rate) == pytest.approx(0.1)
    opt.learning_rate = 0.01  # what ReduceLROnPlateau does between epochs
    assert float(model.optimizer.learning_rate) == pytest.approx(0.01)
    w0 = model.get_weights()[0]
    g_w = 2 * OPT_X.T @ (OPT_X @ w0 - 0.05 - OPT_Y) / OPT_Y.size
    model.train_on_batch(OPT_X, OPT_Y)
    np.testing.assert_allclose(model.get_weights()[0], w0 - 0.01 * g_w, rtol=1e-5)
    assert int(opt.iterations) == 1
    opt.learning_rate.assign(0.002)  # tf.Variable style, as Keras 3 scripts do
    assert opt.learning_rate.numpy() == pytest.approx(0.002)
    sched = _dense_model(O.Adam(S.ExponentialDecay(0.1, 10, 0.5))).optimizer
    assert float(sched.learning_rate) == pytest.approx(0.1)
    with pytest.raises(TypeError, match="not settable"):
        sched.learning_rate = 0.5


# ---- schedules ----------------------------------------------------------------------------------

def test_schedules_follow_keras_formulas():
    ref = REF["schedules"]
    exp = S.ExponentialDecay(0.1, 10, 0.5)
    for step, want in zip([0, 5, 10, 25], ref["exp"]):
        assert float(exp(step)) == pytest.approx(0.1 * 0.5 ** (step / 10)) == pytest.approx(want)
    stair = S.ExponentialDecay(0.1, 10, 0.5, staircase=True)
    for step, want in zip([0, 5, 10, 25], ref["exp_stair"]):
        assert float(stair(step)) == pytest.approx(0.1 * 0.5 ** (step // 10)) == pytest.approx(want)
    piece = S.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    assert [float(piece(s)) for s in [0, 10, 11, 20, 21, 100]] == pytest.approx(ref["piece"])
    cos = S.CosineDecay(0.1, 100, alpha=0.1)
    for step, want in zip([0, 25, 50, 100, 200], ref["cos"]):
        closed = 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * min(step, 100) / 100)) + 0.1)
        assert float(cos(step)) == pytest.approx(closed) == pytest.approx(want, rel=1e-6)
    warm = S.CosineDecay(0.0, 100, warmup_target=0.1, warmup_steps=10)
    assert [float(warm(s)) for s in [0, 5, 10, 60, 110, 200]] == pytest.approx(ref["cos_warm"], abs=1e-7)
    with pytest.raises(weft.errors.InvalidArgumentError, match="one more entry than boundaries"):
        S.PiecewiseConstantDecay([10], [1.0])


def test_python_schedule_subclass_drives_training():
    class InverseSqrt(S.LearningRateSchedule):  # the Transformer tutorial's shape of schedule
        def __init__(self, scale):
            super().__init__()
            self.scale = scale
            self.seen = []

        def __call__(self, step):
            self.seen.append(int(step))
            return self.scale / math.sqrt(float(step) + 1.0)

    sched = InverseSqrt(0.5)
    model = _dense_model(O.SGD(sched))
    w0 = model.get_weights()[0]
    model.fit(OPT_X, OPT_Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    assert sched.seen[:2] == [0, 1]
    # Two SGD steps with rates 0.5 and 0.5 / sqrt(2), by hand.
    w, b = w0.copy(), np.full(2, -0.05, np.float32)
    for lr in (0.5, 0.5 / math.sqrt(2)):
        err = OPT_X @ w + b - OPT_Y
        w, b = w - lr * 2 * OPT_X.T @ err / OPT_Y.size, b - lr * 2 * err.sum(0) / OPT_Y.size
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    with pytest.raises(TypeError, match="not settable"):
        model.optimizer.learning_rate = 0.1


def test_optimizer_keyword_arguments_as_keras():
    with pytest.warns(UserWarning, match="decay"):
        O.Adam(decay=0.1)
    with pytest.raises(ValueError, match="not recognized"):
        O.Adam(lr=0.1)  # Keras 3 rejects the old name too
    with pytest.raises(NotImplementedError, match="use_ema"):
        O.SGD(use_ema=True)


def test_compile_takes_keras_arguments():
    model = _model(1, None)
    model.compile(loss="mse", run_eagerly=True, steps_per_execution=4, jit_compile=False, loss_weights=[1.0])
    assert model.optimizer.name == "RMSprop"  # Keras' default optimizer
    assert model.evaluate(X, np.zeros((40, 1), np.float32), verbose=0) >= 0.0
    with pytest.raises(NotImplementedError, match="loss_weights"):
        model.compile(loss="mse", loss_weights=0.5)
    with pytest.raises(NotImplementedError, match="weighted_metrics"):
        model.compile(loss="mse", weighted_metrics=["mae"])


def test_metric_functions_per_example_and_in_compile():
    # Keras' docstring examples of the metric functions.
    np.testing.assert_allclose(M.sparse_categorical_accuracy([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]), [0, 1])
    np.testing.assert_allclose(M.categorical_accuracy([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]]),
                               [0, 1])
    np.testing.assert_allclose(M.binary_accuracy([[1], [1], [0], [0]], [[1], [1], [0], [0]]), [1, 1, 1, 1])
    np.testing.assert_allclose(M.top_k_categorical_accuracy([[0, 0, 1], [0, 1, 0]], [[0.1, 0.9, 0.8],
                                                                                    [0.05, 0.95, 0]], k=1), [0, 1])
    np.testing.assert_allclose(M.sparse_top_k_categorical_accuracy([2, 1], [[0.1, 0.9, 0.8], [0.05, 0.95, 0]], k=1),
                               [0, 1])
    labels = np.random.default_rng(6).integers(0, 3, 40)
    model = _model(3, "softmax")
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy",
                  metrics=[M.sparse_categorical_accuracy, M.sparse_top_k_categorical_accuracy])
    logs = model.evaluate(X, labels, verbose=0, return_dict=True)
    assert logs["sparse_categorical_accuracy"] == pytest.approx(np.mean(model.predict(X).argmax(1) == labels))
    assert logs["sparse_top_k_categorical_accuracy"] == 1.0  # 3 classes, k = 5


def test_other_keras_losses_match_tensorflow():
    ref = REF["losses"]
    ry = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]], np.float32)
    rp = np.array([[1.5, 1.0, 0.2], [0.4, -0.5, 2.0]], np.float32)
    pos = np.array([[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]], np.float32)
    pos_p = np.array([[0.1, 0.6, 0.3], [0.5, 0.3, 0.2]], np.float32)
    got = {
        "mape": L.MeanAbsolutePercentageError()(ry, rp),
        "msle": L.MeanSquaredLogarithmicError()(np.abs(ry), np.abs(rp)),
        "logcosh": L.LogCosh()(ry, rp),
        "hinge01": L.Hinge()(np.array([[0., 1., 1.], [1., 0., 0.]]), rp),  # 0/1 labels become -1/1
        "hinge_pm": L.Hinge()(np.array([[-1., 1., 1.], [1., -1., -1.]]), rp),
        "squared_hinge": L.SquaredHinge()(np.array([[0., 1., 1.], [1., 0., 0.]]), rp),
        "kld": L.KLDivergence()(pos, pos_p),
        "poisson": L.Poisson()(pos, pos_p),
        "cosine": L.CosineSimilarity()(ry, rp),
    }
    for k, v in got.items():
        assert float(v) == pytest.approx(ref[k], rel=1e-5), k
    for name in ["mape", "msle", "logcosh", "kld", "poisson", "hinge", "squared_hinge", "cosine_similarity"]:
        L.get(name)
    model = _model(1, None)
    model.compile(optimizer="sgd", loss="msle", metrics=["mape", "logcosh"])
    y = np.abs(np.random.default_rng(7).standard_normal((40, 1))).astype(np.float32) + 1
    logs = model.evaluate(X, y, verbose=0, return_dict=True)
    pred = model.predict(X)
    assert logs["mape"] == pytest.approx(100 * np.mean(np.abs(y - pred) / y), rel=1e-4)
    x = pred - y
    assert logs["logcosh"] == pytest.approx(np.mean(np.log(np.cosh(x))), rel=1e-4)


def test_mirrored_replicas_add_their_metric_statistics():
    # Two replicas each see half of every batch; their statistics add up to the whole batch's,
    # so with a zero learning rate the training epoch's metrics equal evaluate's.
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, (64, 1)).astype(np.float32)
    x = (rng.standard_normal((64, 3)) + y).astype(np.float32)
    strategy = weft.distribute.MirroredStrategy(["/device:CPU:0", "/device:CPU:1"])
    with strategy.scope():
        model = _model(1, "sigmoid")
        model.compile(optimizer=O.SGD(0.0), loss="binary_crossentropy", metrics=["accuracy", M.AUC(), M.Recall()])
    hist = model.fit(x, y, batch_size=16, epochs=1, verbose=0, shuffle=False)
    logs = model.evaluate(x, y, verbose=0, return_dict=True)
    for key in ("accuracy", "auc", "recall", "loss"):
        assert hist.history[key][0] == pytest.approx(logs[key], rel=1e-5), key


def test_optimizer_config_round_trip():
    for opt in [O.SGD(0.05, momentum=0.8, nesterov=True, clipnorm=2.0), O.Adam(0.002, amsgrad=True),
                O.AdamW(weight_decay=0.01, global_clipnorm=1.0), O.RMSprop(rho=0.8, centered=True),
                O.Adagrad(initial_accumulator_value=0.2, clipvalue=0.5),
                O.Adam(S.ExponentialDecay(0.1, 10, 0.5))]:
        config = opt.get_config()
        again = type(opt).from_config(config)
        assert repr(again) == repr(opt) and again.get_config().keys() == config.keys()
    assert O.SGD(0.05, momentum=0.8).get_config()["momentum"] == pytest.approx(0.8)


def test_metric_config_round_trip():
    for m in [M.AUC(num_thresholds=50, name="roc"), M.Precision(thresholds=0.3), M.Recall(name="r"),
              M.BinaryAccuracy(threshold=0.7), M.TopKCategoricalAccuracy(k=3), M.SparseCategoricalAccuracy()]:
        again = type(m).from_config(m.get_config())
        assert again.get_config() == m.get_config() and again.name == m.name
    assert M.AUC(num_thresholds=50).get_config()["num_thresholds"] == 50


def test_imbalanced_data_tutorial_metrics():
    # The metric list of TensorFlow's "Classification on imbalanced data" tutorial, in compile.
    metrics = [M.BinaryCrossentropy(name="cross entropy"), M.MeanSquaredError(name="Brier score"),
               M.TruePositives(name="tp"), M.FalsePositives(name="fp"), M.TrueNegatives(name="tn"),
               M.FalseNegatives(name="fn"), M.BinaryAccuracy(name="accuracy"), M.Precision(name="precision"),
               M.Recall(name="recall"), M.AUC(name="auc"), M.AUC(name="prc", curve="PR")]
    rng = np.random.default_rng(9)
    y = (rng.random((64, 1)) < 0.2).astype(np.float32)
    x = (rng.standard_normal((64, 3)) + y).astype(np.float32)
    model = _model(1, "sigmoid")
    model.compile(optimizer=O.Adam(1e-3), loss=L.BinaryCrossentropy(), metrics=metrics)
    logs = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    pred = model.predict(x)
    above = pred > 0.5
    assert logs["tp"] == np.sum(above & (y > 0)) and logs["fn"] == np.sum(~above & (y > 0))
    assert logs["fp"] == np.sum(above & (y == 0)) and logs["tn"] == np.sum(~above & (y == 0))
    assert logs["Brier score"] == pytest.approx(np.mean((pred - y) ** 2), rel=1e-5)
    assert logs["prc"] == pytest.approx(float(M.AUC(curve="PR")(y, pred)), abs=1e-6)


def test_standalone_string_metrics():
    m = M.get("accuracy")  # resolves from the arrays, as in compile
    assert float(m([[2], [1]], [[0.1, 0.6, 0.3], [0.05, 0.95, 0]])) == 0.5
    assert float(M.get("acc")([[1], [0]], [[0.7], [0.8]])) == 0.5
