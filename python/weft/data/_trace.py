"""Tracing a Python function into a weft graph once, as tf.data does for map and filter: the
function is called on symbolic tensors (placeholders of the element spec) inside a fresh graph;
the pipeline then runs that graph in C++ for every element. Python constructs that need a value
while tracing (``.numpy()``, ``if tensor:``, iterating a tensor, numpy functions on a tensor) are
errors that name the construct and where it is."""
import contextlib
import os
import threading
import traceback

import numpy as np

from .. import framework as _fw
from .. import ops as _ops
from . import _structure as _st

_WEFT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Untraceable(Exception):
    def __init__(self, construct):
        super().__init__(construct)
        self.construct = construct


_ABSENT = object()
_local = threading.local()  # .depth: > 0 while this thread traces a function


def tracing():
    """Whether this thread is tracing a tf.data function now (a Keras layer called on its tensors
    builds into the trace graph: keras/_eager.py, call_in_data_trace)."""
    return getattr(_local, "depth", 0) > 0


def _only_while_tracing(name, traced, original):
    """A Tensor method that is ``traced`` on the thread that traces, and ``original`` (or absent)
    elsewhere: another thread building a graph meanwhile sees weft's usual tensors."""
    def f(self, *args, **kwargs):
        if tracing():
            return traced(self, *args, **kwargs)
        if original is _ABSENT:
            raise AttributeError("'weft.Tensor' object has no attribute %r" % name)
        if original is None:  # a method set to None: the protocol is off (``__iter__``)
            raise TypeError("'weft.Tensor' object does not support %s" % name)
        return original(self, *args, **kwargs)
    return f


def _raiser(construct):
    def f(self, *args, **kwargs):
        raise _Untraceable(construct)
    return f


# Tensor methods that behave differently on a thread that traces (see _guarded).
_GUARDS = {
    "numpy": "calling .numpy() on a tensor (the function is traced once; elements have no values then)",
    "__bool__": "using a tensor as a Python bool (`if`, `while`, `and`/`or`, `not`); use weft.where",
    "__iter__": "iterating over a tensor (a `for` loop or unpacking); index it or use weft.split",
    "__len__": "len() of a tensor; use weft.shape",
    "__array__": "converting a tensor to a numpy array (a numpy function called on a tensor); use weft ops",
    "__index__": "using a tensor as a Python int (an index, range(), a shape)",
    "__int__": "int() of a tensor", "__float__": "float() of a tensor",
}


def _compare(op_name):
    # Inside a traced function `==` and `!=` are elementwise, as in TensorFlow 2 (outside, weft's
    # graph API keeps identity so tensors can be dict keys).
    def f(a, b):
        if b is None or not isinstance(b, (_fw.Tensor, int, float, bool, np.ndarray, np.generic, list)):
            return op_name == "NotEqual"
        return getattr(_ops.raw_ops, op_name)(a, _ops._other(a, b))
    return f


_installed = {"count": 0, "saved": None}
_install_lock = threading.Lock()


@contextlib.contextmanager
def _guarded():
    """Installs the tracing behaviour of Tensor methods while any thread traces (the first trace
    installs, the last one out restores); it applies only on threads that are tracing."""
    T = _fw.Tensor
    replaced = dict({name: _raiser(c) for name, c in _GUARDS.items()}, __eq__=_compare("Equal"),
                    __ne__=_compare("NotEqual"))
    with _install_lock:
        if _installed["count"] == 0:
            saved = _installed["saved"] = {name: T.__dict__.get(name, _ABSENT) for name in replaced}
            for name, f in replaced.items():
                setattr(T, name, _only_while_tracing(name, f, saved[name]))
        _installed["count"] += 1
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        yield
    finally:
        _local.depth -= 1
        with _install_lock:
            _installed["count"] -= 1
            if _installed["count"] == 0:
                for name, old in _installed["saved"].items():
                    if old is _ABSENT:
                        delattr(T, name)
                    else:
                        setattr(T, name, old)


def _where(fn, tb):
    """'name (file:line)' of the function, and the user's line where tracing stopped."""
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    where = "%s (%s:%d)" % (name, code.co_filename, code.co_firstlineno) if code else name
    frames = [f for f in traceback.extract_tb(tb) if not f.filename.startswith(_WEFT_DIR)]
    if frames:
        f = frames[-1]
        where += ", at %s:%d: %s" % (f.filename, f.lineno, (f.line or "").strip())
    return where


def _call(fn, args):
    """Calls fn as tf.data does: a tuple element's components as separate arguments."""
    if isinstance(args, tuple) and not _st._is_namedtuple(args):
        return fn(*args)
    return fn(args)


def trace(fn, spec, what):
    """Traces ``fn`` over ``spec`` (an element structure of TensorSpecs). Returns (graph, input
    tensors, output structure of tensors)."""
    if not callable(fn):
        raise TypeError("%s needs a function, got %r" % (what, fn))
    g = _fw.Graph()
    specs = _st.flatten(spec, _st.is_spec)
    with g.as_default():
        inputs = [_fw.placeholder(s.dtype, None if s.shape is None else tuple(s.shape), name="args_%d" % i)
                  for i, s in enumerate(specs)]
        args = _st.pack(spec, inputs, _st.is_spec)
        try:
            with _guarded():
                out = _call(fn, args)
        except _Untraceable as e:
            raise TypeError("%s: cannot trace %s: %s. The function is traced once into a graph over symbolic "
                            "tensors (as tf.data does) and then runs in C++ for every element." %
                            (what, _where(fn, e.__traceback__), e.construct)) from None
        except Exception as e:
            e.add_note("(while tracing %s for %s; its arguments are symbolic tensors %s)" %
                       (_where(fn, e.__traceback__), what, spec))
            raise
        if out is None:
            raise TypeError("%s: %s returned None; it must return the new element (tensors, numbers or arrays, or "
                            "tuples and dicts of them)" % (what, _where(fn, None)))
        if isinstance(out, list):
            out = tuple(out)  # tf.data reads a returned list as a tuple
        leaves = _st.flatten(out, lambda x: not isinstance(x, (tuple, dict)))
        tensors = []
        for v in leaves:
            if isinstance(v, _fw.Tensor):
                if v.graph is not g:
                    raise ValueError("%s: %s returned %s, a tensor of another graph (made outside the function?)" %
                                     (what, _where(fn, None), v.name))
            else:
                v = _fw.constant(np.asarray(_st.to_array(v, what)))
            # An Identity, so an output that is an input (or the same tensor twice) is still a fetch of its own.
            tensors.append(_ops.raw_ops.Identity(v, name="output_%d" % len(tensors)))
        structure = _st.pack(out, tensors, lambda x: not isinstance(x, (tuple, dict)))
    return g, inputs, structure
