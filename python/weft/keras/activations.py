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
    "celu": "max(x, 0) + alpha * min(exp(x / alpha) - 1, 0), alpha=1.0.",
    "hard_tanh": "clip(x, -1, 1).",
    "hard_shrink": "x where |x| > threshold (0.5), else 0.",
    "soft_shrink": "x - threshold above threshold (0.5), x + threshold below -threshold, else 0.",
    "tanh_shrink": "x - tanh(x).",
    "log_sigmoid": "log(sigmoid(x)) = -softplus(-x).",
    "squareplus": "(x + sqrt(x**2 + b)) / 2, b=4.",
    "sparse_plus": "0 for x <= -1, x for x >= 1, (x + 1)**2 / 4 between.",
    "sparse_sigmoid": "clip((x + 1) / 2, 0, 1).",
    "glu": "a * sigmoid(b), a and b the two halves of the last axis (axis=-1).",
}
_FUNCTIONS = {name: _make(name, doc) for name, doc in _DOCS.items()}
globals().update(_FUNCTIONS)


def _with_default(name, arg, default):
    """Keras' ``name(x, arg=default)``: the C++ activation of that name, which computes it at
    Keras' default; another value is refused (NotImplementedError) rather than ignored."""
    base = _FUNCTIONS[name]

    def f(x, **kwargs):
        value = kwargs.pop(arg, default)
        if kwargs:
            raise TypeError("keras.activations.%s got unexpected arguments: %s" % (name, ", ".join(sorted(kwargs))))
        if value != default:
            raise NotImplementedError("keras.activations.%s: weft computes it with Keras' default %s=%r, got %r"
                                      % (name, arg, default, value))
        return base(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = base.__doc__
    _FUNCTIONS[name] = f
    globals()[name] = f


for _name, _arg, _default in (("celu", "alpha", 1.0), ("hard_shrink", "threshold", 0.5),
                              ("soft_shrink", "threshold", 0.5), ("squareplus", "b", 4), ("glu", "axis", -1),
                              ("leaky_relu", "negative_slope", 0.2), ("elu", "alpha", 1.0)):
    _with_default(_name, _arg, _default)


def _op_function(name, build, doc):
    """An activation with arguments Keras requires, as weft ops: on graph tensors the ops, on a
    KerasTensor a Lambda layer running them."""
    def f(x, *args, **kwargs):
        if isinstance(x, _K.KerasTensor):
            from . import layers
            return layers.Lambda(lambda t: build(t, *args, **kwargs))(x)
        if isinstance(x, _weft.Tensor):
            return build(x, *args, **kwargs)
        raise TypeError("keras.activations.%s applies to a KerasTensor (functional model) or a weft graph tensor, "
                        "got %r" % (name, type(x).__name__))
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


def _threshold(x, threshold, default_value):
    from .. import ops
    return ops.where(ops.greater(x, ops.zeros_like(x) + threshold), x, ops.zeros_like(x) + default_value)


def _sparsemax(x, axis=-1):
    """Martins & Astudillo 2016: max(x - tau, 0), tau the threshold making the outputs sum to 1.
    Along the last axis: z sorted descending, k the largest index with 1 + k z_k > sum(z_1..z_k),
    tau = (sum(z_1..z_k) - 1) / k (the support is a prefix of z, so sums over it need no gather)."""
    from .. import array_ops, math, ops
    if axis not in (-1, len(x.shape) - 1 if x.shape is not None else -1):
        raise NotImplementedError("keras.activations.sparsemax: weft computes it over the last axis, got axis=%r"
                                  % (axis,))
    n = x.shape[-1]
    if n is None:
        raise ValueError("keras.activations.sparsemax needs a known last dimension, got shape %s" % (x.shape,))
    z = math.top_k(x, int(n), sorted=True)[0]
    k = ops.cast(array_ops.range(1, int(n) + 1), x.dtype)
    support = ops.cast(ops.greater(1.0 + k * z, math.cumsum(z, axis=-1)), x.dtype)
    k_z = ops.reduce_sum(support, axis=-1, keepdims=True)
    tau = (ops.reduce_sum(z * support, axis=-1, keepdims=True) - 1.0) / k_z
    return ops.maximum(x - tau, 0.0)


threshold = _op_function("threshold", _threshold, "x where x > threshold, else default_value "
                         "(``threshold(x, threshold, default_value)``).")
sparsemax = _op_function("sparsemax", _sparsemax, "The Euclidean projection of x onto the probability simplex "
                         "along the last axis: sparse probabilities (``sparsemax(x, axis=-1)``).")
_FUNCTIONS["sparsemax"] = sparsemax


def get(identifier):
    """The activation function for a Keras name ('relu'), a function (returned as is) or None
    (linear). Unknown names raise InvalidArgumentError listing the known ones."""
    if identifier is None:
        return _FUNCTIONS["linear"]
    if isinstance(identifier, str):
        if identifier in _FUNCTIONS:
            return _FUNCTIONS[identifier]
        _K._check_activation(identifier)  # Keras' other spellings ('silu'), or an error listing the names
        return globals().get(identifier) or _FUNCTIONS["linear"]
    if callable(identifier):
        return identifier
    raise TypeError("activation must be a name, a function or None, got %r" % (identifier,))


def serialize(activation):
    """The Keras name of an activation function (as Keras 3 saves a built-in activation)."""
    name = getattr(activation, "__name__", None)
    if name in _FUNCTIONS or name in ("silu", "hard_silu", "threshold"):
        return name
    from . import _config
    return _config.serialize(activation, "activation")


def deserialize(config, custom_objects=None):
    """The activation function of a Keras name (or of serialize's data)."""
    if isinstance(config, str):
        if custom_objects and config in custom_objects:
            return custom_objects[config]
        return get(config)
    from . import _config
    return _config.deserialize_in(__name__, config, custom_objects)


__all__ = sorted(_DOCS) + ["get", "threshold", "sparsemax", "serialize", "deserialize"]
