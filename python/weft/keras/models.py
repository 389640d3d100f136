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
from . import losses as _losses, metrics as _metrics, optimizers as _optimizers
from .callbacks import Callback, History
from .layers import Input, InputLayer


class Model:
    """A model from symbolic inputs to an output: ``Model(inputs=x, outputs=y)`` with
    ``x = keras.Input(shape=(...))`` and ``y`` a chain of layer calls on it."""

    def __init__(self, inputs=None, outputs=None, name=None):
        self._cpp = None
        self._compile_args = None
        self._metric_names = []
        self.optimizer = self.loss = None  # set by compile
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
            cpp.compile(**dict(self._compile_args, optimizer=self.optimizer._cpp))
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
    def compile(self, optimizer="rmsprop", loss=None, loss_weights=None, metrics=None, weighted_metrics=None,
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True, seed=0,
                inter_op_threads=0, intra_op_threads=0):
        """Builds the training graph (Keras' arguments, in Keras' order).

        optimizer: a weft.keras.optimizers object or a name ('rmsprop' as Keras' default, 'sgd',
        'adam', 'adamw', 'adagrad').
        loss: a weft.keras.losses object, function or name ('sparse_categorical_crossentropy', 'mse', ...).
        metrics: names ('accuracy', resolved against the loss and output as Keras does; 'mse', ...) or
        weft.keras.metrics objects (AUC(), Precision(), ...); each is logged under its name.
        run_eagerly, steps_per_execution, jit_compile, auto_scale_loss: accepted; weft always runs
        its compiled graph one step at a time, which gives the same results.
        seed: graph seed (nonzero: reproducible initial weights and dropout).
        inter_op_threads / intra_op_threads: 0 = one per hardware thread.
        """
        weights = (list(loss_weights.values()) if isinstance(loss_weights, dict)
                   else np.ravel(loss_weights).tolist() if loss_weights is not None else [1.0])
        if weights != [1.0]:
            raise NotImplementedError("compile(loss_weights=%r): weft models have one output and an unweighted loss"
                                      % (loss_weights,))
        if weighted_metrics:
            raise NotImplementedError("compile(weighted_metrics=...): weft metrics take no sample weights")
        if loss is None:
            raise ValueError("compile needs a loss, e.g. loss=weft.keras.losses.SparseCategoricalCrossentropy()")
        metrics = [_metrics.get(m) for m in (metrics or [])]
        self._metric_names = [m.name for m in metrics]
        self.loss = _losses.get(loss)
        self.optimizer = _optimizers.get(optimizer)
        self.optimizer._attach(self)  # optimizer.learning_rate reads / sets the compiled model's rate
        self.compiled_metrics = metrics
        self._compile_args = dict(loss=self.loss._cpp,  # the optimizer as it is when the graph is built
                                  metrics=[m._cpp for m in metrics], inter_op_threads=int(inter_op_threads),
                                  intra_op_threads=int(intra_op_threads), seed=int(seed))
        if self._cpp is not None:
            self._cpp.compile(**dict(self._compile_args, optimizer=self.optimizer._cpp))

    @property
    def metrics_names(self):
        """The names of evaluate's values, in its order: ['loss', 'accuracy', ...]."""
        return ["loss"] + list(self._metric_names)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None, validation_data=None,
            shuffle=True, initial_epoch=0, steps_per_epoch=None, shuffle_seed=0):
        """Trains on numpy arrays ``x`` [N, ...] and ``y`` [N] (uint8 / float64 inputs and integer
        labels of any width are converted). Prints Keras' progress bar; returns a History.
        Ctrl-C stops the current step and raises KeyboardInterrupt; the model stays usable."""
        if x is None or y is None:
            raise ValueError("fit needs x and y arrays")
        cpp = self._compiled(x, "fit")
        vx = vy = None
        if validation_data is not None:
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
                                   validation_y=vy, callbacks=cbs, verbose=verbose)
        self.history = History(epochs_run, hist, self)
        return self.history

    def _ordered(self, logs):
        keys = ["loss"] + [m for m in self._metric_names if m in logs]
        keys += sorted(k for k in logs if k not in keys)
        return keys

    def evaluate(self, x=None, y=None, batch_size=None, verbose=1, return_dict=False):
        """Mean loss and metrics over (x, y) in inference mode: [loss, metric, ...] (or the loss alone
        without metrics, or a dict with return_dict=True)."""
        cpp = self._compiled(x, "evaluate")
        batch_size = int(batch_size or 32)
        start = time.time()
        logs = cpp.evaluate(x, y, batch_size=batch_size)
        keys = self._ordered(logs)
        if verbose:
            steps = -(-len(x) // batch_size)
            elapsed = time.time() - start
            line = "%d/%d [%s] - %.0fs %.0fms/step" % (steps, steps, "=" * 30, elapsed, 1000 * elapsed / max(steps, 1))
            print(line + "".join(" - %s: %.4f" % (k, logs[k]) for k in keys))
            sys.stdout.flush()
        if return_dict:
            return {k: logs[k] for k in keys}
        return logs["loss"] if len(keys) == 1 else [logs[k] for k in keys]

    def predict(self, x, batch_size=None, verbose=0):
        """The model's outputs for every row of x, as a float32 numpy array (not copied)."""
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
    """A linear stack of layers. The per-example input shape comes from a first entry
    ``keras.Input(shape=...)`` or ``InputLayer(shape=...)``, the first layer's ``input_shape=``, or,
    at the first fit, from the data."""

    def __init__(self, layers=None, name=None):
        super().__init__()
        self._name = name or "sequential"
        self._layers = []
        self._input_shape = None
        for layer in layers or []:
            self.add(layer)

    def add(self, layer):
        """Appends a layer (before the model is compiled)."""
        if isinstance(layer, (InputLayer, _weft.keras.KerasTensor)):
            self._set_input(layer)
            return
        if not isinstance(layer, _weft.keras.Layer):
            raise TypeError("Sequential.add takes a weft.keras layer, got %r" % (layer,))
        if self._input_shape is None and not self._layers and hasattr(layer, "_input_shape"):
            self._input_shape = layer._input_shape
        self._layers.append(layer)
        if self._cpp is not None:
            self._cpp.add(layer)

    def _set_input(self, entry):
        """keras.Input(...) or InputLayer(...): allowed only before any layer, as in Keras."""
        if isinstance(entry, _weft.keras.KerasTensor):
            if not _weft.keras._is_input(entry):
                raise ValueError("Sequential takes keras.Input(shape=...) as its first entry, not the output of a "
                                 "layer call (%r): build such models with keras.Model(inputs, outputs)" % (entry,))
            shape = tuple(entry.shape[1:])
        else:
            shape = entry._input_shape
        if self._layers or self._cpp is not None:
            raise ValueError("Sequential: an Input or InputLayer must come before every layer, got one after %d "
                             "layer(s)" % len(self._layers))
        self._input_shape = shape

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
