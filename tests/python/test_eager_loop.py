"""Custom training loops without @tf.function (weft/_recorder.py): the eager programs of TF's
guides, checked against closed forms (numpy gradients of a linear model, Keras' documented
SGD / Adam rules) and against the same steps through @tf.function."""
import json
import os

import numpy as np
import pytest

import weft as tf
from weft import keras

RNG = np.random.default_rng(7)
X = RNG.normal(size=(24, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)
W0 = np.array([[0.1], [0.2], [-0.3]], np.float32)
B0 = np.array([0.05], np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test in a graph of its own (the eager step's recording belongs to its graph)."""
    with tf.Graph().as_default() as g:
        yield g


def linear(w=W0, b=B0):
    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    model.set_weights([w, b])
    return model


def mse_grads(w, b, x, y):
    """Loss mean((xw + b - y)^2) and its gradients: 2/N x^T r, 2/N sum(r)."""
    r = x.astype(np.float64) @ w + b - y
    return float(np.mean(r ** 2)), 2.0 * x.T @ r / r.size, 2.0 * r.sum(0) / r.size


def eager_steps(model, optimizer, batches, loss_fn=None, metric=None):
    loss_fn = loss_fn or keras.losses.MeanSquaredError()
    losses = []
    for xb, yb in batches:
        with tf.GradientTape() as tape:
            pred = model(xb, training=True)
            loss = loss_fn(yb, pred)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        if metric is not None:
            metric.update_state(yb, pred)
        losses.append(float(loss))  # read after the update: the loss of the step, as eager TF
    return losses


def batches(n_steps, size=8):
    return [(X[(i * size) % 24:(i * size) % 24 + size], Y[(i * size) % 24:(i * size) % 24 + size])
            for i in range(n_steps)]


def test_eager_sgd_follows_the_update_rule_and_reports_each_steps_loss():
    model, lr = linear(), 0.1
    losses = eager_steps(model, keras.optimizers.SGD(lr), batches(6))
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    for (xb, yb), got in zip(batches(6), losses):
        want, gw, gb = mse_grads(w, b, xb, yb)
        assert got == pytest.approx(want, rel=1e-5)
        w, b = w - lr * gw, b - lr * gb
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(kernel, w, atol=1e-5)
    np.testing.assert_allclose(bias, b, atol=1e-5)


def test_eager_adam_follows_keras_rule():
    # Keras' Adam: m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; w -= lr sqrt(1-b2^t)/(1-b1^t) m/(sqrt(v)+eps)
    model, lr, b1, b2, eps = linear(), 0.01, 0.9, 0.999, 1e-7
    eager_steps(model, keras.optimizers.Adam(lr), batches(5))
    params = [W0.astype(np.float64), B0.astype(np.float64)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t, (xb, yb) in enumerate(batches(5), start=1):
        _, gw, gb = mse_grads(params[0], params[1], xb, yb)
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for i, g in enumerate((gw, gb)):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            params[i] = params[i] - alpha * m[i] / (np.sqrt(v[i]) + eps)
    for got, want in zip(model.get_weights(), params):
        np.testing.assert_allclose(got, want, atol=1e-5)


def mlp():
    model = keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(3,)),
                              keras.layers.Dense(4)])
    return model


def test_eager_steps_equal_the_same_steps_through_tf_function():
    labels = (np.abs(X[:, 0]) * 3).astype(np.int64) % 4
    data = [(X[i:i + 8], labels[i:i + 8]) for i in (0, 8, 16, 0, 8)]
    eager, traced = mlp(), mlp()
    traced.set_weights(eager.get_weights())
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt_e, opt_t = keras.optimizers.Adam(0.01), keras.optimizers.Adam(0.01)
    acc_e, acc_t = keras.metrics.SparseCategoricalAccuracy(), keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            logits = traced(xb, training=True)
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, traced.trainable_weights)
        opt_t.apply_gradients(zip(grads, traced.trainable_weights))
        acc_t.update_state(yb, logits)
        return loss

    traced_losses = [float(step(xb, yb)) for xb, yb in data]
    eager_losses = eager_steps(eager, opt_e, data, loss_fn, acc_e)
    np.testing.assert_allclose(eager_losses, traced_losses, rtol=1e-5)
    for a, b in zip(eager.get_weights(), traced.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert float(acc_e.result()) == pytest.approx(float(acc_t.result()))
    assert int(opt_e.iterations.numpy()) == len(data)


def test_the_graph_stops_growing_after_the_first_steps(fresh_graph):
    model, opt = linear(), keras.optimizers.SGD(0.01)
    ds = tf.data.Dataset.from_tensor_slices((X, Y)).batch(10)  # batches of 10, 10 and 4
    epoch = [(xb, yb) for xb, yb in ds]
    eager_steps(model, opt, epoch)
    nodes = fresh_graph.num_nodes
    for _ in range(20):
        eager_steps(model, opt, epoch)
    assert fresh_graph.num_nodes == nodes


def test_basic_training_loop_with_a_module_and_assign_sub():
    # TF's "Basic training loops": w, b updated by hand from one tape's dw and db (both taken
    # before either update).
    x = np.linspace(-2, 2, 21).astype(np.float32)
    y = (3.0 * x + 2.0 + RNG.normal(size=21)).astype(np.float32)

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    model = MyModel()
    assert [v.numpy() for v in model.variables] == [5.0, 0.0] and model.name == "my_model"
    w, b, lr = 5.0, 0.0, 0.1
    for _ in range(8):
        with tf.GradientTape() as t:
            current_loss = tf.reduce_mean(tf.square(y - model(x)))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(lr * dw)
        model.b.assign_sub(lr * db)
        r = w * x.astype(np.float64) + b - y
        assert float(current_loss) == pytest.approx(np.mean(r ** 2), rel=1e-5)
        w, b = w - lr * np.mean(2 * r * x), b - lr * np.mean(2 * r)
        assert model.w.numpy() == pytest.approx(w, rel=1e-5)
        assert model.b.numpy() == pytest.approx(b, abs=1e-5)


def test_tape_rules_of_the_gradients_guide():
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(3.0, trainable=False)
    x2 = tf.Variable(2.0) + 1.0
    x3 = tf.constant(3.0)
    with tf.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
    g = tape.gradient(y, [x0, x1, x2, x3])
    assert g[0].numpy() == pytest.approx(6.0) and g[1:] == [None, None, None]

    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, x).numpy() == pytest.approx(108.0)  # 4 x^3
    assert tape.gradient(y, x).numpy() == pytest.approx(6.0)
    assert tape.gradient(z, y).numpy() == pytest.approx(18.0)  # an intermediate value: 2 y

    s0, s1 = tf.Variable(3.0), tf.Variable(0.0)
    with tf.GradientTape() as tape:
        s1.assign_add(s0)  # runs at once; the variable's state has no gradient path
        y = s1 ** 2
    assert tape.gradient(y, s0) is None and float(s1) == 3.0

    a, b = tf.Variable(2.0), tf.Variable(3.0)
    with tf.GradientTape() as t:
        a_sq = a * a
        with t.stop_recording():
            b_sq = b * b
        z = a_sq + b_sq
    grad = t.gradient(z, {"a": a, "b": b})
    assert grad["a"].numpy() == pytest.approx(4.0) and grad["b"] is None

    v0, v1 = tf.Variable(0.0), tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v1)
        ys = tf.reduce_sum(tf.math.sin(v0) + tf.nn.softplus(v1))
    grad = tape.gradient(ys, {"v0": v0, "v1": v1})
    assert grad["v0"] is None and grad["v1"].numpy() == pytest.approx(1 / (1 + np.exp(-10.0)), rel=1e-6)

    k = tf.constant(10)
    with tf.GradientTape() as tape:
        tape.watch(k)
        k2 = k * k
    with pytest.warns(UserWarning, match="int32; only floating tensors have gradients"):
        assert tape.gradient(k2, k) is None  # an integer: None, as TF

    c = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y0, y1 = c ** 2, 1 / c
    assert tape.gradient({"y0": y0, "y1": y1}, c).numpy() == pytest.approx(4 - 0.25)  # 2c - 1/c^2


def test_jacobian_is_the_gradient_of_each_element():
    xs = np.linspace(-3, 3, 5).astype(np.float32)
    delta = tf.Variable(0.5)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(xs + delta)
    s = 1 / (1 + np.exp(-(xs.astype(np.float64) + 0.5)))
    np.testing.assert_allclose(tape.jacobian(y, delta).numpy(), s * (1 - s), rtol=1e-5)
    w = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    with tf.GradientTape() as tape:
        out = tf.matmul(np.array([[1.0, -1.0]], np.float32), w)  # [1, 2]: out_j = sum_i x_i w_ij
    jac = tape.jacobian(out, w).numpy()  # [1, 2, 2, 2]: d out_j / d w_ik = x_i [j == k]
    want = np.zeros((1, 2, 2, 2))
    for j in range(2):
        want[0, j, :, j] = [1.0, -1.0]
    np.testing.assert_allclose(jac, want)


def test_weights_are_shared_with_fit_evaluate_and_predict():
    model = linear()
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    eager_steps(model, keras.optimizers.SGD(0.1), batches(3))
    w, b = model.get_weights()
    assert model.evaluate(X, Y, verbose=0) == pytest.approx(mse_grads(w, b, X, Y)[0], rel=1e-5)
    np.testing.assert_allclose(model.predict(X, verbose=0), X @ w + b, rtol=1e-5, atol=1e-6)
    model.fit(X, Y, batch_size=24, epochs=1, shuffle=False, verbose=0)
    w, b = model.get_weights()
    with tf.GradientTape() as tape:
        loss = keras.losses.MeanSquaredError()(Y, model(X, training=True))
    assert float(loss) == pytest.approx(mse_grads(w, b, X, Y)[0], rel=1e-5)  # the step starts from fit's weights
    assert [v.shape for v in model.trainable_weights] == [(3, 1), (1,)]


def test_metrics_take_the_steps_tensors():
    model = linear()
    mean, mae = keras.metrics.Mean(), keras.metrics.MeanAbsoluteError()
    with tf.GradientTape():
        pred = model(X, training=True)
        loss = tf.reduce_mean(tf.square(pred - Y))
    mean.update_state(loss)
    mae.update_state(Y, pred)
    r = X @ W0 + B0 - Y
    assert float(mean.result()) == pytest.approx(float(np.mean(r ** 2)), rel=1e-5)
    assert float(mae.result()) == pytest.approx(float(np.mean(np.abs(r))), rel=1e-5)
    assert "%.3f" % loss == "%.3f" % np.mean(r ** 2) and str(loss).startswith("tf.Tensor(")


def test_values_are_those_of_their_own_step():
    model, opt = linear(), keras.optimizers.SGD(0.1)
    kept = []
    for xb, yb in batches(3):
        with tf.GradientTape() as tape:
            loss = keras.losses.MeanSquaredError()(yb, model(xb, training=True))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_weights), model.trainable_weights))
        kept.append(loss)  # the same node at every step: each object keeps its own step's value
    w, b = W0.astype(np.float64), B0.astype(np.float64)
    for (xb, yb), loss in zip(batches(3), kept):
        want, gw, gb = mse_grads(w, b, xb, yb)
        assert float(loss) == pytest.approx(want, rel=1e-5)
        w, b = w - 0.1 * gw, b - 0.1 * gb


def test_gradient_of_arrays_computed_outside_the_tape_says_how_to_fix_it():
    model = linear()
    out = model(X)  # outside a tape: numpy, as predict
    with tf.GradientTape() as tape:
        pass
    with pytest.raises(NotImplementedError, match="inside the tape"):
        tape.gradient(out, model.trainable_variables)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(X))
    with pytest.raises(ValueError, match=r"target Mul:0 has shape \(None,\); weft needs a fully known shape"):
        tape.jacobian(tf.reshape(loss, [-1]) * tf.ones(tf.shape(X)[:1]), model.trainable_variables)


def test_a_layer_called_by_itself_in_a_tape():
    # The gradients guide: y = relu(x W + b), loss = mean(y^2); dL/dW = x^T g, dL/db = sum g with
    # g = 2 y / N where x W + b > 0.
    layer = keras.layers.Dense(2, activation="relu", bias_initializer="ones")
    x = tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y ** 2)
    grads = tape.gradient(loss, layer.trainable_variables)
    kernel, bias = [v.numpy().astype(np.float64) for v in layer.trainable_variables]
    z = np.array([[1.0, 2.0, 3.0]]) @ kernel + bias
    g = 2 * np.maximum(z, 0) / z.size * (z > 0)
    np.testing.assert_allclose(grads[0].numpy(), np.array([[1.0], [2.0], [3.0]]) @ g, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grads[1].numpy(), g.sum(0), rtol=1e-5, atol=1e-7)
    assert [v.shape for v in layer.trainable_variables] == [(3, 2), (2,)]


def test_a_custom_layer_called_by_itself_in_a_tape():
    class Linear(keras.layers.Layer):  # keras.io's subclassing guide
        def __init__(self, units=2, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="ones", trainable=True)
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    layer = Linear(2)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(np.array([[1.0, 2.0]], np.float32)))
    dw, db = tape.gradient(loss, layer.trainable_weights)  # d sum(x W + b) / dW = x^T 1, / db = 1
    np.testing.assert_allclose(dw.numpy(), [[1.0, 1.0], [2.0, 2.0]])
    np.testing.assert_allclose(db.numpy(), [1.0, 1.0])
    assert float(loss) == pytest.approx(6.0)


def test_eager_then_tf_function_steps_continue_one_training():
    # keras.io runs its loop eagerly, then the same loop with @tf.function: one model, one optimizer.
    mixed, traced = linear(), linear()
    opt_m, opt_t = keras.optimizers.Adam(0.05), keras.optimizers.Adam(0.05)
    loss_fn = keras.losses.MeanSquaredError()

    def step_of(model, opt):
        def step(xb, yb):
            with tf.GradientTape() as tape:
                loss = loss_fn(yb, model(xb, training=True))
            opt.apply_gradients(zip(tape.gradient(loss, model.trainable_weights), model.trainable_weights))
            return loss
        return step
    data = batches(6)
    eager_steps(mixed, opt_m, data[:3], loss_fn)
    function_m, function_t = tf.function(step_of(mixed, opt_m)), tf.function(step_of(traced, opt_t))
    for xb, yb in data[3:]:
        function_m(xb, yb)
    for xb, yb in data:
        function_t(xb, yb)
    for a, b in zip(mixed.get_weights(), traced.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert int(opt_m.iterations.numpy()) == 6


def test_graph_code_after_an_eager_step_is_built_as_written(fresh_graph):
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = v * 2.0
    assert float(tape.gradient(y, v)) == 2.0
    x = tf.placeholder(tf.float32, ())
    w = tf.Variable(3.0)
    inc = w.assign_add(x)  # TF1 graph code: runs in the session, not at once
    c = tf.constant(np.ones(3, np.float32), name="c")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(inc, {x: 2.0}) == 5.0 and sess.run(w) == 5.0
        np.testing.assert_array_equal(sess.run(c), np.ones(3))
    assert fresh_graph.get_operation_by_name("c").type == "Const"
    assert float(y) == 2.0  # the eager step's tensor keeps its value


REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "eager_loop_reference.json")))


def run_reference_loop(layers, optimizer, init):
    x, labels = np.array(REF["x"], np.float32), np.array(REF["labels"], np.int64)
    model = keras.Sequential([keras.Input((4,))] + layers)
    model.set_weights([np.array(w, np.float32) for w in init])
    mean, acc = keras.metrics.Mean(), keras.metrics.SparseCategoricalAccuracy()
    losses = eager_steps(model, optimizer, [(x[a:b], labels[a:b]) for a, b in REF["batches"]],
                         keras.losses.SparseCategoricalCrossentropy(from_logits=True), acc)
    for v in losses:
        mean.update_state(v)
    return model, losses, mean, acc


@pytest.mark.parametrize("case", ["mlp_sgd", "bn_adam"])
def test_eager_loops_give_tensorflows_results(case):
    # TensorFlow 2.21's eager loop from the same weights and batches (data/gen_eager_loop_reference.py).
    if case == "mlp_sgd":
        layers, opt = [keras.layers.Dense(10, activation="relu"), keras.layers.Dense(10, activation="relu"),
                       keras.layers.Dense(3)], keras.optimizers.SGD(0.05)
    else:  # batch-norm statistics update in the eager training calls
        layers, opt = [keras.layers.Dense(8, use_bias=False), keras.layers.BatchNormalization(),
                       keras.layers.Activation("relu"),
                       keras.layers.Dense(3)], keras.optimizers.Adam(0.01)
    want = REF[case]
    model, losses, mean, acc = run_reference_loop(layers, opt, REF["mlp_init" if case == "mlp_sgd" else "bn_init"])
    np.testing.assert_allclose(losses, want["losses"], rtol=1e-5)
    for got, w in zip(model.get_weights(), want["weights"]):
        np.testing.assert_allclose(got, np.array(w), atol=1e-5)
    assert float(mean.result()) == pytest.approx(want["mean"], rel=1e-5)
    assert float(acc.result()) == pytest.approx(want["accuracy"])


def test_basic_training_loop_gives_tensorflows_results():
    ref = REF["basic"]
    x, y = np.array(ref["x"], np.float32), np.array(ref["y"], np.float32)

    class MyModel(tf.Module):
        def __init__(self):
            super().__init__()
            self.w, self.b = tf.Variable(5.0), tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    model = MyModel()
    for loss_w_b in ref["trace"]:
        with tf.GradientTape() as t:
            current_loss = tf.reduce_mean(tf.square(y - model(x)))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(0.1 * dw)
        model.b.assign_sub(0.1 * db)
        np.testing.assert_allclose([float(current_loss), model.w.numpy(), model.b.numpy()], loss_w_b, rtol=1e-5,
                                   atol=1e-6)
