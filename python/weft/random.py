"""``weft.random``: the global random seed, as ``tf.random``.

``set_seed(s)`` makes what follows reproducible, as TensorFlow promises for a fixed seed: the
default graph's seed becomes ``s`` (random ops and variable initializers built in it derive their
seeds from it), and Keras models compiled afterwards get graph seeds derived from ``s`` and the
order in which they are compiled, so re-running a program gives the same initial weights, the
same dropout masks and the same training, while two models in one program still differ (as in TF).
"""
import random as _py_random

from . import framework as _framework
from .ops import random_normal as normal, random_uniform as uniform  # noqa: F401  (tf.random.normal, ...)

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


__all__ = ["set_seed", "get_global_seed", "normal", "uniform"]
