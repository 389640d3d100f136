"""Keras weight regularizers: ``Dense(..., kernel_regularizer=regularizers.l2(1e-4),
bias_regularizer=regularizers.L1(1e-5))``. Each adds its penalty on the weight to the training
loss (and to evaluate's loss, as Keras): L1 ``l1 * sum(|w|)``, L2 ``l2 * sum(w**2)``, L1L2 both."""


class Regularizer:
    """Base of the regularizers (weft reads their ``l1`` / ``l2``; custom subclasses with a
    ``__call__`` of their own are not supported: add such a term to a subclassed model's loss)."""

    def get_config(self):
        return dict(self.__dict__)

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __call__(self, x):
        import numpy as np
        x = np.asarray(x, np.float32)
        return (getattr(self, "l1", 0.0) * np.abs(x).sum() + getattr(self, "l2", 0.0) * np.square(x).sum())

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join("%s=%g" % kv for kv in self.__dict__.items()))


def _check(value, what):
    value = float(value)
    if not value >= 0.0:
        raise ValueError("Value for argument `%s` must be >= 0, received %s=%r" % (what, what, value))
    return value


class L1L2(Regularizer):
    """Adds ``l1 * sum(|w|) + l2 * sum(w ** 2)`` to the loss."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _check(l1, "l1")
        self.l2 = _check(l2, "l2")


class L1(Regularizer):
    """Adds ``l1 * sum(|w|)`` to the loss."""

    def __init__(self, l1=0.01):
        self.l1 = _check(l1, "l1")


class L2(Regularizer):
    """Adds ``l2 * sum(w ** 2)`` to the loss."""

    def __init__(self, l2=0.01):
        self.l2 = _check(l2, "l2")


def l1(l1=0.01):
    return L1(l1)


def l2(l2=0.01):
    return L2(l2)


def l1_l2(l1=0.01, l2=0.01):
    """Keras' l1_l2: both penalties (defaults 0.01 each, unlike the L1L2 class's 0.0)."""
    return L1L2(l1, l2)


def get(identifier):
    if identifier is None or isinstance(identifier, Regularizer):
        return identifier
    if isinstance(identifier, str) and identifier in ("l1", "l2", "l1_l2"):
        return globals()[identifier]()
    if isinstance(identifier, dict) and identifier.get("class_name") in ("L1", "L2", "L1L2"):
        return globals()[identifier["class_name"]](**identifier.get("config", {}))  # a layer config's entry
    raise ValueError("Could not interpret regularizer identifier: %r" % (identifier,))


def serialize(regularizer):
    """An regularizer as Keras config data ({"module", "class_name", "config"})."""
    from . import _config
    return _config.serialize(regularizer, "regularizer")


def deserialize(config, custom_objects=None):
    """The regularizer of serialize's data, or of a Keras name."""
    from . import _config
    if isinstance(config, str):
        return get(config)
    return _config.deserialize_in(__name__, config, custom_objects)


__all__ = ["Regularizer", "L1", "L2", "L1L2", "l1", "l2", "l1_l2", "get", "serialize", "deserialize"]
