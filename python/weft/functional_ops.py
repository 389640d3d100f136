"""Higher-order functions over the first dimension, and multi-way branches, built from weft's
graph ops: ``tf.map_fn``, ``tf.scan``, ``tf.foldl`` / ``foldr``, ``tf.case``, ``tf.switch_case``.

A first dimension the static shape knows is unrolled (one application of ``fn`` per element, as
TF's tracing of a Python loop would give; gradients are the ops'); an unknown one runs in a
``while_loop`` (control_flow_ops) that gathers element i and concatenates the results, so a
Keras ``Lambda(lambda x: tf.map_fn(f, x))`` over an unknown batch works. ``elems`` and the
results may be nested structures (weft.nest).
"""
from . import control_flow_ops as _cf
from . import framework as _fw
from . import nest as _nest
from . import ops as _ops

__all__ = ["map_fn", "scan", "foldl", "foldr", "case", "switch_case"]

# Above this many elements a static first dimension also runs as a loop (graph size stays bounded).
_UNROLL_LIMIT = 64


def _leaves(elems, what):
    flat = [_fw.convert_to_tensor(e) for e in _nest.flatten(elems)]
    if not flat:
        raise ValueError("%s: elems is empty" % what)
    for t in flat:
        if t.shape is not None and len(t.shape) == 0:
            raise ValueError("%s: elems must have a first dimension to iterate over; got a scalar %s" % (what, t.name))
    n = flat[0].shape[0] if flat[0].shape is not None else None
    for t in flat[1:]:
        m = t.shape[0] if t.shape is not None else None
        if n is not None and m is not None and n != m:
            raise ValueError("%s: the tensors of elems differ in their first dimension (%d vs %d)" % (what, n, m))
    return flat, n


def _element(elems, flat, i):
    return _nest.pack_sequence_as(elems, [_ops.gather(t, i) if isinstance(i, _fw.Tensor) else t[i] for t in flat])


def _stack(results):
    """A list of same-structure results -> the structure of their stacks along a new axis 0."""
    from .array_ops import stack
    flats = [_nest.flatten(r) for r in results]
    return _nest.pack_sequence_as(results[0], [stack([_fw.convert_to_tensor(x) for x in leaf]) for leaf in zip(*flats)])


def _loop(fn, elems, flat, start, carry, what, reverse=False):
    """Runs ``carry, out = fn(carry, element)`` for i = start .. n-1 (n-1-start .. 0 when
    ``reverse``) in a while_loop, ``out`` concatenated along axis 0 after ``start`` elements'
    worth given in ``carry["acc"]``; returns the final loop values."""
    n = _ops.shape(flat[0])[0]

    def body(i, c, acc):
        j = n - 1 - i if reverse else i
        c2, out = fn(c, _element(elems, flat, j))
        new_acc = _nest.map_structure(
            lambda a, o: _ops.concat([a, _ops.expand_dims(_fw.convert_to_tensor(o), 0)], 0), acc,
            _nest.pack_sequence_as(acc, _nest.flatten(out)))
        return i + 1, c2, new_acc

    acc0 = carry["acc"]
    invariants = ([], _nest.map_structure(lambda t: _shape_list(_fw.convert_to_tensor(t)), carry["c"]),
                  _nest.map_structure(lambda t: [None] + list(t.shape[1:]), acc0))
    return _cf.while_loop(lambda i, c, acc: i < n, body, (_fw.constant(start), carry["c"], acc0),
                          shape_invariants=invariants, name=what)


def _shape_list(t):
    return None if t.shape is None else list(t.shape)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False, infer_shape=True,
           name=None, fn_output_signature=None):
    """``fn`` applied to each element of ``elems`` along its first dimension; the results stacked
    (TF's tf.map_fn). ``fn_output_signature`` / ``dtype`` are accepted: the results' own dtypes are
    used (a dtype that differs from what ``fn`` returns is a ValueError naming both)."""
    flat, n = _leaves(elems, "map_fn")
    want = fn_output_signature if fn_output_signature is not None else dtype

    def check(out):
        if want is not None and not _nest.is_nested(want) and not _nest.is_nested(out):
            d = getattr(want, "dtype", want)
            got = _fw.convert_to_tensor(out).dtype
            if _fw.as_dtype(d) != got:
                raise ValueError("map_fn: fn returned %s where fn_output_signature says %s" % (got, _fw.as_dtype(d)))
        return out

    if n is not None and 0 < n <= _UNROLL_LIMIT:
        out = _stack([check(fn(_element(elems, flat, i))) for i in range(n)])
    else:
        first = check(fn(_element(elems, flat, 0)))
        acc0 = _nest.map_structure(lambda o: _ops.expand_dims(_fw.convert_to_tensor(o), 0), first)
        _, _, out = _loop(lambda c, x: (c, fn(x)), elems, flat, 1, {"c": _fw.constant(0), "acc": acc0}, "map_fn")
    return _nest.map_structure(_ops.stop_gradient, out) if not back_prop else out


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, infer_shape=True,
         reverse=False, name=None):
    """TF's tf.scan: ``a = fn(a, x)`` over the elements (from the last when ``reverse``), starting
    at ``initializer`` (default: the first element, which is then not passed to fn); every ``a``
    stacked."""
    flat, n = _leaves(elems, "scan")
    order = (lambda k: n - 1 - k) if reverse and n is not None else (lambda k: k)
    if n is not None and n <= _UNROLL_LIMIT:
        if initializer is None:
            a, outs, start = _element(elems, flat, order(0)), [], 1
            outs.append(a)
        else:
            a, outs, start = initializer, [], 0
        for k in range(start, n):
            a = fn(a, _element(elems, flat, order(k)))
            outs.append(a)
        if not outs:
            raise ValueError("scan: elems has no elements and no initializer")
        stacked = _stack(outs)
        return _stack_reversed(stacked) if reverse else stacked
    if initializer is None:
        first = _element(elems, flat, _ops.shape(flat[0])[0] - 1 if reverse else 0)
        a0, start = first, 1
    else:
        a0, start = initializer, 0
    acc0 = _nest.map_structure(lambda o: _ops.expand_dims(_fw.convert_to_tensor(o), 0), a0)
    acc0 = acc0 if start else _nest.map_structure(lambda t: t[:0], acc0)

    def step(c, x):
        a = fn(c, x)
        return a, a
    _, _, out = _loop(step, elems, flat, start, {"c": a0, "acc": acc0}, "scan", reverse)
    return _stack_reversed(out) if reverse else out


def _stack_reversed(stacked):
    return _nest.map_structure(lambda t: t[::-1], stacked)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """TF's tf.foldl: ``a = fn(a, x)`` from the first element; the final ``a``."""
    return _nest.map_structure(lambda t: t[-1], scan(fn, elems, initializer))


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """TF's tf.foldr: ``a = fn(a, x)`` from the last element; the final ``a``."""
    return _nest.map_structure(lambda t: t[0], scan(fn, elems, initializer, reverse=True))


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """TF's tf.case: the result of the fn of the first pred that is True (in order), else of
    ``default`` (required unless the preds are known to cover everything; without it the last
    pair's fn serves as default, as TF does). ``exclusive`` is accepted; only one branch runs."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    for p in pairs:
        if not (isinstance(p, tuple) and len(p) == 2 and callable(p[1])):
            raise TypeError("case: each entry of pred_fn_pairs must be a (pred, callable) pair; got %r" % (p,))
    if not pairs and default is None:
        raise ValueError("case: no pred_fn_pairs and no default")
    if default is None:
        pairs, default = pairs[:-1], pairs[-1][1]

    def build(k):
        if k == len(pairs):
            return default()
        pred, fn = pairs[k]
        return _cf.cond(pred, fn, lambda: build(k + 1))
    return build(0)


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """TF's tf.switch_case: ``branch_fns[branch_index]()`` (a list, or a dict of int keys); an index
    out of range runs ``default``, or the last branch when there is none, as TF does."""
    items = sorted(branch_fns.items()) if isinstance(branch_fns, dict) else list(enumerate(branch_fns))
    if not items:
        raise ValueError("switch_case: branch_fns is empty")
    index = _fw.convert_to_tensor(branch_index)
    pairs = [(_ops.equal(index, _fw.constant(k, index.dtype)), fn) for k, fn in items]
    return case(pairs, default=default if default is not None else items[-1][1], name=name)
