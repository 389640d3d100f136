"""User functions that tf.data's Python-run transformations (data/_transform.py) call once per
element: scan's step, take_while's predicate, group_by_window's key.

    step = element_fn(lambda s, x: (s + x, s * x), (state_spec, ds.element_spec), "Dataset.scan")
    out_spec = step.spec                     # the result's structure of TensorSpecs
    flat_out = step(flat_state + flat_x)     # numpy arrays in, numpy arrays out

Numbers only: the function is traced once into a private graph (data/_trace.py, the same
tracing and errors as ``map``) and run in one Session from Python per call. With strings (a host
dataset) it runs eagerly on values with ``.numpy()``, as a host ``map`` does, and the result
spec comes from its first call. Contract: inputs and outputs are flat lists in the order of
``_st.flatten``; a later result whose structure or dtypes differ is a TypeError naming both.
"""
import numpy as np

from .. import framework as _fw
from .. import _text_values as _tv
from . import _structure as _st
from ._trace import _call, trace

_is_out_leaf = lambda x: not isinstance(x, (tuple, dict))  # noqa: E731


def has_strings(spec):
    return any(s.dtype == _tv.string for s in _st.flatten(spec, _st.is_spec))


class element_fn:
    """``fn`` over elements of ``spec`` (a structure of TensorSpec; the arguments as tf.data
    passes them: a tuple's parts as separate arguments)."""

    def __init__(self, fn, spec, what):
        if not callable(fn):
            raise TypeError("%s needs a function, got %r" % (what, fn))
        self._fn, self._in, self._what = fn, spec, what
        self.spec = None
        self._sess = None
        if not has_strings(spec):
            g, self._inputs, out = trace(fn, spec, what)
            flat = _st.flatten(out, lambda x: isinstance(x, _fw.Tensor))
            self._fetches = flat
            self.spec = _st.pack(out, [_st.TensorSpec(t.shape, t.dtype) for t in flat],
                                 lambda x: isinstance(x, _fw.Tensor))
            self._graph = g

    def __call__(self, flat):
        if self._sess is None and hasattr(self, "_graph"):  # one session for the dataset's life
            from ..session import Session
            self._sess = Session(self._graph, inter_op_threads=1, intra_op_threads=1)
        if self._sess is not None:
            return [np.asarray(a) for a in self._sess.run(self._fetches, feed_dict=dict(zip(self._inputs, flat)))]
        return self._eager(flat)

    def _eager(self, flat):
        from ._host import component, spec_of
        out = _call(self._fn, _st.pack(self._in, [_tv.wrap(c) for c in flat], _st.is_spec))
        if out is None:
            raise TypeError("%s: %r returned None" % (self._what, self._fn))
        if isinstance(out, list):
            out = tuple(out)
        arrays = [component(v, self._what) for v in _st.flatten(out, _is_out_leaf)]
        if self.spec is None:
            self.spec = _st.pack(out, [spec_of(a) for a in arrays], _is_out_leaf)
        else:
            want = _st.flatten(self.spec, _st.is_spec)
            if len(want) != len(arrays) or any(w.dtype != spec_of(a).dtype for w, a in zip(want, arrays)):
                raise TypeError("%s: %r returned %s where its first result was %r" %
                                (self._what, self._fn, [spec_of(a) for a in arrays], self.spec))
        return arrays

