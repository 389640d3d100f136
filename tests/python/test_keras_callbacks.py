"""keras.callbacks with Keras' semantics: EarlyStopping on monitored sequences (the stopping epochs
computed by Keras 3.15 / TensorFlow 2.21's own EarlyStopping, kept as data), ReduceLROnPlateau and
LearningRateScheduler checked through a one-weight model whose loss has a closed form,
ModelCheckpoint file names, CSVLogger, LambdaCallback, TerminateOnNaN and user subclasses."""
import math

import numpy as np
import pytest

from weft import keras
from weft.keras import layers


def one_weight(lr):
    """pred = w * x with w = 0 at start, x = 1, y = 1, MSE, plain SGD, one example per epoch:
    the loss logged for an epoch is (w - 1)^2 before that epoch's step, and a step with rate lr
    maps (1 - w) to (1 - w) * (1 - 2 lr)."""
    model = keras.Sequential([layers.Dense(1, use_bias=False, kernel_initializer="zeros", input_shape=(1,))])
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(lr), intra_op_threads=1, inter_op_threads=1)
    return model, np.ones((1, 1), np.float32), np.ones((1, 1), np.float32)


class Stub:
    """Stands in for a model: EarlyStopping reads and sets stop_training and the weights."""

    def __init__(self):
        self.stop_training, self.w, self.restored = False, 0, None

    def get_weights(self):
        return [np.array(self.w)]

    def set_weights(self, w):
        self.restored = int(w[0])


# (arguments, monitored sequence, epochs run, stopped_epoch, restored epoch) from Keras 3.15's
# EarlyStopping driven the same way (tests' stub model; /work/peers-venv, TensorFlow 2.21).
EARLY_STOPPING_CASES = [
    (dict(monitor="val_loss", patience=2), [1.0, 0.9, 0.95, 0.92, 0.8, 0.7], 4, 3, None),
    (dict(monitor="val_loss", patience=2, min_delta=0.05), [1.0, 0.9, 0.88, 0.86, 0.5], 4, 3, None),
    (dict(monitor="val_accuracy", patience=1, mode="max"), [0.5, 0.6, 0.6, 0.7], 3, 2, None),
    (dict(monitor="val_loss", patience=3, baseline=0.5), [0.9, 0.8, 0.7, 0.6, 0.4], 5, 0, None),
    (dict(monitor="val_loss", patience=1, restore_best_weights=True), [1.0, 0.5, 0.7, 0.8, 0.9], 3, 2, 1),
    (dict(monitor="val_loss", patience=0), [1.0, 1.1, 0.9], 2, 1, None),
    (dict(monitor="loss", patience=2, mode="max"), [1.0, 2.0, 1.5, 1.9, 3.0], 4, 3, None),
]


@pytest.mark.parametrize("kwargs,seq,ran,stopped,restored", EARLY_STOPPING_CASES)
def test_early_stopping_matches_keras(kwargs, seq, ran, stopped, restored):
    cb = keras.callbacks.EarlyStopping(**kwargs)
    model = Stub()
    cb.set_model(model)
    cb.on_train_begin()
    epochs = 0
    for epoch, value in enumerate(seq):
        model.w = epoch
        cb.on_epoch_end(epoch, {kwargs["monitor"]: value})
        epochs += 1
        if model.stop_training:
            break
    cb.on_train_end()
    assert (epochs, cb.stopped_epoch, model.restored) == (ran, stopped, restored)


def test_early_stopping_documented_example():
    # Keras' EarlyStopping docstring: the loss grows from the first epoch on (SGD's default rate on
    # inputs up to 99), so with patience=3 "only 4 epochs are run".
    callback = keras.callbacks.EarlyStopping(monitor="loss", patience=3)
    model = keras.models.Sequential([layers.Dense(10)])
    model.compile(keras.optimizers.SGD(), loss="mse")
    history = model.fit(np.arange(100).reshape(5, 20), np.zeros((5, 10)), epochs=10, batch_size=1,
                        callbacks=[callback], verbose=0)
    assert len(history.history["loss"]) == 4


def test_early_stopping_restores_best_weights_in_fit():
    # lr 1: w oscillates 0, 2, 0, ... so the loss is 1 every epoch; the best is epoch 0 (w = 0).
    model, x, y = one_weight(1.0)
    es = keras.callbacks.EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)
    hist = model.fit(x, y, epochs=10, verbose=0, callbacks=[es], shuffle=False)
    assert hist.epoch == [0, 1, 2] and es.stopped_epoch == 2
    # weights at the end of epoch 0 (after its step): w = 2
    np.testing.assert_allclose(model.get_weights()[0], [[2.0]])


def test_reduce_lr_on_plateau_closed_form():
    # lr 1: the loss stays 1 (w: 0, 2, 0 ...). Without improvement for patience=1 epoch the rate is
    # halved after epoch 1; epoch 2's step with lr 0.5 lands on w = 1, so epoch 3's loss is 0.
    model, x, y = one_weight(1.0)
    plain = model.fit(x, y, epochs=4, verbose=0).history["loss"]
    assert plain == [1.0, 1.0, 1.0, 1.0]
    model, x, y = one_weight(1.0)
    cb = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.0)
    hist = model.fit(x, y, epochs=4, verbose=0, callbacks=[cb])
    assert hist.history["loss"] == [1.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="factor"):
        keras.callbacks.ReduceLROnPlateau(factor=1.5)


def test_reduce_lr_respects_min_lr_and_cooldown():
    model, x, y = one_weight(1.0)
    rates = []
    seen = keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs: rates.append(model._learning_rate))
    cb = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.1, patience=1, cooldown=1, min_lr=0.05)
    # make the loss flat: a zero input gives no gradient, whatever the rate
    model.fit(np.zeros((1, 1), np.float32), y, epochs=6, verbose=0, callbacks=[seen, cb])
    # The rates at each epoch's start, as Keras 3.15's ReduceLROnPlateau sets them for a flat loss
    # (run on a stub model with the same arguments): epoch 1 reduces 1 -> 0.1, the cooldown epoch
    # 2 resets the wait and then counts it, so it reduces again, to max(0.01, min_lr).
    np.testing.assert_allclose(rates, [1.0, 1.0, 0.1, 0.05, 0.05, 0.05], rtol=1e-6)


def test_learning_rate_scheduler_closed_form():
    # epoch 0 with lr 0.25 takes w from 0 to 0.5 (loss 1 -> 0.25); then lr 0 keeps it there.
    model, x, y = one_weight(0.0)
    sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.25 if epoch == 0 else 0.0)
    hist = model.fit(x, y, epochs=3, verbose=0, callbacks=[sched])
    assert hist.history["loss"] == [1.0, 0.25, 0.25]
    # Keras' documented schedule: keep the rate for 10 epochs, then lr * exp(-0.1)
    model, x, y = one_weight(0.01)
    rates = []
    cb = keras.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch < 2 else lr * math.exp(-0.1))
    seen = keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: rates.append(model._learning_rate))
    model.fit(x, y, epochs=4, verbose=0, callbacks=[cb, seen])
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.01 * math.exp(-0.1), 0.01 * math.exp(-0.2)], rtol=1e-6)


def test_model_checkpoint_names_and_best_only(tmp_path):
    model, x, y = one_weight(1.0)
    path = str(tmp_path / "ckpt-{epoch:02d}-{loss:.2f}.keras")
    cb = keras.callbacks.ModelCheckpoint(path, monitor="loss", save_best_only=True)
    model.fit(x, y, epochs=3, verbose=0, callbacks=[cb])  # losses 1, 1, 1: only the first improves
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt-01-1.00.keras"]
    restored = keras.models.load_model(cb.last_saved)
    np.testing.assert_allclose(restored.get_weights()[0], [[2.0]])  # after epoch 1's step


def test_model_checkpoint_weights_only_every_epoch(tmp_path):
    model, x, y = one_weight(0.25)
    cb = keras.callbacks.ModelCheckpoint(str(tmp_path / "w{epoch}.weights.h5"), save_weights_only=True,
                                         monitor="loss")
    model.fit(x, y, epochs=2, verbose=0, callbacks=[cb])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w1.weights.h5", "w2.weights.h5"]
    other, _, _ = one_weight(0.25)
    other.load_weights(str(tmp_path / "w1.weights.h5"))
    np.testing.assert_allclose(other.get_weights()[0], [[0.5]])  # (1 - w) halves per step
    with pytest.raises(ValueError, match="save_freq"):
        keras.callbacks.ModelCheckpoint("x", save_freq="sometimes")


def test_csv_logger_separator_and_append(tmp_path):
    model, x, y = one_weight(0.25)
    f = tmp_path / "log.csv"
    model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.CSVLogger(str(f), separator=";")])
    model.fit(x, y, epochs=3, initial_epoch=2, verbose=0,
              callbacks=[keras.callbacks.CSVLogger(str(f), separator=";", append=True)])
    rows = f.read_text().splitlines()
    assert rows[0] == "epoch;loss" and [r.split(";")[0] for r in rows[1:]] == ["0", "1", "2"]
    assert [float(r.split(";")[1]) for r in rows[1:]] == [1.0, 0.25, 0.0625]


def test_lambda_callback_calls():
    calls = []
    cb = keras.callbacks.LambdaCallback(
        on_train_begin=lambda logs: calls.append("train_begin"),
        on_epoch_begin=lambda epoch, logs: calls.append("epoch_begin %d" % epoch),
        on_batch_begin=lambda batch, logs: calls.append("batch_begin %d" % batch),
        on_batch_end=lambda batch, logs: calls.append("batch_end %d %.2f" % (batch, logs["loss"])),
        on_epoch_end=lambda epoch, logs: calls.append("epoch_end %d" % epoch),
        on_train_end=lambda logs: calls.append("train_end"))
    model, x, y = one_weight(0.25)
    model.fit(np.ones((2, 1), np.float32), np.ones((2, 1), np.float32), batch_size=1, epochs=1, verbose=0,
              callbacks=[cb], shuffle=False)
    # a batch's logs are the epoch's means so far, as in Keras 3: (1 + 0.25) / 2 after the second
    assert calls == ["train_begin", "epoch_begin 0", "batch_begin 0", "batch_end 0 1.00", "batch_begin 1",
                     "batch_end 1 0.62", "epoch_end 0", "train_end"]
    with pytest.raises(TypeError, match="on_epoch_middle"):
        keras.callbacks.LambdaCallback(on_epoch_middle=print)


def test_terminate_on_nan():
    # lr 1e30: w jumps to 2e30 and the next loss, 4e60, overflows float32 to inf.
    model, x, y = one_weight(1e30)
    hist = model.fit(x, y, epochs=10, verbose=0, callbacks=[keras.callbacks.TerminateOnNaN()])
    assert hist.epoch == [0, 1] and math.isinf(hist.history["loss"][1])


def test_subclassed_callback_stops_training_and_sees_params():
    class StopAt(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.seen = (self.params["epochs"], epoch)
            if epoch == 2:
                self.model.stop_training = True

    model, x, y = one_weight(0.25)
    cb = StopAt()
    hist = model.fit(x, y, epochs=8, verbose=0, callbacks=[cb])
    assert hist.epoch == [0, 1, 2] and cb.seen == (8, 2) and cb.model is model


def test_unknown_callback_arguments_are_type_errors():
    for make in (lambda: keras.callbacks.EarlyStopping(patiense=2), lambda: keras.callbacks.ModelCheckpoint(),
                 lambda: keras.callbacks.CSVLogger("x.csv", sep=";"),
                 lambda: keras.callbacks.ReduceLROnPlateau(facter=0.5)):
        with pytest.raises(TypeError):
            make()
    with pytest.raises(TypeError, match="callbacks"):
        one_weight(0.1)[0].fit(np.ones((1, 1)), np.ones((1, 1)), verbose=0, callbacks=[print])


def test_callbacks_share_logs_and_history_gets_the_learning_rate(tmp_path):
    # Keras: ReduceLROnPlateau writes logs["learning_rate"]; later callbacks (CSVLogger) and the
    # History see it.
    model, x, y = one_weight(1.0)
    cb = keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.0)
    csv = keras.callbacks.CSVLogger(str(tmp_path / "log.csv"))
    hist = model.fit(x, y, epochs=3, verbose=0, callbacks=[cb, csv])
    # logged before the epoch's reduction, as Keras' on_epoch_end does: the rate the epoch ran with
    assert hist.history["learning_rate"] == [1.0, 1.0, 0.5]
    assert (tmp_path / "log.csv").read_text().splitlines()[0] == "epoch,learning_rate,loss"


def test_evaluate_and_predict_call_their_hooks():
    seen = []

    class Hooks(keras.callbacks.Callback):
        def on_test_begin(self, logs=None):
            seen.append("test_begin")

        def on_test_end(self, logs=None):
            seen.append("test_end %.2f" % logs["loss"])

        def on_predict_begin(self, logs=None):
            seen.append("predict_begin")

        def on_predict_end(self, logs=None):
            seen.append("predict_end")

    model, x, y = one_weight(0.25)
    model.evaluate(x, y, verbose=0, callbacks=[Hooks()])
    model.predict(x, callbacks=[Hooks()])
    assert seen == ["test_begin", "test_end 1.00", "predict_begin", "predict_end"]
