"""Array manipulations TF programs use that compose from weft's ops: ``tf.reverse``, ``tf.roll``,
``tf.sequence_mask``, ``tf.meshgrid``, ``tf.unique``, ``tf.identity_n``, ``tf.tuple``,
``tf.is_tensor``, ``tf.dynamic_partition`` / ``tf.dynamic_stitch``, ``tf.space_to_batch_nd`` /
``tf.batch_to_space``, ``tf.reverse_sequence`` and small helpers (``tf.shape_n``, ``tf.saturate_cast``,
...). Their gradients are those of the ops they are made of (StridedSlice, Concat,
Tile, ...)."""
import builtins

import numpy as np

from . import framework as _fw
from . import ops as _ops
from .framework import Tensor, convert_to_tensor

__all__ = ["repeat", "reverse", "roll", "sequence_mask", "meshgrid", "unique", "identity_n", "tuple", "is_tensor",
           "dynamic_partition", "dynamic_stitch", "space_to_batch_nd", "space_to_batch", "batch_to_space",
           "reverse_sequence", "shape_n", "parallel_stack", "saturate_cast", "broadcast_static_shape",
           "broadcast_dynamic_shape", "scalar_mul", "realdiv", "timestamp", "get_current_name_scope",
           "unique_with_counts", "unravel_index", "truncatediv", "truncatemod", "grad_pass_through",
           "vectorized_map", "is_symbolic_tensor", "VariableAggregation", "VariableSynchronization"]


def _axes(axis, rank, what):
    axes = [int(a) for a in (axis if isinstance(axis, (list, builtins.tuple, np.ndarray)) else [axis])]
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError("%s: axis %d is out of range for a tensor of rank %d" % (what, a, rank))
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError("%s: axis %s names a dimension twice" % (what, axes))
    return out


def _static_ints(x, what, arg):
    if isinstance(x, Tensor):
        try:
            x = x.numpy()
        except Exception as e:  # noqa: BLE001 - a tensor with no value while the graph is built
            raise ValueError("%s: weft needs %s known when the graph is built (ints or a constant), got %s"
                             % (what, arg, x.name)) from e
    return x


def reverse(tensor, axis, name=None):
    """The tensor with the order of each dimension in ``axis`` reversed (TF's tf.reverse)."""
    x = convert_to_tensor(tensor)
    if x.shape is None:
        raise ValueError("reverse: %s has unknown rank" % x.name)
    axes = _axes(_static_ints(axis, "reverse", "axis"), len(x.shape), "reverse")
    index = [slice(None, None, -1) if d in axes else slice(None) for d in builtins.range(len(x.shape))]
    return x[builtins.tuple(index)] if axes else x


def roll(input, shift, axis, name=None):
    """Elements shifted along ``axis`` by ``shift`` (positive: toward higher indices), wrapping
    around (TF's tf.roll); ``shift`` and ``axis`` may be lists of equal length, and an axis named
    twice has its shifts added. Shifts must be known when the graph is built."""
    x = convert_to_tensor(input)
    if x.shape is None:
        raise ValueError("roll: %s has unknown rank" % x.name)
    shift = np.atleast_1d(_static_ints(shift, "roll", "shift")).astype(np.int64)
    axis = np.atleast_1d(_static_ints(axis, "roll", "axis")).astype(np.int64)
    if shift.shape != axis.shape:
        raise ValueError("roll: shift %s and axis %s must have the same length" % (list(shift), list(axis)))
    rank = len(x.shape)
    total = {}
    for s, a in zip(shift, axis):
        if not -rank <= a < rank:
            raise ValueError("roll: axis %d is out of range for a tensor of rank %d" % (a, rank))
        total[int(a) % rank] = total.get(int(a) % rank, 0) + int(s)
    for a, s in sorted(total.items()):
        n = x.shape[a]
        if n is None:  # a dimension known only when the step runs: gather at (j - shift) mod n
            from .array_ops import range as _range
            from .math import floormod
            size = _ops.shape(x)[a]
            x = _ops.gather(x, floormod(_range(size) - _fw.constant(s, size.dtype), size), axis=a)
            continue
        if n == 0:
            continue
        k = (-s) % n
        if k:
            lo = builtins.tuple([slice(None)] * a + [slice(k, None)])
            hi = builtins.tuple([slice(None)] * a + [slice(0, k)])
            x = _ops.concat([x[lo], x[hi]], a)
    return x


def repeat(input, repeats, axis=None, name=None):
    """np.repeat: each element (axis None: of the flattened tensor) or slice along ``axis``
    ``repeats`` times (an int, or one count per slice); counts must be known when the graph is
    built, and so must the dimension (TF's tf.repeat)."""
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = _ops.reshape(x, [-1]), 0
    if x.shape is None:
        raise ValueError("repeat: %s has unknown rank" % x.name)
    axis = _axes(axis, len(x.shape), "repeat")[0]
    n = x.shape[axis]
    counts = np.asarray(_static_ints(repeats, "repeat", "repeats"))
    if n is None:
        if counts.ndim == 0:  # a scalar count over an unknown dimension: tile a new axis, then merge
            y = _ops.expand_dims(x, axis + 1)
            y = _ops.tile(y, [1] * (axis + 1) + [int(counts)] + [1] * (len(x.shape) - axis - 1))
            shape = _ops.shape(x)
            merged = _ops.concat([shape[:axis], _fw.constant([-1], shape.dtype), shape[axis + 1:]], 0)
            return _ops.reshape(y, merged)
        raise ValueError("repeat: dim %d of %s is unknown; per-slice repeats need it known" % (axis, x.name))
    if counts.ndim == 0:
        counts = np.full(n, int(counts))
    if counts.shape != (n,) or (counts < 0).any():
        raise ValueError("repeat: repeats %s must be a non-negative int or %d of them (dim %d of %s)"
                         % (list(np.atleast_1d(counts)), n, axis, x.name))
    return _ops.gather(x, _fw.constant(np.repeat(np.arange(n), counts).astype(np.int32)), axis=axis)


def sequence_mask(lengths, maxlen=None, dtype=_fw.bool_, name=None):
    """``mask[..., j] = j < lengths[...]`` with ``maxlen`` columns (default: the largest length)
    (TF's tf.sequence_mask)."""
    from .array_ops import range as _range
    lengths = convert_to_tensor(lengths)
    if maxlen is None:
        maxlen = _ops.reduce_max(lengths)
    maxlen = _ops.cast(convert_to_tensor(maxlen), lengths.dtype)
    mask = _ops.less(_range(maxlen), _ops.expand_dims(lengths, -1))
    return mask if _fw.as_dtype(dtype) == _fw.bool_ else _ops.cast(mask, dtype)


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors (TF's tf.meshgrid): ``indexing="xy"`` (default,
    Cartesian: the first two outputs' dims swapped) or ``"ij"`` (matrix)."""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError("meshgrid: unexpected arguments %s" % sorted(kwargs))
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij', got %r" % (indexing,))
    xs = [_ops.reshape(convert_to_tensor(a), [-1]) for a in args]
    n = len(xs)
    if n == 0:
        return []
    sizes = [_ops.shape(x) for x in xs]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    shape = _ops.concat(sizes, 0)
    out = []
    for i, x in enumerate(xs):
        pos = (1 - i if i < 2 else i) if indexing == "xy" and n > 1 else i
        view = [1] * n
        view[pos] = -1
        out.append(_ops.broadcast_to(_ops.reshape(x, view), shape))
    return out


def unique(x, out_idx=_fw.int32, name=None):
    """TF's tf.unique of a 1-D tensor with a value (constants, or at top level): ``(y, idx)`` with
    ``y`` the distinct values in order of first appearance and ``x == y[idx]``. A tensor without a
    value while the graph is built (a placeholder's) is a ValueError naming it: the output size
    depends on the data, which weft's graphs do not allow."""
    t = convert_to_tensor(x)
    try:
        v = np.asarray(t.numpy())
    except Exception as e:  # noqa: BLE001
        raise ValueError("unique: %s has no value while the graph is built; weft's unique needs a constant "
                         "(its output size depends on the data)" % t.name) from e
    if v.ndim != 1:
        raise ValueError("unique: x must be 1-D, got shape %s" % (v.shape,))
    _, first, inverse = np.unique(v, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return (_fw.constant(v[np.sort(first)], t.dtype),
            _fw.constant(rank[inverse.reshape(-1)].astype(_fw.as_dtype(out_idx).as_numpy_dtype), out_idx))


def identity_n(input, name=None):
    """Identity of each tensor of a list (TF's tf.identity_n)."""
    return [_ops.identity(convert_to_tensor(t)) for t in input]


def tuple(tensors, control_inputs=None, name=None):  # noqa: A001 - TF's tf.tuple
    """The tensors, each available only after all of them (and ``control_inputs``) are computed
    (TF's tf.tuple); None entries stay None."""
    present = [t for t in tensors if t is not None]
    deps = list(present) + list(control_inputs or [])
    g = _fw.get_default_graph()
    with g.control_dependencies(deps):
        return [None if t is None else _ops.identity(t) for t in tensors]


def is_tensor(x):
    """True for a weft tensor or variable (and sparse / ragged tensors), as tf.is_tensor."""
    from .ragged import RaggedTensor
    from .sparse import SparseTensor
    return isinstance(x, (Tensor, SparseTensor, RaggedTensor))


def dynamic_partition(data, partitions, num_partitions, name=None):
    """[data[partitions == i] for i < num_partitions]: partitions (int, a prefix of data's shape)
    names each element's (row's) output; the order within a partition is kept."""
    from .array_ops import boolean_mask
    data, partitions = convert_to_tensor(data), convert_to_tensor(partitions)
    return [boolean_mask(data, _ops.equal(partitions, _ops.cast(convert_to_tensor(i), partitions.dtype)))
            for i in builtins.range(int(num_partitions))]


def dynamic_stitch(indices, data, name=None):
    """merged[indices[m][i]] = data[m][i] (rows of data[m] beyond indices[m]'s rank): the inverse of
    dynamic_partition. Output rows: max(indices) + 1. An index given twice is InvalidArgument
    when run (TF keeps the last; weft asks for distinct indices rather than guess)."""
    from .debugging import assert_less_equal
    from .math import unsorted_segment_sum
    if len(indices) != len(data) or not indices:
        raise ValueError("weft.dynamic_stitch: %d index tensors for %d data tensors" % (len(indices), len(data)))
    idx = [_ops.reshape(_ops.cast(convert_to_tensor(i), _fw.int32), [-1]) for i in indices]
    rows = []
    for i, d in zip(indices, data):
        d = convert_to_tensor(d)
        k = len(convert_to_tensor(i).shape)
        rows.append(_ops.reshape(d, [-1] + [int(x) for x in d.shape[k:]]))
    flat_idx, flat = _ops.concat(idx, 0), _ops.concat(rows, 0)
    n = _ops.reduce_max(flat_idx) + 1
    counts = unsorted_segment_sum(_ops.ones_like(flat_idx), flat_idx, n)
    check = assert_less_equal(_ops.reduce_max(counts), 1,
                              message="weft.dynamic_stitch: an index appears more than once in indices")
    with _fw.control_dependencies([check] if check is not None else []):
        return _ops.identity(unsorted_segment_sum(flat, flat_idx, n), name=name)


def _ints(x, what, arg):
    return [int(v) for v in np.asarray(_static_ints(x, what, arg)).reshape(-1)]


def space_to_batch_nd(input, block_shape, paddings, name=None):
    """Zero-pads the M spatial dims after the batch by ``paddings`` [M, 2], then moves each
    block_shape block into the batch: [N, H, W, C] -> [N * bh * bw, H' / bh, W' / bw, C] (TF's order:
    the block offset is the outer part of the new batch)."""
    x = convert_to_tensor(input)
    block = _ints(block_shape, "weft.space_to_batch_nd", "block_shape")
    pads = np.asarray(_static_ints(paddings, "weft.space_to_batch_nd", "paddings")).reshape(-1, 2).tolist()
    m, r = len(block), len(x.shape)
    x = _ops.pad(x, [[0, 0]] + pads + [[0, 0]] * (r - 1 - m))
    shp = [int(d) if d is not None and d >= 0 else None for d in x.shape]
    if any(d is None for d in shp[1:]):
        raise ValueError("weft.space_to_batch_nd needs known non-batch dims, got %s" % (x.shape,))
    for i, b in enumerate(block):
        if shp[1 + i] % b:
            raise ValueError("weft.space_to_batch_nd: padded dim %d (%d) is not a multiple of block %d"
                             % (1 + i, shp[1 + i], b))
    split = [-1]
    for i, b in enumerate(block):
        split += [shp[1 + i] // b, b]
    split += shp[1 + m:]
    y = _ops.reshape(x, split)
    perm = [2 + 2 * i for i in builtins.range(m)] + [0] + [1 + 2 * i for i in builtins.range(m)] + \
        list(builtins.range(1 + 2 * m, 1 + 2 * m + r - 1 - m))
    y = _ops.transpose(y, perm)
    return _ops.reshape(y, [-1] + [shp[1 + i] // b for i, b in enumerate(block)] + shp[1 + m:], name=name)


def space_to_batch(input, block_shape, paddings, name=None):
    """tf.space_to_batch (TF2: = space_to_batch_nd)."""
    return space_to_batch_nd(input, block_shape, paddings, name)


def batch_to_space(input, block_shape, crops, name=None):
    """The inverse of space_to_batch_nd: batch blocks back into the spatial dims, then ``crops``."""
    x = convert_to_tensor(input)
    block = _ints(block_shape, "weft.batch_to_space", "block_shape")
    crops = np.asarray(_static_ints(crops, "weft.batch_to_space", "crops")).reshape(-1, 2).tolist()
    m, r = len(block), len(x.shape)
    shp = [int(d) if d is not None and d >= 0 else None for d in x.shape]
    if any(d is None for d in shp[1:]):
        raise ValueError("weft.batch_to_space needs known non-batch dims, got %s" % (x.shape,))
    y = _ops.reshape(x, block + [-1] + shp[1:])
    perm = [m]
    for i in builtins.range(m):
        perm += [m + 1 + i, i]
    perm += list(builtins.range(2 * m + 1, m + r))
    y = _ops.transpose(y, perm)
    full = [shp[1 + i] * b for i, b in enumerate(block)]
    y = _ops.reshape(y, [-1] + full + shp[1 + m:])
    begin = [0] + [c[0] for c in crops] + [0] * (r - 1 - m)
    size = [-1] + [full[i] - crops[i][0] - crops[i][1] for i in builtins.range(m)] + [-1] * (r - 1 - m)
    return _ops.slice(y, begin, size, name=name)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=0, name=None, seq_dim=None, batch_dim=None):
    """Reverses the first seq_lengths[b] entries along seq_axis of each batch entry b (the rest kept)."""
    x = convert_to_tensor(input)
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_dim is None else batch_dim
    if seq_axis is None:
        raise ValueError("weft.reverse_sequence needs seq_axis")
    r = len(x.shape)
    seq_axis, batch_axis = int(seq_axis) % r, int(batch_axis) % r
    t = x.shape[seq_axis]
    if t is None or t < 0:
        raise ValueError("weft.reverse_sequence needs a known length on seq_axis, got %s" % (x.shape,))
    lengths = _ops.cast(convert_to_tensor(seq_lengths), _fw.int32)
    pos = _ops.reshape(convert_to_tensor(np.arange(t, dtype=np.int32)), [1, t])
    lens = _ops.reshape(lengths, [-1, 1])
    src = _ops.where(_ops.less(pos, lens), lens - 1 - pos, pos * _ops.ones_like(lens))  # [B, T] source index
    perm = [batch_axis, seq_axis] + [a for a in builtins.range(r) if a not in (batch_axis, seq_axis)]
    xt = _ops.transpose(x, perm)
    from .array_ops import gather_nd, stack, range as _range
    rows = _ops.reshape(_range(0, _ops.shape(xt)[0], 1, dtype=_fw.int32), [-1, 1]) * _ops.ones_like(src)
    out = gather_nd(xt, stack([rows, src], -1))
    return _ops.transpose(out, [int(i) for i in np.argsort(perm)], name=name)


def shape_n(input, out_type=_fw.int32, name=None):
    """[tf.shape(x) for x in input]."""
    return [_ops.shape(x, out_type=out_type) for x in input]


def parallel_stack(values, name="parallel_stack"):
    """tf.parallel_stack: stack along a new first axis (as tf.stack(values, 0))."""
    from .array_ops import stack
    return stack(values, 0, name=name)


def saturate_cast(value, dtype, name=None):
    """Cast with values clipped to dtype's range first (no wrap-around)."""
    x = convert_to_tensor(value)
    dtype = _fw.as_dtype(dtype)
    if dtype.is_integer or dtype == _fw.uint8:
        info = np.iinfo(dtype.as_numpy_dtype)
        lo, hi = float(info.min), float(info.max)
        if x.dtype.is_floating:
            x = _ops.minimum(_ops.maximum(x, convert_to_tensor(lo, x.dtype)), convert_to_tensor(hi, x.dtype))
    return _ops.cast(x, dtype, name=name)


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two static shapes (TensorShape-like; None dims stay unknown unless the other
    is known and not 1); ValueError where they cannot broadcast."""
    from .array_ops import TensorShape
    a, b = list(TensorShape(shape_x).as_list()), list(TensorShape(shape_y).as_list())
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for u, v in zip(a, b):
        if u == 1 or u == v:
            out.append(v)
        elif v == 1:
            out.append(u)
        elif u is None or v is None:
            out.append(v if u is None and v is not None and v != 1 else u)
        else:
            raise ValueError("Incompatible shapes for broadcasting: %s and %s" % (shape_x, shape_y))
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shape vectors (1-D int tensors), as a shape vector of shape_x's dtype;
    shapes that do not broadcast fail when run, naming both."""
    x, y = convert_to_tensor(shape_x), convert_to_tensor(shape_y)
    zx = _ops.zeros(_ops.cast(x, _fw.int32), _fw.bool_)
    zy = _ops.zeros(_ops.cast(y, _fw.int32), _fw.bool_)
    return _ops.shape(_ops.logical_or(zx, zy), out_type=x.dtype)


def scalar_mul(scalar, x, name=None):
    """scalar * x."""
    return _ops.multiply(convert_to_tensor(scalar, convert_to_tensor(x).dtype), x, name=name)


def realdiv(x, y, name=None):
    """x / y for floats (op Div)."""
    x = convert_to_tensor(x)
    return _ops.raw_ops.Div(x, convert_to_tensor(y, x.dtype), name=name)


def timestamp(name=None):
    """Seconds since the epoch, as a float64 scalar (read when called: weft computes it on the host)."""
    import time
    return convert_to_tensor(time.time(), _fw.float64)


def get_current_name_scope():
    """The name scope ops are being created in now ("" at the top), without a trailing "/"."""
    return "/".join(_fw.get_default_graph()._name_stack)


def unique_with_counts(x, out_idx=_fw.int32, name=None):
    """(y, idx, count): unique's values and indices, and how often each value occurs."""
    y, idx = unique(x, out_idx)
    counts = np.bincount(np.asarray(idx.numpy()).reshape(-1), minlength=int(y.shape[0]))
    return y, idx, _fw.constant(counts.astype(_fw.as_dtype(out_idx).as_numpy_dtype), out_idx)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat indices in an array of shape dims: [len(dims)] for a scalar index,
    [len(dims), n] for a vector (TF's layout)."""
    idx = convert_to_tensor(indices)
    d = convert_to_tensor(dims, idx.dtype)
    # strides[i] = prod(dims[i + 1:]); coordinate i = (index // strides[i]) % dims[i].
    from .math import cumprod, floordiv, floormod
    strides = cumprod(d, exclusive=True, reverse=True)
    scalar = len(idx.shape) == 0
    col = _ops.reshape(idx, [1, -1])
    out = floormod(floordiv(col, _ops.reshape(strides, [-1, 1])), _ops.reshape(d, [-1, 1]))
    return _ops.reshape(out, [-1]) if scalar else out


def truncatediv(x, y, name=None):
    """x / y rounded toward zero (C's integer division; floats: trunc(x / y))."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, x.dtype)
    if x.dtype.is_integer:
        return _ops.raw_ops.Div(x, y, name=name)
    q = x / y
    from .math import ceil, floor
    return _ops.where(_ops.less(q, _ops.zeros_like(q)), ceil(q), floor(q))


def truncatemod(x, y, name=None):
    """x - truncatediv(x, y) * y: the remainder with x's sign (C's fmod)."""
    x = convert_to_tensor(x)
    y = convert_to_tensor(y, x.dtype)
    return _ops.subtract(x, truncatediv(x, y) * y, name=name)


def grad_pass_through(f):
    """A function computing f(x) whose gradient is the identity's (a straight-through estimator)."""
    def wrapped(x):
        x = convert_to_tensor(x)
        return x + _ops.stop_gradient(f(x) - x)
    return wrapped


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """tf.vectorized_map: fn over the first axis of elems; weft runs it as map_fn (what TF falls
    back to where it cannot vectorize), so results are the same."""
    from .functional_ops import map_fn
    return map_fn(fn, elems)


def is_symbolic_tensor(tensor):
    """Whether tensor is a graph tensor without an eager value (a placeholder's, a traced one)."""
    if not isinstance(tensor, Tensor):
        return False
    try:
        tensor.numpy()
        return False
    except Exception:  # noqa: BLE001 - no value while the graph is built
        return True


class VariableAggregation:
    """How a distribution strategy combines a variable's per-replica updates (TF's enum values)."""
    NONE, SUM, MEAN, ONLY_FIRST_REPLICA = 0, 1, 2, 3


class VariableSynchronization:
    """When a distributed variable is synchronized (TF's enum values)."""
    AUTO, NONE, ON_WRITE, ON_READ = 0, 1, 2, 3
