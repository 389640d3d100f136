"""``weft.GradientTape`` (tf.GradientTape) over weft's graphs: ``tape.gradient(target, sources)``
is ``weft.gradients`` of the graph that computed ``target`` (a sum when it is a list, None for an
unconnected source unless ``unconnected_gradients="zero"``), packed like ``sources``. So
``with tf.GradientTape() as g: g.watch(x); y = x * x`` then ``g.gradient(y, x).numpy()`` works for
tensors computed from constants and variables (weft/_values.py). Custom training loops over Keras
models work inside a ``tf.function`` step, which weft traces into a graph (keras/_custom_step.py);
outside one, a Keras model called on numpy data returns numpy arrays, with nothing to
differentiate: a NotImplementedError that says so.
"""
import contextlib

import numpy as np

from . import framework as _fw
from . import ops as _ops

_LOOP = ("weft has no eager mode: a Keras model called on numpy data outside a tf.function returns numpy arrays, "
         "so a custom training loop cannot differentiate it. Decorate the training step with @tf.function (weft "
         "traces it into a graph, where tf.GradientTape and optimizer.apply_gradients work: docs/python.md, "
         "\"Custom training loops\"), or train with model.fit or model.train_on_batch")


class UnconnectedGradients:
    NONE = "none"
    ZERO = "zero"


def _flat(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _flat(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _flat(item)]
    return [x]


def _pack(template, leaves):
    it = iter(leaves)

    def build(t):
        if isinstance(t, dict):
            return {k: build(t[k]) for k in sorted(t)}
        if isinstance(t, (list, tuple)):
            return type(t)(build(v) for v in t) if not hasattr(t, "_fields") else type(t)(*[build(v) for v in t])
        return next(it)
    return build(template)


def _check(value, what):
    if isinstance(value, _fw.Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        raise NotImplementedError("GradientTape.gradient: the %s is a numpy array, not a weft tensor. %s" % (what, _LOOP))
    raise TypeError("GradientTape.gradient: the %s must be weft tensors or variables, got %r" % (what, value))


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._used = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def watch(self, tensor):
        """Accepted: weft differentiates with respect to any tensor of the graph."""
        for t in _flat(tensor):
            _check(t, "watched value")

    def stop_recording(self):
        return contextlib.nullcontext()

    def reset(self):
        self._used = False

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients (or "
                               "jacobians)")
        self._used = True
        targets = [_check(t, "target") for t in _flat(target)]
        flat_sources = [_check(s, "source") for s in _flat(sources)]
        grads = _ops.gradients(targets, flat_sources, grad_ys=output_gradients)
        if unconnected_gradients == UnconnectedGradients.ZERO:
            grads = [_ops.zeros_like(s) if g is None else g for g, s in zip(grads, flat_sources)]
        elif unconnected_gradients != UnconnectedGradients.NONE:
            raise ValueError("unconnected_gradients must be 'none' or 'zero', got %r" % (unconnected_gradients,))
        return _pack(sources, grads)

    def jacobian(self, *args, **kwargs):
        raise NotImplementedError("GradientTape.jacobian is not provided by weft (gradient of each output: "
                                  "weft.gradients per element)")
