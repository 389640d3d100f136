"""TensorFlow ops on KerasTensors in functional models (TF-Keras' TFOpLambda):
``inputs + attn_output``, ``-x``, ``x[:, 0]``, ``x @ w``, ``tf.reduce_mean(x, axis=1)``,
``tf.concat([a, b], -1)``, ``tf.nn.relu(x)`` become layers.

Each such use makes a ``TFOpLambda`` layer, a custom layer (_custom.py) whose call applies the
function to the graph tensors that stand for the KerasTensors it was given (the other arguments
are captured as they are: numbers, arrays, axis lists). Python's operators on KerasTensors are
installed on the KerasTensor class; the public functions of weft, weft.math, weft.nn and weft.random
are wrapped so that a call with a KerasTensor argument (directly or in
a list, tuple or dict argument) makes the layer; other calls go straight to the function.
"""
import functools
import types

from .. import _weft
from ._custom import Layer

_KT = _weft.keras.KerasTensor


class _Slot:
    """Where the i-th distinct KerasTensor goes in the captured arguments."""

    def __init__(self, index):
        self.index = index


def _map(value, leaf):
    """``value`` with ``leaf(v)`` in place of each item of its lists, tuples and dicts (nested) that
    ``leaf`` replaces (it returns None to keep the item)."""
    new = leaf(value)
    if new is not None:
        return new
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_map(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, leaf) for k, v in value.items()}
    return value


def _capture(value, found):
    """``value`` with each KerasTensor replaced by a _Slot (``found``: sym id -> (slot, tensor))."""
    def leaf(v):
        if not isinstance(v, _KT):
            return None
        key = _weft.keras._sym_id(v)
        if key not in found:
            found[key] = (_Slot(len(found)), v)
        return found[key][0]
    return _map(value, leaf)


def _fill(value, tensors):
    return _map(value, lambda v: tensors[v.index] if isinstance(v, _Slot) else None)


def _has_keras_tensor(args, kwargs):
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, _KT):
            return True
        if isinstance(v, (list, tuple)) and any(isinstance(i, _KT) for i in v):
            return True
        if isinstance(v, dict) and any(isinstance(i, _KT) for i in v.values()):
            return True
    return False


class TFOpLambda(Layer):
    """``function(*args, **kwargs)`` on KerasTensors, as a layer: its call applies the function
    with the graph tensors in place of the KerasTensors. It has no weights; it cannot be saved in a
    model config (wrap the computation in a custom layer with get_config to save it)."""

    def __init__(self, function, args, kwargs, symbol, count):
        super().__init__()
        self.__dict__.update(_function=function, _args=args, _kwargs=kwargs, symbol=symbol, _count=count)

    def call(self, inputs):
        tensors = list(inputs) if self._count > 1 else [inputs]
        return self._function(*_fill(self._args, tensors), **_fill(self._kwargs, tensors))

    def _custom_entry(self):
        raise TypeError("layer '%s' (TFOpLambda of %s) cannot be saved in a model config: a TensorFlow op applied to "
                        "KerasTensors; wrap it in a custom layer with get_config" % (self.name, self.symbol))


def apply(function, args, kwargs, symbol):
    """``function(*args, **kwargs)`` where some arguments are KerasTensors: a TFOpLambda's output."""
    found = {}
    args, kwargs = _capture(tuple(args), found), _capture(dict(kwargs), found)
    tensors = [t for _, t in sorted(found.values(), key=lambda e: e[0].index)]
    layer = TFOpLambda(function, args, kwargs, symbol, len(tensors))
    return layer(tensors if len(tensors) > 1 else tensors[0])


def dispatching(function, symbol):
    """``function``, making a TFOpLambda when an argument is a KerasTensor."""
    @functools.wraps(function)
    def f(*args, **kwargs):
        if _has_keras_tensor(args, kwargs):
            return apply(function, args, kwargs, symbol)
        return function(*args, **kwargs)
    f._weft_dispatch = True
    return f


def _install_operators():
    def binary(name, op):
        setattr(_KT, "__%s__" % name, lambda a, b: apply(op, (a, b), {}, "__operators__.%s" % name))
        setattr(_KT, "__r%s__" % name, lambda a, b: apply(op, (b, a), {}, "__operators__.r%s" % name))
    binary("add", lambda a, b: a + b)
    binary("sub", lambda a, b: a - b)
    binary("mul", lambda a, b: a * b)
    binary("truediv", lambda a, b: a / b)
    binary("matmul", lambda a, b: a @ b)
    binary("pow", lambda a, b: a ** b)
    _KT.__neg__ = lambda a: apply(lambda x: -x, (a,), {}, "math.negative")
    _KT.__abs__ = lambda a: apply(lambda x: abs(x), (a,), {}, "math.abs")
    _KT.__getitem__ = lambda a, key: apply(lambda x, k: x[k], (a, key), {}, "__operators__.getitem")
    _KT.__array_ufunc__ = None  # numpy_array + keras_tensor calls KerasTensor.__radd__

    def no_iter(t):  # (__getitem__ alone would make Python iterate by indexing, without end)
        raise TypeError("a KerasTensor is not iterable (shape %s); index it (x[:, 0]) or use tf.split / tf.unstack"
                        % (t.shape,))
    _KT.__iter__ = no_iter
    _KT.dtype = property(lambda t: "float32", doc="weft's KerasTensors are float32.")


def _install_dispatch(modules):
    wrapped = {}
    for module in modules:
        for name, value in list(vars(module).items()):
            if name.startswith("_") or not isinstance(value, types.FunctionType) or \
                    getattr(value, "_weft_dispatch", False) or not value.__module__.startswith("weft"):
                continue
            if id(value) not in wrapped:
                symbol = "%s.%s" % (module.__name__.replace("weft", "tf", 1), name)
                wrapped[id(value)] = dispatching(value, symbol)
            setattr(module, name, wrapped[id(value)])


def install():
    import weft
    from .. import math, nn, random
    _install_operators()
    _install_dispatch([weft, math, nn, random])
