"""TF1's spellings of the reductions and arg-reductions: ``reduction_indices`` (for ``axis``),
``keep_dims`` (for ``keepdims``) and ``dimension`` (for ``axis``), as ``tf.compat.v1`` accepts them."""
from ... import ops as _ops


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


# ---- clipping ------------------------------------------------------------------------------------

def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max), elementwise."""
    return _ops.minimum(_ops.maximum(t, clip_value_min), clip_value_max, name=name)


def global_norm(t_list, name=None):
    """sqrt(sum of the squares of every element of every tensor in t_list); None entries are skipped."""
    ts = [t for t in t_list if t is not None]
    if not ts:
        raise ValueError("global_norm: t_list has no tensors")
    return _ops.sqrt(_ops.add_n([_ops.reduce_sum(_ops.square(t)) for t in ts]), name=name)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t), clip_norm): t unchanged when its L2 norm is within clip_norm."""
    norm = _ops.sqrt(_ops.reduce_sum(_ops.square(t), axis=axes, keepdims=axes is not None))
    return t * clip_norm / _ops.maximum(norm, clip_norm)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(the tensors scaled by clip_norm / max(global_norm, clip_norm), the global norm), as TF
    returns them; None entries stay None."""
    norm = use_norm if use_norm is not None else global_norm(t_list)
    scale = clip_norm / _ops.maximum(norm, clip_norm)
    return [None if t is None else t * scale for t in t_list], norm


__all__ += ["clip_by_value", "global_norm", "clip_by_norm", "clip_by_global_norm"]


# ---- composites TF1 programs use -----------------------------------------------------------------

def stack(values, axis=0, name="stack"):
    """Joins same-shape tensors along a new dim ``axis``."""
    values = [_ops.convert_to_tensor(v) for v in values]
    rank = len(values[0].shape) if values[0].shape is not None else None
    if axis < 0:
        if rank is None:
            raise ValueError("stack: a negative axis needs inputs of known rank")
        axis += rank + 1
    return _ops.concat([_ops.expand_dims(v, axis) for v in values], axis, name=name)


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of ``value`` along ``axis`` (its size must be known, or given as ``num``)."""
    value = _ops.convert_to_tensor(value)
    n = num if num is not None else (value.shape[axis] if value.shape is not None else None)
    if n is None:
        raise ValueError("unstack: cannot infer num from shape %s; pass num=" % (value.shape,))
    parts = _ops.split(value, int(n), axis=axis)
    parts = parts if isinstance(parts, (list, tuple)) else [parts]
    return [_ops.squeeze(p, axis=axis) for p in parts]


def log1p(x, name=None):
    """log(1 + x)."""
    return _ops.log(1.0 + _ops.convert_to_tensor(x), name=name)


def is_nan(x, name=None):
    """x != x (true exactly for NaN)."""
    return _ops.not_equal(x, x, name=name)


def count_nonzero(input_tensor, axis=None, keepdims=False, dtype=_ops.int64, name=None, reduction_indices=None,
                  keep_dims=None):
    """The number of nonzero elements (along ``axis``), as ``dtype``."""
    axis = _v1_axis(axis, reduction_indices, "reduction_indices")
    x = _ops.convert_to_tensor(input_tensor)
    nonzero = _ops.cast(_ops.not_equal(x, _ops.zeros_like(x)), dtype)
    return _ops.reduce_sum(nonzero, axis=axis, keepdims=bool(keepdims or keep_dims), name=name)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None, reduction_indices=None, keep_dims=None):
    """log(sum(exp(x))) computed stably: m + log(sum(exp(x - m))) with m the (stopped) max."""
    axis = _v1_axis(axis, reduction_indices, "reduction_indices")
    x = _ops.convert_to_tensor(input_tensor)
    m = _ops.stop_gradient(_ops.reduce_max(x, axis=axis, keepdims=True))
    out = _ops.log(_ops.reduce_sum(_ops.exp(x - m), axis=axis, keepdims=True)) + m
    return out if (keepdims or keep_dims) else _ops.squeeze(out, axis=axis)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):
    """The Euclidean norm (of all elements, or along ``axis``); other orders are not provided."""
    if ord not in ("euclidean", "fro", 2, 2.0):
        raise NotImplementedError("weft's norm is the Euclidean one, got ord=%r" % (ord,))
    return _ops.sqrt(_ops.reduce_sum(_ops.square(tensor), axis=axis, keepdims=bool(keepdims or keep_dims)), name=name)


__all__ += ["stack", "unstack", "log1p", "is_nan", "count_nonzero", "reduce_logsumexp", "norm"]
