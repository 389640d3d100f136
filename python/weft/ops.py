"""Op functions. ``weft.raw_ops.<Op>`` is generated from the C++ op registry (every op, its inputs
as arguments, its attrs as keyword arguments, its doc line as docstring); the TensorFlow-named
functions below (``weft.matmul``, ``weft.reduce_mean``, ...) are thin wrappers over them.
Operators on tensors (``+ - * / @``, comparisons, indexing) are installed at the end.
"""
import functools
import inspect
import types

import numpy as np

from . import _custom_gradient, _recorder, _weft
from . import framework as _framework
from .framework import (Tensor, Operation, as_dtype, constant, convert_to_tensor, get_default_graph,
                        int32, int64, float32, float64, uint8, bool_, _numpy_value, _index_constant)

# ---- generated raw ops ------------------------------------------------------------------------

_OP_DEFS = {d["name"]: d for d in _weft.op_defs()}


def _inferred_attrs(d):
    """Type and length attrs the graph infers from the inputs (not arguments of the function)."""
    inferred = set()
    for _, t, is_list, _ in d["inputs"]:
        inferred.add(t)
    for a in d["attrs"]:
        if a["type"] == "int" and any(is_list for _, _, is_list, _ in d["inputs"]) and a["name"] == "N":
            inferred.add("N")
    return inferred


def _convert_inputs(d, args):
    """Tensors for the op's inputs: non-tensors become constants whose dtype follows a tensor of
    the same type attr (``x + 1.0`` with x float64 makes a float64 constant)."""
    by_attr = {}
    for (_, t, is_list, _), a in zip(d["inputs"], args):
        vals = a if is_list else [a]
        for v in vals:
            if isinstance(v, Tensor):
                by_attr.setdefault(t, v.dtype)
    attr_defaults = {a["name"]: a["default"] for a in d["attrs"] if a["type"] == "type" and a["has_default"]}
    out = []
    for (_, t, is_list, _), a in zip(d["inputs"], args):
        fixed = None
        try:
            fixed = as_dtype(t)
        except Exception:
            fixed = by_attr.get(t, attr_defaults.get(t))
        if is_list:
            out.append([convert_to_tensor(v, fixed if not isinstance(v, Tensor) else None) for v in a])
        else:
            out.append(convert_to_tensor(a, fixed if not isinstance(a, Tensor) else None))
    return out


def _make_raw_op(d):
    inferred = _inferred_attrs(d)
    attrs = [a for a in d["attrs"] if a["name"] not in inferred]
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n, _, _, _ in d["inputs"]]
    for a in attrs:
        default = a["default"] if a["has_default"] else inspect.Parameter.empty
        params.append(inspect.Parameter(a["name"], inspect.Parameter.KEYWORD_ONLY, default=default))
    params.append(inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None))
    sig = inspect.Signature(params)
    op_name = d["name"]

    def op(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs = _convert_inputs(d, [bound.arguments[n] for n, _, _, _ in d["inputs"]])
        attr_values = {a["name"]: bound.arguments[a["name"]] for a in attrs
                       if bound.arguments[a["name"]] is not inspect.Parameter.empty}
        node = get_default_graph().create_op(op_name, inputs, attr_values, bound.arguments["name"])
        outs = node.outputs
        if _framework._op_hook[0] is not None:
            _recorder.given(outs)  # eager step: their values come from it
        if _custom_gradient._NO_GRADIENT or getattr(node.graph, "_gradient_override_map", None):
            outs = _custom_gradient.overridden(node.graph, node, outs)
        if not d["outputs"]:
            return node
        if len(d["outputs"]) == 1 and not d["outputs"][0][2]:
            return outs[0]
        return tuple(outs) if not any(o[2] for o in d["outputs"]) else list(outs)

    op.__name__ = op_name
    op.__qualname__ = op_name
    op.__signature__ = sig
    lines = [d["doc"], ""]
    for n, t, is_list, is_ref in d["inputs"]:
        lines.append("%s: %s%s%s" % (n, "list of " if is_list else "", "tensor of " + t,
                                     " (a Variable: updated in place)" if is_ref else ""))
    for a in attrs:
        allowed = (" one of " + ", ".join(str(x) for x in a["allowed"])) if a["allowed"] else ""
        lines.append("%s: %s attr%s%s" % (a["name"], a["type"], allowed,
                                          "" if a["has_default"] else " (required)"))
    lines.append("Returns: " + (", ".join(n for n, _, _ in d["outputs"]) or "the Operation"))
    op.__doc__ = "\n".join(lines)
    return op


raw_ops = types.ModuleType("weft.raw_ops", "Every registered op as a function (generated from the op registry).")
for _name, _d in sorted(_OP_DEFS.items()):
    if not _name.startswith("_"):
        setattr(raw_ops, _name, _make_raw_op(_d))


def _doc_from(op_name, extra=""):
    def deco(f):
        f.__doc__ = (f.__doc__ or "") + ("\n\n" if f.__doc__ else "") + _OP_DEFS[op_name]["doc"] + extra
        return f
    return deco


# ---- TensorFlow-named functions: elementwise --------------------------------------------------

def _unary(op_name, py_name):
    raw = getattr(raw_ops, op_name)

    def f(x, name=None):
        if hasattr(x, "__weft_unary__"):  # a complex value (_complex.py): tf.abs gives its magnitude
            return x.__weft_unary__(py_name)
        return raw(x, name=name)
    f.__name__ = f.__qualname__ = py_name
    f.__doc__ = "%s (op %s)." % (_OP_DEFS[op_name]["doc"], op_name)
    return f


def _binary(op_name, py_name):
    raw = getattr(raw_ops, op_name)

    def f(x, y, name=None):
        # TensorFlow's rule for inputs that share a dtype: a Python value takes the dtype of the
        # first tensor among them (tf.maximum(0., [1, -1]) is float32), as the operators do.
        if not isinstance(x, Tensor) and not isinstance(y, Tensor) and not isinstance(x, np.ndarray):
            x = convert_to_tensor(x)
        if isinstance(x, Tensor) and not isinstance(y, Tensor):
            y = _other(x, y)
        elif isinstance(y, Tensor) and not isinstance(x, Tensor):
            x = _other(y, x)
        return raw(x, y, name=name)
    f.__name__ = f.__qualname__ = py_name
    f.__doc__ = "%s (op %s)." % (_OP_DEFS[op_name]["doc"], op_name)
    return f


_UNARY = {"negative": "Neg", "abs": "Abs", "sign": "Sign", "square": "Square", "sqrt": "Sqrt", "rsqrt": "Rsqrt",
          "reciprocal": "Reciprocal", "exp": "Exp", "log": "Log", "logical_not": "LogicalNot", "sigmoid": "Sigmoid",
          "tanh": "Tanh", "identity": "Identity", "stop_gradient": "StopGradient", "zeros_like": "ZerosLike",
          "ones_like": "OnesLike", "rank": "Rank"}
_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div", "truediv": "Div", "pow": "Pow",
           "maximum": "Maximum", "minimum": "Minimum", "equal": "Equal", "not_equal": "NotEqual", "less": "Less",
           "less_equal": "LessEqual", "greater": "Greater", "greater_equal": "GreaterEqual",
           "logical_and": "LogicalAnd", "logical_or": "LogicalOr"}
for _py, _op in _UNARY.items():
    globals()[_py] = _unary(_op, _py)
for _py, _op in _BINARY.items():
    globals()[_py] = _binary(_op, _py)


def where(condition, x=None, y=None, name=None):
    """Elementwise ``x if condition else y`` (op Select); with condition alone, the coordinates of
    its true elements as int64 [count, rank] (op Where)."""
    if x is None and y is None:
        return raw_ops.Where(condition, name=name)
    if x is None or y is None:
        raise ValueError("weft.where needs both x and y, or neither")
    condition = convert_to_tensor(condition)
    x = convert_to_tensor(x, y.dtype if isinstance(y, Tensor) and not isinstance(x, Tensor) else None)
    y = convert_to_tensor(y, x.dtype)
    shapes = [t.shape for t in (condition, x, y)]
    if shapes[0] is None or any(s != shapes[0] for s in shapes):
        # TF2's where broadcasts condition, x and y against each other (numpy's rules): Select
        # takes equal shapes, so each is added to the zeros of the broadcast shape first.
        zeros = zeros_like(x) + zeros_like(y) + cast(zeros_like(condition), x.dtype)
        x, y = x + zeros, y + zeros
        condition = raw_ops.Greater(cast(condition, x.dtype) + zeros, zeros)
    return raw_ops.Select(condition, x, y, name=name)


def cast(x, dtype, name=None):
    """``x`` converted to ``dtype`` (op Cast)."""
    x = convert_to_tensor(x)
    if x.dtype == as_dtype(dtype):
        return x
    return raw_ops.Cast(x, DstT=as_dtype(dtype), name=name)


def add_n(inputs, name=None):
    """Sum of a list of tensors of one shape (op AddN)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("add_n: inputs must be a list of at least one Tensor with the same dtype and shape, got []")
    return raw_ops.AddN(inputs, name=name)


# ---- reductions -------------------------------------------------------------------------------

def _axis_list(axis):
    if axis is None:
        return []
    if isinstance(axis, (int, np.integer)):
        return [int(axis)]
    return [int(a) for a in axis]


def _reduction(op_name, py_name):
    raw = getattr(raw_ops, op_name)

    def f(input_tensor, axis=None, keepdims=False, name=None):
        return raw(input_tensor, axis=_axis_list(axis), keep_dims=keepdims, name=name)
    f.__name__ = f.__qualname__ = py_name
    f.__doc__ = ("%s\n\ninput_tensor: the tensor. axis: an int, a list of ints or None (all axes).\n"
                 "keepdims: keep reduced axes as size 1. (op %s)") % (_OP_DEFS[op_name]["doc"], op_name)
    return f


reduce_sum = _reduction("Sum", "reduce_sum")
reduce_mean = _reduction("Mean", "reduce_mean")
reduce_max = _reduction("Max", "reduce_max")
reduce_min = _reduction("Min", "reduce_min")
reduce_prod = _reduction("Prod", "reduce_prod")


def _arg_input(input):
    """TF's ArgMax / ArgMin also take bools (the first True): as uint8, the same order."""
    x = convert_to_tensor(input)
    return cast(x, uint8) if x.dtype == bool_ else x


def argmax(input, axis=None, output_type=int64, name=None):
    """Index of the largest element along ``axis`` (default 0) (op ArgMax)."""
    return raw_ops.ArgMax(_arg_input(input), axis=0 if axis is None else int(axis), output_type=output_type,
                          name=name)


def argmin(input, axis=None, output_type=int64, name=None):
    """Index of the smallest element along ``axis`` (default 0) (op ArgMin)."""
    return raw_ops.ArgMin(_arg_input(input), axis=0 if axis is None else int(axis), output_type=output_type,
                          name=name)


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product ``a @ b``: MatMul for rank 2, BatchMatMul (over leading dims) for higher ranks."""
    a, b = convert_to_tensor(a), convert_to_tensor(b, getattr(a, "dtype", None) if not isinstance(b, Tensor) else None)
    ra = len(a.shape) if a.shape is not None else None
    rb = len(b.shape) if b.shape is not None else None
    if ra == 2 and rb == 2:
        return raw_ops.MatMul(a, b, transpose_a=transpose_a, transpose_b=transpose_b, name=name)
    return raw_ops.BatchMatMul(a, b, adj_x=transpose_a, adj_y=transpose_b, name=name)


# ---- array ops --------------------------------------------------------------------------------

def _shape_tensor(shape):
    """A shape as a tensor: a tensor as it is; a number n as [n]; a list of ints as a constant,
    int32 when every dim fits (the usual case), else int64 -- shapes are int64 everywhere, so
    ``fill([2**32 + 3], 1.0)`` asks for 2**32 + 3 elements, not 3; a list mixing ints and scalar
    tensors (``[tf.shape(x)[0], -1, heads, depth]``, as TF programs write) packed into an int32
    vector at run time."""
    if isinstance(shape, Tensor):
        return shape
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    shape = list(shape)
    if any(isinstance(d, Tensor) for d in shape):
        parts = [raw_ops.Reshape(cast(d, int32), _index_constant([1])) if isinstance(d, Tensor)
                 else _index_constant([-1 if d is None else int(d)]) for d in shape]
        return raw_ops.Concat(parts, axis=0)
    return _index_constant([-1 if d is None else int(d) for d in shape])


def _static_dims(shape):
    """The dims of a shape argument as a list of ints, or None when a dim is a tensor or unknown."""
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    if isinstance(shape, Tensor):
        return None
    shape = list(shape)
    if any(d is None or isinstance(d, Tensor) for d in shape):
        return None
    return [int(d) for d in shape]


def shape(input, out_type=int32, name=None):
    """The shape of ``input`` as a vector, computed at run time (op Shape)."""
    return raw_ops.Shape(input, out_type=out_type, name=name)


def size(input, out_type=int32, name=None):
    """The number of elements of ``input`` (op Size)."""
    return raw_ops.Size(input, out_type=out_type, name=name)


def reshape(tensor, shape, name=None):
    """``tensor`` with a new shape (a list with at most one -1, or an int tensor) (op Reshape)."""
    return raw_ops.Reshape(tensor, _shape_tensor(shape), name=name)


def transpose(a, perm=None, name=None):
    """Permutes dims (default: reversed) (op Transpose)."""
    a = convert_to_tensor(a)
    if perm is None:
        perm = list(reversed(range(len(a.shape))))
    return raw_ops.Transpose(a, perm=list(perm), name=name)


def expand_dims(input, axis, name=None):
    """Inserts a dim of size 1 at ``axis`` (op ExpandDims; on host string values, numpy's, as
    text pipelines do before TextVectorization: ``vectorize_layer(tf.expand_dims(text, -1))``)."""
    from . import _text_values
    if _text_values.is_text(input):
        return _text_values.wrap(np.expand_dims(_text_values.as_bytes_array(input, "expand_dims"), int(axis)))
    return raw_ops.ExpandDims(input, axis=int(axis), name=name)


def squeeze(input, axis=None, name=None):
    """Removes size-1 dims (those in ``axis``, or all) (op Squeeze)."""
    return raw_ops.Squeeze(input, axis=_axis_list(axis), name=name)


def concat(values, axis, name=None):
    """Joins tensors along ``axis`` (op Concat)."""
    return raw_ops.Concat(list(values), axis=int(axis), name=name)


def split(value, num_or_size_splits, axis=0, name=None):
    """Splits ``value`` into ``num_or_size_splits`` equal parts along ``axis`` (op Split)."""
    if not isinstance(num_or_size_splits, (int, np.integer)):
        raise NotImplementedError("weft.split takes a number of equal parts, not a list of sizes")
    return raw_ops.Split(value, num_split=int(num_or_size_splits), axis=int(axis), name=name)


def slice(input_, begin, size, name=None):
    """The block at ``begin`` of ``size`` (-1: to the end) (op Slice)."""
    return raw_ops.Slice(input_, begin=list(begin), size=list(size), name=name)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, shrink_axis_mask=0, name=None):
    """``input_[begin:end:strides]`` per leading dim, with TF's masks (op StridedSlice)."""
    strides = [1] * len(begin) if strides is None else list(strides)
    return raw_ops.StridedSlice(input_, begin=list(begin), end=list(end), strides=strides, begin_mask=begin_mask,
                                end_mask=end_mask, shrink_axis_mask=shrink_axis_mask, name=name)


def gather(params, indices, axis=0, name=None):
    """Slices of ``params`` along ``axis`` at ``indices`` (op Gather)."""
    indices = indices if isinstance(indices, Tensor) else _index_constant(indices)
    return raw_ops.Gather(params, indices, axis=int(axis), name=name)


def pad(tensor, paddings, constant_values=0, name=None):
    """Pads each dim with ``paddings[k] = (before, after)`` values (op Pad)."""
    flat = [int(v) for p in paddings for v in p]
    return raw_ops.Pad(tensor, paddings=flat, constant_value=float(constant_values), name=name)


def tile(input, multiples, name=None):
    """Repeats ``input`` multiples[k] times along dim k (op Tile)."""
    return raw_ops.Tile(input, multiples=list(multiples), name=name)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with the scalar ``value`` (op Fill)."""
    return raw_ops.Fill(_shape_tensor(dims), value, name=name)


def zeros(shape, dtype=float32, name=None):
    """Zeros of ``shape``: a constant when the dims are known numbers, else filled at run time
    (``tf.zeros(tf.shape(x))``, ``tf.zeros([tf.shape(x)[0], 4])``)."""
    dims = _static_dims(shape)
    if dims is None:
        return raw_ops.Fill(_shape_tensor(shape), constant(0, dtype=as_dtype(dtype)), name=name)
    return constant(np.zeros(dims, dtype=as_dtype(dtype).as_numpy_dtype), name=name or "zeros")


def ones(shape, dtype=float32, name=None):
    """Ones of ``shape`` (as ``zeros``)."""
    dims = _static_dims(shape)
    if dims is None:
        return raw_ops.Fill(_shape_tensor(shape), constant(1, dtype=as_dtype(dtype)), name=name)
    return constant(np.ones(dims, dtype=as_dtype(dtype).as_numpy_dtype), name=name or "ones")


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1, dtype=float32, name=None):
    """One-hot vectors of ``depth`` at ``indices`` (op OneHot)."""
    return raw_ops.OneHot(indices, depth=int(depth), on_value=float(on_value), off_value=float(off_value),
                          axis=int(axis), dtype=dtype, name=name)


def broadcast_to(input, shape, name=None):
    """``input`` repeated along broadcast dims to ``shape`` (op BroadcastTo)."""
    return raw_ops.BroadcastTo(input, _shape_tensor(shape), name=name)


def no_op(name=None):
    """An operation that does nothing (op NoOp)."""
    return raw_ops.NoOp(name=name)


def assign(ref, value, name=None):
    """Sets variable ``ref`` to ``value`` when run (op Assign)."""
    return ref.assign(value, name=name)


def assign_add(ref, value, name=None):
    return ref.assign_add(value, name=name)


def assign_sub(ref, value, name=None):
    return ref.assign_sub(value, name=name)


# ---- random -----------------------------------------------------------------------------------

def _static_shape(shape):
    """shape as a list of ints, or None when it is (or holds) a tensor: known only at run time."""
    if isinstance(shape, Tensor) or any(isinstance(d, Tensor) for d in shape):
        return None
    return [int(d) for d in shape]


def _run_time_shape(shape):
    """An int64 shape tensor (shapes are int64 everywhere: no dim wraps) from a tensor, or a list
    mixing ints and scalar tensors."""
    if isinstance(shape, Tensor):
        return cast(shape, int64)
    return raw_ops.Concat([reshape(cast(d, int64), [1]) if isinstance(d, Tensor) else
                           constant([int(d)], dtype=int64) for d in shape], axis=0)


def _uniform_like(shape, dtype, seed):
    """Uniform [0, 1) draws of a run-time ``shape`` (op RandomUniformLike over a zero fill)."""
    zeros = raw_ops.Fill(_run_time_shape(shape), constant(0, dtype))
    return raw_ops.RandomUniformLike(zeros, seed=int(seed or 0))


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=0, name=None):
    """Uniform values in [minval, maxval) (op RandomUniform); seed 0 derives one from the graph seed.
    ``shape`` may be a tensor (``weft.shape(x)``) or hold scalar tensors; integer dtypes need
    maxval and draw integers in [minval, maxval); minval and maxval may be scalar tensors."""
    dtype = as_dtype(dtype)
    integer = dtype in (int32, int64)
    if maxval is None:
        if integer:
            raise ValueError("random_uniform with dtype %s needs maxval (integers are drawn from [minval, maxval))"
                             % dtype)
        maxval = 1.0
    draw = float64 if integer else dtype
    dims = _static_shape(shape)
    if dims is not None and not isinstance(minval, Tensor) and not isinstance(maxval, Tensor):
        u = raw_ops.RandomUniform(shape=dims, minval=float(minval), maxval=float(maxval), dtype=draw,
                                  seed=int(seed or 0), name=None if integer else name)
    else:
        lo = cast(minval, draw) if isinstance(minval, Tensor) else constant(minval, draw)
        hi = cast(maxval, draw) if isinstance(maxval, Tensor) else constant(maxval, draw)
        u = lo + _uniform_like(shape if dims is None else dims, draw, seed) * (hi - lo)
    return cast(raw_ops.Floor(u), dtype, name=name) if integer else u


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=0, name=None):
    """Normal values (op RandomNormal). ``shape`` may be a tensor: the draws then come from two
    uniforms per value by the Box-Muller transform."""
    dims = _static_shape(shape)
    if dims is not None:
        return raw_ops.RandomNormal(shape=dims, mean=float(mean), stddev=float(stddev), dtype=dtype,
                                    seed=int(seed or 0), name=name)
    # One uniform draw with a trailing pair per value (one op, so one seed and no shared stream).
    shape2 = raw_ops.Concat([_run_time_shape(shape), constant([2], dtype=int64)], axis=0)
    u = _uniform_like(shape2, as_dtype(dtype), seed)
    u1, u2 = u[..., 0], u[..., 1]
    z = sqrt(constant(-2.0, as_dtype(dtype)) * log(1.0 - u1)) * raw_ops.Cos(u2 * (2 * np.pi))
    return z * stddev + mean


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=0, name=None):
    """Normal values redrawn beyond 2 stddev (op TruncatedNormal); shape is Python ints."""
    if _static_shape(shape) is None:
        raise NotImplementedError("truncated_normal needs shape as Python ints (not a tensor); draw "
                                  "random_normal and clip_by_value for a run-time shape")
    return raw_ops.TruncatedNormal(shape=list(shape), mean=float(mean), stddev=float(stddev), dtype=dtype,
                                   seed=int(seed or 0), name=name)


# ---- gradients --------------------------------------------------------------------------------

def gradients(ys, xs, grad_ys=None, name="gradients"):
    """Symbolic derivatives of sum(ys) with respect to each x in ``xs``: a list with one tensor
    per x (None where ys do not depend on x). ``grad_ys`` weights each y (ones by default).
    The gradient nodes are ordinary graph nodes under the name scope ``name``."""
    single_x = not isinstance(xs, (list, tuple))
    ys = [ys] if not isinstance(ys, (list, tuple)) else list(ys)
    xs = [xs] if single_x else list(xs)
    ys = [convert_to_tensor(y) for y in ys]
    xs = [convert_to_tensor(x) for x in xs]
    gys = []
    if grad_ys is not None:
        grad_ys = [grad_ys] if not isinstance(grad_ys, (list, tuple)) else list(grad_ys)
        for y, gy in zip(ys, grad_ys):
            gys.append(raw_ops.OnesLike(y) if gy is None else convert_to_tensor(gy, y.dtype if not isinstance(gy, Tensor) else None))
    g = get_default_graph()
    prefix = "/".join(g._name_stack + ([name] if name and name != "gradients" else []))
    blocks = getattr(g, "_recompute_blocks", [])
    return _recorder.memo(g, None, ("gradients", ys, xs, gys, prefix, len(blocks)),
                          lambda: _custom_gradient.gradients(
                              g, ys, xs, gys, lambda a, b, w: _weft._gradients(a, b, w, prefix, blocks)))


def recompute_grad(f):
    """TensorFlow's ``tf.recompute_grad(f)``: calls of the returned function build f's ops as
    usual, and gradients taken afterwards (``weft.gradients``, ``GradientTape.gradient``) read
    recomputed copies of them, made when the backward pass reaches them, instead of keeping f's
    activations from the forward pass (graph/recompute.h; docs/pipeline.md). Equal gradients,
    less memory, f's forward run twice. Random and stateful ops in f are kept, not re-run."""
    @functools.wraps(f)
    def inner(*args, **kwargs):
        g = get_default_graph()
        before = {op.name for op in g.get_operations()}
        out = f(*args, **kwargs)
        block = [op.name for op in g.get_operations() if op.name not in before]
        if block:
            g._recompute_blocks = getattr(g, "_recompute_blocks", []) + [block]
        return out
    return inner


# ---- operators on tensors ---------------------------------------------------------------------

def _index_spec(t, key):
    """StridedSlice arguments for a numpy-style index: ints, slices, Ellipsis, newaxis (None)."""
    if not isinstance(key, tuple):
        key = (key,)
    rank = len(t.shape) if t.shape is not None else None
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    expanded = []
    for k in key:
        if k is Ellipsis:
            if rank is None:
                raise _weft_unimplemented("indexing with ... needs a tensor of known rank (%s has unknown rank)" % t.name)
            expanded.extend([slice_all] * (rank - n_real))
        else:
            expanded.append(k)
    begin, end, strides, newaxis_at = [], [], [], []
    begin_mask = end_mask = shrink = 0
    dim = 0
    out_dim = 0
    for k in expanded:
        if k is None:
            newaxis_at.append(out_dim)
            out_dim += 1
            continue
        if isinstance(k, Tensor):
            raise _weft_unimplemented("indexing with a tensor: use weft.gather(%s, indices)" % t.name)
        if isinstance(k, (int, np.integer)):
            begin.append(int(k)); end.append(int(k) + 1); strides.append(1)
            shrink |= 1 << dim
        elif isinstance(k, _builtin_slice):
            step = 1 if k.step is None else int(k.step)
            if step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(0 if k.start is None else int(k.start))
            end.append(0 if k.stop is None else int(k.stop))
            strides.append(step)
            if k.start is None:
                begin_mask |= 1 << dim
            if k.stop is None:
                end_mask |= 1 << dim
            out_dim += 1
        else:
            raise TypeError("weft tensors are indexed by ints, slices, ... and None, not %r" % (k,))
        dim += 1
    return begin, end, strides, begin_mask, end_mask, shrink, newaxis_at


_builtin_slice = type(np.s_[:])  # the builtin (this module defines weft.slice)
slice_all = _builtin_slice(None, None, None)


def _weft_unimplemented(msg):
    from .errors import UnimplementedError
    return UnimplementedError(msg, "Unimplemented")


def _static_index(k):
    """A scalar tensor used as an index or slice bound: its value when computed from constants
    (an int), else the tensor itself."""
    if not isinstance(k, Tensor):
        return k
    from ._values import get_static_value
    v = get_static_value(k)
    return int(v) if v is not None and np.ndim(v) == 0 else k


def _dynamic_bounds(t, key):
    """``t[key]`` where ints or slice bounds are scalar tensors known only when run (``x[:, :n]``
    with ``n = tf.shape(y)[1]``): each such dim is first cut to its range by a Gather of a Range
    (bounds normalized as Python's: negative from the end, clamped to the dim), then indexed whole
    (a slice) or at 0 (an int). Returns (t, key) for _index_spec."""
    from .array_ops import range as _range
    key = key if isinstance(key, tuple) else (key,)
    key = tuple(_builtin_slice(_static_index(k.start), _static_index(k.stop), k.step) if isinstance(k, _builtin_slice)
                else _static_index(k) for k in key)
    dynamic = any(isinstance(k, Tensor) or (isinstance(k, _builtin_slice) and (isinstance(k.start, Tensor) or
                                                                               isinstance(k.stop, Tensor)))
                  for k in key)
    if not dynamic:
        return t, key
    rank = len(t.shape) if t.shape is not None else None
    if rank is None:
        raise _weft_unimplemented("indexing %s with tensor bounds needs a tensor of known rank" % t.name)
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    expanded = []
    for k in key:
        expanded.extend([slice_all] * (rank - n_real) if k is Ellipsis else [k])
    out, new_key, dim = t, [], 0
    for k in expanded:
        if k is None:
            new_key.append(k)
            continue
        size = cast(shape(out)[dim], int32)
        def norm(b, default):
            if b is None:
                return default
            b = cast(b, int32) if isinstance(b, Tensor) else constant(int(b), int32)
            b = where(less(b, 0), b + size, b)
            return minimum(maximum(b, 0), size)
        if isinstance(k, Tensor):
            if k.shape is not None and len(k.shape) != 0:
                raise _weft_unimplemented("indexing with a tensor: use weft.gather(%s, indices)" % t.name)
            i = cast(k, int32)
            out = raw_ops.Gather(out, reshape(where(less(i, 0), i + size, i), [1]), axis=dim)
            new_key.append(0)
        elif isinstance(k, _builtin_slice) and (isinstance(k.start, Tensor) or isinstance(k.stop, Tensor)):
            step = 1 if k.step is None else int(k.step)
            if step <= 0:
                raise _weft_unimplemented("slicing %s with tensor bounds and step %d (weft takes positive steps there)"
                                          % (t.name, step))
            out = raw_ops.Gather(out, _range(norm(k.start, constant(0, int32)), norm(k.stop, size), step), axis=dim)
            new_key.append(slice_all)
        else:
            new_key.append(k)
        dim += 1
    return out, tuple(new_key)


def _getitem(t, key):
    t, key = _dynamic_bounds(t, key)
    begin, end, strides, bm, em, shrink, newaxis_at = _index_spec(t, key)
    out = t
    if begin:
        out = raw_ops.StridedSlice(t, begin=begin, end=end, strides=strides, begin_mask=bm, end_mask=em,
                                   shrink_axis_mask=shrink)
    for axis in newaxis_at:
        out = raw_ops.ExpandDims(out, axis=axis)
    return out


def _other(t, v):
    return v if isinstance(v, Tensor) else convert_to_tensor(_numpy_value(v) if not isinstance(v, np.ndarray) else v,
                                                             t.dtype if not isinstance(v, np.ndarray) else None)


class TruthValueError(TypeError):
    """``if t:`` / ``bool(t)`` of a graph tensor, whose value is not known while the graph is built
    (weft.function falls back to running the function as written on it: _function.py)."""


_COMPARABLE = (Tensor, bool, int, float, complex, np.ndarray, np.generic, list, tuple)


def _broadcastable(a, b):
    """False only where both static shapes are known and cannot broadcast together."""
    if a is None or b is None:
        return True
    return all(x is None or y is None or x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _equality(op_name, same):
    """``t == x`` / ``t != x`` as TensorFlow 2 defines them: elementwise (tf.equal / tf.not_equal,
    and a scalar ``same is False`` for shapes that cannot broadcast, as TF's
    incompatible_shape_error=False gives) where TF2 runs ops eagerly or traces a function; identity
    in TF1 graphs, where tensors are feed_dict keys and TF compares them by identity too
    (_values.elementwise_equality). A tensor compared with itself answers the Python bool ``same``
    in every mode, so that dict and list lookups of tensors never build ops."""
    raw = getattr(raw_ops, op_name)

    def f(a, b):
        from . import _values
        if isinstance(b, Tensor) and a._same(b):
            return same
        if b is None or not isinstance(b, _COMPARABLE) or not _values.elementwise_equality():
            return not same
        y = _other(a, b)
        if not _broadcastable(a.shape, y.shape):
            return constant(not same)
        return raw(a, y)
    return f


def _install_operators():
    T = Tensor

    def binop(op_name, reverse=False):
        raw = getattr(raw_ops, op_name)
        if reverse:
            return lambda a, b: raw(_other(a, b), a)
        return lambda a, b: raw(a, _other(a, b))

    for py, op in (("add", "Add"), ("sub", "Sub"), ("mul", "Mul"), ("pow", "Pow")):
        setattr(T, "__%s__" % py, binop(op))
        setattr(T, "__r%s__" % py, binop(op, reverse=True))

    def truediv(reverse):
        # As TF's `/` (tf.truediv): integers divide as floats, float32 for 8-bit ones, else float64.
        def f(a, b):
            x, y = (_other(a, b), a) if reverse else (a, _other(a, b))
            if x.dtype in (uint8, int32, int64) and x.dtype == y.dtype:
                to = float32 if x.dtype == uint8 else float64
                x, y = cast(x, to), cast(y, to)
            return raw_ops.Div(x, y)
        return f
    T.__truediv__ = truediv(False)
    T.__rtruediv__ = truediv(True)

    # `//` and `%` as tf.math.floordiv / floormod (Python's rounding toward -inf, the remainder with
    # the divisor's sign). math.py imports this module, hence the late import.
    def from_math(name, reverse):
        def f(a, b):
            from . import math as _math
            x, y = (_other(a, b), a) if reverse else (a, _other(a, b))
            return getattr(_math, name)(x, y)
        return f
    T.__floordiv__ = from_math("floordiv", False)
    T.__rfloordiv__ = from_math("floordiv", True)
    T.__mod__ = from_math("floormod", False)
    T.__rmod__ = from_math("floormod", True)
    for py, op in (("lt", "Less"), ("le", "LessEqual"), ("gt", "Greater"), ("ge", "GreaterEqual")):
        setattr(T, "__%s__" % py, binop(op))
    T.__and__ = binop("LogicalAnd")
    T.__or__ = binop("LogicalOr")
    T.__invert__ = lambda a: raw_ops.LogicalNot(a)
    T.__neg__ = lambda a: raw_ops.Neg(a)
    T.__abs__ = lambda a: raw_ops.Abs(a)
    T.__matmul__ = lambda a, b: matmul(a, _other(a, b))
    T.__rmatmul__ = lambda a, b: matmul(_other(a, b), a)
    T.__getitem__ = _getitem
    T.__eq__ = _equality("Equal", True)
    T.__ne__ = _equality("NotEqual", False)
    T.__hash__ = T.__hash__

    def _bool(self):
        raise TruthValueError("a weft.Tensor has no truth value while building the graph; run it in a Session "
                              "(or use weft.where / weft.equal)")
    T.__bool__ = _bool
    T.__array_priority__ = 100  # numpy_array + tensor calls Tensor.__radd__
    T.__repr__ = lambda t: "<weft.Tensor '%s' shape=%s dtype=%s>" % (t.name, t.shape, t.dtype)
    T.__iter__ = None

    def eval(self, feed_dict=None, session=None):
        """Runs the tensor in ``session`` (default: the innermost ``with Session()``)."""
        from .session import get_default_session
        sess = session or get_default_session()
        return sess.run(self, feed_dict=feed_dict)
    T.eval = eval
    T.ndim = property(lambda t: None if t.shape is None else len(t.shape))

    def op_run(self, feed_dict=None, session=None):
        from .session import get_default_session
        (session or get_default_session()).run(self, feed_dict=feed_dict)
    Operation.run = op_run


_install_operators()

__all__ = sorted(n for n, v in list(globals().items())
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)
