"""TF1's spellings of the reductions and arg-reductions: ``reduction_indices`` (for ``axis``),
``keep_dims`` (for ``keepdims``) and ``dimension`` (for ``axis``), as ``tf.compat.v1`` accepts them."""
from ... import array_ops as _array_ops, math as _math, ops as _ops
from ...math import *  # noqa: F401,F403 - tf.compat.v1.math is all of tf.math; the TF1 spellings below override


def _v1_axis(axis, old, old_name):
    if old is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and '%s'" % old_name)
        return old
    return axis


def _reduction(f):
    def g(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None, keep_dims=None):
        axis = _v1_axis(axis, reduction_indices, "reduction_indices")
        return f(input_tensor, axis=axis, keepdims=bool(keepdims or keep_dims), name=name)
    g.__name__ = g.__qualname__ = f.__name__
    g.__doc__ = f.__doc__ + "\n\nTF1 spellings: reduction_indices= for axis, keep_dims= for keepdims."
    return g


reduce_sum = _reduction(_ops.reduce_sum)
reduce_mean = _reduction(_ops.reduce_mean)
reduce_max = _reduction(_ops.reduce_max)
reduce_min = _reduction(_ops.reduce_min)
reduce_prod = _reduction(_ops.reduce_prod)


def argmax(input, axis=None, name=None, dimension=None, output_type=_ops.int64):
    """Index of the largest element along ``axis`` (or TF1's ``dimension``; default 0)."""
    return _ops.argmax(input, _v1_axis(axis, dimension, "dimension"), output_type=output_type, name=name)


def argmin(input, axis=None, name=None, dimension=None, output_type=_ops.int64):
    """Index of the smallest element along ``axis`` (or TF1's ``dimension``; default 0)."""
    return _ops.argmin(input, _v1_axis(axis, dimension, "dimension"), output_type=output_type, name=name)


__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin"]


# ---- clipping and composites: weft's (one implementation), with TF1's argument spellings ------------

clip_by_value = _array_ops.clip_by_value
global_norm = _array_ops.global_norm
clip_by_norm = _array_ops.clip_by_norm
clip_by_global_norm = _array_ops.clip_by_global_norm
stack = _array_ops.stack
unstack = _array_ops.unstack
log1p = _math.log1p
is_nan = _math.is_nan


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=_ops.int64, name=None, reduction_indices=None,
                  keep_dims=None):
    """The number of nonzero elements (along ``axis``), as ``dtype``."""
    axis = _v1_axis(axis, reduction_indices, "reduction_indices")
    return _math.count_nonzero(input_tensor, axis, bool(keepdims or keep_dims), dtype, name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) computed stably around the (stopped, finite) max."""
    axis = _v1_axis(axis, reduction_indices, "reduction_indices")
    return _math.reduce_logsumexp(input_tensor, axis, bool(keepdims or keep_dims), name=name)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """weft.norm with TF1's keep_dims=."""
    return _array_ops.norm(tensor, ord, axis, bool(keepdims or keep_dims), name=name)


__all__ += ["clip_by_value", "global_norm", "clip_by_norm", "clip_by_global_norm", "stack", "unstack", "log1p",
            "is_nan", "count_nonzero", "reduce_logsumexp", "norm"]
