"""TensorFlow ops on KerasTensors in functional models (TF-Keras' TFOpLambda):
``inputs + attn_output``, ``-x``, ``x[:, 0]``, ``x @ w``, ``tf.reduce_mean(x, axis=1)``,
``tf.concat([a, b], -1)``, ``tf.nn.relu(x)`` become layers.

Each such use makes a ``TFOpLambda`` layer, a custom layer (_custom.py) whose call applies the
function to the graph tensors that stand for the KerasTensors it was given (the other arguments
are captured as they are: numbers, arrays, axis lists). Python's operators on KerasTensors are
installed on the KerasTensor class; the public functions of weft, weft.math, weft.nn, weft.random,
weft.linalg and weft.keras.ops are wrapped so that a call with a KerasTensor argument (directly or in
a list, tuple or dict argument) makes the layer; other calls go straight to the function. In a
model config a TFOpLambda is the function's TF-Keras name and its arguments (tagged JSON for
slices, tuples, arrays, dtypes and the KerasTensors' places).
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


# Python's operators on KerasTensors, by the name TF-Keras gives their layers' function. A reflected
# operator (2.0 - x) captures its arguments in the operator's order, so one function serves both.
_OPERATORS = {
    "tf.__operators__.add": lambda a, b: a + b,
    "tf.math.subtract": lambda a, b: a - b,
    "tf.math.multiply": lambda a, b: a * b,
    "tf.math.truediv": lambda a, b: a / b,
    "tf.linalg.matmul": lambda a, b: a @ b,
    "tf.math.pow": lambda a, b: a ** b,
    "tf.math.negative": lambda a: -a,
    "tf.math.abs": lambda a: abs(a),
    "tf.__operators__.getitem": lambda a, key: a[key],
}


def _function_of(symbol):
    """The function a TFOpLambda's ``symbol`` names: an operator, or ``tf.<module>.<name>`` of weft."""
    if symbol in _OPERATORS:
        return _OPERATORS[symbol]
    module, _, name = symbol.rpartition(".")
    import importlib
    try:
        found = getattr(importlib.import_module("weft" + module[len("tf"):]), name, None)
    except ImportError:
        found = None
    if not symbol.startswith("tf") or found is None:
        raise ValueError("TFOpLambda: unknown function '%s' (weft has no such op)" % symbol)
    return found


def _encode(value, what):
    """A captured argument as JSON data (slices, tuples, arrays, dtypes and KerasTensor slots tagged)."""
    import numpy as np
    from .. import framework as _fw
    if isinstance(value, _Slot):
        return {"__keras_tensor__": value.index}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, np.ndarray):
        return {"__ndarray__": value.tolist(), "dtype": str(value.dtype)}
    if isinstance(value, slice):
        return {"__slice__": [_encode(value.start, what), _encode(value.stop, what), _encode(value.step, what)]}
    if value is Ellipsis:
        return {"__ellipsis__": True}
    if isinstance(value, _fw.DType):
        return {"__dtype__": value.name}
    if isinstance(value, tuple):
        return {"__tuple__": [_encode(v, what) for v in value]}
    if isinstance(value, list):
        return [_encode(v, what) for v in value]
    if isinstance(value, dict):
        return {"__dict__": [[_encode(k, what), _encode(v, what)] for k, v in value.items()]}
    raise TypeError("%s: its argument %r cannot be saved in a model config" % (what, value))


def _decode(value):
    """The inverse of _encode."""
    import numpy as np
    from .. import framework as _fw
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__keras_tensor__" in value:
        return _Slot(value["__keras_tensor__"])
    if "__ndarray__" in value:
        return np.asarray(value["__ndarray__"], dtype=value["dtype"])
    if "__slice__" in value:
        return slice(*[_decode(v) for v in value["__slice__"]])
    if "__ellipsis__" in value:
        return Ellipsis
    if "__dtype__" in value:
        return _fw.as_dtype(value["__dtype__"])
    if "__tuple__" in value:
        return tuple(_decode(v) for v in value["__tuple__"])
    if "__dict__" in value:
        return {_decode(k): _decode(v) for k, v in value["__dict__"]}
    raise ValueError("TFOpLambda: unknown argument encoding %r" % (value,))


class TFOpLambda(Layer):
    """``function(*args, **kwargs)`` on KerasTensors, as a layer: its call applies the function
    with the graph tensors in place of the KerasTensors. It has no weights. In a model config it is
    the function's name (``tf.math.reduce_mean``, ``tf.__operators__.add``) and the arguments."""

    def __init__(self, function, args=(), kwargs=None, count=1, name=None, trainable=True, dtype=None):
        super().__init__(name=name)
        symbol = function if isinstance(function, str) else None
        if symbol is not None:  # from a config
            function = _function_of(symbol)
            args, kwargs = tuple(_decode(list(args))), {k: _decode(v) for k, v in (kwargs or {}).items()}
        self.__dict__.update(_function=function, _args=tuple(args), _kwargs=dict(kwargs or {}), _count=int(count),
                             symbol=symbol or getattr(function, "_weft_symbol", None))

    def call(self, inputs):
        tensors = list(inputs) if self._count > 1 else [inputs]
        return self._function(*_fill(self._args, tensors), **_fill(self._kwargs, tensors))

    def get_config(self):
        what = "layer '%s' (TFOpLambda of %s)" % (self.name, self.symbol)
        if self.symbol is None:
            raise TypeError("%s cannot be saved in a model config: its function has no TensorFlow name; wrap the "
                            "computation in a custom layer with get_config" % what)
        return {"name": self.name, "function": self.symbol, "args": [_encode(a, what) for a in self._args],
                "kwargs": {k: _encode(v, what) for k, v in self._kwargs.items()}, "count": self._count}


def apply(function, args, kwargs):
    """``function(*args, **kwargs)`` where some arguments are KerasTensors: a TFOpLambda's output."""
    found = {}
    args, kwargs = _capture(tuple(args), found), _capture(dict(kwargs), found)
    tensors = [t for _, t in sorted(found.values(), key=lambda e: e[0].index)]
    layer = TFOpLambda(function, args, kwargs, len(tensors))
    return layer(tensors if len(tensors) > 1 else tensors[0])


def dispatching(function, symbol):
    """``function``, making a TFOpLambda when an argument is a KerasTensor."""
    @functools.wraps(function)
    def f(*args, **kwargs):
        if _has_keras_tensor(args, kwargs):
            return apply(f, args, kwargs)
        return function(*args, **kwargs)
    f._weft_dispatch, f._weft_symbol = True, symbol
    return f


def _install_operators():
    for symbol, op in _OPERATORS.items():
        op._weft_symbol = symbol

    def binary(name, symbol):
        op = _OPERATORS[symbol]
        setattr(_KT, "__%s__" % name, lambda a, b: apply(op, (a, b), {}))
        setattr(_KT, "__r%s__" % name, lambda a, b: apply(op, (b, a), {}))
    binary("add", "tf.__operators__.add")
    binary("sub", "tf.math.subtract")
    binary("mul", "tf.math.multiply")
    binary("truediv", "tf.math.truediv")
    binary("matmul", "tf.linalg.matmul")
    binary("pow", "tf.math.pow")
    _KT.__neg__ = lambda a: apply(_OPERATORS["tf.math.negative"], (a,), {})
    _KT.__abs__ = lambda a: apply(_OPERATORS["tf.math.abs"], (a,), {})
    _KT.__getitem__ = lambda a, key: apply(_OPERATORS["tf.__operators__.getitem"], (a, key), {})
    _KT.__array_ufunc__ = None  # numpy_array + keras_tensor calls KerasTensor.__radd__

    def no_iter(t):  # (__getitem__ alone would make Python iterate by indexing, without end)
        raise TypeError("a KerasTensor is not iterable (shape %s); index it (x[:, 0]) or use tf.split / tf.unstack"
                        % (t.shape,))
    _KT.__iter__ = no_iter


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
    from .. import linalg, math, nn, random
    from . import ops
    _install_operators()
    _install_dispatch([weft, math, nn, random, linalg, ops])
