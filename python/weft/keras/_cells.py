"""Keras' recurrent cells and ``keras.layers.RNN`` (keras.io, "Working with RNNs").

- ``LSTMCell``, ``GRUCell``, ``SimpleRNNCell`` are each one C++ recurrent layer (train/layers_rnn.h):
  called on one step ``cell(x, states)`` it computes the step from MatMul, BiasAdd and the
  activations; ``RNN(cell, ...)`` is the same layer running the sequence in its fused op. One
  layer, so a cell and the RNN wrapping it share their weights (kernel, recurrent_kernel, bias)
  whichever is called first, and a model lists them once.
- ``RNN`` over a user-defined cell (a ``keras.layers.Layer`` with ``state_size`` and
  ``call(inputs, states)``), a list of cells or ``StackedRNNCells`` is a custom layer
  (_custom.py) whose call unrolls the steps over a known time dimension, or runs them in a
  tf.while_loop when the number of steps is unknown: each step applies
  the cells (a custom cell is traced once as a layer of inputs [x, *states] and outputs
  [output, *new_states]; a built-in cell is its layer's step), sharing their weights over the
  steps.
"""
import numpy as np

from .. import _weft
from .. import framework as _fw
from . import _custom

_L = _weft.keras.layers
_KT = _weft.keras.KerasTensor


def _nested(states):
    return isinstance(states, (list, tuple))


class _BuiltinCell:
    """A built-in cell: Keras' arguments, made into the recurrent layer ``_layer``."""
    _layer = _default_name = None
    _num_states = 1

    def __init__(self, units, **kwargs):
        name = kwargs.pop("name", None)
        kwargs.pop("dtype", None)
        kwargs.pop("trainable", None)
        self.units = int(units)
        self.kwargs = kwargs
        self._rnn_options = None  # the sequence options RNN(cell, ...) gave the layer
        # Made by keras.layers' factory, so the layer records its config: a model saved with the cell's
        # steps (and no RNN over it) remakes it as that layer, whose step calls are the cell's.
        from . import layers
        self._cpp = getattr(layers, self._layer)(units, name=name, **kwargs)

    # ---- Keras' cell API ---------------------------------------------------------------------
    @property
    def state_size(self):
        return [self.units] * self._num_states if self._num_states > 1 else self.units

    @property
    def output_size(self):
        return self.units

    @property
    def name(self):
        return self._cpp.name

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zeros of the states' shapes, (batch, units) each, as a list (Keras 3's signature is
        ``get_initial_state(batch_size)``; TF 2's ``(inputs, batch_size, dtype)`` works too)."""
        if batch_size is None and inputs is not None and not isinstance(inputs, (int, np.integer)):
            batch_size = np.shape(inputs)[0]
        elif batch_size is None and inputs is not None:
            batch_size = inputs
        if batch_size is None:
            raise ValueError("%s.get_initial_state needs batch_size" % type(self).__name__)
        return [np.zeros((int(batch_size), self.units), np.float32) for _ in range(self._num_states)]

    def __call__(self, inputs, states=None, training=None, **kwargs):
        """One step: ``(output, new_states)``. states: a list of the states ([h, c] for an
        LSTMCell, [h] otherwise); a GRUCell or SimpleRNNCell also takes h alone and then returns
        h alone as its new state, as Keras'."""
        what = "%s '%s'" % (type(self).__name__, self.name or self._default_name)
        if kwargs:
            raise TypeError("%s got unexpected call arguments: %s" % (what, ", ".join(sorted(kwargs))))
        if states is None:
            raise TypeError("%s: a cell is called on one step with its states: cell(inputs, states) (zeros: "
                            "cell.get_initial_state(batch_size))" % what)
        nested = _nested(states)
        given = list(states) if nested else [states]
        if len(given) != self._num_states:
            raise ValueError("%s: expects %d state(s) of shape (batch, %d) (state_size %s), got %d: shapes %s" % (
                what, self._num_states, self.units, self.state_size, len(given),
                [tuple(getattr(s, "shape", np.shape(s))) for s in given]))
        outs = _step(self._cpp, [inputs] + given, training, what)
        new = list(outs[1:])
        return outs[0], (new if nested or self._num_states > 1 else new[0])

    def __getattr__(self, attr):  # the layer's weights (kernel, ...), get_weights, trainable_weights, ...
        if attr.startswith("__") or attr in ("_cpp", "kwargs", "units", "_rnn_options"):
            raise AttributeError(attr)
        return getattr(self._cpp, attr)

    def __repr__(self):
        return "<weft.keras.layers.%s units=%d name=%s>" % (type(self).__name__, self.units, self.name)


def call_custom_cell(cell, inputs, states, training, args, kwargs):
    """``cell(inputs, states)`` for a custom cell (a Layer subclass with state_size): its traced
    step (inputs [x, *states], outputs [output, *new_states]) applied where the call happens."""
    what = "%s '%s'" % (type(cell).__name__, cell.name)
    if args or kwargs:
        raise TypeError("%s: a cell's call takes (inputs, states, training=None); got more arguments: %s" % (
            what, ", ".join([repr(a) for a in args] + sorted(kwargs))))
    nested = _nested(states)
    given = list(states) if nested else [states]
    sizes = _state_sizes(cell)
    if len(given) != len(sizes):
        raise ValueError("%s: expects %d state(s) of widths %s (state_size %r), got %d: shapes %s" % (
            what, len(sizes), sizes, cell.state_size, len(given), [tuple(getattr(s, "shape", np.shape(s)))
                                                                   for s in given]))
    items = [inputs] + given
    if not any(isinstance(i, (_KT, _fw.Tensor)) for i in items):
        items = [np.asarray(i, np.float32) for i in items]
    shapes = [(None,) + tuple(i.shape)[1:] for i in items]
    _custom.trace_cell(cell, shapes, [getattr(i, "dtype", "float32") if isinstance(i, _fw.Tensor) else "float32"
                                      for i in items])
    outs = _step(cell, items, training, what)
    new = list(outs[1:])
    return outs[0], (new if nested or len(new) > 1 else new[0])


def _step(layer, inputs, training, what):
    """The C++ layer's call on [x, *states] with every output, where the call happens: on
    KerasTensors (a model), inside a traced call, or on data (run through a model)."""
    if any(isinstance(i, _KT) for i in inputs):
        if not all(isinstance(i, _KT) for i in inputs):
            raise TypeError("%s: the inputs and states mix KerasTensors and other values (%s); pass KerasTensors "
                            "(zeros: keras.ops.zeros_like of a KerasTensor)" % (
                                what, ", ".join(type(i).__name__ for i in inputs)))
        from ._layer_call import _layer_call_cpp
        return _custom.keep_layers(_layer_call_cpp(layer, inputs), inputs)
    if _custom.in_trace(inputs):
        return _custom.apply_outputs_in_trace(layer, inputs, training)
    if any(isinstance(i, _fw.Tensor) for i in inputs):
        raise NotImplementedError("%s: called on graph tensors outside a model; call it in a model's call (or a "
                                  "custom layer's) or on numpy data" % what)
    return _on_data(layer, inputs, what)


def _on_data(layer, inputs, what):
    """A step on numpy data: a model of one Input per argument, cached per shapes (the layer's
    weights are shared with the other models holding it, keras/_shared.py)."""
    from .models import Input, Model
    from ._eager import EagerArray
    arrays = [np.asarray(i, np.float32) for i in inputs]
    if any(a.ndim != 2 for a in arrays):
        raise ValueError("%s: a step takes inputs and states of shape (batch, n), got %s" % (
            what, [a.shape for a in arrays]))
    shapes = tuple(a.shape[1:] for a in arrays)
    cache = layer.__dict__.setdefault("_step_models", {})
    model = cache.get(shapes)
    if model is None:
        ins = [Input(shape=s) for s in shapes]
        from ._layer_call import _layer_call_cpp
        model = Model(ins, _layer_call_cpp(layer, ins), name="%s_step" % (layer.name or "cell"))
        cache[shapes] = model
    out = model.predict(arrays, batch_size=max(len(arrays[0]), 1), verbose=0)
    return [o.view(EagerArray) for o in out]


class LSTMCell(_BuiltinCell):
    """Keras' LSTMCell (units, activation, recurrent_activation, use_bias, initializers,
    unit_forget_bias, dropout, seed): ``h, [h, c] = cell(x, [h, c])``, or ``RNN(cell)``. Gates i, f,
    c, o in the weights' columns, as Keras'."""
    _layer, _default_name = "LSTM", "lstm_cell"
    _num_states = 2


class GRUCell(_BuiltinCell):
    """Keras' GRUCell (units, activation, recurrent_activation, use_bias, initializers,
    reset_after=True, dropout, seed): ``h, [h] = cell(x, [h])``, or ``RNN(cell)``. Gates z, r, h."""
    _layer, _default_name = "GRU", "gru_cell"


class SimpleRNNCell(_BuiltinCell):
    """Keras' SimpleRNNCell (units, activation, use_bias, initializers, dropout, seed):
    ``h, [h] = cell(x, [h])``, or ``RNN(cell)``."""
    _layer, _default_name = "SimpleRNN", "simple_rnn_cell"


class StackedRNNCells:
    """Keras' StackedRNNCells: cells applied one after the other in each step (the output of one is
    the input of the next); its states are each cell's states, in order. Use it as
    ``RNN(StackedRNNCells(cells))`` (or ``RNN(cells)``)."""

    def __init__(self, cells, **kwargs):
        kwargs.pop("name", None)
        if kwargs:
            raise TypeError("StackedRNNCells got unexpected arguments: %s" % ", ".join(sorted(kwargs)))
        cells = list(cells)
        if not cells:
            raise ValueError("StackedRNNCells needs at least one cell")
        for c in cells:
            _check_cell(c)
        self.cells = cells

    @property
    def state_size(self):
        return [c.state_size for c in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def __repr__(self):
        return "<weft.keras.layers.StackedRNNCells of %d cells>" % len(self.cells)


def _check_cell(cell):
    if isinstance(cell, (_BuiltinCell, StackedRNNCells)):
        return
    if not isinstance(cell, _custom.Layer) or not hasattr(cell, "state_size"):
        raise TypeError("keras.layers.RNN: a cell is an LSTMCell, GRUCell, SimpleRNNCell, StackedRNNCells or a "
                        "keras.layers.Layer subclass with a state_size attribute and call(inputs, states); got %r"
                        % (cell,))


def _state_sizes(cell):
    """The flat list of a cell's state widths."""
    if isinstance(cell, StackedRNNCells):
        return [n for c in cell.cells for n in _state_sizes(c)]
    size = cell.state_size
    sizes = list(size) if isinstance(size, (list, tuple)) else [size]
    for n in sizes:
        if isinstance(n, (list, tuple)) or int(n) <= 0:
            raise ValueError("%s: state_size must be a positive int or a list of them (states of shape (batch, n)), "
                             "got %r" % (type(cell).__name__, size))
    return [int(n) for n in sizes]


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    return int(size) if size is not None else _state_sizes(cell)[0]


def _cell_step(cell, x, states, training):
    """One step of ``cell`` inside a trace: (output, flat new states)."""
    if isinstance(cell, StackedRNNCells):
        new = []
        for c in cell.cells:
            n = len(_state_sizes(c))
            x, s = _cell_step(c, x, states[:n], training)
            states = states[n:]
            new += s
        return x, new
    if isinstance(cell, _BuiltinCell):
        outs = _custom.apply_outputs_in_trace(cell._cpp, [x] + list(states), training)
    else:
        tensors = [x] + list(states)
        _custom.trace_cell(cell, [t.shape for t in tensors], [t.dtype for t in tensors])
        outs = _custom.apply_outputs_in_trace(cell, tensors, training)
    if len(outs) != 1 + len(states):
        raise ValueError("%s: call(inputs, states) got %d state(s) (state_size %r) and returned %d" % (
            type(cell).__name__, len(states), cell.state_size, len(outs) - 1))
    return outs[0], list(outs[1:])


class _UnrolledRNN(_custom.Layer):
    """keras.layers.RNN over a custom cell, a list of cells or StackedRNNCells: a custom layer
    whose call runs the cells over each step of (batch, time, features)."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, name=None,
                 input_shape=None):
        super().__init__(name=name, input_shape=input_shape)
        self.__dict__["_rnn_cell"] = cell
        self.return_sequences, self.return_state, self.go_backwards = return_sequences, return_state, go_backwards

    @property
    def cell(self):
        return self.__dict__["_rnn_cell"]

    def get_config(self):
        raise NotImplementedError("keras.layers.RNN over a custom cell or a stack of cells has no config in weft "
                                  "(save its weights instead)")

    def __call__(self, inputs, initial_state=None, training=None, mask=None, **kwargs):
        if mask is not None:
            raise NotImplementedError("RNN '%s': masks are not supported with a custom cell or a stack of cells"
                                      % self.name)
        if initial_state is not None:  # one flat list of the cells' states (a stack's: each cell's, in order)
            states = [s for group in (initial_state if _nested(initial_state) else [initial_state])
                      for s in (group if _nested(group) else [group])]
            sizes = _state_sizes(self.cell)
            if len(states) != len(sizes):
                raise ValueError("RNN '%s': initial_state has %d state(s); %s takes %d of widths %s" % (
                    self.name, len(states), type(self.cell).__name__, len(sizes), sizes))
            inputs = [inputs] + states
        return super().__call__(inputs, training=training, **kwargs)

    def _outputs_of(self, out, what):
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        return [o if isinstance(o, _fw.Tensor) else _fw.convert_to_tensor(o, "float32") for o in out]

    def call(self, inputs, training=None):
        from .. import ops as _ops
        from .. import array_ops as _array
        given = None
        if isinstance(inputs, (list, tuple)):  # [sequence, *initial states]
            inputs, given = inputs[0], list(inputs[1:])
        shape = inputs.shape
        what = "RNN '%s' over %s" % (self.name, type(self.cell).__name__)
        if shape is None or len(shape) != 3:
            raise ValueError("%s: expects inputs (batch, time, features), got shape %s" % (what, shape))
        if shape[2] is None:
            raise ValueError("%s: the number of features must be known, got inputs of shape %s" % (what, shape))
        steps = shape[1]
        batch = _ops.shape(inputs)[0]
        states = given or [_ops.zeros(_array.stack([batch, n])) for n in _state_sizes(self.cell)]
        if steps is None:
            out, states = self._loop(inputs, states, training)
        else:
            order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
            outputs = []
            for t in order:
                y, states = _cell_step(self.cell, inputs[:, t, :], states, training)
                outputs.append(y)
            out = _array.stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [out] + list(states) if self.return_state else out

    def _loop(self, inputs, states, training):
        """The steps of a sequence of unknown length: the first one as is (it declares the cells'
        weights before the loop, so the loop reads them from outside its frame), the others in a
        tf.while_loop; with return_sequences the outputs are concatenated along time (in run
        order). Gradients flow through the loop (docs/control-flow.md). Sequences must have a step."""
        from .. import ops as _ops
        from ..control_flow_ops import while_loop
        n = _ops.shape(inputs)[1]
        first = n - 1 if self.go_backwards else 0
        y, states = _cell_step(self.cell, _ops.gather(inputs, first, axis=1), states, training)
        seq = _ops.expand_dims(y, 1)
        width = y.shape[-1]

        def body(t, y, seq, *st):
            x_t = _ops.gather(inputs, n - 1 - t if self.go_backwards else t, axis=1)
            y, new = _cell_step(self.cell, x_t, list(st), training)
            if self.return_sequences:
                seq = _ops.concat([seq, _ops.expand_dims(y, 1)], 1)
            return (t + 1, y, seq) + tuple(new)

        invariants = ((), (None, width), (None, None, width)) + tuple((None, s.shape[-1]) for s in states)
        out = while_loop(lambda t, *rest: t < n, body, (1, y, seq) + tuple(states), shape_invariants=invariants)
        return (out[2] if self.return_sequences else out[1]), list(out[3:])


def RNN(cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False, unroll=False,
        zero_output_for_mask=False, name=None, input_shape=None, time_major=False, **kwargs):
    """Keras' RNN layer. Over an LSTMCell, GRUCell or SimpleRNNCell: that cell's layer, running the
    sequence in one fused op (the layer LSTM(...), GRU(...) or SimpleRNN(...) would be, with the
    cell's weights). Over a custom cell, a list of cells or StackedRNNCells: the steps unrolled
    (a known time dimension) or in a tf.while_loop (unknown); no masks or stateful."""
    if kwargs.get("dtype") in (None, "float32") and kwargs.get("trainable", True) is True:
        kwargs.pop("dtype", None)  # weft's layers compute in float32 and train
        kwargs.pop("trainable", None)
    if stateful:
        raise NotImplementedError("keras.layers.RNN: stateful=True is not supported (every batch starts from zero "
                                  "states)")
    if isinstance(cell, (list, tuple)):
        cell = StackedRNNCells(cell)
    _check_cell(cell)
    if not isinstance(cell, _BuiltinCell):
        if kwargs:
            raise TypeError("RNN got unexpected arguments: %s" % ", ".join(sorted(kwargs)))
        if time_major or zero_output_for_mask:
            raise NotImplementedError("keras.layers.RNN: time_major / zero_output_for_mask are not supported with a "
                                      "custom cell or a stack of cells")
        return _UnrolledRNN(cell, bool(return_sequences), bool(return_state), bool(go_backwards), name, input_shape)
    if kwargs:
        raise TypeError("RNN got unexpected arguments: %s (the cell takes the layer's arguments)"
                        % ", ".join(sorted(kwargs)))
    options = dict(return_sequences=bool(return_sequences), return_state=bool(return_state),
                   go_backwards=bool(go_backwards), time_major=bool(time_major),
                   zero_output_for_mask=bool(zero_output_for_mask))
    if cell._rnn_options is not None and cell._rnn_options != options:
        raise NotImplementedError("keras.layers.RNN: %s '%s' is already wrapped by an RNN with %s; in weft a built-in "
                                  "cell and its RNN are one layer, so a second RNN over it must have the same options "
                                  "(got %s)" % (type(cell).__name__, cell.name, cell._rnn_options, options))
    _L._set_rnn_sequence_options(cell._cpp, **options)
    cell._rnn_options = options
    layer = cell._cpp
    if name is not None:
        layer.name = name
    if input_shape is not None:
        layer._input_shape = tuple(input_shape)
    return layer
