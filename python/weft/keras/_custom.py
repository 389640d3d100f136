"""Keras' custom layers: ``class X(keras.layers.Layer)`` with ``build`` / ``call`` (keras.io, "Making
new layers and models via subclassing").

A custom layer is a C++ train::TracedLayer (train/layers_traced.h). At its first call (on
KerasTensors, on graph tensors inside another custom layer's call, or on data) ``build(input_shape)``
runs (``add_weight`` declares weights), then ``call`` is traced twice into graphs of its own, once
for the training pass (``training=True``: Dropout active, BatchNormalization on batch statistics)
and once for inference, over placeholders of the input shapes. Inside the trace ``call`` sees weft
graph tensors, so every ``tf.*`` op works on them; its own weights (``self.w``) are stand-ins that
the model's variables replace; layers it applies (Dense, MultiHeadAttention, Sequential models,
other custom layers) are built on the tensors' shapes and add their nodes, their weights becoming
this layer's (``"<sublayer>/<weight>"``, shared when a layer is applied twice). ``add_loss`` terms
join the model's loss; ``w.assign*`` in call are state updates that run with each call.

The C++ model holds only the C++ layer; the Python object (its call, attributes and Variables)
lives as long as the KerasTensors computed from it (keep_layers), the Sequential that lists it or
the layer or model whose attribute it is.
"""
import functools
import inspect
import re
import threading

import numpy as np

from .. import _recorder, _weft, framework as _fw
from ..data import _trace
from . import _eager, _shared

_KT = _weft.keras.KerasTensor
_local = threading.local()  # .stack: the passes being traced on this thread, innermost last
_call_cpp = _eager._call_symbolic  # the C++ call on KerasTensors


class _Pass:
    """One traced pass of one layer's call."""

    def __init__(self, recorder, training, layer):
        self.recorder, self.training, self.layer = recorder, training, layer


def _stack():
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _current():
    stack = _stack()
    return stack[-1] if stack else None


def _items(inputs):
    return list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]


def in_trace(inputs):
    """Whether ``inputs`` (a tensor or a list) holds graph tensors of a call being traced here."""
    return _current() is not None and any(isinstance(i, _fw.Tensor) for i in _items(inputs))


def apply_in_trace(layer, inputs, training=None):
    """``layer`` applied to graph tensors inside a traced call: its nodes join the trace, its
    weights become the tracing layer's. ``training`` None: the pass's mode."""
    p = _current()
    tensors = [i if isinstance(i, _fw.Tensor) else _fw.convert_to_tensor(i) for i in _items(inputs)]
    if training is not None and not isinstance(training, (bool, int, np.bool_)):
        raise TypeError("layer '%s': training= must be a Python bool inside a traced call, got %r"
                        % (layer.name, training))
    mode = p.training if training is None else bool(training)
    return p.recorder.apply(layer, tensors, mode)


def apply_outputs_in_trace(layer, inputs, training=None):
    """As apply_in_trace, with every output of the call (an RNN cell's step: output, new states)."""
    p = _current()
    tensors = [i if isinstance(i, _fw.Tensor) else _fw.convert_to_tensor(i) for i in _items(inputs)]
    mode = p.training if training is None else bool(training)
    return p.recorder.apply_outputs(layer, tensors, mode)


def trace_cell(cell, shapes, dtypes):
    """Traces a custom RNN cell (a Layer subclass with ``state_size`` and ``call(inputs, states)``)
    as a layer of inputs [x, *states] and outputs [output, *new_states] (once; _cells.py)."""
    if not cell._traced():
        cell.__dict__["_cell_call"] = True
    elif not cell.__dict__.get("_cell_call"):
        raise TypeError("%s '%s' was traced as a layer of one input; an RNN cell must first be called through "
                        "keras.layers.RNN" % (type(cell).__name__, cell.name))
    cell._ensure_traced(list(shapes), shapes, dtypes, {})


def trace_chain(shape, layers):
    """Traces the untraced custom layers of a layer stack (a Sequential's) on the shapes that flow
    to them from a per-example input ``shape``, before the C++ model calls the stack."""
    if not any(isinstance(layer, Layer) and not layer._traced() for layer in layers):
        return
    x = _weft.keras.Input(shape=[None if d is None or d < 0 else int(d) for d in shape], name="input")
    for layer in layers:
        x = layer(x)


def keep_layers(out, inputs, layer=None):
    """Makes the KerasTensor ``out`` (of a call on ``inputs``) hold the Python custom layers it was
    computed by, so that they live as long as a model built from it: the C++ model holds only the
    C++ layer, and a custom layer's Python object carries its call, attributes and weights."""
    held = [] if layer is None else [layer]
    for i in _items(inputs):
        for h in getattr(i, "_custom_layers", ()):
            if not any(h is k for k in held):
                held.append(h)
    if held:
        for o in out if isinstance(out, (list, tuple)) else [out]:  # every output of a multi-output call
            if isinstance(o, _KT):
                o._custom_layers = held
    return out


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Variable:
    """A weight of a custom layer (``add_weight``), as Keras' variable: ``.numpy()``, ``.assign``,
    ``.shape``, ``.name``, ``.trainable``; numpy reads it. Its value lives in the compiled model
    holding the layer (weft creates variables when a model compiles, or when the layer is first
    called on data). Inside the layer's ``call`` it is a graph tensor (the model's variable)."""

    dtype = "float32"

    def __init__(self, layer, index, name, shape, trainable, initializer=None, regularizer=None, constraint=None):
        self._layer, self._index, self.name = layer, index, name
        self.shape = tuple(shape)
        self.trainable = bool(trainable)
        self._initializer, self._regularizer, self._constraint = initializer, regularizer, constraint

    @property
    def path(self):
        return "%s/%s" % (self._layer.name, self.name)

    def _misused(self):
        p = _current()
        return TypeError("weight '%s' (shape %s) of %s '%s' is used by %s.call, which did not create it: a layer's "
                         "call may use its own weights (add_weight) and the layers it calls" % (
                             self.name, self.shape, type(self._layer).__name__, self._layer.name,
                             type(p.layer).__name__))

    def numpy(self):
        if _current() is not None:
            raise self._misused()
        if not self._layer._traced():
            raise ValueError("weight '%s' of layer '%s' has no value yet: weft creates the values when a model "
                             "holding the layer compiles, or when the layer is called on data" % (
                                 self.name, self._layer.name))
        return _shared._layer_get_weights(self._layer)[self._index].view(_eager.EagerArray)

    value = property(numpy)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.numpy(), dtype=dtype)

    def assign(self, value):
        """Sets the value (in the model holding the layer; models sharing it take it)."""
        if _current() is not None:
            raise self._misused()
        weights = _shared._layer_get_weights(self._layer)
        weights[self._index] = np.asarray(value, np.float32).reshape(self.shape)
        _shared._layer_set_weights(self._layer, weights)
        return self

    def assign_add(self, value):
        return self.assign(self.numpy() + np.asarray(value, np.float32))

    def assign_sub(self, value):
        return self.assign(self.numpy() - np.asarray(value, np.float32))

    def __repr__(self):
        return "<weft.keras.Variable path=%s shape=%s dtype=float32 trainable=%s>" % (
            self.path, self.shape, self.trainable)


class _StandIn(_fw.Tensor):
    """A custom layer's weight inside its traced call: the value (a graph tensor), with Keras'
    ``assign`` / ``assign_add`` / ``assign_sub`` recorded as state updates; after one, the
    attribute reads the updated value."""

    def __init__(self, value, var, recorder, owner, attr):
        _fw.Tensor.__init__(self, value)
        self._var, self._recorder, self._owner, self._attr = var, recorder, owner, attr

    def _update(self, op, value):
        out = self._var.graph.create_op(op, [self._var, _fw.convert_to_tensor(value, "float32")], {}).outputs[0]
        self._recorder.add_update(out)
        new = _StandIn(out, self._var, self._recorder, self._owner, self._attr)
        if self._attr is not None:
            self._owner.__dict__[self._attr] = new
        return new

    def assign(self, value):
        return self._update("Assign", value)

    def assign_add(self, value):
        return self._update("AssignAdd", value)

    def assign_sub(self, value):
        return self._update("AssignSub", value)


class Layer(_weft.keras.Layer):
    """Base class of Keras custom layers (module docstring). Subclass it as in Keras::

        class Linear(keras.layers.Layer):
            def __init__(self, units=32):
                super().__init__()
                self.units = units
            def build(self, input_shape):
                self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer="random_normal")
                self.b = self.add_weight(shape=(self.units,), initializer="zeros")
            def call(self, inputs):
                return tf.matmul(inputs, self.w) + self.b

    One output per call (a tensor); ``call`` runs once per pass when traced, so Python control flow on
    tensor values and numpy on tensors are errors naming the layer and what it did."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in vars(cls):  # records the constructor's arguments, as Keras 3's auto-config
            init = cls.__init__

            @functools.wraps(init)
            def __init__(self, *args, __init=init, __cls=cls, **kw):
                if type(self) is __cls and "_init_args" not in self.__dict__:
                    self.__dict__["_init_args"] = (args, kw)
                __init(self, *args, **kw)

            cls.__init__ = __init__

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, autocast=True, input_shape=None,
                 input_dim=None, batch_input_shape=None, **kwargs):
        _weft.keras.Layer.__init__(self, type(self).__name__)
        if kwargs:
            raise TypeError("Layer.__init__ got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        if dtype not in (None, "float32") and getattr(dtype, "name", None) != "float32":
            raise ValueError("%s: weft's Keras layers compute in float32, got dtype=%r" % (type(self).__name__, dtype))
        if name is not None:
            self.name = name
        d = self.__dict__
        d["_own_weights"], d["_py_built"], d["_call_kwargs"] = [], False, None
        d["trainable"] = bool(trainable)
        if batch_input_shape is not None:
            input_shape = tuple(batch_input_shape)[1:]
        elif input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if input_shape is not None:
            d["_input_shape"] = tuple(input_shape)

    # ---- Keras' API ------------------------------------------------------------------------------
    def build(self, input_shape):
        """Creates the weights for ``input_shape`` (override it; add_weight)."""

    def call(self, inputs, *args, **kwargs):
        """The forward pass (override it)."""
        raise NotImplementedError("%s must define call(self, inputs)" % type(self).__name__)

    @property
    def built(self):
        return self.__dict__.get("_py_built", False)

    @built.setter
    def built(self, value):  # Keras' build sets self.built = True
        self.__dict__["_py_built"] = bool(value)

    def add_weight(self, *args, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
                   regularizer=None, constraint=None, aggregation=None, synchronization=None, name=None, **kwargs):
        """Declares a weight (Keras 3's order: shape, initializer, dtype, trainable, ...; tf.keras'
        ``add_weight(name, shape, ...)`` too). initializer: a name ("random_normal", "zeros"; default
        "glorot_uniform") or a keras.initializers object; regularizer / constraint: keras objects.
        autocast, aggregation, synchronization: accepted (a float32 variable, mirrored by the
        model's strategy as every weight). Returns a Variable (``self.w``)."""
        if args and isinstance(args[0], str):  # tf.keras: add_weight(name, shape, dtype, initializer, ...)
            name, args = args[0], args[1:]
        for key, value in zip(("shape", "initializer", "dtype", "trainable"), args):
            if key == "shape":
                shape = value
            elif key == "initializer":
                initializer = value
            elif key == "dtype":
                dtype = value
            else:
                trainable = value
        for legacy in ("use_resource", "partitioner", "getter", "caching_device"):  # tf.keras 2's, no meaning here
            kwargs.pop(legacy, None)
        if kwargs:
            raise TypeError("add_weight got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
        what = "%s.add_weight" % type(self).__name__
        if dtype not in (None, "float32") and getattr(dtype, "name", None) != "float32":
            raise ValueError("%s: weft's weights are float32, got dtype=%r" % (what, dtype))
        tracing = _current() is not None and _current().layer is self
        if self._traced() or tracing:
            raise RuntimeError("%s: weights are created in __init__ or build(input_shape), before the first call "
                               "(weft traces call once); got one while %s" % (
                                   what, "tracing call" if tracing else "the layer is built"))
        shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        if any(d is None or int(d) < 0 for d in shape):
            raise ValueError("%s: the shape must be fully known, got %s" % (what, shape))
        shape = tuple(int(d) for d in shape)
        if callable(initializer) and not isinstance(initializer, (str, _weft.keras.Initializer)):
            raise TypeError("%s: weft takes initializers by name or as keras.initializers objects, got %r"
                            % (what, initializer))
        own = self.__dict__["_own_weights"]
        if name is None:
            taken = {w.name for w in own}
            name, i = "variable", 0
            while name in taken:
                i += 1
                name = "variable_%d" % i
        if any(w.name == name for w in own):
            raise ValueError("%s: the layer already has a weight named '%s'" % (what, name))
        # Keras: trainable=False, or a frozen layer, makes a non-trainable weight.
        w = Variable(self, len(own), name, shape, bool(trainable) and self.trainable,
                     "glorot_uniform" if initializer is None else initializer, regularizer, constraint)
        own.append(w)
        return w

    def add_loss(self, loss):
        """Adds a scalar tensor (computed in call) to the model's loss, in training and evaluation."""
        p = _current()
        if p is None or p.layer is not self:
            raise RuntimeError("%s.add_loss: call it inside the layer's call, on tensors computed there (weft "
                               "traces call; got it outside)" % type(self).__name__)
        if callable(loss) and not isinstance(loss, _fw.Tensor):
            loss = loss()
        p.recorder.add_loss(_fw.convert_to_tensor(loss, "float32"))

    def _weights_list(self, trainable):
        if trainable is not None:
            in_step = _eager._step_variables(self, trainable)  # called by itself in an eager step
            if in_step is not None:
                return in_step
        own = self.__dict__.get("_own_weights", [])
        if not self._traced():
            return [w for w in own if trainable is None or w.trainable == trainable]
        specs = self._weight_specs
        all_ = own + [Variable(self, i, specs[i][0], specs[i][1], specs[i][2]) for i in range(len(own), len(specs))]
        if trainable is None:
            return [w for w in all_[:len(own)] if w.trainable] + [w for w in all_[:len(own)] if not w.trainable] + \
                all_[len(own):]
        return [w for w in all_ if w.trainable == trainable]

    weights = property(lambda self: self._weights_list(None),
                       doc="Keras' list of the layer's weights (its own, then its sublayers').")
    trainable_weights = property(lambda self: self._weights_list(True))
    non_trainable_weights = property(lambda self: self._weights_list(False))
    variables, trainable_variables, non_trainable_variables = weights, trainable_weights, non_trainable_weights

    @property
    def losses(self):
        raise NotImplementedError("%s.losses: weft adds add_loss terms to the compiled model's loss; they have no "
                                  "value outside a model step" % type(self).__name__)

    def get_config(self):
        """name, trainable, dtype and the constructor's arguments as the layer was made (Keras 3's
        auto-config); override it, starting from ``super().get_config()``, for other state."""
        config = {"name": self.name, "trainable": self.trainable, "dtype": "float32"}
        args, kwargs = self.__dict__.get("_init_args", ((), {}))
        init = getattr(type(self).__init__, "__wrapped__", type(self).__init__)
        try:
            bound = inspect.signature(init).bind(self, *args, **kwargs)
        except TypeError:
            return config
        for key, value in bound.arguments.items():
            param = inspect.signature(init).parameters[key]
            if key == "self":
                continue
            if param.kind == param.VAR_KEYWORD:
                config.update(value)
            elif param.kind != param.VAR_POSITIONAL:
                config[key] = value
        return config

    @classmethod
    def from_config(cls, config):
        """``cls(**config)``; the base keys (name, trainable, dtype) that ``__init__`` does not take
        are set on the made layer instead."""
        config = dict(config)
        params = inspect.signature(cls.__init__).parameters
        if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            name = config.pop("name", None) if "name" not in params else None
            for key in ("trainable", "dtype"):
                if key not in params:
                    config.pop(key, None)
            layer = cls(**config)
            if name is not None:
                layer.name = name
            return layer
        return cls(**config)

    def _custom_entry(self):
        """The layer in a model config (saving.py): its class and get_config's data."""
        from . import _config
        cls = type(self)
        config = self.get_config()
        if self.name:
            config = dict(config, name=self.name)
        return {"module": cls.__module__, "class_name": cls.__name__,
                "config": _config.serialize(config, "%s.get_config()" % cls.__name__)}

    def count_params(self):
        if not self._traced():
            return int(sum(np.prod(w.shape, dtype=np.int64) for w in self.__dict__.get("_own_weights", [])))
        return _weft.keras.Layer.count_params(self)

    def __getattr__(self, attr):
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, attr))

    def __repr__(self):
        return "<%s name=%s, built=%s>" % (type(self).__name__, self.name or _snake(type(self).__name__), self.built)

    # ---- calls -------------------------------------------------------------------------------------
    def __call__(self, *args, training=None, mask=None, **kwargs):
        args, kwargs = self._tensor_args_by_name(args, kwargs)
        if not args:
            raise TypeError("%s: called without inputs" % type(self).__name__)
        inputs, args = args[0], args[1:]
        if mask is not None:
            raise NotImplementedError("%s: masks are not supported by weft" % type(self).__name__)
        if (args or "states" in kwargs) and ("state_size" in self.__dict__ or hasattr(type(self), "state_size")):
            from . import _cells  # an RNN cell called on one step: cell(inputs, states)
            return _cells.call_custom_cell(self, inputs, args[0] if args else kwargs.pop("states"), training,
                                           args[1:], kwargs)
        if args:
            # call(query, values) as TF's attention layers write it: the tensors are the layer's
            # inputs, in order, and call gets them as positional arguments (_invoke).
            n = self.__dict__.setdefault("_positional", 1 + len(args))
            if n != 1 + len(args):
                raise TypeError("%s: call was traced with %d positional tensors; got %d" % (
                    type(self).__name__, n, 1 + len(args)))
            inputs = [inputs] + list(args)
        items = _items(inputs)
        if any(isinstance(i, _KT) for i in items):
            if not all(isinstance(i, _KT) for i in items):
                raise TypeError("%s: the inputs mix KerasTensors and other values %r; pass constants as keyword "
                                "arguments" % (type(self).__name__, inputs))
            self._ensure_traced(inputs, [tuple(i.shape) for i in items], ["float32"] * len(items), kwargs)
            return keep_layers(_call_cpp(self, list(items) if isinstance(inputs, (list, tuple)) else inputs), inputs,
                               self)
        if in_trace(inputs):
            tensors = [i if isinstance(i, _fw.Tensor) else _fw.convert_to_tensor(i) for i in items]
            self._ensure_traced(inputs, [i.shape for i in tensors], [i.dtype for i in tensors], kwargs)
            return apply_in_trace(self, tensors, training)
        if isinstance(inputs, _fw.Tensor) and _trace.tracing():  # in a Dataset.map / filter function
            self.__dict__.setdefault("_eager_kwargs", kwargs)
            return _eager.call_in_data_trace(self, inputs, lambda layer, x: layer(x, **kwargs), training)
        if _recorder.taping() and not isinstance(inputs, (list, tuple)):  # an eager step (weft/_recorder.py)
            self.__dict__.setdefault("_eager_kwargs", kwargs)
            return _eager.call_in_step(self, inputs, lambda layer, x: layer(x, **kwargs), training)
        if any(isinstance(i, _fw.Tensor) for i in items):
            # TF2's eager tensors (computed from constants, at top level) are data: their values.
            from .._function import _eager_array
            values = [_eager_array(i) for i in items]
            if not any(isinstance(v, _fw.Tensor) for v in values):
                inputs = type(inputs)(values) if isinstance(inputs, (list, tuple)) else values[0]
                items = values
        if any(isinstance(i, _fw.Tensor) for i in items):
            raise TypeError("%s: called on graph tensors outside a model (%s); in a custom training step call the "
                            "keras.Model holding the layer (model(x, training=True)), which runs its layers"
                            % (type(self).__name__, ", ".join(i.name for i in items if isinstance(i, _fw.Tensor))))
        if isinstance(inputs, (list, tuple)) and len(items) > 1:
            raise NotImplementedError("%s: calling on a list of arrays runs through a model: build one with "
                                      "keras.Input" % type(self).__name__)
        self.__dict__.setdefault("_eager_kwargs", kwargs)
        return _eager.call_on_data(self, inputs, lambda layer, x: layer(x, **kwargs))

    def _tensor_args_by_name(self, args, kwargs):
        """call's leading tensor parameters given by name (``layer(x=x, context=ctx)``, as TF's
        tutorials call their layers) moved to the positional arguments, in call's order; constants
        stay keyword arguments."""
        import inspect
        try:
            params = [p for p in inspect.signature(self.call).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in ("training", "mask")]
        except (TypeError, ValueError):
            return args, kwargs
        args, kwargs = list(args), dict(kwargs)

        def tensor(v):
            return isinstance(v, (_KT, _fw.Tensor, np.ndarray)) or (
                isinstance(v, (list, tuple)) and v and all(isinstance(i, (_KT, _fw.Tensor, np.ndarray)) for i in v))
        for p in params[len(args):]:
            if p.name in kwargs and tensor(kwargs[p.name]):
                args.append(kwargs.pop(p.name))
            else:
                break
        return tuple(args), kwargs

    def _ensure_traced(self, inputs, shapes, dtypes, kwargs):
        d = self.__dict__
        if self._traced():
            if kwargs != d["_call_kwargs"]:
                raise NotImplementedError("%s '%s': weft traces call once; it was traced with the arguments %r and "
                                          "is now called with %r" % (type(self).__name__, self.name,
                                                                     d["_call_kwargs"], kwargs))
            return
        if _current() is not None and _current().layer is self:
            raise RuntimeError("%s calls itself inside its own call" % type(self).__name__)
        as_list = isinstance(inputs, (list, tuple))
        shapes = [None if s is None else tuple(s) for s in shapes]
        if not self.built:  # a cell is built on its step input's shape, as Keras' RNN builds it
            self.build(shapes[0] if d.get("_cell_call") else list(shapes) if as_list else shapes[0])
            d["_py_built"] = True
        self._adopt_variables()
        what = "%s '%s'" % (type(self).__name__, self.name or _snake(type(self).__name__))
        rec = _weft.keras._TraceRecorder(what)
        for training in (False, True):
            g = _fw.Graph()
            with g.as_default():
                phs = [_fw.placeholder(dt, s, name="input_%d" % i) for i, (s, dt) in enumerate(zip(shapes, dtypes))]
                rec.begin(g)
                p = _Pass(rec, training, self)
                swapped = self._swap_in(rec)
                _stack().append(p)
                try:
                    with _trace._guarded():
                        out = self._invoke(phs if as_list else phs[0], training, kwargs)
                except _trace._Untraceable as e:
                    raise TypeError("%s: cannot trace call: %s. weft traces call once per pass over symbolic tensors "
                                    "(input shapes %s): use tf ops on them, not numpy or Python control flow on their "
                                    "values" % (what, e.construct, shapes)) from None
                except Exception as e:
                    if hasattr(e, "add_note"):
                        e.add_note("(while tracing %s.call over symbolic tensors of shapes %s, training=%s)"
                                   % (type(self).__name__, shapes, training))
                    raise
                finally:
                    _stack().pop()
                    self.__dict__.update(swapped)
                outs = self._outputs_of(out, what)
                rec.finish(training, phs, outs)
        self._set_traces(rec, len(shapes) if as_list else 1)
        d["_call_kwargs"] = dict(kwargs)

    def _outputs_of(self, out, what):
        """The traced call's outputs as a list of graph tensors: one (a custom layer), or an RNN
        cell's step (_cells.py) flattened: [output, *new_states]."""
        if self.__dict__.get("_cell_call"):
            if not isinstance(out, (list, tuple)) or len(out) != 2:
                raise TypeError("%s: an RNN cell's call must return (output, new_states), got %r" % (what, out))
            out = [out[0]] + (list(out[1]) if isinstance(out[1], (list, tuple)) else [out[1]])
        elif isinstance(out, (list, tuple)):
            # several outputs (an encoder's (output, state)): a call on KerasTensors returns them as
            # a list, as Keras does for a call returning a tuple or list
            if not out or any(isinstance(o, (list, tuple, dict)) for o in out):
                raise NotImplementedError("%s: call returned %r; weft takes a tensor or a flat tuple / list of "
                                          "tensors" % (what, out))
            out = list(out)
        else:
            out = [out]
        if any(o is None for o in out):
            raise TypeError("%s: call returned None; it must return a tensor" % what)
        return [o if isinstance(o, _fw.Tensor) else _fw.convert_to_tensor(o, "float32") for o in out]

    def _adopt_variables(self):
        """tf.Variable attributes (tf.keras 2's ``self.w = tf.Variable(w_init(shape=...), trainable=True)``)
        become weights, initialized from their initial values (which must be computable from
        constants)."""
        for attr, value in list(self.__dict__.items()):
            if not isinstance(value, _fw.Variable):
                continue
            try:
                initial = np.asarray(value.initial_value.numpy(), np.float32)
            except Exception as e:
                raise TypeError("%s: the tf.Variable '%s' (self.%s) has an initial value weft cannot compute when "
                                "the layer is built (%s); create it with self.add_weight" % (
                                    type(self).__name__, value.name, attr, e)) from None
            w = self.add_weight(shape=initial.shape, initializer=_weft.keras._initializer_from_array(initial),
                                trainable=value.trainable, name=attr)
            self.__dict__[attr] = w

    def _swap_in(self, rec):
        """Replaces the layer's Variable attributes (and lists of them) by their stand-ins for the
        pass; returns what to put back."""
        stand = {}
        for w in self.__dict__["_own_weights"]:
            t = rec.own_weight(w._index, w.name, list(w.shape), w._initializer, w.trainable, w._regularizer,
                               w._constraint)
            stand[id(w)] = t
        swapped = {}
        for attr, value in list(self.__dict__.items()):
            if isinstance(value, Variable) and id(value) in stand:
                swapped[attr] = value
                self.__dict__[attr] = _StandIn(stand[id(value)], stand[id(value)], rec, self, attr)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, Variable) for v in value):
                swapped[attr] = value
                self.__dict__[attr] = type(value)(
                    _StandIn(stand[id(v)], stand[id(v)], rec, self, None) if id(v) in stand else v for v in value)
        return swapped

    def _invoke(self, inputs, training, kwargs):
        params = inspect.signature(self.call).parameters
        takes = "training" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())
        if self.__dict__.get("_cell_call"):  # an RNN cell: call(inputs, states), inputs = [x, *states]
            args = (inputs[0], list(inputs[1:]))
            return self.call(*args, training=training, **kwargs) if takes else self.call(*args, **kwargs)
        if self.__dict__.get("_positional", 1) > 1:  # call(query, values, ...): one argument per input
            return self.call(*inputs, training=training, **kwargs) if takes else self.call(*inputs, **kwargs)
        return self.call(inputs, training=training, **kwargs) if takes else self.call(inputs, **kwargs)
