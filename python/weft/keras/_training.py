"""Model's training loops with Keras' arguments and return values: fit, evaluate, predict, the
*_on_batch calls and TF 2.x's generator methods. A mixin of keras.models.Model (models.py), which
holds the rest: building, compiling, weights, configs, and the Keras steps a subclass may override.

The loops themselves are C++ (train::Model's fit / evaluate / predict); what is here turns Keras'
inputs (arrays, Datasets, generators, PyDatasets; sample and class weights; validation options)
into theirs, runs Python callbacks beside the C++ ones, and shapes the results as Keras does.
A subclass overriding train_step / test_step, or a Python loss or metric, goes to _custom_step.py.
"""
import sys
import time
import warnings

from .. import _weft
from . import _custom_step, _data_adapter, _progbar, _shared, callbacks as _callbacks
from ._arrays import fit_arrays as _fit_arrays, numeric as _numeric, numeric_list as _numeric_list, rows as _rows
from .callbacks import Callback, CallbackList, History


def _overrides(model, step):
    """Whether ``model``'s class overrides Keras' default ``step`` ("train_step" / "test_step"), so
    that the loop must run it traced, as Keras' "customizing what happens in fit"."""
    from .models import Model  # models.py imports this module
    return getattr(type(model), step) is not getattr(Model, step)


def _dataset_of(xs, ys, batch_size):
    """Validation arrays of a model with several inputs or outputs as a dataset of (xs, ys) batches."""
    from ..data import Dataset
    pack = lambda a: tuple(a) if isinstance(a, list) else a  # noqa: E731
    return Dataset.from_tensor_slices((pack(xs), pack(ys))).batch(batch_size)


class TrainingLoops:
    """fit / evaluate / predict and their variants, for keras.models.Model (see the module)."""

    def _host_preprocessed(self, x):
        """``x`` through the host text layers a Sequential starts with (TextVectorization /
        StringLookup: ``Sequential([vectorize_layer, model, Activation("sigmoid")])``, TF's text
        tutorial's export model): texts (a list, an array, a string dataset of x or (x, y, ...)
        elements) become the ids the model's layers take. Anything else passes as it is."""
        pre = getattr(self, "_host_layers", None)
        if not pre or x is None:
            return x

        def apply(texts):
            for layer in pre:
                texts = layer(texts)
            return texts
        if _data_adapter.is_dataset(x):
            if isinstance(x.element_spec, tuple):
                return x.map(lambda first, *rest: (apply(first),) + rest)
            return x.map(apply)
        if isinstance(x, tuple) and len(x) in (2, 3):  # validation_data=(x_val, y_val[, weights])
            return (apply(x[0]),) + tuple(x[1:])
        return apply(x)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_split=0.0,
            validation_data=None, shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None, validation_freq=1,
            max_queue_size=10, workers=1, use_multiprocessing=False, shuffle_seed=0, gradient_accumulation_steps=None):
        """Trains on numpy arrays ``x`` [N, ...] and ``y`` [N, ...] (any int / float dtype Keras
        accepts; converted), or on a weft.data Dataset of (x, y) batches (then validation_data may
        be one, with validation_steps). Keras' arguments and meaning: ``validation_split`` holds out
        the last fraction of the data (before shuffling), ``validation_data=(x_val, y_val)`` or a
        Dataset, ``class_weight`` ({class: weight}) and ``sample_weight`` ([N]) weight each example's
        loss, ``initial_epoch`` resumes. Prints Keras' progress bar; returns a History (``.history``
        dict of per-epoch lists, ``.epoch``). Ctrl-C stops the current step and raises
        KeyboardInterrupt; the model stays usable. ``shuffle_seed`` (weft): epoch e's order is a
        function of (shuffle_seed, e).

        ``x`` may also be a Python generator of (x, y) or (x, y, sample_weight) batches (read on across
        epochs; an endless one needs steps_per_epoch) or a keras.utils.PyDataset / Sequence (len()
        batches per epoch, in a shuffled order when ``shuffle``; its on_epoch_end is called after
        each epoch); validation_data may be one too. ``validation_freq``: validate after every n-th
        epoch (an int) or after the listed epochs (1-based), as Keras. ``max_queue_size``,
        ``workers``, ``use_multiprocessing`` (TF 2.x's): accepted; batches are read on one thread.
        ``gradient_accumulation_steps`` (weft): sets the optimizer's (Keras 3's optimizer argument of
        that name; it stays set): the weights change every k-th batch by the mean of the k batches'
        gradients; the model is rebuilt keeping every weight and optimizer slot."""
        x = self._host_preprocessed(x)
        validation_data = self._host_preprocessed(validation_data)
        if gradient_accumulation_steps is not None:
            self._set_gradient_accumulation_steps(gradient_accumulation_steps)
        if _overrides(self, "train_step") or getattr(self, "_traced_steps", False):
            # Keras' customized fit, or a Python loss / metric (_custom_step.py)
            initial_epoch = _callbacks.resume_epoch(self, callbacks, initial_epoch)
            self._custom_fit = True
            try:
                return _custom_step.fit(self, x, y, batch_size, epochs, verbose, callbacks, shuffle, steps_per_epoch,
                                        initial_epoch, validation_data, validation_split)
            finally:
                self._custom_fit = False
        sw = vx = vy = None
        if batch_size is not None:  # with a dataset, fit_dataset says it must not be given
            _data_adapter.batch_size_of(batch_size, "fit")
        validation_epochs = _data_adapter.validation_epochs(validation_freq, epochs)
        x, validation_data, epoch_hooks = _data_adapter.python_fit_inputs(
            self, x, validation_data, validation_batch_size, shuffle, shuffle_seed, initial_epoch)
        if _data_adapter.is_dataset(x):
            if validation_split:
                raise ValueError("`validation_split` is only supported for arrays, not a dataset (hold out a "
                                 "dataset with take / skip and pass it as validation_data)")
            if sample_weight is not None or class_weight is not None:
                raise ValueError("`sample_weight` and `class_weight` are taken from arrays: with a dataset, weft "
                                 "does not weight examples (give arrays, or leave them out)")
            cpp = self._compiled(_data_adapter.shape_hint(x), "fit")
            x, vx = _data_adapter.fit_dataset(self, x, y, batch_size, validation_data, validation_steps)
        else:
            if x is None or y is None:
                raise ValueError("fit needs x and y arrays, or a weft.data Dataset of (x, y) batches")
            val_ds = validation_data if _data_adapter.is_dataset(validation_data) else None
            n_in, n_out = self._io_counts()
            x = self._expand_1d(x)
            if isinstance(validation_data, tuple) and validation_data:
                validation_data = (self._expand_1d(validation_data[0]),) + tuple(validation_data[1:])
            x, y, sw, vx, vy = _fit_arrays(x, y, validation_split, None if val_ds is not None else validation_data,
                                           class_weight, sample_weight, n_in, n_out)
            if vx is not None and (n_in > 1 or n_out > 1):  # several arrays: validated as a dataset of them
                val_ds, vx, vy = _dataset_of(vx, vy, _data_adapter.batch_size_of(batch_size, "fit")), None, None
            cpp = self._compiled(x, "fit")
            if val_ds is not None:  # a dataset beside arrays
                vx = _data_adapter.validation_dataset(self, val_ds, validation_steps)
        initial_epoch = _callbacks.resume_epoch(self, callbacks, initial_epoch)  # BackupAndRestore
        params = {"epochs": epochs, "steps": steps_per_epoch, "verbose": verbose}
        cpp_cbs, py_cbs = [], []
        for cb in callbacks or []:
            if isinstance(cb, Callback):
                py_cbs.append(cb)
            elif isinstance(cb, _weft.keras.CppCallback):
                cpp_cbs.append(cb)
            else:
                raise TypeError("callbacks must be weft.keras.callbacks objects or Callback subclasses, got %r" % (cb,))
        py_list = CallbackList(epoch_hooks + py_cbs, model=self, **params)
        cbs = cpp_cbs + ([py_list] if py_cbs or epoch_hooks else [])
        verbose = _progbar.line_verbose(1 if verbose == "auto" else min(max(int(verbose), 0), 2))
        if _callbacks.own_progbar(py_cbs):
            verbose = 0  # a ProgbarLogger draws it
        epochs_run, hist = cpp.fit(x, y, batch_size=_data_adapter.batch_size_of(batch_size, "fit"), epochs=int(epochs),
                                   initial_epoch=int(initial_epoch),
                                   steps_per_epoch=-1 if steps_per_epoch is None else int(steps_per_epoch),
                                   shuffle=bool(shuffle), shuffle_seed=int(shuffle_seed), validation_x=vx,
                                   validation_y=vy, callbacks=cbs, verbose=verbose, sample_weight=sw,
                                   validation_steps=int(validation_steps or -1),
                                   validation_epochs=validation_epochs)
        _shared.claim(self, cpp)
        for epoch, extra in py_list.added:  # what callbacks added to the logs (learning_rate, ...)
            for k, v in extra.items():
                hist.setdefault(k, []).append(v)
        self.history = History(epochs_run, hist, self)
        self.history.params = params
        return self.history

    @property
    def _learning_rate(self):
        """The rate the next training step uses (callbacks set it between epochs)."""
        return self._compiled(None, "reading the learning rate").learning_rate

    @_learning_rate.setter
    def _learning_rate(self, value):
        self._compiled(None, "setting the learning rate").learning_rate = float(value)

    def _ordered(self, logs):
        keys = ["loss"] + [m for m in self._metric_names if m in logs]
        keys += sorted(k for k in logs if k not in keys)
        return keys

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, sample_weight=None, steps=None, callbacks=None,
                 max_queue_size=10, workers=1, use_multiprocessing=False, return_dict=False):
        """Mean loss and metrics over (x, y) (arrays, or a weft.data Dataset of (x, y) batches, of
        which ``steps`` batches when given) in inference mode: [loss, metric, ...] (or the loss
        alone without metrics, or a dict with return_dict=True). Keras' argument order."""
        if _overrides(self, "test_step") or getattr(self, "_traced_steps", False):
            logs = _custom_step.evaluate(self, x, y, batch_size, steps, callbacks, sample_weight)
            if return_dict:
                return logs
            values = list(logs.values())
            return values[0] if len(values) == 1 else values
        x = self._host_preprocessed(x)
        if sample_weight is not None:
            if _data_adapter.is_dataset(x) or _data_adapter.is_python_data(x):
                raise ValueError("evaluate: `sample_weight` is taken with arrays; a dataset or generator gives "
                                 "(x, y, sample_weight) batches instead")
            x, y = _data_adapter.weighted_batches(x, y, sample_weight, batch_size), None
            batch_size = None
        if _data_adapter.is_python_data(x):
            x, _ = _data_adapter.from_python(self, x, "evaluate")
        if _data_adapter.is_dataset(x):
            cpp = self._compiled(_data_adapter.shape_hint(x), "evaluate")
            x, y = _data_adapter.evaluate_dataset(self, x, y, batch_size, steps), None
        else:
            n_in, n_out = self._io_counts()
            if n_in > 1 or n_out > 1:
                x, y = _numeric_list(x, n_in, "evaluate: x"), _numeric_list(y, n_out, "evaluate: y")
            x = self._expand_1d(x)
            cpp = self._compiled(x, "evaluate")
        batch_size = _data_adapter.batch_size_of(batch_size, "evaluate")
        start = time.time()
        hooks = CallbackList([c for c in callbacks or [] if isinstance(c, Callback)], model=self)
        hooks.on_test_begin({})
        logs = cpp.evaluate(x, y, batch_size=batch_size)
        hooks.on_test_end(dict(logs))
        keys = self._ordered(logs)
        if verbose:
            steps = -(-_rows(x) // batch_size) if y is not None else x.cardinality()
            elapsed = time.time() - start
            line = ("%d/%d [%s] - " % (steps, steps, "=" * 30) if steps >= 0 else "") + "%.0fs %.0fms/step" % (
                elapsed, 1000 * elapsed / max(steps, 1))
            print(line + "".join(" - %s: %.4f" % (k, logs[k]) for k in keys))
            sys.stdout.flush()
        return self._returned(logs, return_dict)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None, max_queue_size=10, workers=1,
                use_multiprocessing=False):
        """The model's outputs for every row of x (an array, or a weft.data Dataset of x or (x, ...)
        batches), computed in batches of ``batch_size`` (32), as a float32 numpy array."""
        hooks = CallbackList([c for c in callbacks or [] if isinstance(c, Callback)], model=self)
        hooks.on_predict_begin({})
        x = self._host_preprocessed(x)
        if _data_adapter.is_python_data(x):
            x, _ = _data_adapter.from_python(self, x, "predict")
        if _data_adapter.is_dataset(x):
            cpp = self._built(_data_adapter.shape_hint(x), inference=True)
            out = cpp.predict(_data_adapter.predict_dataset(self, x, batch_size, steps))
        else:
            x = self._expand_1d(_numeric_list(x, self._io_counts()[0], "predict: x"))
            cpp = self._built(x, inference=True)
            out = cpp.predict(x, batch_size=_data_adapter.batch_size_of(batch_size, "predict"))
        hooks.on_predict_end({})
        return out

    # TF 2.x's deprecated generator methods (removed in Keras 3): fit / evaluate / predict take generators.
    def fit_generator(self, generator, steps_per_epoch=None, epochs=1, verbose=1, callbacks=None,
                      validation_data=None, validation_steps=None, validation_freq=1, class_weight=None,
                      max_queue_size=10, workers=1, use_multiprocessing=False, shuffle=True, initial_epoch=0):
        warnings.warn("`Model.fit_generator` is deprecated; use `Model.fit`, which supports generators.",
                      DeprecationWarning, stacklevel=2)
        return self.fit(generator, steps_per_epoch=steps_per_epoch, epochs=epochs, verbose=verbose,
                        callbacks=callbacks, validation_data=validation_data, validation_steps=validation_steps,
                        validation_freq=validation_freq, class_weight=class_weight, shuffle=shuffle,
                        initial_epoch=initial_epoch)

    def evaluate_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                           use_multiprocessing=False, verbose=0):
        warnings.warn("`Model.evaluate_generator` is deprecated; use `Model.evaluate`, which supports generators.",
                      DeprecationWarning, stacklevel=2)
        return self.evaluate(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def predict_generator(self, generator, steps=None, callbacks=None, max_queue_size=10, workers=1,
                          use_multiprocessing=False, verbose=0):
        warnings.warn("`Model.predict_generator` is deprecated; use `Model.predict`, which supports generators.",
                      DeprecationWarning, stacklevel=2)
        return self.predict(generator, steps=steps, callbacks=callbacks, verbose=verbose)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One training step on one batch; returns its loss (and metrics). ``sample_weight`` /
        ``class_weight`` weight each example's loss as in fit."""
        x, y, sw, _, _ = _fit_arrays(x, y, 0.0, None, class_weight, sample_weight, *self._io_counts())
        cpp = self._compiled(x, "train_on_batch")
        logs = cpp.train_on_batch(x, y, sample_weight=sw)
        _shared.claim(self, cpp)
        return self._returned(logs, return_dict)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """The loss (and metrics) of one batch in inference mode, as evaluate returns them."""
        return self.evaluate(x, y, batch_size=len(x), verbose=0, sample_weight=sample_weight, return_dict=return_dict)

    def predict_on_batch(self, x):
        """The outputs for one batch, as a numpy array."""
        x = _numeric(x, "x")
        return self.predict(x, batch_size=max(len(x), 1), verbose=0)

    def _returned(self, logs, return_dict):
        """Keras' return value: a dict, the loss alone (no metrics), or [loss, *metrics]."""
        keys = self._ordered(logs)
        if return_dict:
            return {k: logs[k] for k in keys}
        return logs["loss"] if len(keys) == 1 else [logs[k] for k in keys]
