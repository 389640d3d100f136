"""Writes keras_compile_reference.json: losses, metrics, optimizer steps and schedules computed by
TensorFlow / Keras 3 (run with a TensorFlow venv: python gen_keras_compile_reference.py > keras_compile_reference.json).
test_keras_compile.py checks weft against the file; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"
import numpy as np, tensorflow as tf, keras, json
out = {}
L = keras.losses
yt = np.array([[0,1,0],[0,0,1]], np.float32); yp = np.array([[0.05,0.95,0],[0.1,0.8,0.1]], np.float32)
logits = np.array([[1.0, 2.0, -1.0],[0.5, -0.3, 2.2]], np.float32)
out["cce"] = float(L.CategoricalCrossentropy()(yt, yp))
out["cce_ls"] = float(L.CategoricalCrossentropy(label_smoothing=0.1)(yt, yp))
out["cce_logits"] = float(L.CategoricalCrossentropy(from_logits=True)(yt, logits))
out["cce_unnorm"] = float(L.CategoricalCrossentropy()(yt, np.array([[0.1,0.9,0.5],[0.2,0.2,0.2]],np.float32)))
out["scce"] = float(L.SparseCategoricalCrossentropy()(np.array([1,2]), yp))
out["scce_col"] = float(L.SparseCategoricalCrossentropy()(np.array([[1],[2]]), yp))
out["scce_logits"] = float(L.SparseCategoricalCrossentropy(from_logits=True)(np.array([1,2]), logits))
bt = np.array([[0,1],[0,0]], np.float32); bp = np.array([[0.6,0.4],[0.4,0.6]], np.float32)
bl = np.array([[-18.6, 0.51],[2.94, -12.8]], np.float32)
out["bce"] = float(L.BinaryCrossentropy()(bt, bp))
out["bce_logits"] = float(L.BinaryCrossentropy(from_logits=True)(bt, bl))
out["bce_ls"] = float(L.BinaryCrossentropy(label_smoothing=0.2)(bt, bp))
out["bce_extreme"] = float(L.BinaryCrossentropy()(bt, np.array([[0.0,1.0],[1.0,0.0]],np.float32)))
out["bce_vec"] = float(L.BinaryCrossentropy()(np.array([0.,1.,1.]), np.array([[0.2],[0.7],[0.9]],np.float32)))
mt = np.array([[0.,1.],[0.,0.]],np.float32); mp = np.array([[1.,1.],[1.,0.]],np.float32)
out["mse"] = float(L.MeanSquaredError()(mt, mp)); out["mae"] = float(L.MeanAbsoluteError()(mt, mp))
out["huber"] = float(L.Huber()(bt, bp)); out["huber_d"] = float(L.Huber(delta=0.3)(bt, np.array([[0.6,1.9],[-0.4,0.1]],np.float32)))
ry = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0]], np.float32)
rp = np.array([[1.5, 1.0, 0.2], [0.4, -0.5, 2.0]], np.float32)
pos = np.array([[0.2, 0.5, 0.3], [0.7, 0.1, 0.2]], np.float32)
pos_p = np.array([[0.1, 0.6, 0.3], [0.5, 0.3, 0.2]], np.float32)
out["mape"] = float(L.MeanAbsolutePercentageError()(ry, rp))
out["msle"] = float(L.MeanSquaredLogarithmicError()(np.abs(ry), np.abs(rp)))
out["logcosh"] = float(L.LogCosh()(ry, rp))
out["hinge01"] = float(L.Hinge()(np.array([[0., 1., 1.], [1., 0., 0.]]), rp))
out["hinge_pm"] = float(L.Hinge()(np.array([[-1., 1., 1.], [1., -1., -1.]]), rp))
out["squared_hinge"] = float(L.SquaredHinge()(np.array([[0., 1., 1.], [1., 0., 0.]]), rp))
out["kld"] = float(L.KLDivergence()(pos, pos_p))
out["poisson"] = float(L.Poisson()(pos, pos_p))
out["cosine"] = float(L.CosineSimilarity()(ry, rp))
M = keras.metrics
def met(m, *batches):
    for b in batches: m.update_state(*b)
    return float(m.result())
out["acc_binary"] = met(M.BinaryAccuracy(), ([[1],[1],[0],[0]], [[0.98],[1],[0],[0.6]]))
out["acc_cat"] = met(M.CategoricalAccuracy(), ([[0,0,1],[0,1,0]], [[0.1,0.9,0.8],[0.05,0.95,0]]))
out["acc_sparse"] = met(M.SparseCategoricalAccuracy(), ([[2],[1]], [[0.1,0.6,0.3],[0.05,0.95,0]]))
out["topk"] = met(M.TopKCategoricalAccuracy(k=1), ([[0,0,1],[0,1,0]], [[0.1,0.9,0.8],[0.05,0.95,0]]))
out["sparse_topk"] = met(M.SparseTopKCategoricalAccuracy(k=1), ([2,1], [[0.1,0.9,0.8],[0.05,0.95,0]]))
out["auc"] = met(M.AUC(num_thresholds=3), ([0,0,1,1],[0,0.5,0.3,0.9]))
ya = np.array([0,1,1,0,1,0,1,1,0,0],np.float32); pa = np.array([0.1,0.8,0.35,0.4,0.9,0.05,0.6,0.55,0.7,0.2],np.float32)
out["auc200_2batches"] = met(M.AUC(), (ya[:6],pa[:6]), (ya[6:],pa[6:]))
out["precision_2batches"] = met(M.Precision(), (ya[:6],pa[:6]), (ya[6:],pa[6:]))
out["recall_2batches"] = met(M.Recall(), (ya[:6],pa[:6]), (ya[6:],pa[6:]))
out["pr_auc_2batches"] = met(M.AUC(curve="PR"), (ya[:6],pa[:6]), (ya[6:],pa[6:]))
out["pr_auc_3"] = met(M.AUC(num_thresholds=3, curve="PR"), ([0,0,1,1],[0,0.5,0.3,0.9]))
out["counts_2batches"] = [met(c(), (ya[:6],pa[:6]), (ya[6:],pa[6:])) for c in
                          (M.TruePositives, M.FalsePositives, M.TrueNegatives, M.FalseNegatives)]
out["precision_doc"] = met(M.Precision(), ([0,1,1,1],[1,0,1,1]))
out["recall_doc"] = met(M.Recall(), ([0,1,1,1],[1,0,1,1]))
# optimizers: Dense(2) on 4 examples of 3 features, MSE, full batch, 4 steps
x = np.array([[1.,2.,-1.],[0.5,-1.,2.],[-2.,0.3,1.],[1.5,1.,0.]],np.float32)
y = np.array([[1.,-1.],[0.,2.],[1.,1.],[-1.,0.5]],np.float32)
w0 = np.array([[0.1,-0.2],[0.3,0.4],[-0.5,0.2]],np.float32); b0 = np.array([0.05,-0.1],np.float32)
O = keras.optimizers; S = O.schedules
cfgs = {
 "sgd": lambda: O.SGD(0.1), "sgd_m": lambda: O.SGD(0.1, momentum=0.9), "sgd_n": lambda: O.SGD(0.1, momentum=0.9, nesterov=True),
 "adam": lambda: O.Adam(0.1), "adam_ams": lambda: O.Adam(0.1, amsgrad=True), "adamw": lambda: O.AdamW(0.1, weight_decay=0.1),
 "rmsprop": lambda: O.RMSprop(0.1), "rmsprop_mc": lambda: O.RMSprop(0.1, momentum=0.5, centered=True),
 "adagrad": lambda: O.Adagrad(0.1), "sgd_clipnorm": lambda: O.SGD(0.1, clipnorm=0.5), "sgd_clipvalue": lambda: O.SGD(0.1, clipvalue=0.1),
 "sgd_gclip": lambda: O.SGD(0.1, global_clipnorm=0.5), "adam_expdecay": lambda: O.Adam(S.ExponentialDecay(0.1, 2, 0.5)),
 "sgd_m_piecewise": lambda: O.SGD(S.PiecewiseConstantDecay([1, 2], [0.1, 0.05, 0.01]), momentum=0.9),
}
opt = {}
for k, f in cfgs.items():
    keras.utils.set_random_seed(1)
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer=keras.initializers.Constant(0.1), bias_initializer=keras.initializers.Constant(-0.05))])
    m.compile(optimizer=f(), loss="mse")
    m.fit(x, y, batch_size=4, epochs=4, shuffle=False, verbose=0)
    w, b = m.get_weights(); opt[k] = [w.tolist(), b.tolist()]
out["opt"] = opt
sch = {}
sch["exp"] = [float(S.ExponentialDecay(0.1, 10, 0.5)(s)) for s in [0, 5, 10, 25]]
sch["exp_stair"] = [float(S.ExponentialDecay(0.1, 10, 0.5, staircase=True)(s)) for s in [0, 5, 10, 25]]
sch["piece"] = [float(S.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])(s)) for s in [0, 10, 11, 20, 21, 100]]
sch["cos"] = [float(S.CosineDecay(0.1, 100, alpha=0.1)(s)) for s in [0, 25, 50, 100, 200]]
sch["cos_warm"] = [float(S.CosineDecay(0.0, 100, warmup_target=0.1, warmup_steps=10)(s)) for s in [0, 5, 10, 60, 110, 200]]
out["sched"] = sch
# accuracy resolution & log key names
names = {}
for loss, yshape, units, mets in [("mse", (4,1), 1, ["accuracy"]), ("binary_crossentropy", (4,), 1, ["acc"]),
    ("sparse_categorical_crossentropy", (4,), 3, ["accuracy"]), ("categorical_crossentropy", (4,3), 3, ["accuracy", "top_k_categorical_accuracy"]),
    ("mse", (4,3), 3, ["mse", "mae", "accuracy"]), ("binary_crossentropy", (4,1), 1, [M.AUC(), M.Precision(), M.Recall(), "binary_accuracy"])]:
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(units, activation="softmax" if units>1 else "sigmoid")])
    m.compile(optimizer="sgd", loss=loss, metrics=mets)
    yy = np.zeros(yshape, np.float32) if "sparse" not in loss else np.array([0,1,2,1])
    h = m.fit(x, yy, epochs=1, verbose=0)
    names[loss + str(yshape) + str(units)] = sorted(h.history.keys())
    r = m.evaluate(x, yy, verbose=0, return_dict=True)
    names[loss + str(yshape) + str(units)] += [type(mm).__name__ for mm in m.metrics[1].metrics] if hasattr(m.metrics[1], "metrics") else []
out["names"] = names
LOSSES = ["cce", "cce_ls", "cce_logits", "cce_unnorm", "scce", "scce_col", "scce_logits", "bce", "bce_logits", "bce_ls",
          "bce_extreme", "bce_vec", "mse", "mae", "huber", "huber_d", "mape", "msle", "logcosh", "hinge01", "hinge_pm",
          "squared_hinge", "kld", "poisson", "cosine"]
METRICS = ["acc_binary", "acc_cat", "acc_sparse", "topk", "sparse_topk", "auc", "auc200_2batches",
           "precision_2batches", "recall_2batches", "precision_doc", "recall_doc", "pr_auc_2batches", "pr_auc_3",
           "counts_2batches"]
print(json.dumps({
    "_comment": "Computed by TensorFlow 2.21 / Keras 3.15 (CPU) with tests/python/data/gen_keras_compile_reference.py; "
                "test_keras_compile.py compares weft against these numbers.",
    "losses": {k: out[k] for k in LOSSES}, "metrics": {k: out[k] for k in METRICS},
    "optimizers": {k: {"kernel": v[0], "bias": v[1]} for k, v in out["opt"].items()},
    "schedules": out["sched"], "accuracy_resolution": out["names"]}, indent=1))
