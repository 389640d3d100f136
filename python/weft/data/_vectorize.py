"""map followed by batch, run once per batch: when a traced map function only does per-element
arithmetic, ``ds.map(f).batch(n)`` runs as ``ds.batch(n).map(f over batches)``, one graph run per
batch instead of per element (what TF's map vectorization does). Same results, by construction:

- the function is traced a second time over batched placeholders ([None] + each element shape);
- every op of that trace must be elementwise (allow-list below; OneHot only with axis=-1, whose
  new dim goes last; ExpandDims never moves data), so it treats each batch row on its own;
- the two traces must build the same ops under the same names, and every tensor that depends on
  the element must have the batched shape [None] + its per-element shape (so no op moved the
  batch dim or folded it into others), while tensors that do not depend on it keep their shapes;
- the element-dependent inputs of one op must have the same per-element rank (broadcasting a
  batched rank-1 tensor against a batched rank-2 one would line the batch dim up with another).

Reshape to a constant shape is rewritten while tracing over batches: ``reshape(x, s)`` becomes
``reshape(x, [-1] + s)`` (a -1 in ``s`` resolved from x's per-element size), which reshapes each
row as the element function does; its shape input is the one tensor exempt from the shape check.

Anything else keeps the per-element map, so the choice never changes a result."""
import contextlib
import threading

import numpy as np

from .. import framework as _fw
from .. import ops as _ops
from . import _structure as _st
from . import _trace

_ELEMENTWISE = frozenset((
    "Cast", "Neg", "Abs", "Exp", "Log", "Log1p", "Expm1", "Floor", "Ceil", "Round", "Erf", "Sqrt", "Rsqrt", "Square",
    "Reciprocal", "Sign", "Tanh", "Sigmoid", "Relu", "Relu6", "Elu", "Softplus", "LogicalNot", "Identity", "StopGradient", "ZerosLike", "OnesLike",
    "Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal",
    "NotEqual", "LogicalAnd", "LogicalOr", "Select", "ExpandDims", "OneHot", "Reshape", "Placeholder", "Const"))


def _shape(t):
    return None if t.shape is None else tuple(t.shape)


_REWRITTEN = "batched_shape"  # name prefix of the shape constants the rewrite adds


_local = threading.local()  # .active: this thread traces over batches
_patch = {"count": 0, "original": None}
_patch_lock = threading.Lock()


@contextlib.contextmanager
def _batched_reshape():
    """While this thread traces over batches, Reshape of a batched tensor to a constant shape keeps
    the batch dim (other threads see the usual Reshape)."""
    raw = _ops.raw_ops
    with _patch_lock:
        if _patch["count"] == 0:
            _patch["original"] = raw.Reshape
        original = _patch["original"]

    def reshape(tensor, shape, name=None):
        dims = _shape(tensor)
        if getattr(_local, "active", False) and dims and dims[0] is None and None not in dims[1:] and isinstance(shape, _fw.Tensor) and \
                shape.op.type == "Const":
            target = [int(d) for d in np.asarray(shape.op.get_attr("value")).ravel()]
            rows = int(np.prod(dims[1:], dtype=np.int64))
            known = int(np.prod([d for d in target if d != -1], dtype=np.int64))
            if target.count(-1) == 1 and known > 0 and rows % known == 0:
                target[target.index(-1)] = rows // known
            if -1 not in target:
                shape = _fw._index_constant([-1] + target, name=_REWRITTEN)
        return original(tensor, shape, name=name)
    with _patch_lock:
        if _patch["count"] == 0:
            raw.Reshape = reshape
        _patch["count"] += 1
    _local.active = True
    try:
        yield
    finally:
        _local.active = False
        with _patch_lock:
            _patch["count"] -= 1
            if _patch["count"] == 0:
                raw.Reshape = original


def batched_map(fn, spec, element_graph):
    """(graph, inputs, outputs structure) of ``fn`` over batches of ``spec``, or None when the
    per-element map must stay."""
    flat = _st.flatten(spec, _st.is_spec)
    if any(s.shape is None or None in s.shape for s in flat):
        return None  # elements may differ in shape: they cannot be batched before the map
    batched_spec = _st.pack(spec, [_st.TensorSpec((None,) + tuple(s.shape), s.dtype) for s in flat], _st.is_spec)
    try:
        with _batched_reshape():
            g, inputs, out = _trace.trace(fn, batched_spec, "Dataset.map")
    except Exception:  # the function does not accept batches (e.g. a fixed reshape): keep it per element
        return None
    one = {op.name: op for op in element_graph.get_operations()}
    dependent = set()  # names of tensors that depend on the element
    for op in g.get_operations():
        if op.type == "Const" and op.name.split("/")[-1].startswith(_REWRITTEN):
            continue  # a rewritten Reshape's shape: checked through the Reshape's output below
        ref = one.get(op.name)
        if op.type not in _ELEMENTWISE or ref is None or ref.type != op.type or \
                len(ref.outputs) != len(op.outputs) or len(ref.inputs) != len(op.inputs):
            return None
        if op.type == "OneHot" and op.get_attr("axis") != -1:
            return None
        dep_inputs = [(t, r) for t, r in zip(op.inputs, ref.inputs) if t.name in dependent]
        if op.type == "Reshape" and not (op.inputs[0].name in dependent and
                                         op.inputs[1].op.name.split("/")[-1].startswith(_REWRITTEN)):
            return None  # only a batched tensor reshaped by the rewrite
        if op.type == "Placeholder" or dep_inputs:
            if len({None if _shape(r) is None else len(_shape(r)) for _, r in dep_inputs}) > 1:
                return None
            for t, r in zip(op.outputs, ref.outputs):
                if _shape(r) is None or _shape(t) != (None,) + _shape(r):
                    return None
                dependent.add(t.name)
        else:
            for t, r in zip(op.outputs, ref.outputs):
                if _shape(t) != _shape(r):
                    return None
    leaves = _st.flatten(out, lambda x: isinstance(x, _fw.Tensor))
    if any(t.name not in dependent for t in leaves):
        return None  # a constant output would not get a batch dim
    return g, inputs, out
