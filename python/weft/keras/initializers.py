"""Keras weight initializers (train/initializers.h); layers also take their names ('he_normal')."""
from .. import _weft

_I = _weft.keras.initializers
Initializer = _weft.keras.Initializer
Zeros, Ones, Constant = _I.Zeros, _I.Ones, _I.Constant
GlorotUniform, GlorotNormal, HeNormal, HeUniform = _I.GlorotUniform, _I.GlorotNormal, _I.HeNormal, _I.HeUniform
__all__ = ["Initializer", "Zeros", "Ones", "Constant", "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)
