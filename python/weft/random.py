"""``weft.random``: the global random seed, as ``tf.random``.

``set_seed(s)`` makes what follows reproducible, as TensorFlow promises for a fixed seed: the
default graph's seed becomes ``s`` (random ops and variable initializers built in it derive their
seeds from it), and Keras models compiled afterwards get graph seeds derived from ``s`` and the
order in which they are compiled, so re-running a program gives the same initial weights, the
same dropout masks and the same training, while two models in one program still differ (as in TF).
"""
import random as _py_random
import types as _types

from . import framework as _framework
from . import ops as _ops
from .framework import convert_to_tensor as _convert, float32 as _float32, int64 as _int64
from .ops import random_normal as normal, random_uniform as uniform, truncated_normal  # noqa: F401  (tf.random.*)
from ._sampled_losses import log_uniform_candidate_sampler  # noqa: F401,E402
from ._random_generator import Generator, get_global_generator, set_global_generator  # noqa: F401
from ._stateless_random import (gumbel_argmax, stateless_binomial, stateless_categorical,  # noqa: F401
                                stateless_fold_in, stateless_normal, stateless_split, stateless_truncated_normal,
                                stateless_uniform)

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
    def uniform_like(t):
        return _ops.raw_ops.RandomUniformLike(t, seed=int(seed or 0))
    return _ops.identity(gumbel_argmax(logits, num_samples, dtype, uniform_like, "weft.random.categorical"), name=name)


# tf.random.experimental: the generator and the seed functions, also at tf.random (as TF exports them).
experimental = _types.SimpleNamespace(
    Generator=Generator, get_global_generator=get_global_generator, set_global_generator=set_global_generator,
    stateless_split=stateless_split, stateless_fold_in=stateless_fold_in)

__all__ = ["set_seed", "get_global_seed", "normal", "uniform", "truncated_normal", "shuffle", "categorical",
           "stateless_uniform", "stateless_normal", "stateless_truncated_normal", "stateless_categorical",
           "stateless_binomial", "log_uniform_candidate_sampler", "Generator", "get_global_generator",
           "set_global_generator", "experimental"]
