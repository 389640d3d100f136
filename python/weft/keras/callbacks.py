"""Keras callbacks, with Keras' arguments and semantics. Subclass :class:`Callback` to write your own::

    class Print(weft.keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(epoch, logs["loss"])
            if logs["loss"] < 0.1:
                self.model.stop_training = True

fit calls them from the training thread with the GIL held (the C++ loop calls back into Python
between steps); an exception raised in one stops fit and propagates. Epochs are numbered from 0
in calls and from 1 in file names (``{epoch:02d}``), as in Keras.
"""
import csv
import math
import os
import warnings

import numpy as np



class Callback:
    """Base class of callbacks: override any of the ``on_*`` methods. ``self.model`` is the
    model being trained and ``self.params`` fit's settings (``epochs``, ``steps``, ``verbose``)."""

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

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs)

    def on_batch_begin(self, batch, logs=None):
        pass

    def on_batch_end(self, batch, logs=None):
        pass

    # evaluate / predict call the begin / end hooks; weft has no per-batch test / predict hooks.
    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
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


class CallbackList(Callback):
    """Calls each callback in order with one shared logs dict per event, as Keras does (so a
    callback sees what an earlier one added, e.g. ReduceLROnPlateau's ``learning_rate``), and
    keeps the values callbacks added to each epoch's logs (``added``: [(epoch, {key: value})]),
    which fit puts into the History."""

    def __init__(self, callbacks=None, model=None, **params):
        super().__init__()
        self.callbacks = list(callbacks or [])
        self.added = []
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def set_model(self, model):
        super().set_model(model)
        for cb in self.callbacks:
            cb.set_model(model)

    def set_params(self, params):
        super().set_params(params)
        for cb in self.callbacks:
            cb.set_params(params)

    def _each(self, method, *args):
        for cb in self.callbacks:
            getattr(cb, method)(*args)

    def on_train_begin(self, logs=None):
        self._each("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._each("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._each("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        logs = {} if logs is None else logs
        before = dict(logs)
        self._each("on_epoch_end", epoch, logs)
        extra = {k: v for k, v in logs.items() if k not in before}
        if extra:
            self.added.append((epoch, extra))

    def on_train_batch_begin(self, batch, logs=None):
        self._each("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._each("on_train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._each("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._each("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._each("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._each("on_predict_end", logs)


def _min_mode(monitor, mode, who):
    """True when smaller is better: mode 'min', or 'auto' with a monitor that is not an accuracy."""
    if mode not in ("auto", "min", "max"):
        warnings.warn("%s mode '%s' is unknown (auto, min, max): using 'auto'" % (who, mode))
        mode = "auto"
    if mode != "auto":
        return mode == "min"
    return not (monitor.endswith("acc") or "accuracy" in monitor or monitor.endswith("auc"))


def _monitored(logs, monitor, who):
    """logs[monitor], or None with Keras' warning naming what is there."""
    value = (logs or {}).get(monitor)
    if value is None:
        warnings.warn("%s: the monitored metric '%s' is not available; available metrics are: %s%s" % (
            who, monitor, ", ".join(sorted(logs or {})),
            " (pass validation_data or validation_split to fit)" if monitor.startswith("val_") else ""))
    return value


class ModelCheckpoint(Callback):
    """Saves the model (``save_weights_only``: its weights) after each epoch to ``filepath``,
    formatted with ``epoch`` (1-based) and the epoch's logs: ``"ckpt-{epoch:02d}-{val_loss:.2f}.keras"``.
    With ``save_best_only`` only when ``monitor`` improves. ``save_freq`` is 'epoch' or a number of
    batches. Only the chief writes in a multi-worker run."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", initial_value_threshold=None):
        super().__init__()
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0):
            raise ValueError("ModelCheckpoint save_freq must be 'epoch' or a positive number of batches, got %r"
                             % (save_freq,))
        self.filepath = os.fspath(filepath)
        self.monitor, self.verbose = monitor, verbose
        self.save_best_only, self.save_weights_only, self.save_freq = save_best_only, save_weights_only, save_freq
        self._min = _min_mode(monitor, mode, "ModelCheckpoint")
        self.best = initial_value_threshold if initial_value_threshold is not None else (
            math.inf if self._min else -math.inf)
        self.last_saved = None
        self._epoch, self._batches = 0, 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if self.save_freq != "epoch":
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch, logs, batch)

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch, logs)

    def _save(self, epoch, logs, batch=None):
        logs = dict(logs or {})
        if self.save_best_only:
            current = _monitored(logs, self.monitor, "ModelCheckpoint")
            if current is None or not (current < self.best if self._min else current > self.best):
                if self.verbose and current is not None:
                    print("\nEpoch %d: %s did not improve from %.5f" % (epoch + 1, self.monitor, self.best))
                return
            why = "%s improved from %.5f to %.5f, " % (self.monitor, self.best, current)
            self.best = current
        strategy = getattr(self.model, "distribute_strategy", None)
        if strategy is not None and not getattr(strategy, "is_chief", True):
            if getattr(strategy, "shard_optimizer_state", 0) and self.save_weights_only:
                # The chief's save gathers every worker's shard of the optimizer slots: take part.
                self.model._built(None, inference=True).save_weights("")
            return
        try:
            path = self.filepath.format(epoch=epoch + 1, batch=batch, **logs)
        except KeyError as e:
            raise KeyError("ModelCheckpoint: filepath '%s' names %s, which is not in the logs (%s)" % (
                self.filepath, e, ", ".join(sorted(logs)))) from None
        parent = os.path.dirname(path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        if self.verbose > 0:
            print("\nEpoch %d: %ssaving model to %s" % (epoch + 1, why if self.save_best_only else "", path))
        if self.save_weights_only:
            self.model.save_weights(path)
        else:
            self.model.save(path)
        self.last_saved = path


class EarlyStopping(Callback):
    """Stops training when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    epochs (Keras' rule: an epoch improves when it beats the best by more than min_delta; training
    stops once ``patience`` epochs in a row did not). ``baseline``: training also stops unless the
    monitor beats it within ``patience`` epochs. ``restore_best_weights``: the best epoch's weights
    are put back when training stops early (and, as Keras does, also when it ran out of epochs).
    ``start_from_epoch``: epochs before it are not judged."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor, self.patience, self.verbose = monitor, int(patience), verbose
        self.baseline, self.restore_best_weights, self.start_from_epoch = baseline, restore_best_weights, start_from_epoch
        self._min = _min_mode(monitor, mode, "EarlyStopping")
        self.min_delta = abs(min_delta) * (-1 if self._min else 1)
        self.stopped_epoch = 0
        self.best_epoch = 0
        self.best_weights = None

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = math.inf if self._min else -math.inf
        self.best_weights = None
        self.best_epoch = 0

    def _improved(self, value, reference):
        if reference is None:
            return True
        return np.less(value - self.min_delta, reference) if self._min else np.greater(value - self.min_delta, reference)

    def on_epoch_end(self, epoch, logs=None):
        current = _monitored(logs, self.monitor, "EarlyStopping")
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()  # the first judged epoch is the best so far
        self.wait += 1
        if self._improved(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._improved(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print("Epoch %d: early stopping" % (self.stopped_epoch + 1))
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                print("Restoring model weights from the end of the best epoch: %d." % (self.best_epoch + 1))
            self.model.set_weights(self.best_weights)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by ``factor`` when ``monitor`` has not improved by more than
    ``min_delta`` for ``patience`` epochs, not below ``min_lr``; then waits ``cooldown`` epochs.
    Logs the rate as ``learning_rate``."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0.0, **kwargs):
        super().__init__()
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0, got %r" % (factor,))
        if "epsilon" in kwargs:  # Keras' old name
            min_delta = kwargs.pop("epsilon")
        if kwargs:
            raise TypeError("ReduceLROnPlateau got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        self.monitor, self.factor, self.patience, self.verbose = monitor, float(factor), patience, verbose
        self.min_delta, self.cooldown, self.min_lr = min_delta, cooldown, min_lr
        self._min = _min_mode(monitor, mode, "ReduceLROnPlateau")
        self._reset()

    def _reset(self):
        self.best = math.inf if self._min else -math.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model._learning_rate)
        current = _monitored(logs, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.wait = 0
        if (current < self.best - self.min_delta) if self._min else (current > self.best + self.min_delta):
            self.best = current
            self.wait = 0
        elif self.cooldown_counter <= 0:
            self.wait += 1
            if self.wait >= self.patience:
                old = float(self.model._learning_rate)
                if old > np.float32(self.min_lr):
                    new = max(old * self.factor, self.min_lr)
                    self.model._learning_rate = new
                    if self.verbose > 0:
                        print("\nEpoch %d: ReduceLROnPlateau reducing learning rate to %s." % (epoch + 1, new))
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


class LearningRateScheduler(Callback):
    """Sets the learning rate at the start of each epoch to ``schedule(epoch, lr)`` (or
    ``schedule(epoch)``), ``lr`` being the current rate. Logs it as ``learning_rate``."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(self.model._learning_rate)
        try:
            new = self.schedule(epoch, lr)
        except TypeError:  # a one-argument schedule, as the old Keras API allowed
            new = self.schedule(epoch)
        if not isinstance(new, (float, int, np.floating, np.integer)):
            raise ValueError('LearningRateScheduler: the output of the "schedule" function should be a float, got %r'
                             % (new,))
        self.model._learning_rate = float(new)
        if self.verbose > 0:
            print("\nEpoch %d: LearningRateScheduler setting learning rate to %s." % (epoch + 1, float(new)))

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model._learning_rate)


class CSVLogger(Callback):
    """Writes one row per epoch: ``epoch`` and the logs (keys sorted), ``separator``-separated;
    ``append`` continues an existing file (no second header)."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.filename, self.sep, self.append = os.fspath(filename), separator, append
        self._file = self._writer = self._keys = None

    def on_train_begin(self, logs=None):
        has_rows = self.append and os.path.exists(self.filename) and os.path.getsize(self.filename) > 0
        self._file = open(self.filename, "a" if self.append else "w", newline="")
        self._writer, self._keys, self._header = None, None, not has_rows

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self._keys is None:
            self._keys = sorted(logs)
            self._writer = csv.DictWriter(self._file, fieldnames=["epoch"] + self._keys, delimiter=self.sep)
            if self._header:
                self._writer.writeheader()
        row = {"epoch": epoch}
        row.update({k: logs.get(k, "NA") for k in self._keys})
        self._writer.writerow(row)
        self._file.flush()

    def on_train_end(self, logs=None):
        if self._file is not None:
            self._file.close()
            self._file = None


class LambdaCallback(Callback):
    """A callback from functions: ``on_epoch_begin(epoch, logs)``, ``on_epoch_end(epoch, logs)``,
    ``on_batch_begin(batch, logs)``, ``on_batch_end(batch, logs)``, ``on_train_begin(logs)``,
    ``on_train_end(logs)``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        for name, fn in dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_batch_begin=on_batch_begin,
                             on_batch_end=on_batch_end, on_train_begin=on_train_begin, on_train_end=on_train_end,
                             **kwargs).items():
            if not name.startswith("on_") or not hasattr(Callback, name):
                raise TypeError("LambdaCallback got an unexpected keyword argument '%s'" % name)
            if fn is not None:
                setattr(self, name, fn)


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(loss):
            print("Batch %d: Invalid loss, terminating training" % batch)
            self.model.stop_training = True


from .tensorboard import TensorBoard  # noqa: E402 - it subclasses Callback

__all__ = ["Callback", "CallbackList", "History", "ModelCheckpoint", "EarlyStopping", "ReduceLROnPlateau",
           "LearningRateScheduler", "CSVLogger", "LambdaCallback", "TerminateOnNaN", "TensorBoard"]


class BackupAndRestore(Callback):
    """Resumes a fit that was interrupted (an exception, a killed process): at the end of every
    epoch (or every ``save_freq`` batches) the model's weights, optimizer slots and step counter
    go to ``backup_dir`` (written to a temporary name, then renamed, so a crash mid-write keeps
    the previous backup), with the number of epochs done. The next ``fit`` given this callback
    loads them and starts at the first unfinished epoch (a backup taken mid-epoch restarts that
    epoch, with the weights of that batch). A fit that completes deletes the backup
    (``delete_checkpoint``). ``double_checkpoint`` keeps the previous backup beside the latest
    and falls back to it when the latest cannot be read."""

    def __init__(self, backup_dir, save_freq="epoch", double_checkpoint=False, delete_checkpoint=True):
        super().__init__()
        if not backup_dir:
            raise ValueError("BackupAndRestore: backup_dir is empty")
        if save_freq != "epoch" and not (isinstance(save_freq, int) and save_freq > 0) and save_freq is not False:
            raise ValueError("BackupAndRestore: save_freq must be 'epoch', a positive number of batches or False, "
                             "got %r" % (save_freq,))
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq, self.double_checkpoint, self.delete_checkpoint = save_freq, bool(double_checkpoint), \
            bool(delete_checkpoint)
        self._epoch, self._batches = 0, 0

    def _paths(self, which="latest"):
        return (os.path.join(self.backup_dir, which + ".weights.h5"),
                os.path.join(self.backup_dir, which + "_training_metadata.json"))

    def _resume_epoch(self, model):
        """Called by fit before training: loads the backup (if any) into ``model`` and returns the
        epoch to start at (0 without one)."""
        import json
        for which in ("latest", "previous") if self.double_checkpoint else ("latest",):
            weights, meta = self._paths(which)
            if not (os.path.exists(weights) and os.path.exists(meta)):
                continue
            try:
                with open(meta) as f:
                    epoch = int(json.load(f)["epoch"])
                model.load_weights(weights)
            except Exception:
                if self.double_checkpoint and which == "latest":
                    continue  # a damaged latest backup: the previous one
                raise
            return epoch
        return 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int) and not isinstance(self.save_freq, bool):
            self._batches += 1
            if self._batches % self.save_freq == 0:
                self._save(self._epoch)  # mid-epoch: resumes at this epoch's start

    def on_epoch_end(self, epoch, logs=None):
        if self.save_freq == "epoch":
            self._save(epoch + 1)

    def _save(self, epochs_done):
        import json
        os.makedirs(self.backup_dir, exist_ok=True)
        weights, meta = self._paths()
        if self.double_checkpoint and os.path.exists(weights) and os.path.exists(meta):
            prev_w, prev_m = self._paths("previous")
            os.replace(weights, prev_w)
            os.replace(meta, prev_m)
        tmp_w, tmp_m = weights + ".tmp", meta + ".tmp"
        self.model.save_weights(tmp_w)
        with open(tmp_m, "w") as f:
            json.dump({"epoch": int(epochs_done)}, f)
        os.replace(tmp_w, weights)  # the weights first: a metadata file always has its weights
        os.replace(tmp_m, meta)

    def on_train_end(self, logs=None):
        if self.delete_checkpoint:
            for which in ("latest", "previous"):
                for path in self._paths(which):
                    if os.path.exists(path):
                        os.remove(path)


class ProgbarLogger(Callback):
    """Keras' progress bar as a callback: given to fit, it draws the bar (fit's own is then off).
    ``count_mode`` 'steps' (batches; 'samples' is not supported); ``stateful_metrics`` are shown as
    given, the others as their mean over the epoch so far (fit's logs are running results, so
    by default every metric is stateful, as in Keras 3)."""

    def __init__(self, count_mode=None, stateful_metrics=None):
        super().__init__()
        if count_mode not in (None, "steps"):
            raise NotImplementedError("ProgbarLogger: count_mode='steps' only (weft counts batches), got %r"
                                      % (count_mode,))
        self.stateful_metrics = None if stateful_metrics is None else set(stateful_metrics)
        self._bar, self._target, self._seen = None, None, 0

    def on_epoch_begin(self, epoch, logs=None):
        from ._progbar import Progbar, line_verbose
        verbose = self.params.get("verbose", 1)
        self._verbose = line_verbose(1 if verbose == "auto" else int(verbose))
        target = self.params.get("steps") or self._target
        if self._verbose:
            print("Epoch %d/%d" % (epoch + 1, self.params.get("epochs", epoch + 1)))
        self._bar = Progbar(target, verbose=self._verbose, stateful_metrics=self.stateful_metrics)
        self._seen = 0

    def _values(self, logs):
        values = [(k, v) for k, v in (logs or {}).items() if np.ndim(v) == 0 and isinstance(v, (int, float, np.number))]
        if self.stateful_metrics is None:
            self._bar.stateful_metrics = {k for k, _ in values}
        return values

    def on_train_batch_end(self, batch, logs=None):
        self._seen = batch + 1
        self._bar.update(self._seen, self._values(logs), finalize=False)

    def on_epoch_end(self, epoch, logs=None):
        if self._bar is not None:
            self._target = self._target or self._seen  # an unknown epoch length is known after one epoch
            self._bar.target = self._bar.target or self._seen
            self._bar.update(self._seen, self._values(logs), finalize=True)


def resume_epoch(model, callbacks, initial_epoch):
    """fit's start: the epoch a BackupAndRestore among ``callbacks`` resumes at (its backup loaded
    into ``model``), else ``initial_epoch``."""
    for cb in callbacks or []:
        if isinstance(cb, BackupAndRestore):
            initial_epoch = max(int(initial_epoch), cb._resume_epoch(model))
    return initial_epoch


def own_progbar(callbacks):
    """Whether a ProgbarLogger among ``callbacks`` draws the bar (fit then prints nothing itself)."""
    return any(isinstance(cb, ProgbarLogger) for cb in callbacks or [])


__all__ += ["BackupAndRestore", "ProgbarLogger"]
