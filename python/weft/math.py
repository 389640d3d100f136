"""``weft.math``: TensorFlow's ``tf.math`` namespace, as graph ops.

    m = weft.math.reduce_std(x, axis=0)
    v, i = weft.math.top_k(logits, k=5)
    cm = weft.math.confusion_matrix(labels, predictions, num_classes=10)

The elementwise ops and reductions that exist at the top level (``weft.exp``, ``weft.reduce_sum``,
...) are the same functions here; what TF defines only as ``tf.math.*`` (``log1p``, ``is_nan``,
``cumsum``, ``top_k``, ...) is defined here and also exported at the top level where TF does.
Composites are built from weft's ops, so they run in sessions, differentiate where TF does, and
trace inside ``weft.data`` map functions.
"""
import numpy as np

from . import ops as _ops
from .framework import Tensor, constant, convert_to_tensor, float32, float64, int32, int64, bool_, _index_constant
from .ops import (  # noqa: F401  (tf.math.abs, ...: the top-level functions)
    abs, add, add_n, argmax, argmin, cast, equal, exp, greater, greater_equal, less, less_equal, log, logical_and,
    logical_not, logical_or, maximum, minimum, multiply, negative, not_equal, pow, reciprocal, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_sum, rsqrt, sigmoid, sign, sqrt, square, subtract, tanh, raw_ops)
from .ops import _axis_list, _unary

log1p = _unary("Log1p", "log1p")
expm1 = _unary("Expm1", "expm1")
floor = _unary("Floor", "floor")
ceil = _unary("Ceil", "ceil")
round = _unary("Round", "round")  # noqa: A001  (tf.math.round; halves to even)
erf = _unary("Erf", "erf")
sin = _unary("Sin", "sin")
cos = _unary("Cos", "cos")


def _t(x, like=None):
    """x as a tensor; a Python value takes ``like``'s dtype when given."""
    if isinstance(x, Tensor):
        return x
    return convert_to_tensor(x, like.dtype if isinstance(like, Tensor) else None)


def _float_of(x):
    """float32 for integer tensors (as TF's integer-to-float promotions in the ops below)."""
    return x if x.dtype in (float32, float64) else _ops.cast(x, float32)


def truediv(x, y, name=None):
    """x / y; integer tensors divide as floats (float32 for uint8, else float64), as TF's ``/``."""
    x = _t(x, y)
    return x.__truediv__(_t(y, x))


divide = truediv


def floordiv(x, y, name=None):
    """floor(x / y) elementwise (integers: rounded toward -inf, as Python's //)."""
    x = _t(x, y)
    y = _t(y, x)
    if x.dtype in (float32, float64):
        return floor(raw_ops.Div(x, y))
    return _ops.cast(floor(_ops.cast(x, float64) / _ops.cast(y, float64)), x.dtype)


def floormod(x, y, name=None):
    """x - floordiv(x, y) * y: the remainder with the sign of y, as Python's %."""
    x = _t(x, y)
    y = _t(y, x)
    return raw_ops.Sub(x, raw_ops.Mul(floordiv(x, y), y))


mod = floormod


def squared_difference(x, y, name=None):
    """(x - y) ** 2 elementwise."""
    x = _t(x, y)
    return square(raw_ops.Sub(x, _t(y, x)))


def _broadcast_pair(x, y):
    """x and y broadcast against each other (adding zeros), so Select can take either's shape."""
    x = _t(x, y)
    y = _t(y, x)
    return x + _ops.zeros_like(y), y + _ops.zeros_like(x)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0."""
    x, y = _broadcast_pair(x, y)
    zero = raw_ops.Equal(y, _ops.zeros_like(y))
    return raw_ops.Select(zero, _ops.zeros_like(x), raw_ops.Div(x, raw_ops.Select(zero, _ops.ones_like(y), y)))


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 where y is 0 (even where x is inf or nan)."""
    x, y = _broadcast_pair(x, y)
    prod = raw_ops.Mul(x, y)
    return raw_ops.Select(raw_ops.Equal(y, _ops.zeros_like(y)), _ops.zeros_like(prod), prod)


def scalar_mul(scalar, x, name=None):
    """scalar * x."""
    return _t(x) * scalar


def is_nan(x, name=None):
    """True where x is NaN (NaN is the one value not equal to itself)."""
    x = _t(x)
    return raw_ops.NotEqual(x, x)


def is_inf(x, name=None):
    """True where x is +inf or -inf."""
    x = _t(x)
    return raw_ops.Equal(abs(x), constant(np.inf, x.dtype))


def is_finite(x, name=None):
    """True where x is neither inf nor NaN (x - x is 0 exactly for finite x, NaN otherwise)."""
    x = _t(x)
    return raw_ops.Equal(raw_ops.Sub(x, x), _ops.zeros_like(x))


def logical_xor(x, y, name=None):
    """x != y for booleans."""
    return raw_ops.NotEqual(_t(x), _t(y))


def softplus(features, name=None):
    """log(1 + exp(features)) (op Softplus)."""
    return raw_ops.Softplus(features, name=name)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -softplus(-_t(x))


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x is 0 (even where y is 0)."""
    x, y = _broadcast_pair(x, y)
    zero = raw_ops.Equal(x, _ops.zeros_like(x))
    return raw_ops.Select(zero, _ops.zeros_like(x), x * log(raw_ops.Select(zero, _ops.ones_like(y), y)))


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over axis (None: all axes) of a bool tensor."""
    x = _ops.cast(_t(input_tensor), int32)
    return _ops.cast(reduce_max(x, axis, keepdims), bool_)


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over axis (None: all axes) of a bool tensor."""
    x = _ops.cast(_t(input_tensor), int32)
    return _ops.cast(reduce_min(x, axis, keepdims), bool_)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance, mean((x - mean(x))^2) over axis (as TF: no Bessel correction)."""
    x = _t(input_tensor)
    if x.dtype not in (float32, float64):
        raise TypeError("weft.math.reduce_variance needs a float tensor, got %s (cast it first)" % x.dtype)
    mean = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(square(x - mean), axis, keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Population standard deviation: sqrt(reduce_variance(x))."""
    return sqrt(reduce_variance(input_tensor, axis, keepdims))


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x^2)) over axis."""
    return sqrt(reduce_sum(square(_t(input_tensor)), axis, keepdims))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) over axis, computed around the (finite) maximum so it does not overflow."""
    x = _t(input_tensor)
    raw_max = reduce_max(x, axis, keepdims=True)
    m = _ops.stop_gradient(raw_ops.Select(is_finite(raw_max), raw_max, _ops.zeros_like(raw_max)))
    out = log(reduce_sum(exp(x - m), axis, keepdims=True)) + m
    return out if keepdims else _ops.squeeze(out, _reduced_axes(x, axis))


def _reduced_axes(x, axis):
    if axis is None:
        if x.shape is None:
            raise ValueError("reduce_logsumexp over all axes needs a tensor of known rank")
        return list(range(len(x.shape)))
    return _axis_list(axis)


def count_nonzero(input, axis=None, keepdims=False, dtype=int64, name=None):
    """The number of non-zero (true) elements over axis, as ``dtype``."""
    x = _t(input)
    nz = raw_ops.NotEqual(x, _ops.zeros_like(x))
    return _ops.cast(reduce_sum(_ops.cast(nz, int64), axis, keepdims), dtype)


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sums along axis (op Cumsum): tf.math.cumsum([a, b, c]) = [a, a + b, a + b + c];
    exclusive starts at 0, reverse sums from the end."""
    return raw_ops.Cumsum(_t(x), axis=int(axis), exclusive=bool(exclusive), reverse=bool(reverse), name=name)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """output[s] = sum of data[i] over the i with segment_ids[i] == s (op UnsortedSegmentSum):
    segment_ids' shape is a prefix of data's, negative ids are dropped, an id >= num_segments is
    an InvalidArgumentError naming it; output shape [num_segments] + data.shape[ids.rank:]."""
    ids = segment_ids if isinstance(segment_ids, Tensor) else _index_constant(segment_ids)
    num = num_segments if isinstance(num_segments, Tensor) else _index_constant(int(num_segments))
    return raw_ops.UnsortedSegmentSum(_t(data), ids, num, name=name)


def _sum_and_count(data, segment_ids, num_segments):
    """(segment sums, segment sizes at least 1, shaped to divide the sums)."""
    data = _t(data)
    ids = segment_ids if isinstance(segment_ids, Tensor) else _index_constant(segment_ids)
    total = unsorted_segment_sum(data, ids, num_segments)
    count = unsorted_segment_sum(_ops.ones_like(_ops.cast(ids, data.dtype)), ids, num_segments)
    if data.shape is not None and ids.shape is not None and len(data.shape) > len(ids.shape):
        count = _ops.reshape(count, _ops.concat([_ops.shape(count), _index_constant([1] * (len(data.shape) - len(ids.shape)))], 0))
    return total, _ops.maximum(count, _ops.ones_like(count))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of data[i] over the i in each segment (0 for an empty segment)."""
    total, count = _sum_and_count(data, segment_ids, num_segments)
    return _ops.divide(total, count, name=name)


def _segments(segment_ids):
    ids = segment_ids if isinstance(segment_ids, Tensor) else _index_constant(segment_ids)
    return ids, _ops.reduce_max(ids) + _ops.ones_like(_ops.reduce_max(ids))


def segment_sum(data, segment_ids, name=None):
    """Sums over runs of equal ``segment_ids`` (sorted, as TF requires): output[s] is the sum of
    the data[i] with segment_ids[i] == s, for s up to max(segment_ids)."""
    ids, num = _segments(segment_ids)
    return unsorted_segment_sum(data, ids, num, name=name)


def segment_mean(data, segment_ids, name=None):
    """The mean over each segment (as segment_sum)."""
    ids, num = _segments(segment_ids)
    return unsorted_segment_mean(data, ids, num, name=name)


def _unsorted_reduce(op_name):
    raw = getattr(raw_ops, op_name)

    def f(data, segment_ids, num_segments, name=None):
        ids = segment_ids if isinstance(segment_ids, Tensor) else _index_constant(segment_ids)
        num = num_segments if isinstance(num_segments, Tensor) else _index_constant(int(num_segments))
        return raw(_t(data), ids, num, name=name)
    return f


unsorted_segment_max = _unsorted_reduce("UnsortedSegmentMax")
unsorted_segment_max.__doc__ = """output[s] = max of data[i] over segment_ids[i] == s (op UnsortedSegmentMax); an
empty segment holds the dtype's lowest value, as TF."""
unsorted_segment_min = _unsorted_reduce("UnsortedSegmentMin")
unsorted_segment_min.__doc__ = """output[s] = min of data[i] over segment_ids[i] == s (op UnsortedSegmentMin); an
empty segment holds the dtype's highest value."""
unsorted_segment_prod = _unsorted_reduce("UnsortedSegmentProd")
unsorted_segment_prod.__doc__ = """output[s] = product of data[i] over segment_ids[i] == s (op UnsortedSegmentProd);
1 for an empty segment."""
for _f, _n in ((unsorted_segment_max, "unsorted_segment_max"), (unsorted_segment_min, "unsorted_segment_min"),
               (unsorted_segment_prod, "unsorted_segment_prod")):
    _f.__name__ = _f.__qualname__ = _n


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum over each segment divided by the square root of its size (0 for an empty segment)."""
    total, count = _sum_and_count(data, segment_ids, num_segments)
    return _ops.divide(total, _ops.sqrt(count), name=name)


def segment_max(data, segment_ids, name=None):
    """The max over runs of equal (sorted) ``segment_ids``, for s up to max(segment_ids)."""
    ids, num = _segments(segment_ids)
    return unsorted_segment_max(data, ids, num, name=name)


def segment_min(data, segment_ids, name=None):
    """The min over runs of equal (sorted) ``segment_ids``."""
    ids, num = _segments(segment_ids)
    return unsorted_segment_min(data, ids, num, name=name)


def segment_prod(data, segment_ids, name=None):
    """The product over runs of equal (sorted) ``segment_ids``."""
    ids, num = _segments(segment_ids)
    return unsorted_segment_prod(data, ids, num, name=name)


def top_k(input, k=1, sorted=True, name=None):
    """(values, indices) of the k largest entries along the last dim, largest first; equal values
    keep their index order (op TopK). indices are int32. ``sorted=False`` also returns them sorted
    (TF allows any order then)."""
    values, indices = raw_ops.TopK(_t(input), k=int(k), name=name)
    return _TopKV2(values, indices)


class _TopKV2(tuple):
    """TF's TopKV2 result: a (values, indices) pair with those two fields."""
    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))
    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def in_top_k(targets, predictions, k, name=None):
    """Whether predictions[i, targets[i]] is among the k largest of row i (bool [batch]). As TF,
    ties at the k-th value count as in the top k, and a non-finite target prediction is False."""
    predictions = _t(predictions)
    targets = _t(targets)
    if predictions.shape is None or len(predictions.shape) != 2 or predictions.shape[1] is None:
        raise ValueError("in_top_k: predictions must be [batch, classes] with a known number of classes, got %s"
                         % (predictions.shape,))
    pick = _ops.one_hot(targets, predictions.shape[1], on_value=1, off_value=0, dtype=bool_)
    target = reduce_sum(raw_ops.Select(pick, predictions, _ops.zeros_like(predictions)), axis=1, keepdims=True)
    above = reduce_sum(_ops.cast(raw_ops.Greater(predictions, target), int32), axis=1)
    return raw_ops.LogicalAnd(raw_ops.Less(above, constant(int(k), int32)),
                              _ops.squeeze(is_finite(target), [1]))


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=int32, name=None):
    """[num_classes, num_classes] counts: entry (i, j) counts examples of label i predicted as j
    (weighted by ``weights``). weft needs ``num_classes`` (TF can infer max + 1 from the values,
    but the graph is built before they are known)."""
    labels, predictions = _t(labels), _t(predictions)
    if num_classes is None:
        top = _known_max(labels, predictions)  # labels and predictions computed from constants: TF's max + 1
        if top is None:
            raise ValueError("weft.math.confusion_matrix needs num_classes when the labels come from a placeholder "
                             "or a variable (the graph is built before they are known); pass num_classes=")
        num_classes = top + 1
    n = int(num_classes)
    lab = _ops.one_hot(_ops.cast(_ops.reshape(labels, [-1]), int32), n, dtype=float64)
    pred = _ops.one_hot(_ops.cast(_ops.reshape(predictions, [-1]), int32), n, dtype=float64)
    if weights is not None:
        w = _ops.cast(_ops.reshape(_t(weights), [-1, 1]), float64)
        lab = lab * w
    return _ops.cast(_ops.matmul(lab, pred, transpose_a=True), dtype)


def _known_max(*tensors):
    """The largest value of tensors computed from constants (weft/_values.py), or None."""
    from ._values import value
    try:
        return max(int(np.max(value(t))) if np.size(value(t)) else -1 for t in tensors)
    except ValueError:
        return None


def l2_normalize(x, axis=None, epsilon=1e-12, name=None):
    """x / sqrt(max(sum(x^2, axis), epsilon)) (axis None: all axes)."""
    x = _float_of(_t(x))
    sq = reduce_sum(square(x), axis, keepdims=True)
    return x * rsqrt(maximum(sq, constant(epsilon, x.dtype)))


def softmax(logits, axis=-1, name=None):
    from .nn import softmax as _softmax
    return _softmax(logits, axis, name)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=int32, name=None, axis=None,
             binary_output=False):
    """Counts of each value 0..n-1 in ``arr`` (n = minlength, which weft needs: the graph is built
    before the values are known). ``axis=-1`` counts each row of a 2-D arr ([rows, n]);
    ``binary_output`` gives 1 where a value occurs (weights then do not apply, as TF)."""
    arr = _t(arr)
    if axis not in (None, 0, -1):
        raise ValueError("weft.math.bincount: axis must be None, 0 or -1, got %r" % (axis,))
    if axis == -1 and (arr.shape is None or len(arr.shape) != 2):
        raise ValueError("weft.math.bincount(axis=-1) counts the rows of a 2-D arr, got shape %s" % (arr.shape,))
    if binary_output and weights is not None:
        raise ValueError("weft.math.bincount: binary_output=True takes no weights (as TF)")
    top = _known_max(arr)
    if top is not None:  # values computed from constants: TF's rule, max(max + 1, minlength) capped at maxlength
        n = max(top + 1, int(minlength or 0))
        n = min(n, int(maxlength)) if maxlength is not None else n
    elif minlength is None or (maxlength is not None and maxlength != minlength):
        raise ValueError("weft.math.bincount of values from a placeholder or variable needs minlength (= maxlength "
                         "when given): the number of bins (the graph is built before the values are known)")
    else:
        n = int(minlength)
    rows = axis == -1
    ids = _ops.cast(arr if rows else _ops.reshape(arr, [-1]), int32)
    oh = _ops.one_hot(ids, n, dtype=float64)  # [k, n] or [rows, k, n]
    if weights is not None:
        w = _ops.cast(_t(weights), float64)
        oh = oh * _ops.expand_dims(w if rows else _ops.reshape(w, [-1]), -1)
    counts = reduce_sum(oh, -2)
    if binary_output:
        counts = _ops.minimum(counts, constant(1.0, float64))
    return _ops.cast(counts, dtype, name=name)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """log(cumsum(exp(x))) along ``axis`` without overflow or underflow: entry i is the logsumexp
    of the entries up to i, a reduce_logsumexp over a lower-triangular mask (O(n^2) memory in the
    axis length, which must be known; gradients through those ops). exclusive starts at -inf
    (log 0), reverse accumulates from the end, as TF."""
    x = _float_of(_t(x))
    if x.shape is None:
        raise ValueError("weft.math.cumulative_logsumexp needs x of known rank")
    r = len(x.shape)
    axis = int(axis) + r if int(axis) < 0 else int(axis)
    if not 0 <= axis < r or x.shape[axis] is None:
        raise ValueError("weft.math.cumulative_logsumexp: axis %s must be a dim of known length of x %s" % (axis, x.shape))
    n = int(x.shape[axis])
    perm = [d for d in range(r) if d != axis] + [axis]
    inverse = list(np.argsort(perm))
    y = _ops.transpose(x, perm)
    if reverse:
        y = y[..., ::-1]
    # mask[i, j] = 0 where j <= i, -inf elsewhere; rows of y broadcast against it.
    mask = np.where(np.tril(np.ones((n, n), bool)), 0.0, -np.inf).astype(x.dtype.as_numpy_dtype)
    out = reduce_logsumexp(_ops.expand_dims(y, -2) + constant(mask), axis=-1)
    if exclusive:
        first = _ops.zeros_like(out[..., :1]) + constant(-np.inf, x.dtype)
        out = _ops.concat([first, out[..., :-1]], r - 1)
    if reverse:
        out = out[..., ::-1]
    return _ops.transpose(out, inverse, name=name)


def searchsorted(sorted_sequence, values, side="left", out_type=int32, name=None):
    """For each of ``values`` [..., M], its insertion index into the sorted innermost rows of
    ``sorted_sequence`` [..., N] (equal leading dims): the count of entries < v ('left') or <= v
    ('right'). Composed as a comparison of every (value, entry) pair: O(M * N) memory per row."""
    if side not in ("left", "right"):
        raise ValueError("weft.searchsorted: side must be 'left' or 'right', got %r" % (side,))
    seq, vals = _t(sorted_sequence), _t(values)
    vals = _ops.cast(vals, seq.dtype)
    if seq.shape is None or vals.shape is None or len(seq.shape) != len(vals.shape) or not seq.shape:
        raise ValueError("weft.searchsorted: sorted_sequence %s and values %s must have one rank (>= 1) and the same "
                         "leading dims" % (seq.shape, vals.shape))
    entries, probes = _ops.expand_dims(seq, -2), _ops.expand_dims(vals, -1)  # [..., 1, N], [..., M, 1]
    before = _ops.less(entries, probes) if side == "left" else _ops.less_equal(entries, probes)
    return _ops.cast(reduce_sum(_ops.cast(before, int64), -1), out_type, name=name)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=int32, name=None):
    """The bin of each value among ``nbins`` equal bins over value_range [lo, hi]; values below lo
    go to bin 0, at or above hi to the last bin (as TF)."""
    v = _t(values)
    if v.dtype not in (float32, float64):
        v = _ops.cast(v, float32)
    rng = _ops.cast(_t(value_range), v.dtype)
    lo, hi = rng[0], rng[1]
    scaled = (v - lo) / (hi - lo)
    idx = _ops.cast(_ops.raw_ops.Floor(scaled * float(nbins)), int64)
    idx = _ops.minimum(_ops.maximum(idx, constant(0, int64)), constant(int(nbins) - 1, int64))
    return _ops.cast(idx, dtype, name=name)


def histogram_fixed_width(values, value_range, nbins=100, dtype=int32, name=None):
    """Counts of values in ``nbins`` equal bins over value_range [lo, hi] (TF doc:
    histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15], [0.0, 5.0], nbins=5) = [2, 1, 1, 0, 2])."""
    bins = _ops.reshape(histogram_fixed_width_bins(values, value_range, nbins, int64), [-1])
    ones = _ops.ones_like(_ops.cast(bins, int64))
    return _ops.cast(unsorted_segment_sum(ones, bins, constant(int(nbins), int64)), dtype, name=name)


# ---- elementwise functions composed from the ops above (gradients are the ops') ----------------

def tan(x, name=None):
    x = _float_of(_t(x))
    return sin(x) / cos(x)


def sinh(x, name=None):
    x = _float_of(_t(x))
    return (exp(x) - exp(-x)) * 0.5


def cosh(x, name=None):
    x = _float_of(_t(x))
    return (exp(x) + exp(-x)) * 0.5


def asinh(x, name=None):
    """log(x + sqrt(x^2 + 1)), written for negative x as -asinh(-x) (no cancellation)."""
    x = _float_of(_t(x))
    a = abs(x)
    return sign(x) * log(a + sqrt(square(a) + 1.0))


def acosh(x, name=None):
    x = _float_of(_t(x))
    return log(x + sqrt(square(x) - 1.0))


def atanh(x, name=None):
    x = _float_of(_t(x))
    return 0.5 * (log1p(x) - log1p(-x))


def erfc(x, name=None):
    """1 - erf(x) (absolute error of erf's, not relative for large x)."""
    return 1.0 - erf(_float_of(_t(x)))


def rint(x, name=None):
    """Rounds halves to even, as tf.math.rint (= tf.math.round)."""
    return round(x)


def reciprocal_no_nan(x, name=None):
    """1 / x, and 0 where x is 0 (TF's)."""
    x = _float_of(_t(x))
    zero = _ops.equal(x, constant(0, x.dtype))
    return _ops.where(zero, _ops.zeros_like(x), 1.0 / _ops.where(zero, _ops.ones_like(x), x))


def softsign(features, name=None):
    x = _float_of(_t(features))
    return x / (abs(x) + 1.0)


# ---- special and inverse trigonometric functions (ops Asin, Acos, Atan, Atan2, Lgamma, Digamma, Ndtri) --

asin = _unary("Asin", "asin")
acos = _unary("Acos", "acos")
atan = _unary("Atan", "atan")
lgamma = _unary("Lgamma", "lgamma")
digamma = _unary("Digamma", "digamma")
ndtri = _unary("Ndtri", "ndtri")


def atan2(y, x, name=None):
    """The angle of the point (x, y): arctan(y / x) in [-pi, pi] by both signs (op Atan2)."""
    y = _float_of(_t(y, x))
    return raw_ops.Atan2(y, _t(x, y), name=name)


def erfinv(x, name=None):
    """The inverse of erf on (-1, 1): ndtri((x + 1) / 2) / sqrt(2)."""
    x = _float_of(_t(x))
    return ndtri((x + 1.0) * 0.5) * 0.7071067811865476


def erfcinv(x, name=None):
    """The inverse of erfc on (0, 2): -ndtri(x / 2) / sqrt(2)."""
    x = _float_of(_t(x))
    return -ndtri(x * 0.5) * 0.7071067811865476


def lbeta(x, name=None):
    """log |B(x)| of the last axis: sum(lgamma(x)) - lgamma(sum(x)) (TF's multivariate beta)."""
    x = _float_of(_t(x))
    return reduce_sum(lgamma(x), -1) - lgamma(reduce_sum(x, -1))


def xdivy(x, y, name=None):
    """x / y, and 0 where x is 0 (even where y is 0)."""
    x, y = _broadcast_pair(x, y)
    zero = raw_ops.Equal(x, _ops.zeros_like(x))
    return raw_ops.Select(zero, _ops.zeros_like(x), x / raw_ops.Select(zero, _ops.ones_like(y), y))


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x is 0."""
    x, y = _broadcast_pair(x, y)
    zero = raw_ops.Equal(x, _ops.zeros_like(x))
    return raw_ops.Select(zero, _ops.zeros_like(x), x * log1p(raw_ops.Select(zero, _ops.zeros_like(y), y)))


def log_softmax(logits, axis=-1, name=None):
    """tf.math.log_softmax (= tf.nn.log_softmax)."""
    from .nn import log_softmax as f
    return f(logits, axis=axis, name=name)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running products along axis, as tf.math.cumprod (exclusive starts at 1, reverse from the
    end). Computed as sign * exp(cumsum(log|x|)), exact zeros kept: float results carry the
    rounding of exp and log (a few ulps); integers go through float64 and back."""
    x = _t(x)
    dtype = x.dtype
    f = x if dtype in (float32, float64) else _ops.cast(x, float64)
    kw = dict(axis=axis, exclusive=exclusive, reverse=reverse)
    is_zero = _ops.cast(_ops.equal(f, _ops.zeros_like(f)), f.dtype)
    negative = _ops.cast(_ops.less(f, _ops.zeros_like(f)), f.dtype)
    magnitude = exp(cumsum(log(abs(f) + is_zero), **kw))  # log|x|, 0 at the zeros (counted apart)
    sign = 1.0 - 2.0 * floormod(cumsum(negative, **kw), 2.0)
    out = _ops.where(_ops.greater(cumsum(is_zero, **kw), _ops.zeros_like(f)), _ops.zeros_like(f), sign * magnitude)
    if dtype not in (float32, float64):
        out = _ops.cast(round(out), dtype)
    return out


def invert_permutation(x, name=None):
    """y with y[x[i]] = i, for a permutation x of 0..n-1 (a vector)."""
    from .array_ops import range as _range
    x = _t(x)
    n = _ops.size(x, out_type=x.dtype)
    idx = _range(0, n, 1, dtype=x.dtype)
    return unsorted_segment_sum(idx, x, n)


def is_non_decreasing(x, name=None):
    """Whether x[i] <= x[i + 1] over x flattened (True for fewer than two elements)."""
    x = _ops.reshape(_t(x), [-1])
    return reduce_all(_ops.greater_equal(x[1:], x[:-1]))


def is_strictly_increasing(x, name=None):
    """Whether x[i] < x[i + 1] over x flattened (True for fewer than two elements)."""
    x = _ops.reshape(_t(x), [-1])
    return reduce_all(_ops.greater(x[1:], x[:-1]))


def polyval(coeffs, x, name=None):
    """coeffs[0] * x^(n-1) + ... + coeffs[n-1], by Horner's rule (coeffs: a list of tensors)."""
    x = _t(x)
    if not coeffs:
        return _ops.zeros_like(x)
    out = _t(coeffs[0], x)
    for c in coeffs[1:]:
        out = out * x + _t(c, x)
    return out


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    """tf.math.accumulate_n: the sum of a list of tensors of one shape (= add_n)."""
    return add_n(inputs, name=name)


def zero_fraction(value, name=None):
    """tf.math.zero_fraction (= tf.nn.zero_fraction)."""
    from .nn import zero_fraction as f
    return f(value, name=name)


from ._complex import real, imag, conj, angle  # noqa: E402,F401 - tf.math on complex values (tf.signal's results)

__all__ = sorted(n for n, v in list(globals().items()) if not n.startswith("_") and callable(v)
                 and n not in ("Tensor", "as_dtype", "constant", "convert_to_tensor", "raw_ops"))
