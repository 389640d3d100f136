"""The global step and TF1's learning-rate decay functions (``tf.compat.v1.train``).

    step = weft.train.get_or_create_global_step()        # int64 variable "global_step", starts at 0
    lr = weft.train.exponential_decay(0.1, step, decay_steps=100, decay_rate=0.96, staircase=True)
    train_op = weft.train.GradientDescentOptimizer(lr).minimize(loss, global_step=step)
"""
from .. import _variables
from ..framework import Variable, constant, get_default_graph, int64, float32
from ..ops import cast, pow as pow_op

_GLOBAL_STEP = "global_step"


def _increment(global_step):
    return global_step.assign_add(constant(1, dtype=global_step.dtype))


def get_global_step(graph=None):
    """The graph's global step variable (made by ``get_or_create_global_step`` or named
    "global_step"), or None."""
    g = graph if graph is not None else get_default_graph()
    for v in _variables.all_variables(g):
        if v.op.name == _GLOBAL_STEP:
            return v
    return None


def create_global_step(graph=None):
    """Makes the global step: an int64 scalar variable "global_step" initialized to 0, not
    trainable. A second one is a ValueError, as in TF."""
    g = graph if graph is not None else get_default_graph()
    if get_global_step(g) is not None:
        raise ValueError('"global_step" already exists.')
    with g.as_default(), g.name_scope(None):  # in the caller's device block, as TF places it
        v = Variable(constant(0, dtype=int64), trainable=False, name=_GLOBAL_STEP)
    _variables.register(v, trainable=False)
    return v


def get_or_create_global_step(graph=None):
    """The global step of ``graph`` (default: the default graph), made if missing."""
    g = graph if graph is not None else get_default_graph()
    return get_global_step(g) or create_global_step(g)


def global_step(sess, global_step_tensor):
    """The global step's value as a Python int."""
    return int(sess.run(global_step_tensor))


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), the exponent floored when
    ``staircase``: a float32 tensor that follows the global step."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    p = cast(global_step, float32) / float(decay_steps)
    if staircase:
        p = cast(cast(p, int64), float32)  # floor: the step is never negative
    return constant(learning_rate, dtype=float32) * pow_op(constant(decay_rate, dtype=float32), p)


__all__ = ["get_global_step", "create_global_step", "get_or_create_global_step", "global_step",
           "exponential_decay"]
