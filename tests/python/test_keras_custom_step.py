"""Custom training loops (TensorFlow 2's tf.function + tf.GradientTape + optimizer.apply_gradients
over a Keras model; keras/_custom_step.py). Expected values: the closed forms of SGD's and Adam's
first step (Keras 3's formulas) on a linear model with MSE, batch norm's moving-average update,
and the mean of the values a metric was given."""
import numpy as np
import pytest

import weft as tf
from weft import keras

RNG = np.random.default_rng(11)
X = RNG.standard_normal((8, 3)).astype(np.float32)
Y = RNG.standard_normal((8, 1)).astype(np.float32)
W0 = RNG.standard_normal((3, 1)).astype(np.float32)
B0 = np.array([0.5], np.float32)


def linear_model():
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(3,))])
    model.set_weights([W0, B0])
    return model


def mse_grads(w, b, x=X, y=Y):
    err = x @ w + b - y                      # [n, 1]
    n = err.size
    return float((err ** 2).mean()), 2.0 / n * x.T @ err, 2.0 / n * err.sum(0)


def make_step(model, optimizer, loss_fn, metric=None):
    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if metric is not None:
            metric(loss)
        return loss
    return train_step


def test_sgd_step_matches_the_closed_form_and_the_model_sees_it():
    model = linear_model()
    step = make_step(model, keras.optimizers.SGD(0.1), keras.losses.MeanSquaredError())
    loss = step(X, Y)
    want_loss, gw, gb = mse_grads(W0, B0)
    assert float(loss) == pytest.approx(want_loss, rel=1e-5)
    w1, b1 = model.get_weights()  # the model copies the step's weights in before it shows them
    np.testing.assert_allclose(w1, W0 - 0.1 * gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b1, B0 - 0.1 * gb, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(X, verbose=0), X @ w1 + b1, rtol=1e-5, atol=1e-6)
    # A second step starts from w1 (the trace is reused: the same signature).
    step(X, Y)
    _, gw1, gb1 = mse_grads(w1, b1)
    w2, b2 = model.get_weights()
    np.testing.assert_allclose(w2, w1 - 0.1 * gw1, rtol=1e-5, atol=1e-6)
    # set_weights between steps: the next step starts from the weights set (the twin is refreshed).
    model.set_weights([W0, B0])
    step(X, Y)
    np.testing.assert_allclose(model.get_weights()[0], W0 - 0.1 * gw, rtol=1e-5, atol=1e-6)


def test_adam_first_step_and_iterations():
    model = linear_model()
    opt = keras.optimizers.Adam(0.01)
    step = make_step(model, opt, keras.losses.MeanSquaredError())
    step(X, Y)
    _, gw, _ = mse_grads(W0, B0)
    b1, b2, eps = 0.9, 0.999, 1e-7
    m, v = (1 - b1) * gw, (1 - b2) * gw ** 2
    lr_t = 0.01 * np.sqrt(1 - b2) / (1 - b1)
    np.testing.assert_allclose(model.get_weights()[0], W0 - lr_t * m / (np.sqrt(v) + eps), rtol=1e-4, atol=1e-6)
    step(X[:5], Y[:5])  # a shorter batch reuses the trace (the batch dim is open)
    assert int(opt.iterations) == 2


def test_metrics_accumulate_the_step_values():
    model = linear_model()
    mean = keras.metrics.Mean()
    step = make_step(model, keras.optimizers.SGD(0.05), keras.losses.MeanSquaredError(), mean)
    losses = [float(step(X, Y)) for _ in range(3)]
    assert float(mean.result()) == pytest.approx(np.mean(losses), rel=1e-5)
    mean.reset_state()
    assert float(mean.result()) == 0.0


def test_batch_norm_moving_averages_update_in_training_steps():
    model = keras.Sequential([keras.layers.BatchNormalization(input_shape=(3,)), keras.layers.Dense(1)])
    step = make_step(model, keras.optimizers.SGD(0.0), keras.losses.MeanSquaredError())
    step(X, Y)
    mm = model.layers[0].get_weights()[2]
    # Keras: moving = moving * momentum + batch_mean * (1 - momentum), momentum 0.99, from 0.
    np.testing.assert_allclose(mm, 0.01 * X.mean(0), rtol=1e-4, atol=1e-7)


def test_subclassed_model_with_a_custom_step_and_fit_afterwards():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = keras.layers.Dense(8, activation="relu")
            self.d2 = keras.layers.Dense(3)

        def call(self, x):
            return self.d2(self.d1(x))

    x = RNG.standard_normal((64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)
    model = Net()
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    acc = keras.metrics.SparseCategoricalAccuracy()
    opt = keras.optimizers.Adam(0.05)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            logits = model(xb, training=True)
            loss = loss_fn(yb, logits)
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        acc(yb, logits)
        return loss

    first = float(train_step(x, y))
    for _ in range(30):
        last = float(train_step(x, y))
    assert last < first * 0.7
    assert 0.0 < float(acc.result()) <= 1.0
    # The model's own API sees the trained weights.
    model.compile(optimizer="adam", loss=loss_fn)
    assert model.evaluate(x, y, verbose=0) == pytest.approx(last, rel=0.2)


def test_what_still_needs_a_traced_step_says_so():
    model = linear_model()
    out = model(X)  # numpy in, numpy out outside a tape: no graph to differentiate
    with tf.GradientTape() as tape:
        pass
    with pytest.raises(NotImplementedError, match="inside the tape"):
        tape.gradient(out, model.trainable_variables)
    with pytest.raises(NotImplementedError, match="apply_gradients takes"):
        keras.optimizers.SGD().apply_gradients(zip([np.ones((3, 1))], [W0]))


def test_fit_calls_an_overridden_train_step():
    class Custom(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                               self.trainable_variables))
            for metric in self.metrics:
                metric.update_state(loss) if metric.name == "loss" else metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(3,))
    model = Custom(inputs, keras.layers.Dense(1)(inputs))
    model.set_weights([W0, B0])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    h = model.fit(X, Y, batch_size=8, epochs=1, shuffle=False, verbose=0)  # one step over all of X
    want_loss, gw, gb = mse_grads(W0, B0)
    assert h.history["loss"] == [pytest.approx(want_loss, rel=1e-5)]
    assert h.history["mae"] == [pytest.approx(float(np.abs(X @ W0 + B0 - Y).mean()), rel=1e-5)]
    np.testing.assert_allclose(model.get_weights()[0], W0 - 0.1 * gw, rtol=1e-5, atol=1e-6)


def test_a_gan_style_model_without_call_fits_and_a_callback_stops_it():
    gen = keras.Sequential([keras.layers.Dense(3, input_shape=(2,))])
    disc = keras.Sequential([keras.layers.Dense(1, activation="sigmoid", input_shape=(3,))])

    class GAN(keras.Model):
        def __init__(self):
            super().__init__()
            self.gen, self.disc = gen, disc

        def compile(self, d_opt, g_opt, loss_fn):
            super().compile()
            self.d_opt, self.g_opt, self.loss_fn = d_opt, g_opt, loss_fn
            self.d_metric, self.g_metric = keras.metrics.Mean(name="d_loss"), keras.metrics.Mean(name="g_loss")

        @property
        def metrics(self):
            return [self.d_metric, self.g_metric]

        def train_step(self, real):
            n = tf.shape(real)[0]
            fake = self.gen(tf.random.normal((n, 2)))
            with tf.GradientTape() as tape:
                d_loss = self.loss_fn(tf.concat([tf.ones((n, 1)), tf.zeros((n, 1))], 0),
                                      self.disc(tf.concat([real, fake], 0)))
            self.d_opt.apply_gradients(zip(tape.gradient(d_loss, self.disc.trainable_weights),
                                           self.disc.trainable_weights))
            with tf.GradientTape() as tape:
                g_loss = self.loss_fn(tf.ones((n, 1)), self.disc(self.gen(tf.random.normal((n, 2)))))
            self.g_opt.apply_gradients(zip(tape.gradient(g_loss, self.gen.trainable_weights),
                                           self.gen.trainable_weights))
            self.d_metric.update_state(d_loss)
            self.g_metric.update_state(g_loss)
            return {"d_loss": self.d_metric.result(), "g_loss": self.g_metric.result()}

    class StopAfterTwo(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch == 1:
                self.model.stop_training = True

    gan = GAN()
    gan.compile(keras.optimizers.Adam(1e-3), keras.optimizers.Adam(1e-3), keras.losses.BinaryCrossentropy())
    data = tf.data.Dataset.from_tensor_slices(X).batch(2)
    h = gan.fit(data, epochs=3, verbose=0, callbacks=[StopAfterTwo()])
    assert h.epoch == [0] and set(h.history) == {"d_loss", "g_loss"}
    assert all(np.isfinite(v[0]) for v in h.history.values())
    assert int(gan.d_opt.iterations) == 2 and int(gan.g_opt.iterations) == 2


def test_python_loss_and_metric_functions_in_compile():
    def my_mse(y_true, y_pred):
        return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)

    def max_error(y_true, y_pred):
        return tf.reduce_max(tf.abs(y_true - y_pred))

    model = linear_model()
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss=my_mse, metrics=[max_error, "mae"])
    h = model.fit(X, Y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    want_loss, gw, gb = mse_grads(W0, B0)
    assert h.history["loss"] == [pytest.approx(want_loss, rel=1e-5)]
    assert h.history["max_error"] == [pytest.approx(float(np.abs(X @ W0 + B0 - Y).max()), rel=1e-5)]
    w1, b1 = model.get_weights()
    np.testing.assert_allclose(w1, W0 - 0.1 * gw, rtol=1e-5, atol=1e-6)
    loss, max_err, mae = model.evaluate(X, Y, batch_size=8, verbose=0)
    err = X @ w1 + b1 - Y
    assert loss == pytest.approx(float((err ** 2).mean()), rel=1e-5)
    assert max_err == pytest.approx(float(np.abs(err).max()), rel=1e-5)
    assert mae == pytest.approx(float(np.abs(err).mean()), rel=1e-5)
    # validation_split holds out the last rows, evaluated through the same traced step.
    h = model.fit(X, Y, batch_size=4, epochs=1, validation_split=0.25, verbose=0)
    assert set(h.history) == {"loss", "max_error", "mae", "val_loss", "val_max_error", "val_mae"}


def test_loss_subclass_call_and_reductions():
    class Scaled(keras.losses.Loss):
        def __init__(self, k, **kwargs):
            super().__init__(**kwargs)
            self.k = k

        def call(self, y_true, y_pred):
            return self.k * tf.abs(y_true - y_pred)

    y_true, y_pred = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.5, 2.0], [2.0, 4.0]])
    assert float(Scaled(2.0)(y_true, y_pred)) == pytest.approx(2.0 * 1.5 / 4)  # mean over every value
    assert float(Scaled(2.0, reduction="sum")(y_true, y_pred)) == pytest.approx(3.0)
    assert float(Scaled(1.0)(y_true, y_pred, sample_weight=np.array([0.0, 1.0]))) == pytest.approx(1.0 / 4)
    assert Scaled(1.0).name == "scaled"
    with pytest.raises(TypeError, match="base class"):
        keras.losses.Loss()


def test_keras_loss_functions_on_graph_tensors_reduce_the_last_axis():
    # Keras: binary_crossentropy(y_true, y_pred) is the mean over the last axis, shape y_pred.shape[:-1].
    y_true = np.array([[[0.0, 1.0], [1.0, 1.0]]], np.float32)
    y_pred = np.array([[[0.2, 0.6], [0.9, 0.5]]], np.float32)
    p = tf.placeholder(tf.float32, (None, 2, 2))
    v = keras.losses.binary_crossentropy(y_true, p)
    assert v.shape is not None and len(v.shape) == 2
    want = -(y_true * np.log(y_pred) + (1 - y_true) * np.log(1 - y_pred)).mean(-1)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(v, {p: y_pred}), want, rtol=1e-5)


def test_a_model_without_call_trains_the_models_it_holds():
    enc = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    dec = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])

    class AE(keras.Model):
        def __init__(self):
            super().__init__()
            self.enc, self.dec = enc, dec

        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.dec(self.enc(x)) - y))
            grads = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            return {"loss": loss}

    ae = AE()
    ae.compile(optimizer=keras.optimizers.SGD(0.05))
    first = ae.fit(X, Y, batch_size=8, epochs=1, verbose=0).history["loss"][0]
    last = ae.fit(X, Y, batch_size=8, epochs=20, verbose=0).history["loss"][-1]
    assert last < first
    assert len(enc.get_weights()) == 2 and len(dec.get_weights()) == 2
