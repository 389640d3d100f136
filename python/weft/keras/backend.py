"""``keras.backend`` (``K``): the session-level helpers Keras scripts call.

weft computes in float32 with Keras' fuzz factor 1e-7 and channels-last images; the setters accept
those values and refuse others with NotImplementedError (weft's layers and losses do not change
with them). Layer names need no reset: weft names a model's unnamed layers within that model.
"""
import numpy as np

from .. import framework as _fw

_EPSILON = 1e-7  # the clip of probabilities in weft's losses (train/losses.cc kEpsilon)


def backend():
    """'tensorflow': weft provides TensorFlow's Keras API."""
    return "tensorflow"


def clear_session(free_memory=True):
    """Starts over as TensorFlow's clear_session does: a new, empty default graph (weft.Graph), so
    placeholders, variables and ops built before are no longer in it. Models already made keep
    working (each holds its own graph)."""
    _fw.reset_default_graph()


def epsilon():
    """The fuzz factor of weft's losses and metrics: 1e-7, as Keras' default."""
    return _EPSILON


def set_epsilon(value):
    if float(value) != _EPSILON:
        raise NotImplementedError("keras.backend.set_epsilon(%r): weft's losses clip with Keras' default 1e-7, which "
                                  "cannot be changed; layers and optimizers take their own epsilon= argument" % (value,))


def floatx():
    """'float32': weft's Keras models compute and keep their weights in float32."""
    return "float32"


def set_floatx(value):
    if str(value) != "float32":
        raise NotImplementedError("keras.backend.set_floatx(%r): weft's Keras models compute in float32 only (cast "
                                  "inputs to float32; mixed precision is not supported either)" % (value,))


def image_data_format():
    """'channels_last': images are [batch, height, width, channels]."""
    return "channels_last"


def set_image_data_format(data_format):
    if data_format != "channels_last":
        if data_format != "channels_first":
            raise ValueError("set_image_data_format: the data format must be 'channels_last' or 'channels_first', "
                             "got %r" % (data_format,))
        raise NotImplementedError("keras.backend.set_image_data_format('channels_first'): weft's default is "
                                  "'channels_last'; give data_format='channels_first' to the layers that take it, or "
                                  "transpose the images to [batch, height, width, channels]")


def int_shape(x):
    """The shape of ``x`` as a tuple of ints, None where unknown (a KerasTensor's batch dim)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        shape = np.shape(x)
    return tuple(None if d is None or (isinstance(d, int) and d < 0) else int(d) for d in shape)


def cast(x, dtype):
    """``x`` as ``dtype``: a graph tensor through weft.cast, anything else as a numpy array."""
    if isinstance(x, (_fw.Tensor, _fw.Variable)):
        from .. import ops
        return ops.cast(x, dtype)
    return np.asarray(x).astype(_fw.as_dtype(dtype).as_numpy_dtype)


def get_value(x):
    """The value of ``x`` as numpy: an optimizer's learning_rate or iterations, a number, an array,
    or anything with ``.numpy()``. A graph tensor has no value outside a Session (TypeError)."""
    if isinstance(x, (_fw.Tensor, _fw.Variable)):
        raise TypeError("keras.backend.get_value(%r): a graph tensor has a value only when a Session runs it "
                        "(session.run(x)); weights of a Keras model are in model.get_weights()" % (x,))
    if hasattr(x, "numpy"):
        return np.asarray(x.numpy())
    return np.asarray(x)


def set_value(x, value):
    """Sets ``x`` to ``value``: an optimizer's learning rate (``K.set_value(model.optimizer.learning_rate,
    1e-4)``; ``model.optimizer.lr`` too) or a writable numpy array of the same shape."""
    if hasattr(x, "assign") and not isinstance(x, (_fw.Tensor, _fw.Variable)):
        x.assign(value)
        return
    if isinstance(x, np.ndarray) and x.flags.writeable:
        value = np.asarray(value)
        if value.shape != x.shape and value.size != 1:
            raise ValueError("keras.backend.set_value: value of shape %s for an array of shape %s" %
                             (value.shape, x.shape))
        x[...] = value
        return
    raise TypeError("keras.backend.set_value: cannot set %r; it takes an optimizer's learning_rate (or a writable "
                    "numpy array); set a model's weights with model.set_weights / layer.set_weights" % (x,))


from ._backend_ops import *  # noqa: E402,F401,F403 - K.mean, K.square, ... (tensor functions)
from ._backend_ops import __all__ as _ops_all  # noqa: E402

__all__ = _ops_all + ["backend", "clear_session", "epsilon", "set_epsilon", "floatx", "set_floatx", "image_data_format",
           "set_image_data_format", "int_shape", "cast", "get_value", "set_value"]
