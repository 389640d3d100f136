"""``weft.random``: the global random seed, as ``tf.random``.

``set_seed(s)`` makes what follows reproducible, as TensorFlow promises for a fixed seed: the
default graph's seed becomes ``s`` (random ops and variable initializers built in it derive their
seeds from it), and Keras models compiled afterwards get graph seeds derived from ``s`` and the
order in which they are compiled, so re-running a program gives the same initial weights, the
same dropout masks and the same training, while two models in one program still differ (as in TF).
"""
import random as _py_random

from . import framework as _framework
from . import ops as _ops
from .framework import convert_to_tensor as _convert, float32 as _float32, int64 as _int64
from .ops import random_normal as normal, random_uniform as uniform, truncated_normal  # noqa: F401  (tf.random.*)

_state = {"seed": None, "models": 0}


def set_seed(seed):
    """Sets the global random seed (an int); see the module docstring."""
    seed = int(seed)
    _state["seed"], _state["models"] = seed, 0
    _framework.get_default_graph().seed = seed


def get_global_seed():
    """The seed set by set_seed, or None."""
    return _state["seed"]


def next_model_seed():
    """The graph seed for the next Keras model compiled without an explicit seed: 0 (not seeded)
    without set_seed; else a positive seed from the global seed and how many models came before."""
    if _state["seed"] is None:
        return 0
    _state["models"] += 1
    rng = _py_random.Random(_state["seed"] * 1000003 + _state["models"])
    return rng.randrange(1, 2 ** 62)


def shuffle(value, seed=None, name=None):
    """``value`` with its slices along dim 0 in a random order (a new order each run): the order
    of uniform draws, one per slice, sorted."""
    from .array_ops import range as _range
    value = _convert(value)
    n = _ops.shape(value, out_type=_int64)[0]
    keys = _ops.raw_ops.RandomUniformLike(_ops.cast(_range(n), _float32), seed=int(seed or 0))
    order = _ops.raw_ops.TopK(keys, k=-1)[1]
    return _ops.gather(value, order, axis=0, name=name)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """[batch, num_samples] class indices drawn from the unnormalized log-probabilities ``logits``
    [batch, classes] (the Gumbel-max trick: argmax of logits - log(-log(U)))."""
    logits = _convert(logits)
    if logits.shape is None or len(logits.shape) != 2:
        raise ValueError("weft.random.categorical: logits must be [batch, classes], got shape %s" % (logits.shape,))
    if logits.dtype not in (_ops.float32, _ops.float64):
        logits = _ops.cast(logits, _float32)
    tiled = _ops.tile(_ops.expand_dims(logits, 1), [1, int(num_samples), 1])
    u = _ops.raw_ops.RandomUniformLike(tiled, seed=int(seed or 0))
    # u in [0, 1): u = 0 gives a -inf key, never drawn (a probability-zero event anyway).
    gumbel = -_ops.log(-_ops.log(u))
    return _ops.argmax(tiled + gumbel, axis=2, output_type=dtype or _int64, name=name)


__all__ = ["set_seed", "get_global_seed", "normal", "uniform", "truncated_normal", "shuffle", "categorical"]
