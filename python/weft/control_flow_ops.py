"""``tf.cond`` and ``tf.while_loop`` in the graph: TensorFlow's Switch / Merge / Enter / Exit /
NextIteration frames (ops/control.h, docs/control-flow.md). Only the branch taken runs (its side
effects included), and a loop runs inside one step as many iterations as its predicate says::

    x = tf.constant(3.0)
    y = tf.cond(x > 0, lambda: x * 2, lambda: -x)                         # 6.0
    i, p = tf.while_loop(lambda i, p: i < 5, lambda i, p: (i + 1, p * x), (0, 1.0))   # 5, 243.0

Loop variables and branch results may be nested lists, tuples (named or not) and dicts of tensors
(or numbers and numpy arrays, made constants); the structure comes back as it went in.
"""
from . import _weft
from . import framework as _fw
from . import nest as _nest
from . import ops as _ops
from .tensor_array import TensorArray as _TensorArray

__all__ = ["cond", "while_loop", "while_loop_v1", "cond_v1"]


def _is_leaf(x):
    return not _nest.is_nested(x)


_flatten = _nest.flatten
_pack = _nest.pack_sequence_as


def _same_structure(a, b):
    return _nest.same_structure(a, b, check_types=False)


def _describe(s):
    if _is_leaf(s):
        if isinstance(s, _fw.Tensor):
            return "%s%s" % (s.dtype, "" if s.shape is None else list(s.shape))
        return type(s).__name__
    if isinstance(s, dict):
        return "{%s}" % ", ".join("%r: %s" % (k, _describe(s[k])) for k in sorted(s))
    inner = ", ".join(_describe(v) for v in s)
    return "[%s]" % inner if isinstance(s, list) else "(%s)" % inner


class _in_flow:
    """Marks the ops made inside as a cond branch's or loop body's (framework._flow_depth)."""

    def __enter__(self):
        _fw._flow_depth[0] += 1

    def __exit__(self, *exc):
        _fw._flow_depth[0] -= 1


def _scope():
    g = _fw.get_default_graph()
    return g, "/".join(g._name_stack), g._devices_for("While")


def _branch(fn, which, other=None):
    """Runs a cond branch (without the enclosing control dependencies: the branch is its own
    context); Operations it returns become tensors that carry them, turned back afterwards.
    ``other``: the true branch, whose structure the false branch's result must have."""
    def run():
        g = _fw.get_default_graph()
        with g.control_dependencies(None), _in_flow():
            result = fn()
        run.structure = result
        if other is not None and not _same_structure(other.structure, result):
            raise ValueError("cond: true_fn and false_fn return different structures: true_fn returned %s, "
                             "false_fn returned %s" % (_describe(other.structure), _describe(result)))
        leaves = []
        for leaf in _flatten(result):
            if isinstance(leaf, _fw.Operation):
                with g.control_dependencies([leaf]):
                    leaf = _fw.constant(True)
            elif leaf is None:
                raise TypeError("cond: %s returned None inside %s" % (which, _describe(result)))
            else:
                leaf = _fw.convert_to_tensor(leaf)
            leaves.append(leaf)
        return leaves
    return run


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if the scalar bool ``pred`` holds, else ``false_fn()`` (tf.cond): only the
    branch taken runs. Both return the same structure of tensors; a Python bool ``pred`` just
    calls one of them."""
    return cond_v1(pred, true_fn, false_fn, strict=True, name=name)


def cond_v1(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """tf.compat.v1.cond: as ``cond``; unless ``strict``, a one-element list or tuple result is
    returned as its element."""
    true_fn, false_fn = true_fn or fn1, false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callables")
    if not isinstance(pred, _fw.Tensor):
        if hasattr(pred, "dtype") or not isinstance(pred, (bool, int)):
            pred = _fw.convert_to_tensor(pred)
        else:
            result = true_fn() if pred else false_fn()
            return _unpack_singleton(result, strict)
    g, prefix, devices = _scope()
    t = _branch(true_fn, "true_fn")
    f = _branch(false_fn, "false_fn", other=t)
    with g.name_scope(name or "cond"):  # the branches' ops; the builder names its own under prefix
        merged = _weft._cond(pred, t, f, prefix, devices)
    tleaves = _flatten(t.structure)
    merged = [m.op if isinstance(leaf, _fw.Operation) else m for m, leaf in zip(merged, tleaves)]
    return _unpack_singleton(_pack(t.structure, merged), strict)


def _unpack_singleton(result, strict):
    if not strict and isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
               swap_memory=False, maximum_iterations=None, name=None):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (tf.while_loop):
    the loop runs inside the graph, at most ``maximum_iterations`` times, with up to
    ``parallel_iterations`` iterations overlapping. ``shape_invariants`` (same structure as
    loop_vars; a TensorShape, tuple or None per variable) lets the body change a variable's
    shape where a dim is unknown. Gradients flow through the loop (a backward loop that reads
    each iteration's values from stacks, docs/control-flow.md) unless ``back_prop`` is False, as
    TF's; ``swap_memory`` is accepted and ignored (the stacks stay in memory)."""
    return while_loop_v1(cond, body, loop_vars, shape_invariants, parallel_iterations, back_prop, swap_memory,
                         name, maximum_iterations, return_same_structure=True)


def while_loop_v1(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10, back_prop=True,
                  swap_memory=False, name=None, maximum_iterations=None, return_same_structure=False):
    """tf.compat.v1.while_loop: as ``while_loop``; unless ``return_same_structure``, a single
    loop variable comes back as a tensor rather than a one-element list."""
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callables")
    if parallel_iterations < 1:
        raise ValueError("while_loop: parallel_iterations must be a positive integer, got %r" % parallel_iterations)
    # cond and body take the top-level list or tuple as arguments; anything else as one argument.
    spread = isinstance(loop_vars, (list, tuple))
    structure = loop_vars
    # A TensorArray travels as its dense tensor (tensor_array.py), with its own shape invariant.
    arrays = [v if isinstance(v, _TensorArray) else None for v in _flatten(structure)]
    flat, ta_shapes = [], []
    for v, ta in zip(_flatten(structure), arrays):
        t, shape = ta._loop_tensor() if ta is not None else (_fw.convert_to_tensor(v), None)
        flat.append(t)
        ta_shapes.append(shape)
    if not flat:
        raise ValueError("while_loop: loop_vars is empty")
    names = ["loop_vars"] if _is_leaf(structure) else _var_names(structure, "loop_vars")
    invariants = []
    if shape_invariants is not None:
        try:
            invariants = [_shape_of(s) for s in _flatten_like(structure, shape_invariants)]
        except (KeyError, IndexError, TypeError):
            raise ValueError("while_loop: shape_invariants %r do not have the structure of loop_vars %s" % (
                shape_invariants, _describe(structure))) from None
    if any(ta is not None for ta in arrays):
        if not invariants:
            invariants = [None if t.shape is None else list(t.shape) for t in flat]
        invariants = [shape if ta is not None else inv for ta, shape, inv in zip(arrays, ta_shapes, invariants)]

    def pack(vals):
        return _pack(structure, [ta._from_loop(v) if ta is not None else v for ta, v in zip(arrays, vals)])
    g, prefix, devices = _scope()

    def call(fn, vals):
        args = pack(vals)
        with g.control_dependencies(None), _in_flow():  # the loop is its own context, as in TF
            return fn(*args) if spread else fn(args)

    def call_body(vals):
        out = call(body, vals)
        if _is_leaf(structure) and isinstance(out, (list, tuple)) and len(out) == 1:
            out = out[0]  # a body of one variable may return [x] or (x,)
        elif spread and len(structure) == 1 and _same_structure(structure[0], out):
            out = [out]  # and a body of loop_vars [x] may return x, as TF's
        if not _same_structure(structure, out):
            raise ValueError("while_loop: body returned %s for loop_vars %s (the structures must match)" % (
                _describe(out), _describe(structure)))
        leaves = [v._loop_tensor()[0] if isinstance(v, _TensorArray) else v for v in _flatten(out)]
        return [_fw.convert_to_tensor(v, a.dtype) for v, a in zip(leaves, flat)]

    max_iter = None if maximum_iterations is None else _fw.convert_to_tensor(maximum_iterations)
    with g.name_scope(name or "while"):
        out = _weft._while_loop(flat, lambda vals: _fw.convert_to_tensor(call(cond, vals)), call_body,
                                int(parallel_iterations), max_iter, invariants, names, prefix, devices)
    if not back_prop:  # TF: no gradient flows through such a loop
        out = [_ops.stop_gradient(t) for t in out]
    result = pack(out)
    if not return_same_structure and isinstance(result, (list, tuple)) and len(result) == 1:
        return result[0]
    return result


def _flatten_like(structure, values):
    """The entries of ``values`` at the leaves of ``structure`` (a shape given as a tuple stays one)."""
    if _is_leaf(structure):
        return [values]
    if isinstance(structure, dict):
        if set(values) != set(structure):
            raise KeyError(values)
        return [v for k in sorted(structure) for v in _flatten_like(structure[k], values[k])]
    if len(values) != len(structure):
        raise IndexError(values)
    return [v for s, x in zip(structure, values) for v in _flatten_like(s, x)]


def _shape_of(s):
    """A shape invariant as the extension takes it: None (unknown) or a list of ints / None."""
    if s is None:
        return None
    if hasattr(s, "as_list") or hasattr(s, "dims"):
        return s.dims
    return [None if d is None else int(d) for d in s]


def _var_names(structure, base):
    """'loop_vars[0]', "loop_vars['h'][1]", ... in flatten order, for error messages."""
    out = []

    def walk(s, path):
        if _is_leaf(s):
            out.append(path)
        elif isinstance(s, dict):
            for k in sorted(s):
                walk(s[k], "%s[%r]" % (path, k))
        else:
            for i, v in enumerate(s):
                walk(v, "%s[%d]" % (path, i))
    walk(structure, base)
    return out
