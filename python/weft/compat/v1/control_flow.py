"""``tf.cond`` for graphs whose branches compute values: both branches are built and run, and
Select picks the result per run (weft's Python API has no Switch/Merge frames). A branch that would
change state (an Assign, an optimizer update, a new variable) is refused, since it would run
whichever way the predicate goes."""
from ...framework import Operation, Tensor, convert_to_tensor, get_default_graph
from ...ops import where

# Ops that change state when they run: in a branch they would run on both sides.
_STATEFUL = ("Variable", "Assign", "AssignAdd", "AssignSub", "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam")


def _pick(pred, t, f, path):
    if isinstance(t, (list, tuple)) and isinstance(f, (list, tuple)) and len(t) == len(f):
        picked = [_pick(pred, a, b, "%s[%d]" % (path, i)) for i, (a, b) in enumerate(zip(t, f))]
        return type(t)(picked) if not hasattr(t, "_fields") else type(t)(*picked)
    if isinstance(t, dict) and isinstance(f, dict) and set(t) == set(f):
        return {k: _pick(pred, t[k], f[k], "%s[%r]" % (path, k)) for k in t}
    if isinstance(t, Operation) or isinstance(f, Operation):
        raise TypeError("cond: the branches return operations at %s; weft's cond picks values (return tensors)" %
                        (path or "the top"))
    if isinstance(t, (list, tuple, dict)) or isinstance(f, (list, tuple, dict)):
        raise ValueError("cond: true_fn and false_fn return different structures at %s" % (path or "the top"))
    t = convert_to_tensor(t)
    f = convert_to_tensor(f, None if isinstance(f, Tensor) else t.dtype)
    return where(pred, t, f)


def cond(pred, true_fn=None, false_fn=None, strict=False, name=None, fn1=None, fn2=None):
    """true_fn() if ``pred`` else false_fn(), for a scalar bool tensor (or Python bool) ``pred``;
    the branches return tensors, or lists, tuples and dicts of them of the same structure."""
    true_fn, false_fn = true_fn or fn1, false_fn or fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callables")
    if not isinstance(pred, Tensor):
        return true_fn() if pred else false_fn()
    g = get_default_graph()
    before = {op.name for op in g.get_operations()}
    t, f = true_fn(), false_fn()
    changed = [op for op in g.get_operations() if op.name not in before and op.type in _STATEFUL]
    if changed:
        raise NotImplementedError("weft's cond runs both branches and picks a value, so a branch may not change "
                                  "state: it made %s" % ", ".join("%s (%s)" % (op.name, op.type) for op in changed))
    return _pick(pred, t, f, "")


__all__ = ["cond"]
