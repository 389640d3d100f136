"""Keras optimizers (train/optimizers.h) and learning-rate schedules (``optimizers.schedules``)."""
import types

from .. import _weft

Optimizer = _weft.keras.Optimizer
SGD = _weft.keras.optimizers.SGD
Adam = _weft.keras.optimizers.Adam

schedules = types.ModuleType("weft.keras.optimizers.schedules", "Learning rate as a function of the step.")
schedules.LearningRateSchedule = _weft.keras.LearningRateSchedule
schedules.Constant = _weft.keras.schedules.Constant
schedules.StepDecay = _weft.keras.schedules.StepDecay
schedules.CosineDecay = _weft.keras.schedules.CosineDecay
schedules.LinearWarmup = _weft.keras.schedules.LinearWarmup


def get(identifier):
    """An Optimizer from an Optimizer or a name ('sgd', 'adam', 'momentum') with its default rate."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, str):
        return _weft.keras.optimizers.get(identifier.lower())
    raise TypeError("optimizer must be a weft.keras.optimizers object or a name, got %r" % (identifier,))


__all__ = ["Optimizer", "SGD", "Adam", "schedules", "get"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)
_config.record_module(vars(schedules), [n for n in vars(schedules) if not n.startswith("_")],
                      module="weft.keras.optimizers", prefix="schedules.")
