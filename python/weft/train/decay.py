"""TF1's learning-rate decay functions of the global step (``tf.compat.v1.train.*_decay``): each a
float32 tensor that follows the step, with TF1's formulas (exponential_decay is in training_util)."""
import math

from ..framework import constant, float32
from ..ops import cast, minimum, where, less_equal
from .. import ops as _ops


def _step(global_step, what):
    if global_step is None:
        raise ValueError("global_step is required for %s." % what)
    return cast(global_step, float32)


def _f(v):
    return constant(float(v), dtype=float32)


def _floor(x):
    from ..math import floor
    return floor(x)


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i],
    values[-1] after the last boundary."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("piecewise_constant: %d values for %d boundaries (need one more value)"
                         % (len(values), len(boundaries)))
    x = cast(x, float32)
    out = _f(values[-1])
    for b, v in reversed(list(zip(boundaries, values[:-1]))):
        out = where(less_equal(x, _f(b)), _f(v), out)
    return out


piecewise_constant_decay = piecewise_constant


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(lr - end) * (1 - step / decay_steps) ^ power + end; with cycle, decay_steps grows to the
    next multiple of itself past the step; without, the step stops at decay_steps."""
    step = _step(global_step, "polynomial_decay")
    steps = _f(decay_steps)
    if cycle:
        from ..math import ceil
        mult = ceil(step / steps)
        steps = steps * where(less_equal(mult, _f(0)), _f(1), mult)
    else:
        step = minimum(step, steps)
    frac = 1.0 - step / steps
    return (_f(learning_rate) - _f(end_learning_rate)) * _ops.pow(frac, _f(power)) + _f(end_learning_rate)


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr * exp(-decay_rate * step / decay_steps), the ratio floored when staircase."""
    p = _step(global_step, "natural_exp_decay") / _f(decay_steps)
    if staircase:
        p = _floor(p)
    return _f(learning_rate) * _ops.exp(-_f(decay_rate) * p)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """lr / (1 + decay_rate * step / decay_steps), the ratio floored when staircase."""
    p = _step(global_step, "inverse_time_decay") / _f(decay_steps)
    if staircase:
        p = _floor(p)
    return _f(learning_rate) / (1.0 + _f(decay_rate) * p)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)."""
    from ..math import cos
    step = minimum(_step(global_step, "cosine_decay"), _f(decay_steps))
    cosine = 0.5 * (1.0 + cos(_f(math.pi) * step / _f(decay_steps)))
    return _f(learning_rate) * ((1.0 - alpha) * cosine + alpha)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001, name=None):
    """lr * ((alpha + (1 - s / d)) * 0.5 * (1 + cos(pi * 2 * num_periods * s / d)) + beta), s the
    step capped at decay_steps (TF1's)."""
    from ..math import cos
    step = minimum(_step(global_step, "linear_cosine_decay"), _f(decay_steps))
    linear = (_f(decay_steps) - step) / _f(decay_steps)
    cosine = 0.5 * (1.0 + cos(_f(math.pi * 2.0 * num_periods) * step / _f(decay_steps)))
    return _f(learning_rate) * ((alpha + linear) * cosine + beta)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0, name=None):
    """SGDR: cosine decays over periods of first_decay_steps * t_mul^i, each restart's peak m_mul^i."""
    from ..math import cos, log
    completed = _step(global_step, "cosine_decay_restarts") / _f(first_decay_steps)
    if t_mul == 1.0:
        i = _floor(completed)
        completed = completed - i
    else:
        i = _floor(log(1.0 - completed * (1.0 - t_mul)) / math.log(t_mul))
        sum_r = (1.0 - _ops.pow(_f(t_mul), i)) / (1.0 - t_mul)
        completed = (completed - sum_r) / _ops.pow(_f(t_mul), i)
    m_fac = _ops.pow(_f(m_mul), i)
    cosine = 0.5 * m_fac * (1.0 + cos(_f(math.pi) * completed))
    return _f(learning_rate) * ((1.0 - alpha) * cosine + alpha)


__all__ = ["piecewise_constant", "piecewise_constant_decay", "polynomial_decay", "natural_exp_decay",
           "inverse_time_decay", "cosine_decay", "linear_cosine_decay", "cosine_decay_restarts"]
