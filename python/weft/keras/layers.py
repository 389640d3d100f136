"""Keras layers. Each is the C++ layer (train/layer.h) made by its factory function; the
arguments are Keras' (``help(weft.keras.layers.Conv2D)`` lists them).

    layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1))
    layers.Dense(10)(layers.Flatten()(x))          # functional use on a KerasTensor
"""
from .. import _weft
from ._custom import Layer  # noqa: F401  (the base of custom layers: _custom.py)

_L = _weft.keras.layers

Dense = _L.Dense
Conv2D = _L.Conv2D
MaxPooling2D = _L.MaxPooling2D
MaxPool2D = _L.MaxPool2D
AveragePooling2D = _L.AveragePooling2D
AvgPool2D = _L.AvgPool2D
GlobalAveragePooling2D = _L.GlobalAveragePooling2D
Flatten = _L.Flatten
Dropout = _L.Dropout
BatchNormalization = _L.BatchNormalization
Activation = _L.Activation
ReLU = _L.ReLU
LeakyReLU = _L.LeakyReLU
ELU = _L.ELU
PReLU = _L.PReLU
RepeatVector = _L.RepeatVector
Identity = _L.Identity
Softmax = _L.Softmax
Add = _L.Add
Multiply = _L.Multiply
Average = _L.Average
Subtract = _L.Subtract
Maximum = _L.Maximum
Minimum = _L.Minimum
Concatenate = _L.Concatenate
Reshape = _L.Reshape
Permute = _L.Permute
Rescaling = _L.Rescaling
Normalization = _L.Normalization
LayerNormalization = _L.LayerNormalization
Embedding = _L.Embedding
MultiHeadAttention = _L.MultiHeadAttention
ZeroPadding1D = _L.ZeroPadding1D
ZeroPadding2D = _L.ZeroPadding2D
Cropping1D = _L.Cropping1D
Cropping2D = _L.Cropping2D
UpSampling1D = _L.UpSampling1D
UpSampling2D = _L.UpSampling2D
GlobalMaxPooling2D = _L.GlobalMaxPooling2D
GlobalMaxPool2D = _L.GlobalMaxPool2D
GlobalAvgPool2D = _L.GlobalAvgPool2D
Conv1D = _L.Conv1D
Conv2DTranspose = _L.Conv2DTranspose
DepthwiseConv2D = _L.DepthwiseConv2D
SeparableConv2D = _L.SeparableConv2D
MaxPooling1D = _L.MaxPooling1D
MaxPool1D = _L.MaxPool1D
AveragePooling1D = _L.AveragePooling1D
AvgPool1D = _L.AvgPool1D
GlobalAveragePooling1D = _L.GlobalAveragePooling1D
GlobalAvgPool1D = _L.GlobalAvgPool1D
GlobalMaxPooling1D = _L.GlobalMaxPooling1D
GlobalMaxPool1D = _L.GlobalMaxPool1D
GaussianNoise = _L.GaussianNoise
GaussianDropout = _L.GaussianDropout
SpatialDropout1D = _L.SpatialDropout1D
SpatialDropout2D = _L.SpatialDropout2D
AlphaDropout = _L.AlphaDropout
CenterCrop = _L.CenterCrop
Resizing = _L.Resizing
RandomFlip = _L.RandomFlip
RandomContrast = _L.RandomContrast
RandomBrightness = _L.RandomBrightness
RandomCrop = _L.RandomCrop
RandomRotation = _L.RandomRotation
RandomZoom = _L.RandomZoom
RandomTranslation = _L.RandomTranslation
LSTM = _L.LSTM
GRU = _L.GRU
SimpleRNN = _L.SimpleRNN
Bidirectional = _L.Bidirectional
TimeDistributed = _L.TimeDistributed
Masking = _L.Masking


def Lambda(function, output_shape=None, mask=None, arguments=None, name=None, input_shape=None, **kwargs):
    """Wraps ``function`` as a layer: ``layers.Lambda(lambda x: tf.square(x) * 2)``.

    As Keras traces it, weft calls ``function(x, **arguments)`` once, on a symbolic float32 tensor
    of the input's shape (batch dim None), when the layer is first called; the ops it adds (weft
    ops, ``tf.math``, ``keras.activations``) become the layer's computation, in training and at
    inference. numpy code, Python control flow on the tensor's values and variables cannot be
    traced: such a function raises TypeError naming what it did. ``output_shape`` is accepted
    and not needed (the ops' shapes give it)."""
    if mask is not None:
        raise NotImplementedError("Lambda: masks are not supported by weft (mask=%r)" % (mask,))
    if kwargs:
        raise TypeError("Lambda got unexpected arguments: %s" % ", ".join(sorted(kwargs)))
    if not callable(function):
        raise TypeError("Lambda needs a function, got %r" % (function,))
    arguments = dict(arguments or {})
    what = "Lambda(%s)" % (getattr(function, "__qualname__", None) or repr(function))

    def trace(shape):
        from .. import framework as _fw, ops as _ops
        from ..data import _trace
        g = _fw.Graph()
        with g.as_default():
            x = _fw.placeholder("float32", shape, name="lambda_input")
            try:
                with _trace._guarded():
                    y = function(x, **arguments)
            except _trace._Untraceable as e:
                raise TypeError("%s: cannot trace the function: %s. A Lambda's function is traced once over a "
                                "symbolic tensor (shape %s): use weft ops (tf.math, tf.nn, keras.activations) on it, "
                                "not numpy" % (what, e.construct, (None,) + tuple(shape[1:]))) from None
            except Exception as e:
                e.add_note("(while tracing %s over a symbolic float32 tensor of shape %s)"
                           % (what, (None,) + tuple(shape[1:])))
                raise
            if isinstance(y, (list, tuple)) or y is None or (not isinstance(y, _fw.Tensor) and not hasattr(y, "dtype")):
                raise TypeError("%s must return one tensor, got %r" % (what, y))
            if not isinstance(y, _fw.Tensor) or y.graph is not g:
                y = _fw.constant(y) if not isinstance(y, _fw.Tensor) else y
                if y.graph is not g:
                    raise ValueError("%s returned a tensor of another graph (made outside the function?)" % what)
            y = _ops.raw_ops.Identity(y, name="lambda_output")
        return g, x, y

    return _L._Lambda(trace, name=name, input_shape=input_shape)


ActivityRegularization = _L.ActivityRegularization
from ._text import TextVectorization, StringLookup, IntegerLookup  # noqa: E402  (host preprocessing)


# Recurrent cells (callable on one step) and keras.layers.RNN over any cell: _cells.py.
from ._cells import LSTMCell, GRUCell, SimpleRNNCell, StackedRNNCells, RNN  # noqa: E402


# Keras' functional forms of the merge layers: layers.add([a, b]) is layers.Add()([a, b]).
# The factory is looked up at the call: record_module (below) wraps the module's Add etc. so a saved
# model's config knows the layer, and the C++ class captured here would bypass that.
def _functional(layer, name, what):
    def merge(inputs, **kwargs):
        return globals()[layer.__name__](**kwargs)(inputs)
    merge.__name__ = merge.__qualname__ = name
    merge.__doc__ = "%s of a list of KerasTensors (``%s(**kwargs)(inputs)``)." % (what, layer.__name__)
    return merge


add = _functional(Add, "add", "Element-wise sum")
subtract = _functional(Subtract, "subtract", "inputs[0] - inputs[1]")
multiply = _functional(Multiply, "multiply", "Element-wise product")
average = _functional(Average, "average", "Element-wise mean")
maximum = _functional(Maximum, "maximum", "Element-wise max")
minimum = _functional(Minimum, "minimum", "Element-wise min")


def concatenate(inputs, axis=-1, **kwargs):
    """Joins a list of KerasTensors along axis (``Concatenate(axis, **kwargs)(inputs)``)."""
    return Concatenate(axis=axis, **kwargs)(inputs)



def _per_example_shape(shape, batch_shape, what):
    if batch_shape is not None:
        return tuple(batch_shape)[1:]
    if shape is None:
        raise ValueError("%s needs shape=(...) (the per-example shape, without the batch dim)" % what)
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _check_dtype(dtype, what):
    """The input dtype's name: float32 (the default), or int32 / int64 for ids (Embedding)."""
    if dtype is None:
        return "float32"
    name = getattr(dtype, "name", None) or str(dtype)
    name = name.replace("weft.", "").replace("tf.", "")
    if name in ("string", "str", "object"):
        raise ValueError("%s: dtype=%s: weft's graphs carry no strings. Turn text into ids on the host first "
                         "(layers.TextVectorization / StringLookup on a list of str) and use dtype='int32'" % (what, dtype))
    if name not in ("float32", "int32", "int64"):
        raise ValueError("%s: weft's Keras models take float32, int32 or int64 inputs, got dtype=%s" % (what, dtype))
    return name


def Input(shape=None, batch_size=None, dtype=None, sparse=None, batch_shape=None, name=None, tensor=None):
    """A symbolic model input of per-example ``shape`` (the batch dim, None, is added in front):
    ``x = keras.Input(shape=(28, 28, 1))`` starts a functional model, or is the first entry of a
    ``Sequential([...])``. batch_size is accepted and ignored (weft's batch dim is always free).
    dtype: float32 (default), or int32 / int64 for token ids: an Embedding takes them as they are,
    any other layer casts them to float32 (as Keras' layers do); fit / predict convert the arrays."""
    if str(getattr(dtype, "name", None) or dtype).replace("tf.", "").replace("weft.", "") == "string":
        from ._text import StringInput  # text for a host text layer (TextVectorization) to take
        return StringInput(_per_example_shape(shape, batch_shape, "Input"), name)
    dtype = _check_dtype(dtype, "Input")
    if sparse or tensor is not None:
        raise ValueError("Input: sparse inputs and tensor= are not supported by weft")
    dims = _per_example_shape(shape, batch_shape, "Input")
    return _weft.keras.Input(shape=dims, name=name or "input", dtype=dtype)


class InputLayer:
    """Declares a Sequential model's per-example input shape: ``InputLayer(shape=(28, 28, 1))``
    (tf.keras 2: ``input_shape=``) as the first entry of the layer list (it adds no computation)."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None, sparse=None, name=None,
                 shape=None, batch_shape=None, **kwargs):
        self._dtype = _check_dtype(dtype, "InputLayer")
        if input_tensor is not None or sparse:
            raise ValueError("InputLayer: sparse inputs and input_tensor= are not supported by weft")
        if kwargs:
            raise TypeError("InputLayer got unexpected arguments: %s" % ", ".join(sorted(kwargs)))
        self._input_shape = _per_example_shape(shape if input_shape is None else input_shape, batch_shape,
                                               "InputLayer")
        self.name = name

    def __repr__(self):
        return "<weft.keras.layers.InputLayer input_shape=%s>" % (self._input_shape,)


__all__ = ["Layer", "Input", "InputLayer", "Dense", "Conv1D", "Conv2D", "Conv2DTranspose", "DepthwiseConv2D",
           "SeparableConv2D", "MaxPooling1D", "MaxPool1D", "MaxPooling2D", "MaxPool2D",
           "AveragePooling1D", "AvgPool1D", "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling1D",
           "GlobalAvgPool1D", "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPooling1D",
           "GlobalMaxPool1D", "GlobalMaxPooling2D", "GlobalMaxPool2D", "Flatten", "Reshape", "Permute",
           "Rescaling", "Normalization", "LayerNormalization", "Embedding", "MultiHeadAttention", "ZeroPadding1D", "ZeroPadding2D",
           "Cropping1D", "Cropping2D", "UpSampling1D", "UpSampling2D", "Dropout", "BatchNormalization",
           "Activation", "ReLU", "LeakyReLU", "ELU", "PReLU", "RepeatVector", "Identity", "Softmax",
           "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "add",
           "subtract", "multiply", "average", "maximum", "minimum", "concatenate", "GaussianNoise",
           "GaussianDropout", "SpatialDropout1D", "SpatialDropout2D", "AlphaDropout", "CenterCrop", "Lambda",
           "ActivityRegularization", "Resizing", "RandomFlip", "RandomContrast",
           "RandomBrightness", "RandomCrop", "RandomRotation", "RandomZoom", "RandomTranslation",
           "LSTM", "GRU", "SimpleRNN", "Bidirectional", "TimeDistributed", "LSTMCell", "GRUCell",
           "SimpleRNNCell", "StackedRNNCells", "RNN", "Masking", "TextVectorization", "StringLookup", "IntegerLookup"]

# TF 2.1-2.5's names: layers.experimental.preprocessing.RandomFlip etc. (the same layers, looked
# up on access, so they are the factories record_module below wraps).
import types as _types  # noqa: E402
experimental = _types.ModuleType("weft.keras.layers.experimental", "TF 2.x's experimental layer names.")
experimental.preprocessing = _types.ModuleType("weft.keras.layers.experimental.preprocessing",
                                               "TF 2.x's preprocessing layers: aliases of weft.keras.layers'.")
_PREPROCESSING = ("Rescaling", "Normalization", "TextVectorization", "StringLookup", "IntegerLookup", "CenterCrop", "Resizing", "RandomFlip", "RandomContrast",
                  "RandomBrightness", "RandomCrop", "RandomRotation", "RandomZoom", "RandomTranslation")


def _preprocessing_layer(name):
    if name in _PREPROCESSING:
        return globals()[name]
    raise AttributeError("weft.keras.layers.experimental.preprocessing has no %r (it has %s)"
                         % (name, ", ".join(_PREPROCESSING)))


experimental.preprocessing.__getattr__ = _preprocessing_layer

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)

# Layers written in Python as custom layers (their classes are their configs: not recorded above).
from ._attention import (Attention, AdditiveAttention, Dot, dot, UnitNormalization,  # noqa: E402,F401
                         GroupNormalization, ThresholdedReLU)
__all__ += ["Attention", "AdditiveAttention", "Dot", "dot", "UnitNormalization", "GroupNormalization",
            "ThresholdedReLU"]
# Volumetric layers and Conv1DTranspose as custom layers over weft.nn's composites: _layers_3d.py.
from ._layers_3d import (Conv3D, MaxPooling3D, MaxPool3D, AveragePooling3D, AvgPool3D,  # noqa: E402,F401
                         GlobalMaxPooling3D, GlobalMaxPool3D, GlobalAveragePooling3D, GlobalAvgPool3D, UpSampling3D,
                         ZeroPadding3D, Conv1DTranspose)
__all__ += ["Conv3D", "MaxPooling3D", "MaxPool3D", "AveragePooling3D", "AvgPool3D", "GlobalMaxPooling3D",
            "GlobalMaxPool3D", "GlobalAveragePooling3D", "GlobalAvgPool3D", "UpSampling3D", "ZeroPadding3D",
            "Conv1DTranspose"]
from ._discretize import CategoryEncoding, Discretization  # noqa: E402,F401
__all__ += ["CategoryEncoding", "Discretization"]
from ._hashing import Hashing  # noqa: E402,F401  (host preprocessing, TF's FarmHash bins)
__all__ += ["Hashing"]
