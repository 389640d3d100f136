"""Keras activations: ``keras.activations.relu`` etc. Each function can be passed as a layer's
``activation=`` (the layer then applies the C++ activation of that name, train/activations.cc),
called on a KerasTensor (it adds an Activation layer) or on a graph tensor (it adds the ops).

    layers.Dense(64, activation=keras.activations.gelu)
    keras.activations.get("swish")          # the function; get(None) is linear
"""
from .. import _weft

_K = _weft.keras


def _apply(name, x):
    if isinstance(x, _K.KerasTensor):
        return _K.layers.Activation(name)(x)
    if isinstance(x, _weft.Tensor):
        return _K._apply_activation(x, name)
    raise TypeError("keras.activations.%s applies to a KerasTensor (functional model) or a weft graph tensor, "
                    "got %r" % (name, type(x).__name__))


def _make(name, doc):
    def f(x):
        return _apply(name, x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


# Keras 3's definitions, with its defaults (the formulas live in train/activations.cc).
_DOCS = {
    "linear": "x (the identity).",
    "relu": "max(x, 0).",
    "relu6": "min(max(x, 0), 6).",
    "leaky_relu": "x if x > 0 else 0.2 * x.",
    "elu": "x if x > 0 else exp(x) - 1.",
    "selu": "1.0507 * (x if x > 0 else 1.6733 * (exp(x) - 1)).",
    "gelu": "x / 2 * (1 + erf(x / sqrt(2))) (exact: Keras' approximate=False).",
    "sigmoid": "1 / (1 + exp(-x)).",
    "hard_sigmoid": "relu6(x + 3) / 6.",
    "swish": "x * sigmoid(x).",
    "silu": "x * sigmoid(x) (swish).",
    "hard_swish": "x * relu6(x + 3) / 6.",
    "hard_silu": "x * relu6(x + 3) / 6 (hard_swish).",
    "tanh": "tanh(x).",
    "softplus": "log(1 + exp(x)).",
    "softsign": "x / (|x| + 1).",
    "mish": "x * tanh(softplus(x)).",
    "exponential": "exp(x).",
    "softmax": "exp(x) / sum(exp(x)) over the last axis.",
    "log_softmax": "x - log(sum(exp(x))) over the last axis.",
}
_FUNCTIONS = {name: _make(name, doc) for name, doc in _DOCS.items()}
globals().update(_FUNCTIONS)


def get(identifier):
    """The activation function for a Keras name ('relu'), a function (returned as is) or None
    (linear). Unknown names raise InvalidArgumentError listing the known ones."""
    if identifier is None:
        return _FUNCTIONS["linear"]
    if isinstance(identifier, str):
        _K._check_activation(identifier)
        return _FUNCTIONS[identifier]
    if callable(identifier):
        return identifier
    raise TypeError("activation must be a name, a function or None, got %r" % (identifier,))


__all__ = sorted(_DOCS) + ["get"]
