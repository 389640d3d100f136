"""``tf.random.stateless_*`` and ``tf.random.experimental.stateless_split`` / ``stateless_fold_in``.

Each function is a pure function of its ``shape`` and ``seed`` (a shape-[2] int32 or int64
tensor): the same seed gives the same values in every run, Session and thread count (ops
Stateless* in ops/random.cc). The numbers are weft's (Philox4x32-10 keyed on the seed), not
TensorFlow's bit for bit; the distributions, shapes, dtypes and errors are TensorFlow's.
"""
from . import ops as _ops
from .framework import Tensor as _Tensor, as_dtype as _as_dtype, convert_to_tensor as _convert

_FLOATS = ("float32", "float64")
_INTS = ("int32", "int64")


def _seed(seed, what):
    """seed as an int32 / int64 tensor of shape [2] (TF's check, made when the shape is known)."""
    s = seed if isinstance(seed, _Tensor) else _convert(seed)
    if s.dtype.name not in _INTS:
        raise ValueError("%s: seed must be an int32 or int64 tensor of shape [2], got dtype %s" % (what, s.dtype.name))
    if s.shape is not None and (len(s.shape) != 1 or s.shape[0] not in (None, 2)):
        raise ValueError("%s: seed must have shape [2], got shape %s" % (what, list(s.shape)))
    return s


def _shape(shape):
    """The shape as an int64 tensor: a list of ints, a list holding scalar tensors, or a tensor."""
    if isinstance(shape, _Tensor):
        return _ops.cast(shape, _ops.int64)
    dims = _ops._static_shape(shape)
    if dims is None:
        return _ops._run_time_shape(shape)
    for d in dims:
        if d < 0:
            raise ValueError("shape must have non-negative dimensions, got %s" % (dims,))
    return _ops.constant(dims, dtype=_ops.int64, shape=[len(dims)])


def _float_dtype(dtype, what):
    dtype = _as_dtype(dtype)
    if dtype.name not in _FLOATS:
        raise ValueError("%s: dtype must be float32 or float64, got %s" % (what, dtype.name))
    return dtype


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_ops.float32, name=None, alg="auto_select"):
    """Uniform values in [minval, maxval) (floats: maxval defaults to 1). Integer dtypes (int32,
    int64) take both bounds, drawn as minval + bits mod (maxval - minval), or neither: the whole
    range of the dtype."""
    dtype = _as_dtype(dtype)
    s, dims = _seed(seed, "stateless_random_uniform"), _shape(shape)
    if dtype.name in _INTS:
        if (minval is None) != (maxval is None):
            raise ValueError("Must specify both or neither minval and maxval for integer dtypes, got minval=%r "
                             "maxval=%r" % (minval, maxval))
        if minval is None:
            return _ops.raw_ops.StatelessRandomUniformFullInt(dims, s, dtype=dtype,
                                                              name=name)
        lo, hi = _ops.cast(_convert(minval), dtype), _ops.cast(_convert(maxval), dtype)
        return _ops.raw_ops.StatelessRandomUniformInt(dims, s, lo, hi, name=name)
    if minval is None:
        raise ValueError("stateless_random_uniform: minval must be a number for dtype %s, got None" % dtype.name)
    dtype = _float_dtype(dtype, "stateless_random_uniform")
    u = _ops.raw_ops.StatelessRandomUniform(dims, s, dtype=dtype)
    hi = 1 if maxval is None else maxval
    lo_t, hi_t = _ops.cast(_convert(minval), dtype), _ops.cast(_convert(hi), dtype)
    return _ops.add(lo_t, u * (hi_t - lo_t), name=name)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_ops.float32, name=None, alg="auto_select"):
    """Normal values with the given mean and standard deviation."""
    dtype = _float_dtype(dtype, "stateless_random_normal")
    s = _seed(seed, "stateless_random_normal")
    z = _ops.raw_ops.StatelessRandomNormal(_shape(shape), s, dtype=dtype)
    return _ops.add(_ops.cast(_convert(mean), dtype), z * _ops.cast(_convert(stddev), dtype), name=name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_ops.float32, name=None, alg="auto_select"):
    """Normal values redrawn while more than 2 standard deviations from the mean."""
    dtype = _float_dtype(dtype, "stateless_truncated_normal")
    s = _seed(seed, "stateless_truncated_normal")
    z = _ops.raw_ops.StatelessTruncatedNormal(_shape(shape), s, dtype=dtype)
    return _ops.add(_ops.cast(_convert(mean), dtype), z * _ops.cast(_convert(stddev), dtype), name=name)


def gumbel_argmax(logits, num_samples, dtype, uniform_like, what):
    """[batch, num_samples] class indices from logits [batch, classes] by the Gumbel-max trick:
    argmax of logits - log(-log(U)), with U from ``uniform_like(tiled_logits)``."""
    logits = _convert(logits)
    if logits.shape is None or len(logits.shape) != 2:
        raise ValueError("%s: logits must be [batch, classes], got shape %s" % (what, logits.shape))
    if logits.dtype not in (_ops.float32, _ops.float64):
        logits = _ops.cast(logits, _ops.float32)
    tiled = _ops.tile(_ops.expand_dims(logits, 1), [1, int(num_samples), 1])
    u = uniform_like(tiled)
    # u in [0, 1): u = 0 gives a -inf key, never drawn (a probability-zero event anyway).
    gumbel = -_ops.log(-_ops.log(u))
    return _ops.argmax(tiled + gumbel, axis=2, output_type=_as_dtype(dtype or _ops.int64))


def stateless_categorical(logits, num_samples, seed, dtype=_ops.int64, name=None):
    """[batch, num_samples] class indices drawn from the unnormalized log-probabilities ``logits``
    [batch, classes]."""
    s = _seed(seed, "stateless_categorical")

    def uniform_like(t):
        return _ops.raw_ops.StatelessRandomUniform(_ops.shape(t, out_type=_ops.int64), s, dtype=t.dtype)
    return _ops.identity(gumbel_argmax(logits, num_samples, dtype, uniform_like, "stateless_categorical"), name=name)


def stateless_binomial(shape, seed, counts, probs, output_dtype=_ops.int32, name=None):
    """Binomial(counts, probs) draws of ``shape``; counts and probs are scalars or broadcast to the
    output shape from its last dimensions."""
    s = _seed(seed, "stateless_random_binomial")
    counts, probs = _convert(counts), _convert(probs)
    ftype = _ops.float64 if _ops.float64 in (counts.dtype, probs.dtype) else _ops.float32
    if counts.dtype.name not in _FLOATS + _INTS or probs.dtype.name not in _FLOATS + _INTS:
        raise ValueError("stateless_random_binomial: counts and probs must be numbers, got %s and %s"
                         % (counts.dtype.name, probs.dtype.name))
    return _ops.raw_ops.StatelessRandomBinomial(_shape(shape), s, _ops.cast(counts, ftype), _ops.cast(probs, ftype),
                                                dtype=_as_dtype(output_dtype), name=name)


def stateless_split(seed, num=2, alg="auto_select"):
    """``num`` new seeds [num, 2] from ``seed`` (TF: stateless_random_uniform([num, 2], seed, dtype=seed.dtype,
    minval=None, maxval=None))."""
    s = _seed(seed, "stateless_split")
    return stateless_uniform([int(num), 2], s, minval=None, maxval=None, dtype=s.dtype)


def stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed [2] from ``seed`` and the integer ``data`` (TF: stack of a full-range draw from seed and data)."""
    s = _seed(seed, "stateless_fold_in")
    data = _ops.cast(_convert(data), s.dtype)
    drawn = stateless_uniform([], s, minval=None, maxval=None, dtype=s.dtype)
    from .array_ops import stack
    return stack([drawn, data])
