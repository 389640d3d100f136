"""Writes eager_loop_reference.json: TensorFlow 2.21's eager custom training loops (no
@tf.function) -- the walkthrough's MLP with SGD, an MLP with BatchNormalization and Adam, and the
"Basic training loops" tf.Module updated with assign_sub -- from fixed weights and data
(run with a TensorFlow venv: python gen_eager_loop_reference.py > eager_loop_reference.json).
test_eager_loop.py checks weft's eager steps against the file; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import numpy as np, tensorflow as tf, keras

rng = np.random.default_rng(3)
x = rng.normal(size=(24, 4)).astype(np.float32)
labels = rng.integers(0, 3, 24).astype(np.int64)
batches = [(0, 8), (8, 16), (16, 24), (0, 8), (8, 16)]


def run(layers, optimizer, weights):
    model = keras.Sequential([keras.Input((4,))] + layers)
    model.set_weights([np.asarray(w, np.float32) for w in weights])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    mean, acc = keras.metrics.Mean(), keras.metrics.SparseCategoricalAccuracy()
    losses = []
    for a, b in batches:
        with tf.GradientTape() as tape:
            logits = model(x[a:b], training=True)
            loss = loss_fn(labels[a:b], logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        mean.update_state(loss)
        acc.update_state(labels[a:b], logits)
        losses.append(float(loss))
    return {"losses": losses, "weights": [w.tolist() for w in model.get_weights()],
            "mean": float(mean.result()), "accuracy": float(acc.result())}


init = np.random.default_rng(4)
mlp_w = [init.normal(scale=0.5, size=s).astype(np.float32) for s in [(4, 10), (10,), (10, 10), (10,), (10, 3), (3,)]]
# The Dense before BatchNormalization has no bias (its gradient is zero in exact arithmetic: Adam
# would turn rounding noise into full steps).
bn_w = [init.normal(scale=0.5, size=(4, 8)).astype(np.float32),
        np.ones(8, np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32), np.ones(8, np.float32),
        init.normal(scale=0.5, size=(8, 3)).astype(np.float32), np.zeros(3, np.float32)]
out = {
    "x": x.tolist(), "labels": labels.tolist(), "batches": batches,
    "mlp_init": [w.tolist() for w in mlp_w], "bn_init": [w.tolist() for w in bn_w],
    "mlp_sgd": run([keras.layers.Dense(10, activation="relu"), keras.layers.Dense(10, activation="relu"),
                    keras.layers.Dense(3)], keras.optimizers.SGD(0.05), mlp_w),
    "bn_adam": run([keras.layers.Dense(8, use_bias=False), keras.layers.BatchNormalization(), keras.layers.Activation("relu"),
                    keras.layers.Dense(3)], keras.optimizers.Adam(0.01), bn_w),
}


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


xs = np.linspace(-2, 2, 21).astype(np.float32)
ys = (3.0 * xs + 2.0 + rng.normal(size=21)).astype(np.float32)
module = MyModel()
trace = []
for epoch in range(6):
    with tf.GradientTape() as t:
        current_loss = tf.reduce_mean(tf.square(ys - module(xs)))
    dw, db = t.gradient(current_loss, [module.w, module.b])
    module.w.assign_sub(0.1 * dw)
    module.b.assign_sub(0.1 * db)
    trace.append([float(current_loss), float(module.w.numpy()), float(module.b.numpy())])
out["basic"] = {"x": xs.tolist(), "y": ys.tolist(), "trace": trace}
print(json.dumps(out))
