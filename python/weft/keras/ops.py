"""``keras.ops`` (Keras 3's backend-neutral ops) over weft's ops, with Keras 3's names and
signatures: ``ops.mean(x, axis=None, keepdims=False)``, ``ops.concatenate(xs, axis=0)``,
``ops.arange(start, stop=None, step=1)``, ``ops.take(x, indices, axis=None)``, ...

Each returns a weft tensor, so they serve where TensorFlow's own functions do: in Lambda layers,
in a subclassed model's or custom layer's ``call``, in tf.function and weft.data maps. Names of
Keras 3 ops weft does not have are an AttributeError naming them.
"""
import builtins

import numpy as np

from .. import array_ops as _a, linalg as _la, math as _m, nn as _nn, ops as _o
from ..framework import as_dtype, convert_to_tensor as _convert, float32

# ---- the same function under the same name ---------------------------------------------------
abs = _o.abs  # noqa: A001
absolute = _o.abs
exp = _o.exp
log = _o.log
sqrt = _o.sqrt
rsqrt = _o.rsqrt
square = _o.square
sin = _m.sin
cos = _m.cos
tanh = _o.tanh
sign = _o.sign
floor = _m.floor
ceil = _m.ceil
round = _m.round  # noqa: A001
erf = _m.erf
log1p = _m.log1p
expm1 = _m.expm1
add = _o.add
subtract = _o.subtract
multiply = _o.multiply
divide = _m.truediv
true_divide = _m.truediv
floor_divide = _m.floordiv
mod = _m.floormod
power = _o.pow
maximum = _o.maximum
minimum = _o.minimum
equal = _o.equal
not_equal = _o.not_equal
greater = _o.greater
greater_equal = _o.greater_equal
less = _o.less
less_equal = _o.less_equal
logical_and = _o.logical_and
logical_or = _o.logical_or
logical_not = _o.logical_not
matmul = _o.matmul
einsum = _la.einsum
cast = _o.cast
stop_gradient = _o.stop_gradient
broadcast_to = _o.broadcast_to
expand_dims = _o.expand_dims
tile = _o.tile
zeros_like = _o.zeros_like
ones_like = _o.ones_like
relu = _nn.relu
relu6 = _nn.relu6
sigmoid = _o.sigmoid
softplus = _nn.softplus
silu = swish = _nn.silu
gelu = _nn.gelu
elu = _nn.elu
leaky_relu = _nn.leaky_relu
sort = _a.sort
argsort = _a.argsort
stack = _a.stack
norm = _a.norm
segment_sum = _m.unsorted_segment_sum


def convert_to_tensor(x, dtype=None, sparse=None):
    return _convert(x, None if dtype is None else as_dtype(dtype))


def convert_to_numpy(x):
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def negative(x):
    return -_convert(x)


def _reduce(fn):
    def reduce(x, axis=None, keepdims=False):
        return fn(x, axis=axis, keepdims=keepdims)
    reduce.__name__ = fn.__name__
    return reduce


mean = _reduce(_o.reduce_mean)
sum = _reduce(_o.reduce_sum)  # noqa: A001
prod = _reduce(_o.reduce_prod)
all = _reduce(_m.reduce_all)  # noqa: A001
any = _reduce(_m.reduce_any)  # noqa: A001
std = _reduce(_m.reduce_std)
var = _reduce(_m.reduce_variance)
logsumexp = _reduce(_m.reduce_logsumexp)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    y = _o.reduce_max(x, axis=axis, keepdims=keepdims)
    return y if initial is None else _o.maximum(y, initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    y = _o.reduce_min(x, axis=axis, keepdims=keepdims)
    return y if initial is None else _o.minimum(y, initial)


def argmax(x, axis=None, keepdims=False):
    x = _convert(x)
    if axis is None:
        x, axis = _o.reshape(x, [-1]), 0
    y = _o.cast(_o.argmax(x, axis=axis), "int32")
    return _o.expand_dims(y, axis) if keepdims else y


def argmin(x, axis=None, keepdims=False):
    x = _convert(x)
    if axis is None:
        x, axis = _o.reshape(x, [-1]), 0
    y = _o.cast(_o.argmin(x, axis=axis), "int32")
    return _o.expand_dims(y, axis) if keepdims else y


def clip(x, x_min, x_max):
    return _a.clip_by_value(x, x_min, x_max)


def where(condition, x1=None, x2=None):
    return _o.where(condition, x1, x2)


def concatenate(xs, axis=0):
    return _o.concat(list(xs), axis=axis)


def reshape(x, newshape):
    return _o.reshape(x, newshape)


def transpose(x, axes=None):
    return _o.transpose(x, axes)


def swapaxes(x, axis1, axis2):
    x = _convert(x)
    perm = list(builtins.range(len(x.shape)))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return _o.transpose(x, perm)


def squeeze(x, axis=None):
    return _o.squeeze(x, axis)


def split(x, indices_or_sections, axis=0):
    return _o.split(x, indices_or_sections, axis)


def shape(x):
    """A tuple: ints where weft knows the dim when the graph is built, scalar tensors elsewhere."""
    x = _convert(x)
    if x.shape is None:
        raise ValueError("keras.ops.shape: %s has unknown rank" % x.name)
    dyn = None
    dims = []
    for i, d in enumerate(x.shape):
        if d is None:
            dyn = _o.shape(x) if dyn is None else dyn
            dims.append(dyn[i])
        else:
            dims.append(int(d))
    return tuple(dims)


def ones(shape, dtype=None):
    return _o.ones(shape, dtype or float32)


def zeros(shape, dtype=None):
    return _o.zeros(shape, dtype or float32)


def full(shape, fill_value, dtype=None):
    return _o.cast(_o.fill(shape, fill_value), dtype or float32)


def eye(N, M=None, k=0, dtype=None):
    if k:
        raise NotImplementedError("keras.ops.eye: weft makes the main diagonal only (k=0), got k=%r" % (k,))
    return _a.eye(N, M, dtype=dtype or float32)


def arange(start, stop=None, step=1, dtype=None):
    return _a.range(start, stop, step, dtype=None if dtype is None else as_dtype(dtype))


def take(x, indices, axis=None):
    x = _convert(x)
    if axis is None:
        x, axis = _o.reshape(x, [-1]), 0
    return _o.gather(x, indices, axis=axis)


def one_hot(x, num_classes, axis=-1, dtype=None):
    return _o.one_hot(x, num_classes, axis=axis, dtype=dtype or float32)


def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return _nn.log_softmax(x, axis=axis)


def tril(x, k=0):
    return _tri(x, k, lower=True)


def triu(x, k=0):
    return _tri(x, k, lower=False)


def _tri(x, k, lower):
    """The lower (upper) triangle from diagonal k: entries with j - i <= k (j - i >= k)."""
    x = _convert(x)
    m, n = x.shape[-2], x.shape[-1]
    if m is None or n is None:
        raise ValueError("keras.ops.tril/triu need known matrix dims, got shape %s" % (x.shape,))
    i = np.arange(int(m))[:, None]
    j = np.arange(int(n))[None, :]
    keep = (j - i <= k) if lower else (j - i >= k)
    return x * _convert(keep.astype(x.dtype.as_numpy_dtype))


def pad(x, pad_width, mode="constant", constant_values=None):
    if mode != "constant":
        raise NotImplementedError("keras.ops.pad: weft pads with a constant only, got mode=%r" % (mode,))
    return _o.pad(x, pad_width, constant_values=constant_values or 0)


def top_k(x, k, sorted=True):
    return _m.top_k(x, k, sorted)


def dot(x1, x2):
    return _o.matmul(x1, x2)


def moments(x, axes, keepdims=False, synchronized=False):
    return _nn.moments(x, axes, keepdims=keepdims)


from ._ops_numpy import *  # noqa: E402,F401,F403 - cumprod, diagonal, nan_to_num, flip, ...
from ._ops_stats import *  # noqa: E402,F401,F403 - nansum, quantile, searchsorted, ...
from ._ops_nn import *  # noqa: E402,F401,F403 - cross-entropies, ctc_loss, attention, fori_loop, scan, ...
from . import activations as _act  # noqa: E402

# Keras 3's activations as ops (on graph tensors; keras/activations.py).
celu, glu, hard_tanh, hard_shrink, soft_shrink, tanh_shrink, log_sigmoid, sparsemax, squareplus, sparse_plus, \
    sparse_sigmoid, threshold, selu, softsign, hard_sigmoid, hard_silu, hard_swish = (
        _act.celu, _act.glu, _act.hard_tanh, _act.hard_shrink, _act.soft_shrink, _act.tanh_shrink, _act.log_sigmoid,
        _act.sparsemax, _act.squareplus, _act.sparse_plus, _act.sparse_sigmoid, _act.threshold, _act.selu,
        _act.softsign, _act.hard_sigmoid, _act.hard_silu, _act.hard_swish)


def _submodule(name, names, doc):
    """A view of some of this module's functions under a Keras 3 submodule name: it reads them
    from here at each access, so it sees them as installed (wrapped for KerasTensors by
    _op_layers.py after this module is imported)."""
    import sys
    import types

    class View(types.ModuleType):
        def __getattr__(self, attr):
            if attr in self.__all__:
                return getattr(sys.modules[__name__], attr)
            raise AttributeError("keras.ops.%s.%s is not in weft (it has %s)" % (name, attr, ", ".join(self.__all__)))

        def __dir__(self):
            return list(self.__all__)

    mod = View("weft.keras.ops." + name, doc)
    mod.__all__ = list(names)
    return mod


# keras.ops.nn / numpy / core / linalg / image: the same functions grouped as Keras 3 groups them.
nn = _submodule("nn", ["relu", "relu6", "sigmoid", "softplus", "silu", "swish", "gelu", "elu", "leaky_relu", "softmax",
                       "log_softmax", "celu", "glu", "hard_tanh", "hard_shrink", "soft_shrink", "tanh_shrink",
                       "log_sigmoid", "sparsemax", "squareplus", "sparse_plus", "sparse_sigmoid", "threshold", "selu",
                       "softsign", "hard_sigmoid", "hard_silu", "hard_swish", "one_hot", "multi_hot", "moments",
                       "normalize", "binary_crossentropy", "categorical_crossentropy",
                       "sparse_categorical_crossentropy"], "keras.ops.nn: activations, losses, normalization.")
core = _submodule("core", ["cond", "while_loop", "fori_loop", "map", "scan", "switch", "cast", "convert_to_tensor",
                           "convert_to_numpy", "shape", "stop_gradient", "is_tensor", "slice"],
                  "keras.ops.core: control flow and conversions.")
linalg = _submodule("linalg", ["norm", "einsum", "matmul", "trace", "diagonal", "outer", "inner", "tensordot"],
                    "keras.ops.linalg: the linear-algebra ops weft has (norm, and its products).")
numpy = _submodule("numpy", sorted(n for n, v in list(globals().items()) if not n.startswith("_") and callable(v)
                                   and getattr(v, "__module__", "") != "types"
                                   and n not in ("as_dtype", "builtins")
                                   and not isinstance(v, type)),
                   "keras.ops.numpy: the numpy-like ops.")


def _image_module():
    import types
    from .. import image as _image
    mod = types.ModuleType("weft.keras.ops.image", "keras.ops.image: resize and rgb_to_grayscale over weft.image.")

    def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False, pad_to_aspect_ratio=False,
               fill_mode="constant", fill_value=0.0, data_format=None):
        """Keras' image resize (channels-last images) through weft.image.resize."""
        if antialias or crop_to_aspect_ratio or pad_to_aspect_ratio or data_format not in (None, "channels_last"):
            raise NotImplementedError("keras.ops.image.resize: weft resizes channels-last images without antialias or "
                                      "aspect-ratio cropping / padding")
        return _image.resize(images, size, method=interpolation)

    def rgb_to_grayscale(images, data_format=None):
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("keras.ops.image.rgb_to_grayscale: channels-last images only")
        return _image.rgb_to_grayscale(images)

    mod.resize, mod.rgb_to_grayscale = resize, rgb_to_grayscale
    return mod


image = _image_module()


def __getattr__(name):
    raise AttributeError("keras.ops.%s is not in weft (weft.keras.ops has %s)"
                         % (name, ", ".join(sorted(n for n, v in globals().items() if not n.startswith("_")
                                                    and callable(v) and n not in ("as_dtype",)))))
