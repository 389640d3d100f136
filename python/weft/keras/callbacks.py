"""Keras callbacks. ModelCheckpoint, EarlyStopping and CSVLogger are the C++ ones
(train/callbacks.h); subclass :class:`Callback` to write your own in Python::

    class Print(weft.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(epoch, logs["loss"])
            if logs["loss"] < 0.1:
                self.model.stop_training = True

Python callbacks are called from the training thread with the GIL held; an exception raised in
one stops fit and propagates.
"""
from .. import _weft

ModelCheckpoint = _weft.keras.ModelCheckpoint
EarlyStopping = _weft.keras.EarlyStopping
CSVLogger = _weft.keras.CSVLogger


class Callback:
    """Base class of Python callbacks: override any of the ``on_*`` methods. ``self.model`` is
    the model being trained (set by fit)."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_batch_end(self, batch, logs=None):
        pass


class History(Callback):
    """What fit returns: ``history.history["loss"]`` (one value per epoch), ``history.epoch``."""

    def __init__(self, epoch=None, history=None, model=None):
        super().__init__()
        self.epoch = list(epoch or [])
        self.history = dict(history or {})
        self.model = model

    def __repr__(self):
        return "<History epochs=%s keys=%s>" % (self.epoch, sorted(self.history))


from .tensorboard import TensorBoard  # noqa: E402 - it subclasses Callback

__all__ = ["Callback", "History", "ModelCheckpoint", "EarlyStopping", "CSVLogger", "TensorBoard"]
