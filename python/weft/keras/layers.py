"""Keras layers. Each is the C++ layer (train/layer.h) made by its factory function; the
arguments are Keras' (``help(weft.keras.layers.Conv2D)`` lists them).

    layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1))
    layers.Dense(10)(layers.Flatten()(x))          # functional use on a KerasTensor
"""
from .. import _weft

_L = _weft.keras.layers

Layer = _weft.keras.Layer
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
Add = _L.Add
Input = _weft.keras.Input


class InputLayer:
    """Declares a Sequential model's per-example input shape: ``InputLayer(input_shape=(28, 28, 1))``
    as the first entry of the layer list (it adds no computation)."""

    def __init__(self, input_shape=None, name=None, shape=None):
        shape = input_shape if input_shape is not None else shape
        if shape is None:
            raise ValueError("InputLayer needs input_shape=(...) (the per-example shape, without the batch dim)")
        self._input_shape = tuple(shape)
        self.name = name

    def __repr__(self):
        return "<weft.keras.layers.InputLayer input_shape=%s>" % (self._input_shape,)


__all__ = ["Layer", "Dense", "Conv2D", "MaxPooling2D", "MaxPool2D", "AveragePooling2D", "AvgPool2D",
           "GlobalAveragePooling2D", "Flatten", "Dropout", "BatchNormalization", "Activation", "ReLU", "Add",
           "Input", "InputLayer"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)
