"""Keras weight initializers (train/initializers.h); layers also take their names ('he_normal').

Classes and their lowercase function aliases take Keras' arguments and defaults; ``seed`` (an int)
fixes the draw, None takes one from the graph's seed (``weft.random.set_seed``) when set."""
from .. import _weft

_I = _weft.keras.initializers
Initializer = _weft.keras.Initializer


def _call(self, shape, dtype=None, **kwargs):
    """``init(shape, dtype)``: the initial value as a tensor of the default graph, as calling a
    Keras / TF2 initializer gives (``tf.Variable(w_init(shape=(3, 2)))`` in tf.Module code). Float
    dtypes only (weft's initializers draw float32; float64 is a cast)."""
    from .. import framework as _fw, ops as _ops
    shape = [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else shape)]
    value = self._value(_fw.get_default_graph(), shape)
    want = _fw.as_dtype(dtype) if dtype is not None else _fw.float32
    if want not in (_fw.float32, _fw.float64):
        raise ValueError("initializer %r: weft draws floats; dtype %s is not supported" % (self, want))
    return value if want == _fw.float32 else _ops.cast(value, want)


Initializer.__call__ = _call
Zeros, Ones, Constant = _I.Zeros, _I.Ones, _I.Constant
GlorotUniform, GlorotNormal, HeNormal, HeUniform = _I.GlorotUniform, _I.GlorotNormal, _I.HeNormal, _I.HeUniform
LecunNormal, LecunUniform, VarianceScaling = _I.LecunNormal, _I.LecunUniform, _I.VarianceScaling
RandomNormal, RandomUniform, TruncatedNormal = _I.RandomNormal, _I.RandomUniform, _I.TruncatedNormal
Orthogonal, Identity = _I.Orthogonal, _I.Identity
__all__ = ["Initializer", "Zeros", "Ones", "Constant", "GlorotUniform", "GlorotNormal", "HeNormal", "HeUniform",
           "LecunNormal", "LecunUniform", "VarianceScaling", "RandomNormal", "RandomUniform", "TruncatedNormal",
           "Orthogonal", "Identity"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)

# Keras' function-style aliases (the same recorded factories).
zeros, ones, constant = Zeros, Ones, Constant
glorot_uniform, glorot_normal, he_normal, he_uniform = GlorotUniform, GlorotNormal, HeNormal, HeUniform
lecun_normal, lecun_uniform, variance_scaling = LecunNormal, LecunUniform, VarianceScaling
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
orthogonal, identity = Orthogonal, Identity
IdentityInitializer, OrthogonalInitializer = Identity, Orthogonal


def get(identifier):
    """An Initializer from an Initializer, a name ('he_normal', 'HeNormal') or None."""
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        return _I.get(identifier)
    raise TypeError("Could not interpret initializer identifier: %r (weft takes a name or a "
                    "weft.keras.initializers object; custom initializer functions are not supported)" % (identifier,))


def serialize(initializer):
    """An initializer as Keras config data ({"module", "class_name", "config"})."""
    from . import _config
    return _config.serialize(initializer, "initializer")


def deserialize(config, custom_objects=None):
    """The initializer of serialize's data, or of a Keras name."""
    from . import _config
    if isinstance(config, str):
        return get(config)
    return _config.deserialize_in(__name__, config, custom_objects)


__all__ += ["zeros", "ones", "constant", "glorot_uniform", "glorot_normal", "he_normal", "he_uniform",
            "lecun_normal", "lecun_uniform", "variance_scaling", "random_normal", "random_uniform",
            "truncated_normal", "orthogonal", "identity", "get", "serialize", "deserialize"]
