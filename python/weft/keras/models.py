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
import zipfile

import numpy as np

from .. import _recorder, _weft
from .. import framework as _fw
from .. import distribute as _distribute, random as _random
from ..config._state import defaults as _config
from ..data import _trace as _data_trace
from . import (_custom, _custom_step, _training, _eager, _shared, losses as _losses, metrics as _metrics,
               optimizers as _optimizers, saving as _saving)
from ._eager import EagerArray
from ._layer_call import _layer_call_cpp
from ._text import StringInput, _IndexLookup
from .layers import Input, InputLayer


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

class Model(_training.TrainingLoops):
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
            if isinstance(inputs, StringInput):  # text in: its layer runs on the host (_text.py)
                if inputs.ids is None:
                    raise ValueError("Model(inputs=keras.Input(dtype='string')): no text layer (TextVectorization / "
                                     "StringLookup) was called on that input")
                self._host_layers, inputs = list(inputs.host_layers), inputs.ids
            self._inputs, self._outputs = inputs, outputs
            self._cpp = _weft.keras.Model(inputs, outputs, name or "model")

    def _subclassed(self):
        return self._cpp is None and self._inputs is None and type(self).call is not Model.call

    def call(self, inputs, training=None):
        """The forward pass of a subclassed model (override it)."""
        raise NotImplementedError("Model.call: a subclass of keras.Model must define call(self, inputs, training=None)")

    def _trace(self, shape, more_shapes=(), packed=None):
        """Builds the C++ model from ``call`` applied to a symbolic input of per-example ``shape``
        (and, for a call of several tensor arguments, ``call(x, h, ...)`` as in TF's seq2seq
        encoders and decoders, one more input per entry of ``more_shapes``: the C++ model then has
        those inputs in that order). ``packed`` (list or tuple): call takes all of them as one
        argument of that type, ``call((context, x))`` as TF's Transformer tutorial does. A call
        returning a tuple or list of tensors gives a model of as many outputs."""
        def make(sh, name):
            return Input([None if d is None or d < 0 else int(d) for d in sh], name=name)
        inp = make(shape, "input")
        more = [make(sh, "input_%d" % (i + 1)) for i, sh in enumerate(more_shapes)]
        params = inspect.signature(self.call).parameters
        args = (packed([inp] + more),) if packed is not None else (inp, *more)
        try:
            out = self.call(*args, training=None) if "training" in params else self.call(*args)
        except Exception as e:
            msg = ("%s.call could not be traced into a graph (input shape %s): %s. call may apply keras layers to "
                   "its inputs (numpy and Python control flow on the symbolic tensors cannot be traced)"
                   % (type(self).__name__, tuple(shape) if not more else [tuple(shape)] + [tuple(m) for m in
                                                                                         more_shapes], e))
            try:
                err = type(e)(msg)  # the same kind of error, with the model named
            except Exception:  # an exception type that takes other arguments
                err = TypeError(msg)
            raise err from e
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if not outs or not all(isinstance(o, _weft.keras.KerasTensor) for o in outs):
            raise TypeError("%s.call must return the output of a keras layer applied to its inputs (or a tuple of "
                            "them), got %r" % (type(self).__name__, out))
        self._build_shape = tuple(shape)
        self._call_arity = 1 if packed is not None else 1 + len(more)
        with self._in_strategy():
            self._cpp = _weft.keras.Model(inp if not more else [inp] + more, out if len(outs) == 1 else outs,
                                          self._name)

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

    def __call__(self, inputs, *args, training=None):
        """On a KerasTensor (a subclassed model inside another model's call): its call. On data:
        the outputs, as ``predict`` gives them. More positional tensors (``encoder(x, hidden)``)
        are further inputs of a subclassed model whose call takes them (see _trace)."""
        if args:
            if not self._subclassed() and getattr(self, "_call_arity", 1) == 1:
                raise TypeError("model '%s' takes one input (a list for several); got %d more positional arguments"
                                % (self.name, len(args)))
            if self._cpp is not None and getattr(self, "_call_arity", 1) != 1 + len(args):
                raise TypeError("model '%s' was built for call with %d tensor arguments; got %d"
                                % (self.name, getattr(self, "_call_arity", 1), 1 + len(args)))
            inputs = [inputs] + list(args)
            if self._cpp is None:
                shapes = [tuple(getattr(t, "shape", np.shape(t)))[1:] for t in inputs]
                if any(isinstance(t, _weft.keras.KerasTensor) for t in inputs) or _custom.in_trace(inputs):
                    params = inspect.signature(self.call).parameters
                    return self.call(*inputs, training=training) if "training" in params else self.call(*inputs)
                self._trace(shapes[0], shapes[1:])
        if not args and self._cpp is None and self._subclassed() and self._packed_data(inputs) and not any(
                isinstance(t, _weft.keras.KerasTensor) for t in inputs) and not _custom.in_trace(inputs):
            self._trace(tuple(inputs[0].shape)[1:], [tuple(t.shape)[1:] for t in inputs[1:]], type(inputs))
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

    def _packed_data(self, x):
        """Whether x, given to a subclassed model whose call takes one tensor argument, is a list or
        tuple of several arrays (tensors) that call unpacks itself."""
        if not isinstance(x, (list, tuple)) or len(x) < 2:
            return False
        if not all(isinstance(a, (np.ndarray, _fw.Tensor)) or hasattr(a, "shape") for a in x):
            return False
        shapes = {np.shape(a) for a in x}
        params = [p for p in inspect.signature(self.call).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "training"
                  and p.default is p.empty]
        return len(params) == 1 and (len(shapes) > 1 or any(np.ndim(a) > 1 for a in x))

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
            packed = self._packed_data(x)
            if packed:
                self._trace(np.shape(x[0])[1:], [np.shape(a)[1:] for a in x[1:]], type(x))
            else:
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
        if isinstance(layer, _IndexLookup):
            # A text layer first (TF's export model: Sequential([vectorize_layer, model, ...])): it
            # runs on the host before the graph, which carries no strings (_training.py).
            if self._layers or self._input_shape is not None:
                raise TypeError("Sequential: %r runs on the host (weft's graphs carry no strings), so it can only come "
                                "first in a Sequential, before every graph layer" % (layer,))
            self._host_layers = getattr(self, "_host_layers", []) + [layer]
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


load_model = _saving.load_model
clone_model = _saving.clone_model
model_from_json = _saving.model_from_json
save_model = _saving.save_model


__all__ = ["Model", "Sequential", "Input", "load_model", "save_model", "clone_model", "model_from_json"]
