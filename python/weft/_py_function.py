"""``tf.py_function`` and ``tf.numpy_function``: Python inside a computation.

weft has no graph op that calls back into Python, so these run the function when the graph is
built, where TF2 runs it eagerly:

- ``py_function(func, inp, Tout)`` calls ``func`` on the input tensors themselves. At top level
  they have values (``x.numpy()`` works, as with TF's EagerTensors); in a trace (tf.function,
  Keras steps, dataset map functions) they are graph tensors, so a func made of TF ops becomes part
  of the graph and runs at every call. Either way gradients flow through the ops func used (TF's
  py_function is differentiable the same way).
- ``numpy_function(func, inp, Tout)`` calls ``func`` on numpy arrays: the inputs' values, which
  must be known when the graph is built (top level, or computed from constants); the results
  become constants without gradient (as TF's: numpy_function has none).

A func that needs values of tensors known only at run time (a placeholder, a tf.function argument,
a dataset element) is an UnimplementedError naming the function and the tensor.
"""
import numpy as np

from . import framework as _fw
from .errors import InvalidArgumentError, UnimplementedError

__all__ = ["py_function", "numpy_function"]


class NeedsValues(UnimplementedError):
    """The function needs values known only when the graph runs. Dataset.map catches it and maps
    in Python instead (data/_host.py), where every element has its values."""


def _touts(Tout, what):
    if Tout is None:
        return None, False
    many = isinstance(Tout, (list, tuple))
    from ._text_values import string
    dtypes = [t if t is string else _fw.as_dtype(t) for t in (Tout if many else [Tout])]
    return dtypes, many


def _results(out, dtypes, many, func, what, host=False):
    if dtypes is None:
        return None
    vals = list(out) if many and isinstance(out, (list, tuple)) else [out]
    if many and not isinstance(out, (list, tuple)):
        vals = [out]
    if len(vals) != len(dtypes):
        raise InvalidArgumentError("tf.%s: %s returned %d value(s) but Tout lists %d dtype(s)" % (
            what, getattr(func, "__name__", func), len(vals), len(dtypes)))
    from ._text_values import string, wrap
    res = []
    for k, (v, dt) in enumerate(zip(vals, dtypes)):
        if dt is string:  # text: a host value (weft's graphs carry no strings)
            if not host:
                raise InvalidArgumentError("tf.%s: Tout tf.string is supported in a dataset map run in Python only "
                                           "(weft's graphs carry no strings)" % what)
            res.append(wrap(np.asarray(v, dtype=object)))
            continue
        got = v.dtype if isinstance(v, _fw.Tensor) else (np.asarray(v).dtype if isinstance(v, (np.ndarray, np.generic))
                                                          else None)
        if got is not None:
            name = got.name if isinstance(v, _fw.Tensor) else np.dtype(got).name
            if name != dt.name:
                raise InvalidArgumentError("tf.%s: %d-th value returned by %s is %s, but Tout says %s" % (
                    what, k, getattr(func, "__name__", func), name, dt.name))
        if host and not isinstance(v, _fw.Tensor):  # a dataset mapped in Python: values, no graph nodes
            res.append(wrap(np.asarray(v, dt.as_numpy_dtype)))
        else:
            res.append(v if isinstance(v, _fw.Tensor) else _fw.constant(np.asarray(v), dt))
    return res if many else res[0]


def _in_python_map(inp):
    """Whether the inputs are an element of a dataset mapped in Python (data/_host.py wraps each
    component as an EagerValue): then func's numpy results stay values, not graph constants."""
    from .data.dataset import EagerValue
    return bool(inp) and all(isinstance(a, EagerValue) for a in inp)


def py_function(func, inp, Tout, name=None):
    """TF's ``tf.py_function(func, inp, Tout)``: ``func(*inp)`` on tensors (see the module doc);
    in a dataset map run in Python, on the element's values (strings included, with ``.numpy()``)."""
    dtypes, many = _touts(Tout, "py_function")
    inp = list(inp or [])
    if _in_python_map(inp):
        return _results(func(*inp), dtypes, many, func, "py_function", True)
    args = [a if isinstance(a, _fw.Tensor) else _fw.convert_to_tensor(a) for a in inp]
    from .data._trace import _Untraceable
    try:
        out = func(*args)
    except (ValueError, _Untraceable) as e:
        if isinstance(e, _Untraceable) or "placeholder" in str(e) or "feed" in str(e):
            raise NeedsValues("tf.py_function: %s needs the values of its inputs, known only when the graph "
                                     "runs (%s); weft runs py_function when the graph is built, so write it with TF ops "
                                     "to use it inside a tf.function or dataset map" % (
                                         getattr(func, "__name__", func), e)) from e
        raise
    return _results(out, dtypes, many, func, "py_function")


def numpy_function(func, inp, Tout, stateful=True, name=None):
    """TF's ``tf.numpy_function(func, inp, Tout)``: ``func`` on the inputs' numpy values."""
    dtypes, many = _touts(Tout, "numpy_function")
    values = []
    for a in inp or []:
        if not isinstance(a, _fw.Tensor):
            values.append(np.asarray(a))
            continue
        v = None
        if _fw.api().executing_eagerly():  # top level: a value, also of a variable
            try:
                v = a.numpy()
            except ValueError:
                v = None
        else:
            v = _fw.api().get_static_value(a)
        if v is None:
            raise NeedsValues("tf.numpy_function: the value of %s is known only when the graph runs (it needs a "
                                     "feed, a variable or a traced argument); weft runs %s when the graph is built "
                                     "(no graph op calls Python)" % (a.name, getattr(func, "__name__", func)))
        values.append(np.asarray(v))
    host = _in_python_map(list(inp or []))
    return _results(func(*values), dtypes, many, func, "numpy_function", host)
