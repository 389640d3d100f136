"""``tf.debugging`` (and TF2's top-level ``tf.assert_*`` / ``tf.Assert``): checks that fail with
InvalidArgumentError naming the condition, the tensors and, where known, their values.

Where TF2 runs ops eagerly (weft's top level: tensors with values) the check runs at once and
raises. Inside a traced function (weft.function, a Keras step) it becomes an ``Assert`` op that
runs with every call of the function (TF2's automatic control dependencies give the same). In a TF1
graph it returns the ``Assert`` op, which runs when fetched or used as a control input
(``with tf.control_dependencies([tf.debugging.assert_equal(x, y)]):``), as TF1's. Static checks
(assert_rank, assert_type, assert_shapes) fail at once when the static shape or dtype already
says so.
"""
import numpy as np

from . import framework as _fw

__all__ = ["Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater",
           "assert_greater_equal", "assert_near", "assert_positive", "assert_negative", "assert_non_negative",
           "assert_non_positive", "assert_all_finite", "check_numerics", "assert_rank", "assert_rank_at_least",
           "assert_type", "assert_shapes", "assert_scalar", "is_numeric_tensor", "set_log_device_placement",
           "enable_check_numerics", "disable_check_numerics"]


def _values_now(tensors):
    """The tensors' values when TF2 would have them (top level, not tracing), else None."""
    from . import _values
    if not _values.executing_eagerly():
        return None
    try:
        return [np.asarray(t.numpy()) for t in tensors]
    except Exception:  # noqa: BLE001 - a tensor that needs a feed: checked when the graph runs
        return None


def _fail(message, detail):
    from .errors import InvalidArgumentError
    raise InvalidArgumentError(("%s: " % message if message else "") + detail)


def _check(condition, message, describe, data=()):
    """The Assert op of ``condition`` (a bool tensor), or the check done at once (see the module
    docstring). ``describe`` is the text of the condition; ``data`` tensors whose values an
    immediate failure shows."""
    cond = _fw.convert_to_tensor(condition)
    now = _values_now([cond] + [_fw.convert_to_tensor(d) for d in data])
    if now is not None:
        if not bool(np.all(now[0])):
            shown = "; ".join("%s = %s" % (getattr(d, "name", "value"), np.array2string(v, threshold=6))
                              for d, v in zip(data, now[1:]))
            _fail(message, "Condition %s did not hold%s" % (describe, (" (" + shown + ")") if shown else ""))
        return None
    text = ("%s: " % message if message else "") + "Condition %s did not hold" % describe
    op = cond.graph.create_op("Assert", [cond], {"message": text}, "Assert")
    from .keras import _custom_step
    trace = _custom_step.current(cond.graph)
    if trace is not None:
        trace.updates.append(op)  # runs with every call of the traced function
    return op


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """TF's tf.Assert: fails when ``condition`` is false, showing ``data`` (at once where values
    are known)."""
    return _check(condition, None, "'%s'" % getattr(condition, "name", condition),
                  [d for d in data if isinstance(d, _fw.Tensor)])


def _binary(op_name, symbol):
    def f(x, y, message=None, summarize=None, name=None, data=None):
        x, y = _fw.convert_to_tensor(x), _fw.convert_to_tensor(y)
        y = y if y.dtype == x.dtype else _fw.api().cast(y, x.dtype)
        cond = _fw.api().reduce_all(getattr(_fw.api(), op_name)(x, y))
        return _check(cond, message, "x %s y (x = %s, y = %s)" % (symbol, x.name, y.name), [x, y])
    f.__name__ = "assert_" + {"==": "equal", "!=": "none_equal", "<": "less", "<=": "less_equal", ">": "greater",
                              ">=": "greater_equal"}[symbol]
    f.__doc__ = "TF's tf.debugging.%s: every element of x %s y (broadcasting)." % (f.__name__, symbol)
    return f


assert_equal = _binary("equal", "==")
assert_none_equal = _binary("not_equal", "!=")
assert_less = _binary("less", "<")
assert_less_equal = _binary("less_equal", "<=")
assert_greater = _binary("greater", ">")
assert_greater_equal = _binary("greater_equal", ">=")


def _sign(op_name, symbol, what):
    def f(x, message=None, summarize=None, name=None, data=None):
        x = _fw.convert_to_tensor(x)
        zero = _fw.api().zeros_like(x)
        cond = _fw.api().reduce_all(getattr(_fw.api(), op_name)(x, zero))
        return _check(cond, message, "x %s 0 (x = %s)" % (symbol, x.name), [x])
    f.__name__ = "assert_" + what
    return f


assert_positive = _sign("greater", ">", "positive")
assert_negative = _sign("less", "<", "negative")
assert_non_negative = _sign("greater_equal", ">=", "non_negative")
assert_non_positive = _sign("less_equal", "<=", "non_positive")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """|x - y| <= atol + rtol * |y| elementwise; defaults 10 * eps of the dtype, as TF's."""
    x, y = _fw.convert_to_tensor(x), _fw.convert_to_tensor(y)
    eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) if x.dtype in (_fw.float32, _fw.float64) else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    w = _fw.api()
    y = y if y.dtype == x.dtype else w.cast(y, x.dtype)
    cond = w.reduce_all(w.abs(x - y) <= atol + rtol * w.abs(y))
    return _check(cond, message, "x and y within atol %g, rtol %g (x = %s, y = %s)" % (atol, rtol, x.name, y.name),
                  [x, y])


def assert_all_finite(t, message):
    return check_numerics(t, message)


def check_numerics(tensor, message, name=None):
    """``tensor``, after a check that it holds no NaN or Inf (TF's tf.debugging.check_numerics)."""
    t = _fw.convert_to_tensor(tensor)
    w = _fw.api()
    op = _check(w.reduce_all(w.math.is_finite(t)), message, "no NaN or Inf in %s" % t.name, [t])
    if op is None:
        return t
    with t.graph.control_dependencies([op]):
        return w.identity(t)


def _static_rank(x, what):
    x = _fw.convert_to_tensor(x)
    if x.shape is None:
        raise ValueError("%s: %s has unknown rank; weft checks ranks when the graph is built" % (what, x.name))
    return x, len(x.shape)


def assert_rank(x, rank, message=None, name=None):
    x, r = _static_rank(x, "assert_rank")
    if r != int(rank):
        raise ValueError("%sTensor %s must have rank %d. Received rank %d, shape %s"
                         % (message + " " if message else "", x.name, int(rank), r, x.shape))


def assert_rank_at_least(x, rank, message=None, name=None):
    x, r = _static_rank(x, "assert_rank_at_least")
    if r < int(rank):
        raise ValueError("%sTensor %s must have rank at least %d. Received rank %d, shape %s"
                         % (message + " " if message else "", x.name, int(rank), r, x.shape))


def assert_scalar(tensor, message=None, name=None):
    assert_rank(tensor, 0, message)


def assert_type(tensor, tf_type, message=None, name=None):
    t = _fw.convert_to_tensor(tensor)
    if t.dtype != _fw.as_dtype(tf_type):
        raise TypeError("%s%s must be of type %s; got %s" % (message + " " if message else "", t.name,
                                                           _fw.as_dtype(tf_type), t.dtype))


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """TF's assert_shapes on static shapes: each entry (tensor, ['N', 'D', ...] or ints) must have
    that rank, and dims with one symbol must agree across tensors (known dims only)."""
    seen = {}
    items = shapes.items() if isinstance(shapes, dict) else shapes
    for t, spec in items:
        t = _fw.convert_to_tensor(t)
        if t.shape is None:
            continue
        spec = list(spec)
        if len(spec) != len(t.shape):
            raise ValueError("%s%s has rank %d, the shape spec %s rank %d" % (message + " " if message else "",
                                                                            t.name, len(t.shape), spec, len(spec)))
        for d, s in zip(t.shape, spec):
            if d is None:
                continue
            if isinstance(s, int) and s != d:
                raise ValueError("%s%s has shape %s, not %s" % (message + " " if message else "", t.name, t.shape,
                                                                spec))
            if isinstance(s, str) and s not in (".", "*"):
                if seen.setdefault(s, d) != d:
                    raise ValueError("%sdimension '%s' is %d in %s but %d elsewhere" % (
                        message + " " if message else "", s, d, t.name, seen[s]))


def is_numeric_tensor(tensor):
    return isinstance(tensor, _fw.Tensor) and tensor.dtype != _fw.bool_


def set_log_device_placement(enabled):
    """Accepted: weft prints placements for a Session made with
    ``ConfigProto(log_device_placement=True)``, not from this switch."""


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Accepted: weft does not instrument every op (use check_numerics on the tensors to watch)."""


def disable_check_numerics():
    """Accepted (see enable_check_numerics)."""
