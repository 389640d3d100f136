"""TensorFlow's top-level array and clipping functions that compose weft ops: ``stack``,
``unstack``, ``range``, ``linspace``, ``eye``, ``clip_by_value``, ``clip_by_norm``,
``clip_by_global_norm``, ``gather_nd``, ``boolean_mask``, ``sort``, ``argsort``, ``tensordot``,
``norm``, plus ``TensorShape`` and ``newaxis``. Each is a graph function (Session.run,
gradients, weft.data map functions)::

    x = weft.stack([a, b], axis=1)
    y = weft.clip_by_value(x, -1.0, 1.0)
    idx = weft.argsort(scores, direction="DESCENDING")
"""
import builtins

import numpy as np

from . import ops as _ops
from .framework import Tensor, as_dtype, bool_, constant, convert_to_tensor, float32, float64, int32, int64, uint8
from .ops import raw_ops

newaxis = None


class TensorShape:
    """A (possibly partial) shape: ``TensorShape([None, 3])``; dims are ints or None, and the
    whole shape may be unknown (``TensorShape(None)``). ``weft.Tensor.shape`` is a tuple that
    compares equal to the corresponding TensorShape."""

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims.dims
        self._dims = None if dims is None else tuple(None if d is None or (isinstance(d, int) and d < 0)
                                                     else int(d) for d in dims)

    dims = property(lambda self: None if self._dims is None else list(self._dims))
    rank = ndims = property(lambda self: None if self._dims is None else len(self._dims))

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape")
        return list(self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d is not None for d in self._dims)

    def num_elements(self):
        return int(np.prod(self._dims)) if self.is_fully_defined() else None

    def is_compatible_with(self, other):
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = TensorShape(other)
        if not self.is_compatible_with(other):
            raise ValueError("Shapes %s and %s are not compatible" % (self, other))
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other):
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of a shape with unknown rank")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank")
        return iter(self._dims)

    def __getitem__(self, key):
        if isinstance(key, builtins.slice):
            return TensorShape(None if self._dims is None else self._dims[key])
        return None if self._dims is None else self._dims[key]

    def __eq__(self, other):
        try:
            other = TensorShape(other)
        except TypeError:
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        return "TensorShape(%s)" % (None if self._dims is None else list(self._dims))

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        return "(%s)" % ", ".join("None" if d is None else str(d) for d in self._dims) + ("," if len(self._dims) == 1 else "")


class _StaticShape(tuple):
    """A tensor's static shape of known rank, as ``weft.Tensor.shape`` gives it: a tuple (dims are
    ints or None; weft's code and numpy take it as one) with TensorShape's methods, as TF programs
    call them on ``x.shape`` (``as_list()``, ``rank``, ``is_fully_defined()``, ...)."""

    def as_list(self):
        return list(self)

    rank = ndims = property(len)
    dims = property(list)

    def is_fully_defined(self):
        return all(d is not None for d in self)

    def num_elements(self):
        return TensorShape(self).num_elements()

    def is_compatible_with(self, other):
        return TensorShape(self).is_compatible_with(other)

    def merge_with(self, other):
        return TensorShape(self).merge_with(other)

    def concatenate(self, other):
        return TensorShape(self).concatenate(other)

    def __getitem__(self, key):
        got = tuple.__getitem__(self, key)
        return _StaticShape(got) if isinstance(key, builtins.slice) else got


def _install_shape():
    """``Tensor.shape``: the C++ property's tuple as a _StaticShape (None stays None: unknown rank)."""
    static = Tensor.shape

    def shape(t):
        got = static.__get__(t)
        return None if got is None else _StaticShape(got)
    Tensor.shape = property(shape, doc=static.__doc__)


_install_shape()


def ensure_shape(x, shape, name=None):
    """``x`` with its static shape merged with ``shape`` (a list or TensorShape, None for free dims);
    a step whose ``x`` has another shape is InvalidArgument naming the node (op EnsureShape).
    A shape incompatible with the static one is a ValueError at once."""
    x = convert_to_tensor(x)
    merged = TensorShape(x.shape).merge_with(shape)
    want = TensorShape(shape)
    return raw_ops.EnsureShape(x, shape=None if want.dims is None else tuple(want.dims), name=name) \
        if merged != TensorShape(x.shape) else x


def _set_shape(self, shape):
    """``Tensor.set_shape``: as TensorFlow's, the static shape becomes the merge of both (ValueError
    naming them when incompatible), for the shape inference of ops built from it afterwards. weft
    also checks it when the step runs: the handle now refers to an EnsureShape node's output (so a
    handle already used as a dict key should not be reshaped). A variable keeps its shape."""
    merged = TensorShape(self.shape).merge_with(shape)
    if merged == TensorShape(self.shape):
        return
    from .framework import Variable
    if isinstance(self, Variable):
        raise ValueError("variable '%s' has shape %s; set_shape(%s) cannot refine a variable's shape in weft"
                         % (self.name, TensorShape(self.shape), TensorShape(shape)))
    with self.graph.as_default():
        self._rebind(ensure_shape(self, shape))


Tensor.set_shape = _set_shape


# ---- helpers ----------------------------------------------------------------------------------

def _t(x, like=None):
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(x, like.dtype if isinstance(like, Tensor) else None)


def _rank(x, what):
    if x.shape is None:
        raise ValueError("%s needs a tensor of known rank, got %s with unknown shape" % (what, x.name))
    return len(x.shape)


def _dims_of(x, start, end):
    """x's dims [start, end): a list of ints when known at build time, else an int32 tensor."""
    dims = x.shape[start:end]
    if all(d is not None for d in dims):
        return [int(d) for d in dims]
    return _ops.strided_slice(_ops.shape(x), [start], [end])


def _join_shape(*parts):
    """A shape from parts (lists of ints, or int32 tensors): a list when all are lists."""
    if all(isinstance(p, list) for p in parts):
        return [d for p in parts for d in p]
    return _ops.concat([p if isinstance(p, Tensor) else constant(np.ravel(p), dtype=int32) for p in parts
                        if isinstance(p, Tensor) or p], 0)


def _prod(dims):
    return int(np.prod(dims)) if isinstance(dims, list) else _ops.reduce_prod(dims, keepdims=True)


# ---- construction -----------------------------------------------------------------------------

def stack(values, axis=0, name="stack"):
    """Joins tensors of one shape along a new ``axis`` (TF: ``tf.stack([x, y, z])`` is [3, ...])."""
    values = list(values)
    if not values:
        raise ValueError("weft.stack needs at least one tensor")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    values = [_t(v, first) for v in values]
    return _ops.concat([_ops.expand_dims(v, axis) for v in values], axis)


def unstack(value, num=None, axis=0, name="unstack"):
    """The slices of ``value`` along ``axis``, as a list (``num``: their count, from the static shape
    when None)."""
    value = _t(value)
    r = _rank(value, "weft.unstack")
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r:
        raise ValueError("weft.unstack: axis %d out of range for shape %s" % (axis, value.shape))
    if num is None:
        num = value.shape[axis]
        if num is None:
            raise ValueError("weft.unstack: dim %d of %s is unknown; pass num=" % (axis, value.shape))
    parts = _ops.split(value, int(num), axis)
    parts = [parts] if isinstance(parts, Tensor) else list(parts)
    return [_ops.squeeze(p, [axis]) for p in parts]


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 (tf.range)
    """start, start + delta, ... up to but not including limit (``range(n)``: 0..n-1). Python
    numbers give a constant (int32, or float32 if any is a float, as TF); tensors give a Range op
    whose length is known at run time."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    if dtype is None:
        dts = [a.dtype for a in args if isinstance(a, Tensor)]
        if any(d in (float32, float64) for d in dts):
            dtype = float64 if float64 in dts else float32
        elif dts:
            dtype = int64 if int64 in dts else int32
        else:
            dtype = float32 if any(isinstance(a, (float, np.floating)) for a in args) else int32
    dtype = as_dtype(dtype)
    if not any(isinstance(a, Tensor) for a in args):
        if delta == 0:
            raise ValueError("weft.range: delta must not be 0")
        return constant(np.arange(start, limit, delta), dtype=dtype, name=name)  # checked: no value wraps
    args = [_ops.cast(a, dtype) if isinstance(a, Tensor) else constant(a, dtype) for a in args]
    return raw_ops.Range(*args, name=name)


def linspace(start, stop, num, axis=0, name=None):
    """``num`` evenly spaced values from start to stop inclusive (the ends exactly, as TF). start
    and stop are float scalars or tensors of one shape S; the result has shape S with num inserted
    at ``axis``."""
    num = int(num)
    if num < 1:
        raise ValueError("weft.linspace: num must be >= 1, got %d" % num)
    start = _t(start) if isinstance(start, Tensor) else _t(start, stop if isinstance(stop, Tensor) else None)
    stop = _t(stop, start)
    if start.dtype not in (float32, float64):
        start, stop = _ops.cast(start, float32), _ops.cast(stop, float32)
    r = _rank(start, "weft.linspace")
    lead = lambda x: _ops.expand_dims(x, 0)  # noqa: E731
    if num == 1:
        out = lead(start)
    else:
        steps = constant(np.arange(1, num - 1).reshape([-1] + [1] * r), start.dtype)
        delta = (stop - start) / constant(num - 1, start.dtype)
        out = _ops.concat([lead(start), lead(start) + steps * lead(delta), lead(stop)], 0)
    axis = axis + r + 1 if axis < 0 else axis
    if axis:
        perm = list(builtins.range(1, axis + 1)) + [0] + list(builtins.range(axis + 1, r + 1))
        out = _ops.transpose(out, perm)
    return out


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None):
    """An identity matrix [num_rows, num_columns], repeated over ``batch_shape``."""
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns), dtype=as_dtype(dtype).as_numpy_dtype)
    if batch_shape:
        m = np.broadcast_to(m, tuple(int(b) for b in batch_shape) + m.shape)
    return constant(np.ascontiguousarray(m), name=name or "eye")


# ---- clipping and norms -----------------------------------------------------------------------

def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """min(max(t, clip_value_min), clip_value_max) elementwise (bounds broadcast); the gradient is
    zero where a bound applies."""
    t = _t(t)
    return _ops.maximum(_ops.minimum(t, _t(clip_value_max, t)), _t(clip_value_min, t))


def _l2_norm(t, axes=None, keepdims=True):
    """sqrt(sum(t^2)), with a zero gradient (not NaN) where the sum is 0."""
    l2sum = _ops.reduce_sum(t * t, axes, keepdims=keepdims)
    pos = _ops.greater(l2sum, _ops.zeros_like(l2sum))
    return _ops.where(pos, _ops.sqrt(_ops.where(pos, l2sum, _ops.ones_like(l2sum))), l2sum)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """t * clip_norm / max(l2norm(t, axes), clip_norm): scales t down to an L2 norm of at most
    clip_norm (over ``axes``, or all of t)."""
    t = _t(t)
    clip_norm = _t(clip_norm, t)
    return t * clip_norm / _ops.maximum(_l2_norm(t, axes), clip_norm)


def global_norm(t_list, name=None):
    """sqrt(sum of the squared L2 norms of the tensors in t_list); None entries are skipped."""
    sums = [_ops.reduce_sum(_ops.square(_t(t))) for t in t_list if t is not None]
    if not sums:
        raise ValueError("weft.global_norm: t_list has no tensors")
    return _ops.sqrt(_ops.add_n(sums) if len(sums) > 1 else sums[0])


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """(clipped list, global norm): every tensor scaled by clip_norm / max(global_norm, clip_norm)."""
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else _t(use_norm)
    clip = _t(clip_norm, norm)
    scale = clip / _ops.maximum(norm, clip)
    return [None if t is None else _t(t) * _ops.cast(scale, _t(t).dtype) for t in t_list], norm


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector norms over ``axis`` (None: all elements): ord "euclidean"/2 (and "fro" over a pair
    of axes), 1, or numpy.inf."""
    x = _t(tensor)
    keep = bool(keepdims)
    if ord in ("euclidean", "fro", 2, 2.0):
        if ord == 2 and isinstance(axis, (list, tuple)) and len(axis) == 2:
            raise NotImplementedError("weft.norm: the matrix 2-norm (spectral norm) is not supported; use ord='fro'")
        return _ops.sqrt(_ops.reduce_sum(_ops.square(x), axis, keepdims=keep))
    if ord in (1, 1.0) and not (isinstance(axis, (list, tuple)) and len(axis) == 2):
        return _ops.reduce_sum(_ops.abs(x), axis, keepdims=keep)
    if ord == np.inf and not (isinstance(axis, (list, tuple)) and len(axis) == 2):
        return _ops.reduce_max(_ops.abs(x), axis, keepdims=keep)
    raise NotImplementedError("weft.norm supports ord 'euclidean', 'fro', 2, 1 and numpy.inf over vectors, got %r"
                              % (ord,))


# ---- indexing ---------------------------------------------------------------------------------

def gather_nd(params, indices, batch_dims=0, name=None):
    """Slices of ``params`` at the index vectors in the last dim of ``indices`` [..., K]: the
    result has shape indices.shape[:-1] + params.shape[K:]. An index outside params is an
    InvalidArgument error."""
    if batch_dims:
        raise NotImplementedError("weft.gather_nd supports batch_dims=0 only")
    params = _t(params)
    indices = indices if isinstance(indices, Tensor) else constant(np.asarray(indices, np.int64))
    if indices.shape is None or indices.shape[-1] is None:
        raise ValueError("weft.gather_nd: the last dim of indices (the index depth) must be known, got %s"
                         % (indices.shape,))
    k = int(indices.shape[-1])
    r = _rank(params, "weft.gather_nd")
    if k > r:
        raise ValueError("weft.gather_nd: index depth %d is more than the rank of params %s" % (k, params.shape))
    lead = params.shape[:k]
    if any(d is None for d in lead):
        raise ValueError("weft.gather_nd: the first %d dims of params must be known, got %s" % (k, params.shape))
    strides = np.cumprod([1] + [int(d) for d in lead[::-1]])[:-1][::-1].astype(np.int64)
    idx = _ops.cast(indices, int64)
    linear = _ops.reduce_sum(idx * constant(strides), -1)
    # A component outside its dim would alias another element of the flat params: send it to -1,
    # which Gather rejects with an InvalidArgument error (its node's name says what -1 means).
    inside = _ops.logical_and(_ops.greater_equal(idx, _ops.zeros_like(idx)),
                              _ops.less(idx, constant(np.asarray(lead, np.int64))))
    ok = _ops.equal(_ops.reduce_min(_ops.cast(inside, int32), -1), constant(1, int32))
    linear = _ops.where(ok, linear, -_ops.ones_like(linear))
    flat = _ops.reshape(params, _join_shape([int(np.prod(lead, dtype=np.int64))], _dims_of(params, k, r)))
    return _ops.gather(flat, linear, axis=0, name="gather_nd_index_out_of_range_is_minus_1")


def _nd_linear(indices, dims, what):
    """Flat positions of the index vectors in indices' last dim within ``dims`` (ints), with a
    component outside its dim sent to prod(dims), one past the end, so the op consuming it
    rejects it rather than aliasing another element."""
    indices = indices if isinstance(indices, Tensor) else constant(np.asarray(indices, np.int64))
    if indices.shape is None or indices.shape[-1] is None:
        raise ValueError("weft.%s: the last dim of indices (the index depth) must be known, got %s"
                         % (what, indices.shape))
    k = int(indices.shape[-1])
    lead = [int(d) for d in dims[:k]]
    strides = np.cumprod([1] + lead[::-1])[:-1][::-1].astype(np.int64)
    idx = _ops.cast(indices, int64)
    linear = _ops.reduce_sum(idx * constant(strides), -1)
    inside = _ops.logical_and(_ops.greater_equal(idx, _ops.zeros_like(idx)),
                              _ops.less(idx, constant(np.asarray(lead, np.int64))))
    ok = _ops.equal(_ops.reduce_min(_ops.cast(inside, int32), -1), constant(1, int32))
    total = int(np.prod(lead, dtype=np.int64))
    return _ops.where(ok, linear, _ops.ones_like(linear) * total), k, total


def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape`` that is zero except at the index vectors of ``indices`` [..., K],
    where it holds ``updates`` [..., shape[K:]]; updates at the same index are summed (as TF).
    An index outside ``shape`` is an InvalidArgumentError."""
    dims = [int(d) for d in (shape.numpy() if hasattr(shape, "numpy") and isinstance(shape, Tensor) else shape)]
    updates = _t(updates)
    linear, k, total = _nd_linear(indices, dims, "scatter_nd")
    if k > len(dims):
        raise ValueError("weft.scatter_nd: index depth %d is more than the rank of shape %s" % (k, dims))
    flat_updates = _ops.reshape(updates, [-1] + dims[k:])
    summed = raw_ops.UnsortedSegmentSum(flat_updates, _ops.reshape(linear, [-1]), constant(total, int64))
    return _ops.reshape(summed, dims, name=name)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` plus ``updates`` added at the index vectors of ``indices`` (as scatter_nd)."""
    tensor = _t(tensor)
    if tensor.shape is None or any(d is None for d in tensor.shape):
        raise ValueError("weft.tensor_scatter_nd_add needs a tensor of known shape, got %s" % (tensor.shape,))
    return tensor + scatter_nd(indices, _t(updates, tensor), list(tensor.shape))


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the slices at the index vectors of ``indices`` replaced by ``updates``
    (TF leaves the winner of a repeated index unspecified; weft's is their sum)."""
    tensor = _t(tensor)
    if tensor.shape is None or any(d is None for d in tensor.shape):
        raise ValueError("weft.tensor_scatter_nd_update needs a tensor of known shape, got %s" % (tensor.shape,))
    updates = _t(updates, tensor)
    dims = list(tensor.shape)
    hit = scatter_nd(indices, _ops.ones_like(updates), dims)
    keep = _ops.cast(_ops.equal(hit, _ops.zeros_like(hit)), tensor.dtype)
    return tensor * keep + scatter_nd(indices, updates, dims)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` minus ``updates`` at the index vectors of ``indices`` (repeated indices add up)."""
    return tensor_scatter_nd_add(tensor, indices, -_t(updates, _t(tensor)), name=name)


def _scatter_combine(tensor, indices, updates, op, what):
    """``tensor`` with the slices at ``indices`` replaced by op(slice, update) (each index once)."""
    tensor = _t(tensor)
    if tensor.shape is None or any(d is None for d in tensor.shape):
        raise ValueError("weft.%s needs a tensor of known shape, got %s" % (what, tensor.shape))
    updates = _t(updates, tensor)
    current = gather_nd(tensor, indices)
    return tensor_scatter_nd_update(tensor, indices, op(current, updates))


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tensor`` with max(slice, update) at the index vectors of ``indices`` (distinct indices)."""
    return _scatter_combine(tensor, indices, updates, _ops.maximum, "tensor_scatter_nd_max")


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tensor`` with min(slice, update) at the index vectors of ``indices`` (distinct indices)."""
    return _scatter_combine(tensor, indices, updates, _ops.minimum, "tensor_scatter_nd_min")


def boolean_mask(tensor, mask, axis=None, name="boolean_mask"):
    """The elements (rows) of ``tensor`` where ``mask`` is True: mask [d_axis, ..., d_{axis+k-1}]
    covers k dims of tensor from ``axis`` (default 0), which become one dim of length
    count(mask) (known at run time)."""
    tensor = _t(tensor)
    mask = _t(mask)
    k = _rank(mask, "weft.boolean_mask (mask)")
    r = _rank(tensor, "weft.boolean_mask")
    axis = 0 if axis is None else (axis + r if axis < 0 else int(axis))
    if k == 0 or axis + k > r:
        raise ValueError("weft.boolean_mask: mask %s must have rank >= 1 and cover dims of tensor %s from axis %d"
                         % (mask.shape, tensor.shape, axis))
    for a, b in zip(mask.shape, tensor.shape[axis:axis + k]):
        if a is not None and b is not None and a != b:
            raise ValueError("weft.boolean_mask: mask %s does not match tensor %s at axis %d"
                             % (mask.shape, tensor.shape, axis))
    flat = _ops.reshape(tensor, _join_shape(_dims_of(tensor, 0, axis), [-1], _dims_of(tensor, axis + k, r)))
    where = raw_ops.Where(_ops.reshape(_ops.cast(mask, bool_), [-1]))
    return _ops.gather(flat, _ops.reshape(where, [-1]), axis=axis)


# ---- ordering ---------------------------------------------------------------------------------

def _sorted_last(values, axis, direction, what):
    """(values, indices) of ``values`` sorted along axis, via TopK over the last dim."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("weft.%s: direction must be 'ASCENDING' or 'DESCENDING', got %r" % (what, direction))
    x = _t(values)
    if x.dtype not in (float32, float64, int32, int64, uint8):
        raise TypeError("weft.%s sorts numbers (float32, float64, int32, int64, uint8), not %s" % (what, x.dtype))
    r = _rank(x, "weft." + what)
    axis = axis + r if axis < 0 else axis
    if not 0 <= axis < r:
        raise ValueError("weft.%s: axis %d out of range for shape %s" % (what, axis, x.shape))
    perm = list(builtins.range(r))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    if axis != r - 1:
        x = _ops.transpose(x, perm)
    if direction == "DESCENDING":
        v, i = raw_ops.TopK(x, k=-1)
    else:
        # Ascending = descending of a reversed order map (as TF: -x, or max - x for uint8);
        # ties still keep their index order.
        flipped = constant(255, uint8) - x if x.dtype == uint8 else -x
        v, i = raw_ops.TopK(flipped, k=-1)
        v = constant(255, uint8) - v if x.dtype == uint8 else -v
    if axis != r - 1:
        v, i = _ops.transpose(v, perm), _ops.transpose(i, perm)
    return v, i


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis`` (equal values keep their order)."""
    return _sorted_last(values, axis, direction, "sort")[0]


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """int32 indices that sort ``values`` along ``axis`` (always stable: ties keep index order)."""
    return _sorted_last(values, axis, direction, "argsort")[1]


# ---- products ---------------------------------------------------------------------------------

def tensordot(a, b, axes, name=None):
    """Sum over the dims ``axes`` of a and b: an int N pairs a's last N dims with b's first N;
    or a pair of lists [a_axes, b_axes]. Result: a's free dims then b's free dims."""
    a = _t(a, b)
    b = _t(b, a)
    ra, rb = _rank(a, "weft.tensordot (a)"), _rank(b, "weft.tensordot (b)")
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        a_axes, b_axes = list(builtins.range(ra - n, ra)), list(builtins.range(n))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
    a_axes = [x % ra for x in a_axes]
    b_axes = [x % rb for x in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError("weft.tensordot: %d axes of a but %d of b" % (len(a_axes), len(b_axes)))
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] is not None and b.shape[j] is not None and a.shape[i] != b.shape[j]:
            raise ValueError("weft.tensordot: a %s dim %d (%d) differs from b %s dim %d (%d)"
                             % (a.shape, i, a.shape[i], b.shape, j, b.shape[j]))
    a_free = [i for i in builtins.range(ra) if i not in a_axes]
    b_free = [i for i in builtins.range(rb) if i not in b_axes]
    at = a if a_free + a_axes == list(builtins.range(ra)) else _ops.transpose(a, a_free + a_axes)
    bt = b if b_axes + b_free == list(builtins.range(rb)) else _ops.transpose(b, b_axes + b_free)
    contract = [b.shape[j] if b.shape[j] is not None else a.shape[i] for i, j in zip(a_axes, b_axes)]
    if any(d is None for d in contract):
        raise ValueError("weft.tensordot: the contracted dims must be known, got a %s and b %s" % (a.shape, b.shape))
    kk = int(np.prod(contract, dtype=np.int64))
    a2 = _ops.reshape(at, [-1, kk])
    b2 = _ops.reshape(bt, [kk, -1])
    out = _ops.matmul(a2, b2)
    free_a = _dims_of(at, 0, len(a_free))
    free_b = _dims_of(bt, len(b_axes), rb)
    return _ops.reshape(out, _join_shape(free_a, free_b))


__all__ = ["newaxis", "TensorShape", "ensure_shape", "stack", "unstack", "range", "linspace", "eye", "clip_by_value", "clip_by_norm",
           "global_norm", "clip_by_global_norm", "norm", "gather_nd", "scatter_nd", "tensor_scatter_nd_add",
           "tensor_scatter_nd_update", "boolean_mask", "sort", "argsort", "tensordot"]
