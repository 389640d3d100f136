"""Keras weight constraints (train/layer.h: Constraint): ``Dense(64, kernel_constraint=MaxNorm(3))``.
The training step applies the projection to the weight after each optimizer update, as Keras does.
Norms are taken over ``axis`` (default 0: per output unit of a Dense kernel; for a Conv2D kernel
Keras recommends ``axis=[0, 1, 2]``)."""
from .. import _weft

_C = _weft.keras.constraints
Constraint = _weft.keras.Constraint
MaxNorm, MinMaxNorm, NonNeg, UnitNorm = _C.MaxNorm, _C.MinMaxNorm, _C.NonNeg, _C.UnitNorm
__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm"]

from . import _config  # noqa: E402
_config.record_module(globals(), __all__)

max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm
__all__ += ["max_norm", "min_max_norm", "non_neg", "unit_norm"]
