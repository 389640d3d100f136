"""Keras losses (train/losses.h): objects for ``compile(loss=...)``; strings work too."""
from .. import _weft

Loss = _weft.keras.Loss
SparseCategoricalCrossentropy = _weft.keras.losses.SparseCategoricalCrossentropy
CategoricalCrossentropy = _weft.keras.losses.CategoricalCrossentropy
MeanSquaredError = _weft.keras.losses.MeanSquaredError


def get(identifier):
    """A Loss from a Loss or a Keras name ('sparse_categorical_crossentropy', 'mse', ...)."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        return _weft.keras.losses.get(identifier)
    raise TypeError("loss must be a weft.keras.losses object or a name, got %r" % (identifier,))


__all__ = ["Loss", "SparseCategoricalCrossentropy", "CategoricalCrossentropy", "MeanSquaredError", "get"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)
