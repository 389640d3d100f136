"""``tf.config.optimizer``: graph-optimizer switches. weft has no XLA JIT, so ``set_jit`` is
remembered and changes nothing (graphs run on weft's executor either way); the experimental
options map to nothing either and are remembered for ``get_experimental_options``."""
from ._state import defaults as _defaults


def set_jit(enabled):
    if enabled not in (True, False, "autoclustering"):
        raise ValueError("set_jit: enabled must be True, False or 'autoclustering', got %r" % (enabled,))
    _defaults["jit"] = enabled


def get_jit():
    return _defaults.get("jit", False)


def set_experimental_options(options):
    if not isinstance(options, dict):
        raise TypeError("set_experimental_options takes a dict of {option: value}, got %r" % (options,))
    _defaults.setdefault("optimizer_options", {}).update(options)


def get_experimental_options():
    return dict(_defaults.get("optimizer_options", {}))


__all__ = ["set_jit", "get_jit", "set_experimental_options", "get_experimental_options"]
