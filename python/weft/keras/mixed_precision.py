"""``keras.mixed_precision``: weft's Keras models compute in float32, so the float32 policy is the
only one; 'mixed_float16' and 'mixed_bfloat16' raise NotImplementedError."""

_MIXED = ("mixed_float16", "mixed_bfloat16", "float16", "bfloat16", "float64")


class Policy:
    """A dtype policy: ``Policy('float32')`` (compute and variables in float32)."""

    def __init__(self, name):
        name = getattr(name, "name", name)
        if name in _MIXED:
            raise NotImplementedError("keras.mixed_precision policy %r: weft's Keras models compute in float32 only "
                                      "(leave the policy at 'float32')" % (name,))
        if name != "float32":
            raise ValueError("keras.mixed_precision.Policy: unknown policy %r ('float32', 'mixed_float16', "
                             "'mixed_bfloat16')" % (name,))
        self.name = name

    compute_dtype = property(lambda self: "float32")
    variable_dtype = property(lambda self: "float32")

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __repr__(self):
        return '<DTypePolicy "%s">' % self.name


_global = [Policy("float32")]


def set_global_policy(policy):
    """Accepts 'float32' (or None, which means it); mixed policies raise NotImplementedError."""
    _global[0] = Policy("float32" if policy is None else policy)


def global_policy():
    return _global[0]


def __getattr__(name):
    if name == "LossScaleOptimizer":  # keras.optimizers' pass-through (float32 needs no loss scaling)
        from .optimizers import LossScaleOptimizer
        return LossScaleOptimizer
    raise AttributeError("module 'weft.keras.mixed_precision' has no attribute %r" % (name,))


set_policy = set_global_policy  # TF 2.3's experimental names
DTypePolicy = Policy

__all__ = ["Policy", "DTypePolicy", "set_global_policy", "global_policy", "LossScaleOptimizer"]
