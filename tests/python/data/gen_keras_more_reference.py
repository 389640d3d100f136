"""Writes keras_more_reference.json: optimizer steps (Nadam, Adamax, Adadelta, Ftrl, Lion) and
schedules (InverseTimeDecay, PolynomialDecay, CosineDecayRestarts) computed by TensorFlow / Keras 3
(run with a TensorFlow venv: python gen_keras_more_reference.py > keras_more_reference.json).
test_keras_more.py checks weft against the file; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import numpy as np, tensorflow as tf, keras

# The setting of test_keras_compile.py's optimizer checks: Dense(2), MSE, 4 full-batch steps.
x = np.array([[1., 2., -1.], [0.5, -1., 2.], [-2., 0.3, 1.], [1.5, 1., 0.]], np.float32)
y = np.array([[1., -1.], [0., 2.], [1., 1.], [-1., 0.5]], np.float32)
O = keras.optimizers; S = O.schedules
cfgs = {
    "nadam": lambda: O.Nadam(0.1), "nadam_b": lambda: O.Nadam(0.05, beta_1=0.8, beta_2=0.99),
    "adamax": lambda: O.Adamax(0.1), "adadelta": lambda: O.Adadelta(1.0), "adadelta_rho": lambda: O.Adadelta(0.5, rho=0.8),
    "ftrl": lambda: O.Ftrl(0.1), "ftrl_reg": lambda: O.Ftrl(0.1, learning_rate_power=-0.7, l1_regularization_strength=0.01,
                                                         l2_regularization_strength=0.02,
                                                         l2_shrinkage_regularization_strength=0.03, beta=0.5),
    "lion": lambda: O.Lion(0.01), "nadam_clip": lambda: O.Nadam(0.1, clipnorm=0.5),
}
opt = {}
for k, f in cfgs.items():
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer=keras.initializers.Constant(0.1),
                                                                bias_initializer=keras.initializers.Constant(-0.05))])
    m.compile(optimizer=f(), loss="mse")
    m.fit(x, y, batch_size=4, epochs=4, shuffle=False, verbose=0)
    w, b = m.get_weights()
    opt[k] = {"kernel": w.tolist(), "bias": b.tolist()}
steps = [0, 1, 5, 10, 15, 25, 40, 100]
sch = {
    "inverse_time": [float(S.InverseTimeDecay(0.1, 10, 0.5)(s)) for s in steps],
    "inverse_time_stair": [float(S.InverseTimeDecay(0.1, 10, 0.5, staircase=True)(s)) for s in steps],
    "polynomial": [float(S.PolynomialDecay(0.1, 20)(s)) for s in steps],
    "polynomial_power": [float(S.PolynomialDecay(0.1, 20, end_learning_rate=0.01, power=2.0)(s)) for s in steps],
    "polynomial_cycle": [float(S.PolynomialDecay(0.1, 20, end_learning_rate=0.01, power=0.5, cycle=True)(s)) for s in steps],
    "cosine_restarts": [float(S.CosineDecayRestarts(0.1, 10)(s)) for s in steps],
    "cosine_restarts_m": [float(S.CosineDecayRestarts(0.1, 10, t_mul=1.0, m_mul=0.5, alpha=0.1)(s)) for s in steps],
    "cosine_restarts_t": [float(S.CosineDecayRestarts(0.1, 8, t_mul=1.5, m_mul=0.9)(s)) for s in steps],
}
# F-scores: Keras' docstring data, and a second batch with ties and a zero row.
M = keras.metrics
fy = np.array([[1, 1, 1], [1, 0, 0], [1, 1, 0]], np.int32)
fp = np.array([[0.2, 0.6, 0.7], [0.2, 0.6, 0.6], [0.6, 0.8, 0.0]], np.float32)
fy2 = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]], np.int32)
fp2 = np.array([[0.3, 0.3, 0.3], [0.0, 0.0, 0.0], [0.9, 0.05, 0.05], [0.1, 0.7, 0.2]], np.float32)
fscores = {}
for key, make in {"f1_t05": lambda: M.F1Score(threshold=0.5), "fbeta2_t05": lambda: M.FBetaScore(beta=2.0, threshold=0.5),
                  "f1_none": lambda: M.F1Score(), "f1_micro": lambda: M.F1Score(average="micro"),
                  "f1_macro": lambda: M.F1Score(average="macro", threshold=0.5),
                  "fbeta_weighted": lambda: M.FBetaScore(average="weighted", beta=0.5)}.items():
    m = make()
    m.update_state(fy, fp)
    m.update_state(fy2, fp2)
    fscores[key] = np.asarray(m.result()).tolist()
print(json.dumps({
    "_comment": "Computed by TensorFlow %s / Keras %s (CPU) with tests/python/data/gen_keras_more_reference.py; "
                "test_keras_more.py compares weft against these numbers." % (tf.__version__, keras.__version__),
    "optimizers": opt, "schedule_steps": steps, "schedules": sch,
    "fscores": fscores}, indent=1))
