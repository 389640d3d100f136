"""``tf.custom_gradient``: a function's gradient given in Python, in weft's graph gradients.

    @tf.custom_gradient
    def log1pexp(x):
        e = tf.exp(x)
        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

A call builds f's ops as usual and returns its outputs through StopGradient, so the graph's own
gradient does not pass through f; the call is recorded on the graph as a *site* (f's tensor
inputs, its outputs, ``grad_fn``, the variables f read). ``weft.gradients`` (hence
``GradientTape.gradient``) of targets that depend on a site applies the chain rule around it:
sites are visited downstream first (creation order is a topological order), each gets
``dL/d outputs`` from the C++ gradients of the targets plus the inputs of the sites already
visited (weighted by their ``grad_fn`` results), and the final gradients are those of all of
them with respect to the sources. Gradients stay graphs, built when they are asked for. A site
inside a while_loop body is not supported (its outputs live in the loop's frame).
"""
import functools
import inspect

from . import framework as _fw
from . import nest as _nest

__all__ = ["custom_gradient", "RegisterGradient", "no_gradient", "NotDifferentiable"]

# tf.RegisterGradient's functions by name, and the op types tf.no_gradient named. Process-wide,
# as TF's gradient registry is.
_REGISTRY = {}
_NO_GRADIENT = set()


class _Site:
    def __init__(self, xs, outs, grad_fn, variables):
        self.xs, self.outs, self.grad_fn, self.variables = xs, outs, grad_fn, variables


def _takes_variables(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _variables_read(outs, xs):
    """The variables f's outputs depend on, not through f's explicit inputs."""
    stop = {x.name for x in xs}
    by_name = {v.name: v for v in _fw.global_variables()}
    found, seen, stack = [], set(), [t for t in outs]
    while stack:
        t = stack.pop()
        if t.name in stop or t.name in seen:
            continue
        seen.add(t.name)
        if t.name in by_name and t.op.type == "Variable":
            found.append(by_name[t.name])
            continue
        stack.extend(t.op.inputs)
    return sorted(found, key=lambda v: v.name)


def custom_gradient(f=None):
    """``@tf.custom_gradient``: ``f(*x)`` returns ``(y, grad_fn)``; ``grad_fn(*dy)`` returns the
    gradients of the inputs (one per tensor argument), or, when f reads variables,
    ``grad_fn(*dy, variables=vs)`` returns ``(input_grads, variable_grads)``."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def inner(*args, **kwargs):
        tf = _fw.api()
        args = _nest.map_structure(lambda a: a if isinstance(a, _fw.Tensor) else _fw.convert_to_tensor(a), list(args))
        xs = [a for a in _nest.flatten(args) if isinstance(a, _fw.Tensor)]
        result = f(*args, **kwargs)
        if not isinstance(result, tuple) or len(result) != 2 or not callable(result[1]):
            raise TypeError("custom_gradient: %s must return (outputs, grad_fn), got %r" % (
                getattr(f, "__name__", f), type(result).__name__))
        y, grad_fn = result
        flat = [_fw.convert_to_tensor(t) for t in _nest.flatten(y)]
        variables = _variables_read(flat, xs)
        if variables and not _takes_variables(grad_fn):
            raise TypeError("If using @custom_gradient with a function that uses variables, then grad_fn must accept a "
                            "keyword argument 'variables' (%s reads %s)" % (
                                getattr(f, "__name__", f), ", ".join(v.name for v in variables)))
        outs = [tf.stop_gradient(t) for t in flat]
        _record(_fw.get_default_graph(), _Site(xs, outs, grad_fn, variables))
        return _nest.pack_sequence_as(y, outs)
    return inner


def _record(graph, site):
    sites = graph.__dict__.setdefault("_custom_gradient_sites", {})
    key = tuple(o.name for o in site.outs)
    if key not in sites:  # an eager step finds its ops again: one site per set of nodes
        sites[key] = site


class RegisterGradient:
    """``@tf.RegisterGradient("Name")``: registers ``fn(op, *grads)`` (one gradient per input of
    ``op``) under a name that ``graph.gradient_override_map({"OpType": "Name"})`` gives to the ops
    of that type made inside it. weft's own gradients are C++ (ops/*.cc): a registered name is
    used only through an override map."""

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        if self._op_type in _REGISTRY:
            raise KeyError("Registering two gradient with name '%s'!" % self._op_type)
        _REGISTRY[self._op_type] = f
        return f


def no_gradient(op_type):
    """``tf.no_gradient(op_type)``: ops of that type made from now on pass no gradient (their
    outputs go through StopGradient)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _NO_GRADIENT.add(op_type)


NotDifferentiable = no_gradient


def overridden(graph, node, outs):
    """The outputs an op's Python function returns: ``outs`` unless the op's type is under a
    gradient_override_map (then a site whose grad_fn is the registered function) or no_gradient."""
    mapped = graph.__dict__.get("_gradient_override_map", {}).get(node.type)
    if mapped is None and node.type not in _NO_GRADIENT:
        return outs
    tf = _fw.api()
    stopped = [tf.stop_gradient(o) for o in outs]
    if mapped is None:
        return stopped
    fn = _REGISTRY.get(mapped)
    if fn is None:
        raise LookupError("gradient_override_map: no gradient registered under '%s' (for op %s of type %s); "
                          "register one with @tf.RegisterGradient(%r)" % (mapped, node.name, node.type, mapped))
    _record(graph, _Site(list(node.inputs), stopped, lambda *dys: fn(node, *dys), []))
    return stopped


def _as_list(v):
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def gradients(graph, ys, xs, gys, raw):
    """weft.gradients around the graph's custom-gradient sites; ``raw(ys, xs, gys)`` is the C++
    gradients (gys: one weight per y)."""
    sites = list(graph.__dict__.get("_custom_gradient_sites", {}).values())
    if sites:
        anc = {op.name for op in _fw.ancestor_ops([y.op for y in ys])}
        sites = [s for s in sites if any(o.op.name in anc for o in s.outs)]
    if not sites:
        return raw(ys, xs, gys)
    tf = _fw.api()
    targets = list(ys)
    weights = list(gys) if gys else [tf.ones_like(y) for y in ys]
    var_grads = {}
    for s in reversed(sites):
        douts = raw(targets, s.outs, weights)
        if all(d is None for d in douts):
            continue
        douts = [tf.zeros_like(o) if d is None else d for d, o in zip(douts, s.outs)]
        if s.variables:
            res = s.grad_fn(*douts, variables=s.variables)
            if not isinstance(res, (list, tuple)) or len(res) != 2:
                raise ValueError("custom_gradient: grad_fn of a function that reads variables must return "
                                 "(input_grads, variable_grads)")
            in_grads, v_grads = _as_list(res[0]), _as_list(res[1])
            if len(v_grads) != len(s.variables):
                raise ValueError("custom_gradient: grad_fn returned %d variable gradients for %d variables (%s)" % (
                    len(v_grads), len(s.variables), ", ".join(v.name for v in s.variables)))
            for v, gv in zip(s.variables, v_grads):
                if gv is not None:
                    var_grads.setdefault(v.name, []).append(_fw.convert_to_tensor(gv, v.dtype))
        else:
            in_grads = _as_list(s.grad_fn(*douts))
        if len(in_grads) != len(s.xs):
            raise ValueError("custom_gradient: grad_fn returned %d gradients for %d inputs" % (len(in_grads), len(s.xs)))
        for x, gx in zip(s.xs, in_grads):
            if gx is not None:
                targets.append(x)
                weights.append(_fw.convert_to_tensor(gx, x.dtype))
    out = list(raw(targets, xs, weights))
    for i, x in enumerate(xs):
        extra = var_grads.get(x.name)
        if extra:
            out[i] = tf.add_n(([out[i]] if out[i] is not None else []) + extra)
    return out
