"""Keras models: ``Sequential`` and the functional ``Model``, over the C++ train::Model.

The Python class adds what Keras users expect around the C++ object: a Sequential that can be
built from ``add()`` calls and gets its input shape from the first layer's ``input_shape=`` (or,
as Keras does, from the data at the first ``fit``), ``compile`` arguments as objects or strings,
and Keras' return values (History, [loss, metric...]). Training itself is the C++ loop.
"""
import contextlib
import sys
import time

import numpy as np

from .. import _weft
from .. import distribute as _distribute
from . import _data_adapter, losses as _losses, optimizers as _optimizers
from .callbacks import Callback, History
from .layers import InputLayer

Input = _weft.keras.Input


def _metric_name(m):
    if isinstance(m, str):
        return m
    if isinstance(m, type):  # a class given instead of an instance
        m = m()
    name = getattr(m, "name", None) or type(m).__name__
    # SparseCategoricalAccuracy -> sparse_categorical_accuracy
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


class Model:
    """A model from symbolic inputs to an output: ``Model(inputs=x, outputs=y)`` with
    ``x = keras.Input(shape=(...))`` and ``y`` a chain of layer calls on it."""

    def __init__(self, inputs=None, outputs=None, name=None):
        self._cpp = None
        self._compile_args = None
        self._metric_names = []
        self.history = None
        # The strategy whose scope the model is created in (weft.distribute); the C++ model is
        # built inside that scope even when that happens later (a Sequential built at fit).
        self._strategy = _distribute.get_strategy()
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model(inputs, outputs) needs both")
            self._cpp = _weft.keras.Model(inputs, outputs, name or "model")

    def _in_strategy(self):
        """A context that re-enters the model's strategy scope when it is not the current one."""
        if self._strategy is None or _distribute.get_strategy() is self._strategy:
            return contextlib.nullcontext()
        return self._strategy.scope()

    @property
    def distribute_strategy(self):
        return self._strategy

    # ---- building ----------------------------------------------------------------------------
    def _build(self, x=None):
        if self._cpp is None:
            raise ValueError("this model has no inputs: use keras.Model(inputs, outputs)")
        return self._cpp

    def _built(self, x=None, what="this call"):
        cpp = self._build(x)
        if self._compile_args is not None and not cpp.compiled:
            cpp.compile(**self._compile_args)
        return cpp

    def _compiled(self, x=None, what="fit"):
        cpp = self._built(x, what)
        if not cpp.compiled:
            raise RuntimeError("you must compile the model before %s: model.compile(loss=..., optimizer=...)" % what)
        return cpp

    @property
    def name(self):
        return self._build().name

    @property
    def layers(self):
        return self._build().layers

    def get_layer(self, name):
        return self._build().get_layer(name)

    @property
    def input_shape(self):
        return self._build().input_shape

    @property
    def output_shape(self):
        return self._build().output_shape

    def count_params(self):
        return self._build().count_params()

    def summary(self, print_fn=None):
        """Prints Keras' table: each layer with its output shape and parameter count, and totals."""
        text = self._build().summary_text().rstrip("\n")
        (print_fn or print)(text)

    # ---- compile / train ---------------------------------------------------------------------
    def compile(self, optimizer="sgd", loss=None, metrics=None, seed=0, inter_op_threads=0, intra_op_threads=0):
        """Builds the training graph.

        optimizer: a weft.keras.optimizers object or a name ('sgd', 'adam', 'momentum').
        loss: a weft.keras.losses object or a name ('sparse_categorical_crossentropy', 'mse', ...).
        metrics: names such as 'accuracy' (resolved against the loss, as Keras does).
        seed: graph seed (nonzero: reproducible initial weights and dropout).
        inter_op_threads / intra_op_threads: 0 = one per hardware thread.
        """
        if loss is None:
            raise ValueError("compile needs a loss, e.g. loss=weft.keras.losses.SparseCategoricalCrossentropy()")
        metrics = list(metrics or [])
        self._metric_names = [_metric_name(m) for m in metrics]
        self._compile_args = dict(loss=_losses.get(loss), optimizer=_optimizers.get(optimizer),
                                  metrics=self._metric_names, inter_op_threads=int(inter_op_threads),
                                  intra_op_threads=int(intra_op_threads), seed=int(seed))
        if self._cpp is not None:
            self._cpp.compile(**self._compile_args)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_data=None,
            shuffle=True, initial_epoch=0, steps_per_epoch=None, shuffle_seed=0, validation_steps=None):
        """Trains on numpy arrays ``x`` [N, ...] and ``y`` [N] (uint8 / float64 inputs and integer
        labels of any width are converted), or on a weft.data Dataset of (x, y) batches (then
        validation_data may be one, with validation_steps). Prints Keras' progress bar; returns a
        History. Ctrl-C stops the current step and raises KeyboardInterrupt; the model stays usable."""
        vx = vy = None
        if _data_adapter.is_dataset(x):
            cpp = self._compiled(_data_adapter.shape_hint(x), "fit")
            x, vx = _data_adapter.fit_dataset(self, x, y, batch_size, validation_data, validation_steps)
            validation_data = None
        elif x is None or y is None:
            raise ValueError("fit needs x and y arrays")
        else:
            cpp = self._compiled(x, "fit")
        if _data_adapter.is_dataset(validation_data):  # a dataset beside arrays
            vx = _data_adapter.validation_dataset(self, validation_data, validation_steps)
        elif validation_data is not None:
            vx, vy = validation_data[0], validation_data[1]
        cbs = list(callbacks or [])
        params = {"epochs": epochs, "steps": steps_per_epoch, "verbose": verbose}
        for cb in cbs:
            if isinstance(cb, Callback):
                cb.set_model(self)
                cb.set_params(params)
            elif not isinstance(cb, _weft.keras.CppCallback):
                raise TypeError("callbacks must be weft.keras.callbacks objects or Callback subclasses, got %r" % (cb,))
        verbose = 1 if verbose == "auto" else int(bool(verbose))
        epochs_run, hist = cpp.fit(x, y, batch_size=int(batch_size or 32), epochs=int(epochs),
                                   initial_epoch=int(initial_epoch),
                                   steps_per_epoch=-1 if steps_per_epoch is None else int(steps_per_epoch),
                                   shuffle=bool(shuffle), shuffle_seed=int(shuffle_seed), validation_x=vx,
                                   validation_y=vy, callbacks=cbs, verbose=verbose,
                                   validation_steps=int(validation_steps or -1))
        self.history = History(epochs_run, hist, self)
        return self.history

    def _ordered(self, logs):
        keys = ["loss"] + [m for m in self._metric_names if m in logs]
        keys += sorted(k for k in logs if k not in keys)
        return keys

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, return_dict=False, steps=None):
        """Mean loss and metrics over (x, y) (arrays, or a weft.data Dataset of (x, y) batches, of
        which ``steps`` batches when given) in inference mode: [loss, metric, ...] (or the loss
        alone without metrics, or a dict with return_dict=True)."""
        if _data_adapter.is_dataset(x):
            cpp = self._compiled(_data_adapter.shape_hint(x), "evaluate")
            x, y = _data_adapter.evaluate_dataset(self, x, y, batch_size, steps), None
        else:
            cpp = self._compiled(x, "evaluate")
        batch_size = int(batch_size or 32)
        start = time.time()
        logs = cpp.evaluate(x, y, batch_size=batch_size)
        keys = self._ordered(logs)
        if verbose:
            steps = -(-len(x) // batch_size) if y is not None else x.cardinality()
            elapsed = time.time() - start
            line = "%d/%d [%s] - %.0fs %.0fms/step" % (steps, steps, "=" * 30, elapsed, 1000 * elapsed / max(steps, 1))
            print(line + "".join(" - %s: %.4f" % (k, logs[k]) for k in keys))
            sys.stdout.flush()
        if return_dict:
            return {k: logs[k] for k in keys}
        return logs["loss"] if len(keys) == 1 else [logs[k] for k in keys]

    def predict(self, x, batch_size=None, verbose=0, steps=None):
        """The model's outputs for every row of x (an array, or a weft.data Dataset of x or (x, ...)
        batches), as a float32 numpy array (not copied)."""
        if _data_adapter.is_dataset(x):
            cpp = self._built(_data_adapter.shape_hint(x))
            return cpp.predict(_data_adapter.predict_dataset(self, x, batch_size, steps))
        return self._built(x).predict(x, batch_size=int(batch_size or 32))

    def train_on_batch(self, x, y, return_dict=False):
        """One training step on one batch; returns its loss (and metrics)."""
        logs = self._compiled(x, "train_on_batch").train_on_batch(x, y)
        keys = self._ordered(logs)
        if return_dict:
            return {k: logs[k] for k in keys}
        return logs["loss"] if len(keys) == 1 else [logs[k] for k in keys]

    # ---- weights -----------------------------------------------------------------------------
    def save_weights(self, filepath):
        """Writes weights, optimizer slots and the step to one checkpoint file (CRC-checked)."""
        self._compiled(None, "save_weights").save_weights(str(filepath))

    def load_weights(self, filepath):
        """Reads a checkpoint written by save_weights (every variable must be there with its shape)."""
        self._compiled(None, "load_weights").load_weights(str(filepath))

    def get_weights(self):
        """The layers' weights as numpy arrays (kernels, biases, batch-norm statistics)."""
        return self._compiled(None, "get_weights").get_weights()

    @property
    def stop_training(self):
        return self._build().stop_requested

    @stop_training.setter
    def stop_training(self, value):
        if value:
            self._build().stop_training()

    @property
    def step(self):
        """Training steps taken so far (restored by load_weights)."""
        return self._build().step

    def plot_graph(self, path=None, partitioned=True):
        """The compiled training step as DOT text (one cluster per device with the Send/Recv pairs
        when ``partitioned``); with ``path`` ending in .dot it is written there, with .png drawn by
        graphviz's ``dot`` (as ``weft-zoo graph`` does)."""
        dot = self._compiled(None, "plot_graph").train_step_dot(partitioned)
        if path is None:
            return dot
        path = str(path)
        if path.endswith(".png"):
            import subprocess
            subprocess.run(["dot", "-Tpng", "-o", path], input=dot, text=True, check=True)
        else:
            with open(path, "w") as f:
                f.write(dot)
        return dot

    def __repr__(self):
        return "<weft.keras.%s '%s'>" % (type(self).__name__, self.name if self._cpp is not None else "(not built)")


class Sequential(Model):
    """A linear stack of layers. The per-example input shape comes from the first layer's
    ``input_shape=``, an ``InputLayer(input_shape=...)``, or, at the first fit, from the data."""

    def __init__(self, layers=None, name=None):
        super().__init__()
        self._name = name or "sequential"
        self._layers = []
        self._input_shape = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends a layer (before the model is compiled)."""
        if isinstance(layer, InputLayer):
            self._input_shape = layer._input_shape
            return
        if not isinstance(layer, _weft.keras.Layer):
            raise TypeError("Sequential.add takes a weft.keras layer, got %r" % (layer,))
        if self._input_shape is None and not self._layers and hasattr(layer, "_input_shape"):
            self._input_shape = layer._input_shape
        self._layers.append(layer)
        if self._cpp is not None:
            self._cpp.add(layer)

    def _build(self, x=None):
        if self._cpp is None:
            shape = self._input_shape
            if shape is None and x is not None:
                shape = tuple(np.shape(x)[1:])
            if shape is None:
                raise ValueError("this Sequential model has no input shape yet: pass input_shape=(...) to its first "
                                 "layer (or start with InputLayer(input_shape=...)), or call fit with data first")
            with self._in_strategy():
                self._cpp = _weft.keras.Sequential([-1 if d is None else int(d) for d in shape], self._layers,
                                                   self._name)
        return self._cpp


__all__ = ["Model", "Sequential", "Input"]
