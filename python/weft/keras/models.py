"""Keras models: ``Sequential``, the functional ``Model`` and subclassed models, over the C++
train::Model.

The Python class adds what Keras users expect around the C++ object: a Sequential that can be
built from ``add()`` calls and gets its input shape from the first layer's ``input_shape=`` (or,
as Keras does, from the data at the first ``fit``), subclasses whose ``call`` is traced into a
graph, ``compile`` arguments as objects or strings, fit's Keras options (validation_split,
class_weight, sample_weight), and Keras' return values (History, [loss, metric...]). Training
itself is the C++ loop; files and configs are in saving.py.
"""
import contextlib
import inspect
import os
import re
import sys
import time
import warnings
import weakref
import zipfile

import numpy as np

from .. import _recorder, _weft
from .. import framework as _fw
from .. import distribute as _distribute, random as _random
from ..config._state import defaults as _config
from ..data import _trace as _data_trace
from . import (_custom, _custom_step, _data_adapter, _eager, _shared, losses as _losses, metrics as _metrics,
               optimizers as _optimizers, saving as _saving)
from ._arrays import fit_arrays as _fit_arrays, numeric as _numeric, numeric_list as _numeric_list, rows as _rows
from .callbacks import Callback, CallbackList, History
from ._eager import EagerArray
from .layers import Input, InputLayer


def _attention_inputs(layer, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
                      attention_mask=None, return_attention_scores=False, use_causal_mask=False):
    """MultiHeadAttention's Keras call arguments (in Keras 3's order) as weft's input list
    [query, value, key(, attention_mask)]."""
    if value is None:
        raise TypeError("MultiHeadAttention '%s': call it as layer(query, value, key=None, attention_mask=None)"
                        % layer.name)
    if query_mask is not None or value_mask is not None or key_mask is not None:
        raise NotImplementedError("MultiHeadAttention '%s': query_mask / value_mask / key_mask (Keras masks) are not "
                                  "supported; pass attention_mask" % layer.name)
    _weft.keras.layers._set_use_causal_mask(layer, bool(use_causal_mask))
    # With it the call returns (output, scores) (two outputs of the call), as Keras.
    _weft.keras.layers._set_return_attention_scores(layer, bool(return_attention_scores))
    inputs = [query, value, value if key is None else key]
    return inputs + ([attention_mask] if attention_mask is not None else [])


_RECURRENT = ("LSTM", "GRU", "SimpleRNN", "Bidirectional")


def _layer_call(layer, inputs, *args, training=None, mask=None, initial_state=None, **kwargs):
    """Layer.__call__ with Keras' call arguments. ``training`` needs no value here: the compiled
    graph has a training pass (fit) and an inference pass (evaluate, predict), and each layer
    (Dropout, BatchNormalization) behaves as its pass says; ``mask`` must be None.
    MultiHeadAttention takes Keras' (query, value, key=None, attention_mask=None, ...). A
    recurrent layer takes ``initial_state=[h, c]`` (LSTM) or ``[h]`` (GRU, SimpleRNN; Bidirectional:
    the forward layer's states, then the backward one's); with return_state its call returns a
    list [output, *final states]."""
    if initial_state is not None:
        if layer.type not in _RECURRENT:
            raise TypeError("layer '%s' (%s) takes no initial_state" % (layer.name, layer.type))
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if not _symbolic([inputs] + states):
            raise NotImplementedError("%s '%s': initial_state on data (not KerasTensors) is not supported; build a "
                                      "model with the states as inputs" % (layer.type, layer.name))
        if _custom.in_trace([inputs] + states):  # inside a custom layer's call (_custom.py)
            return _custom.apply_in_trace(layer, [inputs] + states, training)
        return _custom.keep_layers(_layer_call_cpp(layer, [inputs] + states), [inputs] + states)
    if layer.type == "MultiHeadAttention":
        inputs = _attention_inputs(layer, inputs, *args, **kwargs)
        args, kwargs = (), {}
        if not _symbolic(inputs):
            raise NotImplementedError("MultiHeadAttention '%s': call it on KerasTensors in a model (weft runs layers "
                                      "on data through one-input models)" % layer.name)
        if _custom.in_trace(inputs):  # inside a custom layer's call (_custom.py)
            return _custom.apply_in_trace(layer, inputs, training)
        out = _custom.keep_layers(_layer_call_cpp(layer, inputs), inputs)
        return tuple(out) if isinstance(out, list) else out  # Keras' (output, scores)
    if len(args) > 2:
        raise TypeError("layer '%s' takes (inputs, training, mask), got %d positional arguments" % (
            layer.name, 1 + len(args)))
    if len(args) == 2:  # Keras' positional (inputs, training, mask)
        mask = args[1]
    if mask is not None:
        raise NotImplementedError("layer '%s': masks are not supported by weft" % layer.name)
    if kwargs:
        raise TypeError("layer '%s' got unexpected call arguments: %s" % (layer.name, ", ".join(sorted(kwargs))))
    if _custom.in_trace(inputs):  # inside a custom layer's call (_custom.py)
        return _custom.apply_in_trace(layer, inputs, training)
    if isinstance(inputs, _fw.Tensor) and _data_trace.tracing():  # in a Dataset.map / filter function
        return _eager.call_in_data_trace(layer, inputs, _layer_call_cpp, training)
    if _recorder.taping() and not isinstance(inputs, (list, tuple, _weft.keras.KerasTensor)):
        return _eager.call_in_step(layer, inputs, _layer_call_cpp, training)  # a tensor of the eager step
    if isinstance(inputs, (np.ndarray, np.generic, list, tuple, int, float)) and not _symbolic(inputs):
        return _eager.call_on_data(layer, inputs, _layer_call_cpp)  # layer(x) on data: run it (Keras' eager call)
    return _custom.keep_layers(_layer_call_cpp(layer, inputs), inputs)


def _symbolic(inputs):
    """A KerasTensor or graph tensor, or a list of them (a merge layer's inputs)."""
    items = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    return any(not isinstance(i, (np.ndarray, np.generic, int, float, list, tuple)) for i in items)


_layer_call_cpp = _weft.keras.Layer.__call__
_weft.keras.Layer.__call__ = _layer_call


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()



def _eager_inputs(inputs, n_inputs):
    """Data given to a model in an eager step as tensors of the step: one per input, floats (and
    unsigned or bool data such as uint8 images) as float32, as Keras casts to its inputs' dtype;
    signed integers (token ids) as they are."""
    def one(x):
        if isinstance(x, _fw.Tensor):
            return x
        arr = np.asarray(x)
        if arr.dtype.kind in "fub" and arr.dtype != np.float32:
            arr = arr.astype(np.float32)
        return _fw.convert_to_tensor(arr)
    if isinstance(inputs, (list, tuple)) and n_inputs > 1:
        return [one(x) for x in inputs]
    return one(inputs)

class Model:
    """A model from symbolic inputs to an output: ``Model(inputs=x, outputs=y)`` with
    ``x = keras.Input(shape=(...))`` and ``y`` a chain of layer calls on it.

    Subclassed, as in Keras: build the layers in ``__init__`` (after ``super().__init__()``) and
    compose them in ``call(self, inputs, training=None)``. ``call`` is traced once into a graph
    over a symbolic input, at ``build(input_shape)``, the first ``fit`` or the first call on data;
    it may apply layers (each layer object once per call site, shared when applied twice) but not
    run numpy on the symbolic tensors."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):  # records the arguments, so get_config / load_model can remake it
            init = cls.__init__

            def __init__(self, *args, __init=init, __cls=cls, **kw):
                if type(self) is __cls and not hasattr(self, "_init_args"):
                    self._init_args = (args, kw)
                __init(self, *args, **kw)

            __init__.__doc__, __init__.__wrapped__ = init.__doc__, init
            cls.__init__ = __init__

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        kwargs.pop("trainable", None)
        if kwargs.get("dtype") in (None, "float32"):  # weft models compute in float32
            kwargs.pop("dtype", None)
        if kwargs:
            raise TypeError("Model() got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        self._cpp = None
        self._compile_args = None
        self._compile_config = None
        self._metric_names = []
        self.optimizer = self.loss = None  # set by compile
        self._inputs = self._outputs = None
        self._build_shape = None
        self.history = None
        self._name = name or (_snake(type(self).__name__) if type(self) not in (Model, Sequential) else "model")
        # The strategy whose scope the model is created in (weft.distribute); the C++ model is
        # built inside that scope even when that happens later (a Sequential built at fit).
        self._strategy = _distribute.get_strategy()
        if inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model(inputs, outputs) needs both")
            self._inputs, self._outputs = inputs, outputs
            self._cpp = _weft.keras.Model(inputs, outputs, name or "model")

    def _subclassed(self):
        return self._cpp is None and self._inputs is None and type(self).call is not Model.call

    def call(self, inputs, training=None):
        """The forward pass of a subclassed model (override it)."""
        raise NotImplementedError("Model.call: a subclass of keras.Model must define call(self, inputs, training=None)")

    def _trace(self, shape):
        """Builds the C++ model from ``call`` applied to a symbolic input of per-example ``shape``."""
        inp = Input([None if d is None or d < 0 else int(d) for d in shape], name="input")
        params = inspect.signature(self.call).parameters
        try:
            out = self.call(inp, training=None) if "training" in params else self.call(inp)
        except Exception as e:
            msg = ("%s.call could not be traced into a graph (input shape %s): %s. call may apply keras layers to "
                   "its inputs (numpy and Python control flow on the symbolic tensors cannot be traced)"
                   % (type(self).__name__, tuple(shape), e))
            try:
                err = type(e)(msg)  # the same kind of error, with the model named
            except Exception:  # an exception type that takes other arguments
                err = TypeError(msg)
            raise err from e
        if not isinstance(out, _weft.keras.KerasTensor):
            raise TypeError("%s.call must return the output of a keras layer applied to its inputs, got %r"
                            % (type(self).__name__, out))
        self._build_shape = tuple(shape)
        with self._in_strategy():
            self._cpp = _weft.keras.Model(inp, out, self._name)

    def _apply(self, tensor):
        """This model's layers applied again to ``tensor`` (a model used as a layer of another):
        the layers are shared, and so are their weights (_shared.py)."""
        if isinstance(self, Sequential):
            for layer in self._layers:
                tensor = layer(tensor)
            return tensor
        if not isinstance(self._inputs, _weft.keras.KerasTensor) or not isinstance(self._outputs,
                                                                                  _weft.keras.KerasTensor):
            raise TypeError("model '%s' has several inputs or outputs: calling it on a KerasTensor takes a "
                            "one-input, one-output model" % self.name)
        done = {_weft.keras._sym_id(self._inputs): tensor}

        calls = {}  # a call with several outputs: its outputs, by its output 0's id

        def replay(t):
            key = _weft.keras._sym_id(t)
            if key not in done:
                layer, ins, index, first = _weft.keras._sym_history(t)
                if index > 0:
                    replay(first)
                    done[key] = calls[_weft.keras._sym_id(first)][index]
                    return done[key]
                args = [replay(i) for i in ins]
                out = _layer_call_cpp(layer, args[0] if len(args) == 1 else args)  # the inputs as recorded
                if isinstance(out, list):
                    calls[key] = out
                    out = out[0]
                done[key] = out
            return done[key]

        return replay(self._outputs)

    def build(self, input_shape):
        """Builds the model for inputs of ``input_shape`` (with the batch dim: ``(None, 784)``)."""
        if self._cpp is None and self._subclassed():
            self._trace(tuple(input_shape)[1:])
        else:
            self._build(np.zeros([1 if d is None else d for d in input_shape], np.float32))

    @property
    def built(self):
        return self._cpp is not None

    @property
    def inputs(self):
        """The functional model's input KerasTensors (as a list, as Keras)."""
        return list(self._inputs) if isinstance(self._inputs, (list, tuple)) else (
            [] if self._inputs is None else [self._inputs])

    @property
    def outputs(self):
        return list(self._outputs) if isinstance(self._outputs, (list, tuple)) else (
            [] if self._outputs is None else [self._outputs])

    def __call__(self, inputs, training=None):
        """On a KerasTensor (a subclassed model inside another model's call): its call. On data:
        the outputs, as ``predict`` gives them."""
        if isinstance(inputs, _weft.keras.KerasTensor) or _custom.in_trace(inputs):
            if self._subclassed() or type(self).call is not Model.call:
                params = inspect.signature(self.call).parameters
                return self.call(inputs, training=training) if "training" in params else self.call(inputs)
            return self._apply(inputs)
        graph_tensors = isinstance(inputs, _fw.Tensor) or (isinstance(inputs, (list, tuple)) and inputs and
                                                            all(isinstance(i, _fw.Tensor) for i in inputs))
        if graph_tensors and _data_trace.tracing():  # in a Dataset.map / filter function
            return _eager.model_in_data_trace(self, inputs, training)
        if graph_tensors:
            return _custom_step.call(self, inputs, training)  # graph tensors: a custom training step
        if _recorder.taping():  # data inside an eager tape (weft/_recorder.py): a tensor of the step
            return _custom_step.call(self, _eager_inputs(inputs, self._io_counts()[0]), training)
        if isinstance(inputs, (list, tuple)) and self._io_counts()[0] > 1:  # one array per input
            inputs = list(inputs)
        else:
            inputs = np.asarray(inputs)
        out = self.predict(inputs, verbose=0)
        return [o.view(EagerArray) for o in out] if isinstance(out, list) else out.view(EagerArray)

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
        if self._cpp is None and self._subclassed():
            if x is None:
                raise ValueError("model '%s' has not yet been built: call build(input_shape) or call it on a batch "
                                 "of data (or fit it) first" % self._name)
            self._trace(np.shape(x)[1:])
        if self._cpp is None:
            raise ValueError("this model has no inputs: use keras.Model(inputs, outputs), or subclass keras.Model "
                             "and define call()")
        return self._cpp

    def _built(self, x=None, what="this call", inference=False):
        """The C++ model, built and compiled with the user's compile arguments. ``inference``: a
        model never compiled gets a compile of its own for predict (weft creates the variables
        when it compiles; Keras predicts with uncompiled models), which fit does not count."""
        cpp = self._build(x)
        if not cpp.compiled and (self._compile_args is not None or inference):
            # The optimizer as it is when the graph is built (its rate may have been set since compile).
            args = (dict(self._compile_args, optimizer=self.optimizer._cpp) if self._compile_args is not None else
                    dict(loss=_losses.get("mse")._cpp, optimizer=_optimizers.get("sgd")._cpp, metrics=[],
                         seed=_random.next_model_seed(), inter_op_threads=_config["inter_op_threads"],
                         intra_op_threads=_config["intra_op_threads"], use_gpus=_config["use_gpus"],
                         device_memory_limit=_config["device_memory_limit"]))
            self._compile_cpp(cpp, args)
        if cpp.compiled:
            _shared.refresh(self, cpp)  # layers shared with models that trained them since
        return cpp

    def _set_gradient_accumulation_steps(self, steps):
        """fit(gradient_accumulation_steps=k): the optimizer's k; a compiled model whose graph has
        another k is rebuilt with every variable (weights, slots, step) kept."""
        if self._compile_args is None:
            raise RuntimeError("you must compile the model before fit: model.compile(loss=..., optimizer=...)")
        if getattr(self, "_traced_steps", False) or type(self).train_step is not Model.train_step:
            raise NotImplementedError("fit(gradient_accumulation_steps=...) applies to the built-in training step; a "
                                      "custom train_step (or a Python loss or metric) accumulates gradients itself")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError("fit: `gradient_accumulation_steps` must be an integer >= 1, received: %r" % (steps,))
        if (self.optimizer.gradient_accumulation_steps or 1) == steps:
            return
        self.optimizer._cpp = self.optimizer._cpp.with_gradient_accumulation_steps(int(steps))
        cpp = self._cpp
        if cpp is not None and cpp.compiled:
            keep = cpp.variable_values()
            cpp.compile(**dict(self._compile_args, optimizer=self.optimizer._cpp))
            names = set(cpp.variable_names)
            # Partly accumulated gradients of the old graph are dropped (Keras' accumulators start at
            # zero when the count changes).
            kept = {k: v for k, v in keep.items() if k in names and not k.endswith("/gradient_accumulator")}
            cpp.set_variables(kept, "the variables the model had before fit changed gradient_accumulation_steps")

    def _compile_cpp(self, cpp, args):
        """Compiles the C++ model, keeping the weights it had (Keras' compile does not reset them)
        and taking those of layers it shares with other models (_shared.py)."""
        keep = dict(zip(cpp.layer_weight_names, cpp.get_weights())) if cpp.compiled else {}
        cpp.compile(**args)
        if keep:
            cpp.set_variables(keep, "the weights the model had before compile")
        self._shared_seen = {}
        _shared.refresh(self, cpp)
        _shared.claim(self, cpp, only_unclaimed=True)

    def _io_counts(self):
        """(inputs, outputs) of a functional model (a list of arrays each where several)."""
        if self._cpp is not None:
            return self._cpp.num_inputs, self._cpp.num_outputs
        return len(self.inputs) or 1, len(self.outputs) or 1

    def _compiled(self, x=None, what="fit"):
        cpp = self._built(x, what)
        if self._compile_args is None:
            raise RuntimeError("you must compile the model before %s: model.compile(loss=..., optimizer=...)" % what)
        return cpp

    @property
    def name(self):
        return self._cpp.name if self._cpp is not None else self._name

    @property
    def layers(self):
        if self._cpp is None and self._subclassed():  # before the trace: the layers it holds
            found = []
            for value in vars(self).values():
                for v in value if isinstance(value, (list, tuple)) else [value]:
                    if isinstance(v, _weft.keras.Layer) and v not in found:
                        found.append(v)
            return found
        return self._build().layers

    def get_layer(self, name):
        return self._build().get_layer(name)

    @property
    def input_shape(self):
        return self._build().input_shape

    def _expand_1d(self, x):
        """A vector of examples for a model whose one input is [batch, 1] (Keras' expand_1d:
        ``model.predict(horsepower)`` in TF's "Basic regression") as that column; else x."""
        if not isinstance(x, np.ndarray) or x.ndim != 1:
            return x
        try:
            shape = self.input_shape
        except Exception:  # noqa: BLE001 - a model that does not know its input yet takes x as it is
            return x
        return x.reshape(-1, 1) if isinstance(shape, tuple) and len(shape) == 2 and shape[1] == 1 else x

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
                run_eagerly=False, steps_per_execution=1, jit_compile="auto", auto_scale_loss=True, seed=None,
                inter_op_threads=0, intra_op_threads=0, recompute=None):
        """Builds the training graph (Keras' arguments, in Keras' order).

        optimizer: a weft.keras.optimizers object or a name ('rmsprop' as Keras' default, 'sgd',
        'adam', 'adamw', 'adagrad').
        loss: a weft.keras.losses object, function or name ('sparse_categorical_crossentropy', 'mse', ...).
        metrics: names ('accuracy', resolved against the loss and output as Keras does; 'mse', ...) or
        weft.keras.metrics objects (AUC(), Precision(), ...); each is logged under its name.
        run_eagerly, steps_per_execution, jit_compile, auto_scale_loss: accepted; weft always runs
        its compiled graph one step at a time, which gives the same results.
        seed: graph seed (nonzero: reproducible initial weights and dropout); None: from
            weft.random.set_seed / keras.utils.set_random_seed when called, else not seeded.
        inter_op_threads / intra_op_threads: 0 = weft.config.threading's setting (whose 0 is one per
            hardware thread).
        recompute (weft): layers (objects or names) whose activations the training step drops after
            the forward pass and recomputes in the backward pass, as tf.recompute_grad: equal
            gradients, lower peak memory, those layers' forward run twice (docs/pipeline.md).
        """
        weights = (list(loss_weights.values()) if isinstance(loss_weights, dict)
                   else np.ravel(loss_weights).tolist() if loss_weights is not None else [1.0])
        if weights != [1.0]:
            raise NotImplementedError("compile(loss_weights=%r): weft models have one output and an unweighted loss"
                                      % (loss_weights,))
        if weighted_metrics:
            raise NotImplementedError("compile(weighted_metrics=...): weft metrics take no sample weights")
        if loss is None and type(self).train_step is not Model.train_step:
            # A model whose own train_step computes its loss (a GAN's compile(d_optimizer, ...) calling
            # super().compile()): compile keeps the optimizer for that step.
            self.optimizer = _optimizers.get(optimizer)
            self.loss = None
            self.compiled_metrics = _custom_step.MetricsContainer([_metrics.get(m) for m in (metrics or [])])
            self._loss_tracker = _metrics.Mean(name="loss")
            return
        if loss is None:
            raise ValueError("compile needs a loss, e.g. loss=weft.keras.losses.SparseCategoricalCrossentropy()")
        metric_args = list(metrics or [])
        metrics = [_metrics.get(m) for m in metric_args]
        self.loss = _losses.get(loss)
        # A loss or metric written in Python is computed by weft ops: fit and evaluate then run
        # traced steps (train_step / test_step, keras/_custom_step.py) instead of the C++ loop,
        # whose graph still serves predict (compiled with a built-in loss).
        self._traced_steps = getattr(self.loss, "custom", False) or any(getattr(m, "custom", False) for m in metrics)
        self._compile_config = None if self._traced_steps else _saving.compile_config(optimizer, loss, metric_args)
        if seed is None:
            seed = _random.next_model_seed()
        self._metric_names = [m.name for m in metrics]
        self.optimizer = _optimizers.get(optimizer)
        self.optimizer._attach(self)  # optimizer.learning_rate reads / sets the compiled model's rate
        self.compiled_metrics = _custom_step.MetricsContainer(metrics)  # for train_step / test_step
        self._loss_tracker = _metrics.Mean(name="loss")
        self._compile_args = dict(loss=(_losses.get("mse") if self._traced_steps else self.loss)._cpp,
                                  metrics=[m._cpp for m in metrics if isinstance(m, _metrics.Metric)],
                                  inter_op_threads=int(inter_op_threads) or _config["inter_op_threads"],
                                  intra_op_threads=int(intra_op_threads) or _config["intra_op_threads"],
                                  seed=int(seed), use_gpus=_config["use_gpus"],
                                  device_memory_limit=_config["device_memory_limit"],
                                  recompute=[l if isinstance(l, str) else l.name for l in (recompute or [])])
        if self._cpp is not None:
            self._compile_cpp(self._cpp, dict(self._compile_args, optimizer=self.optimizer._cpp))

    @property
    def metrics_names(self):
        """The names of evaluate's values, in its order: ['loss', 'accuracy', ...]."""
        return ["loss"] + list(self._metric_names)

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
        if gradient_accumulation_steps is not None:
            self._set_gradient_accumulation_steps(gradient_accumulation_steps)
        if type(self).train_step is not Model.train_step or getattr(self, "_traced_steps", False):
            # Keras' customized fit, or a Python loss / metric (_custom_step.py)
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
        verbose = 1 if verbose == "auto" else min(max(int(verbose), 0), 2)
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
        if type(self).test_step is not Model.test_step or getattr(self, "_traced_steps", False):
            logs = _custom_step.evaluate(self, x, y, batch_size, steps, callbacks, sample_weight)
            if return_dict:
                return logs
            values = list(logs.values())
            return values[0] if len(values) == 1 else values
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

    # ---- weights, configs and files (saving.py) -----------------------------------------------
    def save_weights(self, filepath, overwrite=True):
        """Writes weights, optimizer slots and the step to one weft checkpoint file (CRC-checked;
        docs/checkpoint-format.md), whatever the name: a ``.weights.h5`` name holds weft's format.
        A missing parent directory is made, as TensorFlow's checkpoint writer makes it."""
        parent = os.path.dirname(os.fspath(filepath))
        if parent:
            os.makedirs(parent, exist_ok=True)
        self._built(None, inference=True).save_weights(os.fspath(filepath))

    def load_weights(self, filepath):
        """Reads a checkpoint written by save_weights (every variable must be there with its shape),
        or the weights of a model file written by save."""
        cpp = self._built(None, inference=True)
        if os.path.exists(str(filepath)):  # what is missing, the checkpoint reader names
            _weft._check_regular_file(str(filepath), "load_weights: weights file")  # before is_zipfile opens it
        if zipfile.is_zipfile(str(filepath)):
            _saving.load_weights_from(cpp, str(filepath))
        else:
            cpp.load_weights(str(filepath))
        _shared.claim(self, cpp)

    def _weight_values(self, trainable):
        try:
            cpp = self._built(None, inference=True)
        except ValueError:
            return []  # not built yet (no input shape): no weights, as Keras' unbuilt models
        return [v for layer in cpp.layers for v in (layer.trainable_weights if trainable else
                                                    layer.non_trainable_weights)]

    def _weights_or_twin(self, which):
        """In a traced custom step (_custom_step.py): the graph variables the step trains; else the
        weights' values."""
        twin = _custom_step.variables(self, which)
        if twin is not None:
            return twin
        if which == "all":
            return self._weight_values(True) + self._weight_values(False)
        return self._weight_values(which == "trainable")

    trainable_weights = property(lambda self: self._weights_or_twin("trainable"),
                                 doc="The trainable weights' values (numpy arrays with .numpy(), .name, .assign); "
                                     "in a tf.function step, the variables it trains.")
    non_trainable_weights = property(lambda self: self._weights_or_twin("non_trainable"))
    weights = property(lambda self: self._weights_or_twin("all"))
    trainable_variables, non_trainable_variables, variables = trainable_weights, non_trainable_weights, weights

    @property
    def losses(self):
        """The layers' loss terms (add_loss, activity regularizers) of the model's last call on graph
        tensors (a custom training step adds them to its loss); otherwise the weight regularizers'
        penalties at the current weights (``tf.add_n(model.losses)`` in TF's "Overfit and
        underfit"), as scalar tensors."""
        if hasattr(self, "_graph_losses"):
            return list(self._graph_losses)
        from . import regularizers
        out = []
        for layer in self.layers:
            cfg = layer.get_config() if hasattr(layer, "get_config") else {}
            if cfg.get("activity_regularizer"):
                raise NotImplementedError(
                    "%s.losses: layer '%s' has an activity regularizer, whose term depends on the inputs of a call; "
                    "weft gives it inside a custom training step (model(x) on graph tensors) only"
                    % (self.name, layer.name))
            for key, value in sorted(cfg.items()):
                if key.endswith("_regularizer") and value:
                    weight = getattr(layer, key[:-len("_regularizer")], None)
                    if weight is not None:
                        penalty = regularizers.get(value)(np.asarray(weight))
                        out.append(_fw.constant(np.float32(penalty)))
        return out

    def get_weights(self):
        """The layers' weights as numpy arrays in Keras' order: layer by layer, each layer's weights
        in declaration order (Dense: kernel, bias; BatchNormalization: gamma, beta, moving_mean,
        moving_variance)."""
        return self._built(None, inference=True).get_weights()

    def set_weights(self, weights):
        """Sets the layers' weights from a list like get_weights' (same count, order and shapes;
        ValueError naming the weight otherwise, and nothing changes)."""
        cpp = self._built(None, inference=True)
        _saving.set_weights(cpp, weights)
        _shared.claim(self, cpp)

    def save(self, filepath, overwrite=True, include_optimizer=True, **kwargs):
        """Writes the whole model (architecture, compile settings, weights and optimizer state) to
        one weft model file (a zip: config.json, metadata.json, model.weft; docs/python.md);
        ``keras.models.load_model`` reads it back."""
        _saving.write_model(self, filepath, overwrite=overwrite, include_optimizer=include_optimizer, **kwargs)

    def export(self, filepath, format="tf_saved_model", verbose=True):
        """Keras 3's export for serving: here weft.saved_model.save (a directory that
        weft.saved_model.load and keras.models.load_model read)."""
        if format != "tf_saved_model":
            raise NotImplementedError("model.export(format=%r): weft exports its own model directory only "
                                      "(format='tf_saved_model')" % (format,))
        from .. import saved_model
        saved_model.save(self, filepath)
        if verbose:
            print("Saved artifact at '%s'." % filepath)

    def get_config(self):
        """The model's architecture as Keras-style JSON data (layers by their recorded arguments)."""
        return _saving.model_config(self)["config"]

    def to_json(self, **kwargs):
        """The architecture as JSON text (``keras.models.model_from_json`` reads it)."""
        import json
        return json.dumps(_saving.model_config(self), **kwargs)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new (uncompiled) model from get_config's data."""
        return _saving.model_from_config(cls, config, custom_objects)

    @property
    def stop_training(self):
        if getattr(self, "_custom_fit", False):  # fit of an overridden train_step: a Python flag
            return getattr(self, "_stop_flag", False)
        return self._build().stop_requested

    @stop_training.setter
    def stop_training(self, value):
        if getattr(self, "_custom_fit", False):
            self._stop_flag = bool(value)
        elif value:
            self._build().stop_training()

    @property
    def metrics(self):
        """Keras' metrics list, as an overridden train_step uses it: the loss tracker (``Mean`` named
        "loss") and the compiled metrics ([] before compile)."""
        tracker = getattr(self, "_loss_tracker", None)
        return ([tracker] if tracker is not None else []) + list(getattr(self, "compiled_metrics", None) or [])

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras 3's loss of a batch in an overridden train_step: the compiled loss of (y, y_pred)
        plus the layers' loss terms (``self.losses``)."""
        if self.loss is None:
            raise ValueError("compute_loss: compile the model with a loss first")
        total = self.loss(y, y_pred, sample_weight)
        for term in self.losses:
            total = total + term
        return total

    def compiled_loss(self, y, y_pred, sample_weight=None, regularization_losses=None):
        """Keras 2's loss container call in an overridden train_step: the compiled loss plus
        ``regularization_losses``; it also updates the "loss" tracker of ``self.metrics``."""
        if self.loss is None:
            raise ValueError("compiled_loss: compile the model with a loss first")
        total = self.loss(y, y_pred, sample_weight)
        for term in regularization_losses or []:
            total = total + term
        self._loss_tracker.update_state(total)
        return total

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    def train_step(self, data):
        """Keras' training step of one batch (``data``: x, (x, y) or (x, y, sample_weight)): forward,
        ``compute_loss``, gradients, ``optimizer.apply_gradients``, metrics; returns the logs. It runs
        traced (weft.function): fit calls it when a subclass overrides it (Keras' "customizing what
        happens in fit": a GAN, a VAE) or the loss or a metric is Python, with callbacks, History and
        ``self.metrics`` reset at each epoch (docs/python.md). Otherwise fit runs the same step in C++."""
        x, y, sample_weight = _custom_step.unpack(data)
        from .._tape import GradientTape
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables), self.trainable_variables))
        return self._metric_logs(loss, y, y_pred)

    def test_step(self, data):
        """Keras' evaluation step of one batch: forward in inference mode, loss, metrics; traced by
        evaluate when overridden or when the loss or a metric is Python (as train_step)."""
        x, y, sample_weight = _custom_step.unpack(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x, y, y_pred, sample_weight)
        return self._metric_logs(loss, y, y_pred)

    def _metric_logs(self, loss, y, y_pred):
        for m in self.metrics:
            if m.name == "loss":
                m.update_state(loss)
            else:
                m.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

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
        if isinstance(layer, Sequential):
            # Keras nests a model as a layer: its layers are added here, sharing their weights
            # with it (_shared.py).
            if self._input_shape is None and not self._layers:
                self._input_shape = layer._input_shape if layer._cpp is None else layer._cpp.input_shape[1:]
            for inner in layer._layers:
                self.add(inner)
            return
        if not isinstance(layer, _weft.keras.Layer):
            raise TypeError("Sequential.add takes a weft.keras layer, got %r" % (layer,))
        if self._input_shape is None and not self._layers and hasattr(layer, "_input_shape"):
            self._input_shape = layer._input_shape
        self._layers.append(layer)
        if self._cpp is not None:
            if self._cpp.compiled:  # Keras adds to a built model too: rebuilt, weights kept
                self._rebuild()
            elif isinstance(layer, _custom.Layer) and not layer._traced():
                self._cpp = None  # remade at the next use, tracing the layer on its input shape
            else:
                self._cpp.add(layer)

    @property
    def layers(self):
        return list(self._layers) if self._cpp is None else self._cpp.layers

    def pop(self):
        """Removes and returns the last layer (the others keep their weights)."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        if self._cpp is not None:
            self._rebuild()
        return layer

    def _rebuild(self):
        """A new C++ model of the current layers; the weights the old one had carry over."""
        old = self._cpp
        keep = dict(zip(old.layer_weight_names, old.get_weights())) if old.compiled else {}
        self._cpp = None
        if self._layers:
            cpp = self._built(inference=bool(keep))
            mine = set(cpp.layer_weight_names)
            if keep:
                cpp.set_variables({k: v for k, v in keep.items() if k in mine}, "the weights before the change")

    def _set_input(self, entry):
        """keras.Input(...) or InputLayer(...): allowed only before any layer, as in Keras."""
        if isinstance(entry, _weft.keras.KerasTensor):
            if not _weft.keras._is_input(entry):
                raise ValueError("Sequential takes keras.Input(shape=...) as its first entry, not the output of a "
                                 "layer call (%r): build such models with keras.Model(inputs, outputs)" % (entry,))
            shape = tuple(entry.shape[1:])
            self._input_dtype = entry.dtype
        else:
            shape = entry._input_shape
            self._input_dtype = getattr(entry, "_dtype", "float32")
        if self._layers or self._cpp is not None:
            raise ValueError("Sequential: an Input or InputLayer must come before every layer, got one after %d "
                             "layer(s)" % len(self._layers))
        self._input_shape = shape

    def _build(self, x=None):
        if self._cpp is None:
            shape = self._input_shape
            if shape is None and x is not None:
                shape = self._input_shape = tuple(np.shape(x)[1:])
            if shape is None and self._layers and getattr(self._layers[0], "_adapt_shape", None) is not None:
                shape = self._input_shape = tuple(self._layers[0]._adapt_shape)  # adapt built the first layer
            if shape is None:
                raise ValueError("this Sequential model has no input shape yet: pass input_shape=(...) to its first "
                                 "layer (or start with InputLayer(input_shape=...)), or call fit with data first")
            _custom.trace_chain(shape, self._layers)  # custom layers are traced before the C++ model calls them
            with self._in_strategy():
                self._cpp = _weft.keras.Sequential([-1 if d is None else int(d) for d in shape], self._layers,
                                                   self._name, getattr(self, "_input_dtype", "float32"))
        return self._cpp


def _dataset_of(xs, ys, batch_size):
    """Validation arrays of a model with several inputs or outputs as a dataset of (xs, ys) batches."""
    from ..data import Dataset
    pack = lambda a: tuple(a) if isinstance(a, list) else a  # noqa: E731
    return Dataset.from_tensor_slices((pack(xs), pack(ys))).batch(batch_size)


load_model = _saving.load_model
clone_model = _saving.clone_model
model_from_json = _saving.model_from_json
save_model = _saving.save_model


__all__ = ["Model", "Sequential", "Input", "load_model", "save_model", "clone_model", "model_from_json"]
