"""The rest of the everyday Keras surface (issue 16): optimizers Nadam / Adamax / Adadelta / Ftrl /
Lion and schedules InverseTimeDecay / PolynomialDecay / CosineDecayRestarts against numbers
computed by TensorFlow 2.21 / Keras 3 (tests/python/data/keras_more_reference.json, made by
gen_keras_more_reference.py); regularizers, initializers, constraints and the noise / crop /
Lambda layers against closed forms and numpy (never against weft itself)."""
import json
import math
import os

import numpy as np
import pytest

import weft
import weft as tf
from weft import keras

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras_more_reference.json")))
O, S = keras.optimizers, keras.optimizers.schedules
I, R, C, Ly = keras.initializers, keras.regularizers, keras.constraints, keras.layers

# ---- optimizers ---------------------------------------------------------------------------------

X = np.array([[1., 2., -1.], [0.5, -1., 2.], [-2., 0.3, 1.], [1.5, 1., 0.]], np.float32)
Y = np.array([[1., -1.], [0., 2.], [1., 1.], [-1., 0.5]], np.float32)
OPTIMIZERS = {
    "nadam": lambda: O.Nadam(0.1), "nadam_b": lambda: O.Nadam(0.05, beta_1=0.8, beta_2=0.99),
    "adamax": lambda: O.Adamax(0.1), "adadelta": lambda: O.Adadelta(1.0),
    "adadelta_rho": lambda: O.Adadelta(0.5, rho=0.8), "ftrl": lambda: O.Ftrl(0.1),
    "ftrl_reg": lambda: O.Ftrl(0.1, learning_rate_power=-0.7, l1_regularization_strength=0.01,
                               l2_regularization_strength=0.02, l2_shrinkage_regularization_strength=0.03, beta=0.5),
    "lion": lambda: O.Lion(0.01), "nadam_clip": lambda: O.Nadam(0.1, clipnorm=0.5),
}


def _dense(opt, **kwargs):
    inp = keras.Input(shape=(3,))
    out = Ly.Dense(2, kernel_initializer=I.Constant(0.1), bias_initializer=I.Constant(-0.05), **kwargs)(inp)
    model = keras.Model(inp, out)
    model.compile(optimizer=opt, loss="mse")
    return model


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_tensorflow(name):
    model = _dense(OPTIMIZERS[name]())
    model.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0)
    kernel, bias = model.get_weights()
    ref = REF["optimizers"][name]
    np.testing.assert_allclose(kernel, ref["kernel"], atol=2e-5)  # float32 rounding over 4 steps
    np.testing.assert_allclose(bias, ref["bias"], atol=2e-5)


def test_lion_first_step_closed_form():
    # m starts at 0: the first step is w -= lr * sign((1 - beta_1) * g).
    model = _dense(O.Lion(0.01))
    w0, b0 = np.full((3, 2), 0.1, np.float32), np.full(2, -0.05, np.float32)
    g_w = 2 * X.T @ (X @ w0 + b0 - Y) / Y.size
    model.train_on_batch(X, Y)
    np.testing.assert_allclose(model.get_weights()[0], w0 - 0.01 * np.sign(g_w), rtol=1e-6)


def test_new_optimizer_names_defaults_and_errors():
    for name, cls in [("nadam", "Nadam"), ("adamax", "Adamax"), ("adadelta", "Adadelta"), ("ftrl", "Ftrl"),
                      ("lion", "Lion")]:
        opt = O.get(name)
        assert opt.name == cls and float(opt.learning_rate) == pytest.approx(0.001)
    assert O.Adadelta().rho == pytest.approx(0.95) and O.Lion().beta_2 == pytest.approx(0.99)
    assert O.Nadam().beta_1 == pytest.approx(0.9) and O.Adamax().beta_2 == pytest.approx(0.999)
    f = O.Ftrl()
    assert (f.learning_rate_power, f.initial_accumulator_value, f.beta) == pytest.approx((-0.5, 0.1, 0.0))
    assert O.legacy.Nadam is O.Nadam and O.experimental.Adadelta is O.Adadelta
    c = O.Ftrl(0.2, l1_regularization_strength=0.5).get_config()
    assert c["l1_regularization_strength"] == pytest.approx(0.5) and c["learning_rate"] == pytest.approx(0.2)
    assert O.Nadam.from_config(O.Nadam(0.3, beta_1=0.7).get_config()).beta_1 == pytest.approx(0.7)
    with pytest.raises(weft.errors.InvalidArgumentError, match="learning_rate_power must be <= 0"):
        O.Ftrl(learning_rate_power=0.5)
    with pytest.raises(weft.errors.InvalidArgumentError, match="rho must be in"):
        O.Adadelta(rho=1.5)


# ---- schedules ----------------------------------------------------------------------------------

SCHEDULES = {
    "inverse_time": lambda: S.InverseTimeDecay(0.1, 10, 0.5),
    "inverse_time_stair": lambda: S.InverseTimeDecay(0.1, 10, 0.5, staircase=True),
    "polynomial": lambda: S.PolynomialDecay(0.1, 20),
    "polynomial_power": lambda: S.PolynomialDecay(0.1, 20, end_learning_rate=0.01, power=2.0),
    "polynomial_cycle": lambda: S.PolynomialDecay(0.1, 20, end_learning_rate=0.01, power=0.5, cycle=True),
    "cosine_restarts": lambda: S.CosineDecayRestarts(0.1, 10),
    "cosine_restarts_m": lambda: S.CosineDecayRestarts(0.1, 10, t_mul=1.0, m_mul=0.5, alpha=0.1),
    "cosine_restarts_t": lambda: S.CosineDecayRestarts(0.1, 8, t_mul=1.5, m_mul=0.9),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedules_match_tensorflow(name):
    sched = SCHEDULES[name]()
    got = [float(sched(s)) for s in REF["schedule_steps"]]
    np.testing.assert_allclose(got, REF["schedules"][name], rtol=1e-6, atol=1e-8)


def test_schedule_closed_forms_and_training():
    inv = S.InverseTimeDecay(1.0, 4, 1.0)
    assert float(inv(8)) == pytest.approx(1.0 / 3.0)
    poly = S.PolynomialDecay(0.5, 10, end_learning_rate=0.1)
    assert float(poly(5)) == pytest.approx(0.3) and float(poly(50)) == pytest.approx(0.1)
    # SGDR with t_mul=2: periods of 10, 20, 40 steps; step 10 restarts at the full rate.
    sgdr = S.CosineDecayRestarts(1.0, 10)
    assert float(sgdr(10)) == pytest.approx(1.0) and float(sgdr(20)) == pytest.approx(0.5)
    model = _dense(O.SGD(S.InverseTimeDecay(0.1, 1, 1.0)))
    model.fit(X, Y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    w, b = np.full((3, 2), 0.1, np.float32), np.full(2, -0.05, np.float32)
    for lr in (0.1, 0.05):  # 0.1 / (1 + step)
        err = X @ w + b - Y
        w, b = w - lr * 2 * X.T @ err / Y.size, b - lr * 2 * err.sum(0) / Y.size
    np.testing.assert_allclose(model.get_weights()[0], w, rtol=1e-5)
    with pytest.raises(weft.errors.InvalidArgumentError, match="decay_steps must be positive"):
        S.PolynomialDecay(0.1, 0)


# ---- regularizers -------------------------------------------------------------------------------

def test_l1_l2_regularizers_add_their_penalties_to_the_loss():
    model = _dense("sgd", kernel_regularizer=R.L1(0.1), bias_regularizer=R.L1L2(l1=0.2, l2=0.3))
    w, b = np.full((3, 2), 0.1, np.float32), np.full(2, -0.05, np.float32)
    mse = np.mean((X @ w + b - Y) ** 2)
    want = mse + 0.1 * np.abs(w).sum() + 0.2 * np.abs(b).sum() + 0.3 * (b ** 2).sum()
    assert model.evaluate(X, Y, verbose=0) == pytest.approx(want, rel=1e-5)
    # The training step's gradient has the penalties' gradients: l1 * sign(w).
    sgd = _dense(O.SGD(0.1), kernel_regularizer=R.l1(0.1))
    sgd.train_on_batch(X, Y)
    g_w = 2 * X.T @ (X @ w + b - Y) / Y.size + 0.1 * np.sign(w)
    np.testing.assert_allclose(sgd.get_weights()[0], w - 0.1 * g_w, rtol=1e-5)


def test_regularizer_defaults_and_errors():
    assert (R.l1_l2().l1, R.l1_l2().l2) == (0.01, 0.01) and (R.L1L2().l1, R.L1L2().l2) == (0.0, 0.0)
    assert R.L1().l1 == 0.01 and R.l2(0.5).l2 == 0.5
    assert R.L2(0.5)(np.array([1.0, -2.0])) == pytest.approx(2.5)  # as Keras: callable on values
    assert R.L1L2.from_config(R.L1L2(0.1, 0.2).get_config()).l2 == pytest.approx(0.2)
    with pytest.raises(TypeError, match="custom regularizer function is not supported"):
        Ly.Dense(2, kernel_regularizer=lambda w: 0.1 * w)
    with pytest.raises(ValueError, match="l1"):
        R.L1(-1.0)


# ---- initializers -------------------------------------------------------------------------------

def _kernel(init, shape=(400, 300)):
    model = keras.Sequential([keras.Input(shape=(shape[0],)), Ly.Dense(shape[1], kernel_initializer=init)])
    return model.get_weights()[0]


@pytest.mark.parametrize("init, std", [
    (I.HeNormal(seed=1), math.sqrt(2 / 400)), (I.HeUniform(seed=1), math.sqrt(2 / 400)),
    (I.LecunNormal(seed=1), math.sqrt(1 / 400)), (I.LecunUniform(seed=1), math.sqrt(1 / 400)),
    (I.GlorotNormal(seed=1), math.sqrt(2 / 700)), (I.GlorotUniform(seed=1), math.sqrt(2 / 700)),
    (I.VarianceScaling(3.0, "fan_out", "untruncated_normal", seed=1), math.sqrt(3 / 300)),
    (I.VarianceScaling(0.5, "fan_avg", "uniform", seed=1), math.sqrt(0.5 / 350)),
    (I.RandomNormal(0.0, 0.3, seed=1), 0.3), ("lecun_normal", math.sqrt(1 / 400)),
])
def test_variance_scaling_family_statistics(init, std):
    # TF's documented variances (scale / fan); 120,000 draws: the sample std is within 1%.
    w = _kernel(init)
    assert abs(w.mean()) < 0.02 * std
    assert w.std() == pytest.approx(std, rel=0.01)


def test_uniform_truncated_and_fixed_initializers():
    u = _kernel(I.RandomUniform(-0.2, 0.6, seed=3))
    assert u.min() >= -0.2 and u.max() < 0.6 and u.mean() == pytest.approx(0.2, abs=0.005)
    lim = math.sqrt(3 / 400)  # lecun_uniform: U(-sqrt(3 / fan_in), +)
    assert np.abs(_kernel(I.lecun_uniform(seed=2))).max() <= lim
    t = _kernel(I.TruncatedNormal(1.0, 0.1, seed=4))
    # Keras' TruncatedNormal: stddev before the cut at 2 stddev (the result's std is 0.8796 of it).
    assert np.abs(t - 1.0).max() <= 0.2 + 1e-6 and t.std() == pytest.approx(0.1 * 0.87962566, rel=0.01)
    np.testing.assert_array_equal(_kernel(I.Constant(0.7), (4, 3)), np.full((4, 3), 0.7, np.float32))
    np.testing.assert_array_equal(_kernel(I.Identity(gain=2.0), (4, 3)), 2 * np.eye(4, 3, dtype=np.float32))
    np.testing.assert_array_equal(_kernel(I.identity(), (3, 3)), np.eye(3, dtype=np.float32))


@pytest.mark.parametrize("shape", [(50, 20), (20, 50)])
def test_orthogonal_initializer(shape):
    w = _kernel(I.Orthogonal(gain=1.5, seed=5), shape).astype(np.float64)
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, 1.5 ** 2 * np.eye(small), atol=1e-5)


def test_initializer_seeds_aliases_and_errors():
    np.testing.assert_array_equal(_kernel(I.he_normal(seed=9), (8, 4)), _kernel(I.HeNormal(seed=9), (8, 4)))
    assert not np.array_equal(_kernel(I.HeNormal(seed=9), (8, 4)), _kernel(I.HeNormal(seed=10), (8, 4)))
    assert I.get("he_uniform") is not None and "orthogonal" in repr(I.get("Orthogonal"))
    assert I.GlorotUniform.__name__ and I.glorot_uniform is I.GlorotUniform
    with pytest.raises(weft.errors.InvalidArgumentError, match="mode must be"):
        I.VarianceScaling(mode="fan_sum")
    with pytest.raises(weft.errors.InvalidArgumentError, match="unknown initializer 'he_norm'"):
        Ly.Dense(2, kernel_initializer="he_norm")
    with pytest.raises(weft.errors.InvalidArgumentError, match="identity: needs a 2-D shape"):
        keras.Sequential([keras.Input(shape=(4, 4, 1)), Ly.Conv2D(2, 3, kernel_initializer=I.Identity())]).get_weights()
    from weft.keras import _config
    data = _config.serialize(I.VarianceScaling(2.0, "fan_out", seed=3))
    assert data["class_name"] == "VarianceScaling" and data["config"]["mode"] == "fan_out"
    assert repr(_config.deserialize(data)) == repr(I.VarianceScaling(2.0, "fan_out", seed=3))


# ---- constraints --------------------------------------------------------------------------------

def _projected(constraint_np, **kwargs):
    """The kernel after one SGD(0.5) step, by numpy: the step, then the projection."""
    model = _dense(O.SGD(0.5), **kwargs)
    w, b = np.full((3, 2), 0.1, np.float32), np.full(2, -0.05, np.float32)
    err = X @ w + b - Y
    w1, b1 = w - 0.5 * 2 * X.T @ err / Y.size, b - 0.5 * 2 * err.sum(0) / Y.size
    model.train_on_batch(X, Y)
    return model.get_weights(), constraint_np(w1), b1


def test_constraints_project_after_each_update():
    def max_norm(w, m=0.3):
        n = np.sqrt((w ** 2).sum(0, keepdims=True))
        return w * np.clip(n, 0, m) / (1e-7 + n)

    (k, b), want, b1 = _projected(max_norm, kernel_constraint=C.MaxNorm(0.3), bias_constraint=C.NonNeg())
    np.testing.assert_allclose(k, want, rtol=1e-5)
    np.testing.assert_allclose(b, b1 * (b1 >= 0), rtol=1e-5)
    assert np.sqrt((k ** 2).sum(0)).max() <= 0.3 + 1e-6
    (k, _), want, _ = _projected(lambda w: w / (1e-7 + np.sqrt((w ** 2).sum(1, keepdims=True))),
                                 kernel_constraint=C.UnitNorm(axis=1))
    np.testing.assert_allclose(k, want, rtol=1e-5)

    def min_max(w):
        n = np.sqrt((w ** 2).sum(0, keepdims=True))
        return w * (0.5 * np.clip(n, 0.8, 1.0) + 0.5 * n) / (1e-7 + n)

    (k, _), want, _ = _projected(min_max, kernel_constraint=C.MinMaxNorm(0.8, 1.0, rate=0.5))
    np.testing.assert_allclose(k, want, rtol=1e-5)


def test_constraint_names_and_errors():
    assert C.max_norm is C.MaxNorm and C.non_neg is C.NonNeg
    assert C.MaxNorm(3).max_value == 3.0 and list(C.MaxNorm(axis=[0, 1, 2]).axis) == [0, 1, 2]
    with pytest.raises(TypeError, match="custom constraint function"):
        Ly.Dense(2, kernel_constraint=lambda w: w)
    model = keras.Sequential([keras.Input(shape=(3,)), Ly.Dense(2, kernel_constraint=C.MaxNorm(axis=3))])
    with pytest.raises(weft.errors.InvalidArgumentError, match="axis 3 is out of range"):
        model.compile("sgd", "mse")
        model.train_on_batch(X, Y)


# ---- layers -------------------------------------------------------------------------------------

def _noise_loss(layer, x, y, units_init="ones"):
    """(training loss, evaluate loss) of layer -> Flatten -> Dense(1, ones) with SGD(0): the
    training pass sees the noise, evaluate does not."""
    model = keras.Sequential([keras.Input(shape=x.shape[1:]), layer, Ly.Flatten(),
                              Ly.Dense(1, kernel_initializer=units_init, use_bias=False)])
    model.compile(optimizer=O.SGD(0.0), loss="mse")
    train = model.fit(x, y, batch_size=len(x), epochs=1, verbose=0).history["loss"][0]
    return train, model.evaluate(x, y, verbose=0, batch_size=len(x)), model


def test_gaussian_noise_and_dropout_train_only():
    n, d = 8192, 16
    train, evaluation, model = _noise_loss(Ly.GaussianNoise(0.5, seed=1), np.zeros((n, d), np.float32),
                                           np.zeros((n, 1), np.float32))
    assert train == pytest.approx(d * 0.25, rel=0.05) and evaluation == 0.0  # var of a sum of d N(0, 0.25)
    x = np.random.default_rng(0).normal(size=(5, d)).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), x.sum(1, keepdims=True), rtol=1e-5)
    ones = np.ones((n, d), np.float32)
    train, evaluation, _ = _noise_loss(Ly.GaussianDropout(0.2, seed=2), ones, np.full((n, 1), d, np.float32))
    assert train == pytest.approx(d * 0.2 / 0.8, rel=0.05) and evaluation == pytest.approx(0.0, abs=1e-6)


def test_spatial_dropout_drops_whole_channels():
    n, steps, c, rate = 4096, 6, 5, 0.3
    x = np.ones((n, steps, c), np.float32)
    train, evaluation, _ = _noise_loss(Ly.SpatialDropout1D(rate, seed=3), x, np.full((n, 1), steps * c, np.float32))
    # Per channel steps * keep / (1 - rate): variance steps^2 rate / (1 - rate) (independent
    # elements would give steps rate / (1 - rate)).
    assert train == pytest.approx(c * steps ** 2 * rate / (1 - rate), rel=0.06) and evaluation == 0.0
    x2 = np.ones((n, 3, 2, c), np.float32)
    train, _, _ = _noise_loss(Ly.SpatialDropout2D(rate, seed=4), x2, np.full((n, 1), 6 * c, np.float32))
    assert train == pytest.approx(c * 36 * rate / (1 - rate), rel=0.06)
    with pytest.raises(weft.errors.InvalidArgumentError, match="expects inputs of rank 3"):
        Ly.SpatialDropout1D(0.5)(keras.Input(shape=(4,)))


def test_alpha_dropout_keras_formula():
    rate, n = 0.25, 1 << 16
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - rate) * (1 + rate * alpha_p ** 2)) ** -0.5
    b = -a * alpha_p * rate
    kept, dropped = a + b, a * alpha_p + b  # the output for an input of 1
    train, evaluation, _ = _noise_loss(Ly.AlphaDropout(rate, seed=5), np.ones((n, 1), np.float32),
                                       np.zeros((n, 1), np.float32))
    assert train == pytest.approx((1 - rate) * kept ** 2 + rate * dropped ** 2, rel=0.02)
    assert evaluation == pytest.approx(1.0)


def test_center_crop():
    x = np.arange(2 * 7 * 6 * 3, dtype=np.float32).reshape(2, 7, 6, 3)
    model = keras.Sequential([keras.Input(shape=(7, 6, 3)), Ly.CenterCrop(4, 3)])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x[:, 1:5, 1:4, :])
    assert model.output_shape == (None, 4, 3, 3)


def test_lambda_traces_weft_ops_and_activations():
    x = np.random.default_rng(1).normal(size=(6, 4)).astype(np.float32)
    inp = keras.Input(shape=(4,))
    h = Ly.Lambda(lambda t: tf.square(t) * 2.0 + 1.0)(inp)
    out = Ly.Lambda(keras.activations.relu)(Ly.Lambda(lambda t, k: t - k, arguments={"k": 3.0})(h))
    model = keras.Model(inp, out)
    np.testing.assert_allclose(model.predict(x, verbose=0), np.maximum(2 * x ** 2 + 1 - 3, 0), rtol=1e-5)
    seq = keras.Sequential([keras.Input(shape=(4,)), Ly.Lambda(lambda t: tf.reduce_sum(t, axis=1, keepdims=True))])
    np.testing.assert_allclose(seq.predict(x, verbose=0), x.sum(1, keepdims=True), rtol=1e-5)
    assert seq.output_shape == (None, 1)


def test_lambda_trains_through_and_rejects_numpy():
    # Dense -> Lambda(x * 3): the Dense weights get the gradient through the traced ops.
    inp = keras.Input(shape=(3,))
    out = Ly.Lambda(lambda t: t * 3.0)(Ly.Dense(2, kernel_initializer=I.Constant(0.1), bias_initializer="zeros")(inp))
    model = keras.Model(inp, out)
    model.compile(optimizer=O.SGD(0.01), loss="mse")
    model.train_on_batch(X, Y)
    w = np.full((3, 2), 0.1, np.float32)
    g = 3 * 2 * X.T @ (3 * X @ w - Y) / Y.size
    np.testing.assert_allclose(model.get_weights()[0], w - 0.01 * g, rtol=1e-5)
    with pytest.raises(TypeError, match="numpy"):
        Ly.Lambda(lambda t: np.exp(t))(keras.Input(shape=(3,)))
    with pytest.raises(NotImplementedError, match="masks"):
        Ly.Lambda(lambda t: t, mask=lambda i, m: m)


def test_model_with_new_layers_saves_and_loads(tmp_path):
    model = keras.Sequential([keras.Input(shape=(4,)), Ly.GaussianNoise(0.1, seed=1),
                              Ly.Dense(3, kernel_initializer=I.Orthogonal(seed=2), kernel_regularizer=R.L1L2(0.01, 0.02),
                                       kernel_constraint=C.MaxNorm(2.0)),
                              Ly.AlphaDropout(0.1)])
    model.compile(optimizer=O.Nadam(0.01), loss="mse")
    x = np.random.default_rng(2).normal(size=(16, 4)).astype(np.float32)
    model.fit(x, np.zeros((16, 3), np.float32), epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    types = [layer["class_name"] for layer in loaded.get_config()["layers"]]
    assert types[:3] == ["GaussianNoise", "Dense", "AlphaDropout"] or "GaussianNoise" in types
    assert loaded.optimizer.name.lower() == "nadam"
    assert loaded.evaluate(x, np.zeros((16, 3), np.float32), verbose=0) == pytest.approx(
        model.evaluate(x, np.zeros((16, 3), np.float32), verbose=0), rel=1e-6)


# ---- metrics and losses -------------------------------------------------------------------------

M, L = keras.metrics, keras.losses


def test_new_metric_docstring_examples():
    # Keras' docstrings' numbers.
    yt, yp = [[0, 1], [0, 0]], [[1, 1], [0, 0]]
    assert float(M.RootMeanSquaredError()(yt, yp)) == pytest.approx(0.5)
    assert float(M.MeanSquaredLogarithmicError()(yt, yp)) == pytest.approx(0.12011322)
    assert float(M.LogCoshError()(yt, yp)) == pytest.approx(0.10844523)
    r2 = M.R2Score()
    r2.update_state([[1], [4], [3]], [[2], [4], [4]])
    assert float(r2.result()) == pytest.approx(0.57142854)
    m = M.Mean()
    m.update_state([1, 3, 5, 7])
    assert float(m.result()) == pytest.approx(4.0)
    m.reset_state()
    m.update_state([1, 3, 5, 7], sample_weight=[1, 1, 0, 0])
    assert float(m.result()) == pytest.approx(2.0)
    assert float(M.Sum()([1, 3, 5, 7])) == pytest.approx(16.0)
    assert float(L.CategoricalHinge()([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]])) == pytest.approx(1.4)
    np.testing.assert_allclose(L.categorical_hinge([[0, 1], [0, 0]], [[0.6, 0.4], [0.4, 0.6]]), [1.2, 1.6], rtol=1e-6)


def test_rmse_and_r2_accumulate_over_batches():
    rng = np.random.default_rng(3)
    y1, p1 = rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    y2, p2 = rng.normal(size=(7, 2)) + 1.0, rng.normal(size=(7, 2))
    y, p = np.concatenate([y1, y2]), np.concatenate([p1, p2])
    rmse, r2 = M.RootMeanSquaredError(), M.R2Score()
    for a, b in ((y1, p1), (y2, p2)):
        rmse.update_state(a, b)
        r2.update_state(a, b)
    assert float(rmse.result()) == pytest.approx(np.sqrt(((y - p) ** 2).mean()), rel=1e-5)
    want = np.mean(1 - ((y - p) ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0))
    assert float(r2.result()) == pytest.approx(want, rel=1e-5)


def test_new_metrics_in_compile_and_losses_by_name():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(40, 3)).astype(np.float32), rng.normal(size=(40, 2)).astype(np.float32)
    model = keras.Sequential([keras.Input(shape=(3,)), Ly.Dense(2)])
    model.compile(optimizer="sgd", loss="mse",
                  metrics=[M.RootMeanSquaredError(), M.R2Score(), "root_mean_squared_error", M.LogCoshError()])
    logs = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    p = model.predict(x, verbose=0).astype(np.float64)
    assert logs["root_mean_squared_error"] == pytest.approx(np.sqrt(((y - p) ** 2).mean()), rel=1e-5)
    assert logs["r2_score"] == pytest.approx(np.mean(1 - ((y - p) ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0)),
                                             rel=1e-4)
    e = p - y
    assert logs["logcosh"] == pytest.approx(np.mean(np.log(np.cosh(e))), rel=1e-5)
    with pytest.raises(TypeError, match="use it standalone"):
        model.compile(optimizer="sgd", loss="mse", metrics=[M.Mean()])
    cls = keras.Sequential([keras.Input(shape=(3,)), Ly.Dense(4, activation="softmax")])
    cls.compile(optimizer="sgd", loss="categorical_hinge")
    onehot = np.eye(4, dtype=np.float32)[rng.integers(0, 4, size=40)]
    q = cls.predict(x, verbose=0)
    want = np.maximum(((1 - onehot) * q).max(1) - (onehot * q).sum(1) + 1, 0).mean()
    assert cls.evaluate(x, onehot, verbose=0) == pytest.approx(want, rel=1e-5)
    with pytest.raises(weft.errors.InvalidArgumentError, match="R2Score expects 2D"):
        bad = keras.Sequential([keras.Input(shape=(3, 2)), Ly.Dense(2)])
        bad.compile(optimizer="sgd", loss="mse", metrics=[M.R2Score()])
        bad.evaluate(np.zeros((4, 3, 2), np.float32), np.zeros((4, 3, 2), np.float32), verbose=0)


def test_keras2_reduction_constants():
    R_ = L.Reduction
    assert (R_.AUTO, R_.NONE, R_.SUM, R_.SUM_OVER_BATCH_SIZE) == ("auto", "none", "sum", "sum_over_batch_size")
    mse = L.MeanSquaredError(reduction=R_.SUM)
    assert float(mse([[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]])) == pytest.approx(1.0)  # 0.5 + 0.5
    assert float(L.MeanSquaredError(reduction=R_.AUTO)([[0., 1.], [0., 0.]], [[1., 1.], [1., 0.]])) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        R_.validate("mean")


@pytest.mark.parametrize("key, make", [
    ("f1_t05", lambda: M.F1Score(threshold=0.5)), ("fbeta2_t05", lambda: M.FBetaScore(beta=2.0, threshold=0.5)),
    ("f1_none", lambda: M.F1Score()), ("f1_micro", lambda: M.F1Score(average="micro")),
    ("f1_macro", lambda: M.F1Score(average="macro", threshold=0.5)),
    ("fbeta_weighted", lambda: M.FBetaScore(average="weighted", beta=0.5))])
def test_fscores_match_tensorflow(key, make):
    fy = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0]], np.int32)
    fp = np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]], np.float32)
    fy2 = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]], np.int32)
    fp2 = np.array([[0.3, 0.3, 0.3], [0.0, 0.0, 0.0], [0.9, 0.05, 0.05], [0.1, 0.7, 0.2]], np.float32)
    m = make()
    m.update_state(fy, fp)
    m.update_state(fy2, fp2)
    np.testing.assert_allclose(m.result(), REF["fscores"][key], rtol=1e-5)


def test_f1_docstring_and_compile():
    # Keras' F1Score docstring: [0.5, 0.8, 0.6666667].
    m = M.F1Score(threshold=0.5)
    m.update_state(np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0]]),
                   np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]], np.float32))
    np.testing.assert_allclose(m.result(), [0.5, 0.8, 0.6666667], rtol=1e-5)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(30, 3)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=30)]
    model = keras.Sequential([keras.Input(shape=(3,)), Ly.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=[M.F1Score(average="macro")])
    logs = model.evaluate(x, y, batch_size=8, verbose=0, return_dict=True)
    q = model.predict(x, verbose=0)
    pred = (q >= q.max(1, keepdims=True)).astype(np.float64)
    tp, fp, fn = (y * pred).sum(0), ((1 - y) * pred).sum(0), (y * (1 - pred)).sum(0)
    p, r = tp / (tp + fp + 1e-7), tp / (tp + fn + 1e-7)
    assert logs["f1_score"] == pytest.approx(np.mean(2 * p * r / (p + r + 1e-7)), rel=1e-5, abs=1e-6)
    with pytest.raises(weft.errors.InvalidArgumentError, match="one score per class"):
        model.compile(optimizer="sgd", loss="categorical_crossentropy", metrics=[M.F1Score()])
        model.evaluate(x, y, verbose=0)
    with pytest.raises(weft.errors.InvalidArgumentError, match="average must be"):
        M.F1Score(average="samples")


def test_lambda_models_save_weights_but_not_a_lambda_config(tmp_path):
    model = keras.Sequential([keras.Input(shape=(3,)), Ly.Lambda(lambda t: t * 2.0), Ly.Dense(2)])
    model.compile("sgd", "mse")
    with pytest.raises(TypeError, match="lambda cannot be saved by name"):
        model.save(str(tmp_path / "m.keras"))
    model.save_weights(str(tmp_path / "m.weights.h5"))  # the weights are saved as usual
    with pytest.raises(AttributeError, match="nonexistent") as info:
        Ly.Lambda(lambda t: tf.nonexistent(t))(keras.Input(shape=(3,)))
    assert "while tracing Lambda" in str(info.value.__notes__)


def test_activity_regularization_adds_its_penalty_per_example():
    # Keras 3: (l1 * sum|x| + l2 * sum x^2) / batch_size joins the loss, in training and evaluation.
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(8, 4)).astype(np.float32), rng.normal(size=(8, 1)).astype(np.float32)
    model = keras.Sequential([keras.Input(shape=(4,)), Ly.ActivityRegularization(l1=0.1, l2=0.2),
                              Ly.Dense(1, kernel_initializer="ones", use_bias=False)])
    model.compile(optimizer=O.SGD(0.0), loss="mse")
    want = np.mean((x.sum(1, keepdims=True) - y) ** 2) + (0.1 * np.abs(x).sum() + 0.2 * (x ** 2).sum()) / 8
    assert model.evaluate(x, y, batch_size=8, verbose=0) == pytest.approx(want, rel=1e-5)
    assert model.fit(x, y, batch_size=8, verbose=0).history["loss"][0] == pytest.approx(want, rel=1e-5)
    # The gradient of the penalty reaches the layers before it: Dense(ones) -> ActivityRegularization(l2).
    inp = keras.Input(shape=(4,))
    out = Ly.ActivityRegularization(l2=0.5)(Ly.Dense(1, kernel_initializer="ones", use_bias=False)(inp))
    reg = keras.Model(inp, out)
    reg.compile(optimizer=O.SGD(0.1), loss="mse")
    reg.train_on_batch(x, np.zeros((8, 1), np.float32))
    h = x.sum(1, keepdims=True)  # the output, w = ones
    g = 2 * x.T @ h / 8 + 0.5 * 2 * x.T @ h / 8
    np.testing.assert_allclose(reg.get_weights()[0], 1 - 0.1 * g, rtol=1e-5)


def test_activity_regularizer_argument_on_dense():
    # The sparse autoencoder of the Keras blog: Dense(..., activity_regularizer=regularizers.l1(1e-5)).
    rng = np.random.default_rng(7)
    x = rng.normal(size=(8, 4)).astype(np.float32)
    model = keras.Sequential([keras.Input(shape=(4,)),
                              Ly.Dense(3, activation="relu", kernel_initializer=I.Constant(0.2), use_bias=False,
                                       activity_regularizer=R.l1(0.01)),
                              Ly.Dense(4, kernel_initializer="ones", use_bias=False)])
    model.compile(optimizer="sgd", loss="mse")
    h = np.maximum(x @ np.full((4, 3), 0.2, np.float32), 0)
    want = np.mean((h @ np.ones((3, 4)) - x) ** 2) + 0.01 * np.abs(h).sum() / 8
    assert model.evaluate(x, x, batch_size=8, verbose=0) == pytest.approx(want, rel=1e-5)


def test_initializer_none_and_constant_of_one_element():
    # Keras' imbalanced-data example: bias_initializer=None when no bias is given (add_weight's
    # float default, glorot_uniform), else Constant(np.log([pos / neg])) (an array of one element).
    bias = np.log([221 / 3779])
    for init in (None, keras.initializers.Constant(bias)):
        model = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", bias_initializer=init,
                                                     kernel_initializer="zeros", input_shape=(3,))])
        p = model.predict(np.zeros((2, 3), np.float32))
        if init is not None:
            np.testing.assert_allclose(p, np.full((2, 1), 221 / 4000), rtol=1e-5)  # sigmoid(log(p/n)) = p/(p+n)
        else:
            b = model.get_weights()[1]
            assert b.shape == (1,) and abs(b[0]) <= np.sqrt(6 / 2)  # glorot_uniform's limit for a (1,) weight
    with pytest.raises(ValueError, match="one number"):
        keras.initializers.Constant(np.ones(3))
