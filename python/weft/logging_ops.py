"""``tf.print``: TensorFlow's printing of tensors, Python values and structures of both.

Where TF2 runs ops eagerly (weft's top level, an eager GradientTape step) the values print at
once. Inside a traced function (weft.function, a Keras train_step) the tensors are fetched with
every run of the function and printed after it, once per call, as TF's PrintV2 op prints once per
execution. TF1 graph code (a Session) has no such hook in weft: there tf.print returns a no-op
and writes, once, a warning that it prints nothing.

Format (TF's): a tensor prints as numpy-like nested brackets with elements separated by spaces,
floats in C++'s default notation (``%g``: ``1``, ``2.5``, ``0.333333``), bools as 1/0, and with
more than 2*summarize elements along a dimension only the first and last ``summarize`` and
``...`` (summarize=-1: all). Strings print as they are; lists, tuples and dicts as Python's with
tensors formatted inside.
"""
import sys

import numpy as np

from . import framework as _fw

__all__ = ["print"]

_warned = []  # the TF1-graph warning is written once per process


def _scalar(v):
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if isinstance(v, (float, np.floating)):
        return format(float(v), "g")
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def format_array(v, summarize=3):
    """TF's text for an array value (see the module docstring)."""
    v = np.asarray(v)
    if v.ndim == 0:
        return _scalar(v[()])

    def rows(a, depth):
        n = a.shape[0]
        if 0 <= summarize and n > 2 * summarize:
            idx = list(range(summarize)) + [None] + list(range(n - summarize, n))
        else:
            idx = list(range(n))
        if a.ndim == 1:
            return "[" + " ".join("..." if i is None else _scalar(a[i]) for i in idx) + "]"
        sep = "\n" * (a.ndim - 1) + " " * (depth + 1)
        return "[" + sep.join("..." if i is None else rows(a[i], depth + 1) for i in idx) + "]"
    return rows(v, 0)


def _text(x, summarize, values):
    if isinstance(x, _fw.Tensor):
        return format_array(next(values), summarize)
    if isinstance(x, np.ndarray):
        return format_array(x, summarize)
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        return "{" + ", ".join("%r: %s" % (k, _text(x[k], summarize, values)) for k in sorted(x)) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(_text(e, summarize, values) for e in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(_text(e, summarize, values) for e in x)
        return "(" + inner + ("," if len(x) == 1 else "") + ")"
    return _scalar(x) if isinstance(x, (bool, float, np.generic)) else str(x)


def _tensors(x):
    if isinstance(x, _fw.Tensor):
        return [x]
    if isinstance(x, dict):
        return [t for k in sorted(x) for t in _tensors(x[k])]
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in _tensors(e)]
    return []


def _emit(inputs, values, sep, end, stream, summarize):
    it = iter(values)
    text = sep.join(_text(x, summarize, it) for x in inputs) + end
    if stream is None or stream == sys.stderr or stream == "stderr":
        stream = sys.stderr
    elif stream == sys.stdout or stream == "stdout":
        stream = sys.stdout
    elif isinstance(stream, str) and stream.startswith("file://"):
        with open(stream[len("file://"):], "a") as f:
            f.write(text)
        return
    stream.write(text)
    stream.flush()


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001 - tf.print
    """Prints ``inputs`` (tensors, Python values, structures) as TF's tf.print does, to
    ``output_stream`` (sys.stderr by default, sys.stdout, or "file://path" to append to a file)."""
    from . import _values
    from .data import _trace
    from .keras import _custom_step
    tensors = _tensors(list(inputs))
    if _trace.tracing():
        raise ValueError("tf.print inside a weft.data function (Dataset.map / filter) is not supported: print the "
                         "dataset's elements instead")
    trace = _custom_step.current(tensors[0].graph) if tensors else _custom_step.current()
    if trace is not None:
        def printer(*vals):
            _emit(inputs, vals, sep, end, output_stream, summarize)
        trace.metrics.append((printer, tensors, {}))
        return None
    if tensors and not _values.executing_eagerly():
        from . import _recorder
        if not all(_recorder.owns(t) for t in tensors):
            if not _warned:
                _warned.append(True)
                sys.stderr.write("weft: tf.print of %s in a TF1 graph prints nothing: weft has no print op inside a "
                                 "Session's graph (fetch the tensors with sess.run and print them)\n"
                                 % ", ".join(t.name for t in tensors))
            from .ops import no_op
            return no_op()
    _emit(inputs, [np.asarray(t.numpy()) for t in tensors], sep, end, output_stream, summarize)
    return None
