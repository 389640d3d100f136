"""``weft.GradientTape`` (tf.GradientTape) over weft's graphs: ``tape.gradient(target, sources)``
is ``weft.gradients`` of the graph that computed ``target`` (a sum when it is a list, None for an
unconnected source unless ``unconnected_gradients="zero"``), packed like ``sources`` (lists,
tuples, dicts). As TensorFlow's tape, it differentiates with respect to trainable variables
(``watch_accessed_variables``) and tensors it was told to ``watch``; other sources get None.
``stop_recording()`` cuts what is computed inside from the gradient (its inputs pass through
StopGradient). ``jacobian`` stacks the gradient of each element of the target.

Entered outside a tf.function trace and outside a ``with Session()`` block, a tape opens an eager
step (_recorder.py): the custom training loop without ``@tf.function`` runs as in TensorFlow.
"""
import contextlib
import warnings

import numpy as np

from . import _recorder
from . import array_ops as _array_ops
from . import framework as _fw
from . import ops as _ops

_LOOP = ("Compute it inside the tape from weft tensors: a Keras model called on data inside a GradientTape block "
         "gives a tensor (docs/python.md, \"Custom training loops\"); numpy arrays computed outside have no "
         "gradient")


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


def _floating(t, what):
    """Whether ``t`` can be differentiated; an integer one gets None and a warning, as in TF."""
    if t.dtype.is_floating:
        return True
    warnings.warn("GradientTape.gradient: the %s %s has dtype %s; only floating tensors have gradients (None is "
                  "returned for it)" % (what, t.name, t.dtype), stacklevel=4)
    return False


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_variables = watch_accessed_variables
        self._watched = set()  # names of the tensors watch() was given
        self._used = False
        self._eager = self._eager_step = False

    def __enter__(self):
        self._eager = _recorder.tape_entered()
        self._eager_step = self._eager  # kept after the block: the tape recorded an eager step
        return self

    def __exit__(self, *exc):
        _recorder.tape_exited(self._eager)
        self._eager = False
        return False

    def watch(self, tensor):
        """Records ``tensor`` (a tensor, variable, or a list / dict of them) as a source to
        differentiate with respect to."""
        for t in _flat(tensor):
            self._watched.add(_check(t, "watched value").name)

    def watched_variables(self):
        return tuple(v for v in _fw.global_variables() if v.name in self._watched)

    @contextlib.contextmanager
    def stop_recording(self):
        """Operations made inside do not pass gradients back to their inputs."""
        _fw._stop_depth[0] += 1
        try:
            yield
        finally:
            _fw._stop_depth[0] -= 1

    def reset(self):
        self._used = False
        self._watched = set()

    def _differentiable(self, source):
        """TensorFlow's rule: a trainable variable (when the tape watches accessed variables), a
        watched tensor, or an intermediate value the tape computed from one of those (``z`` by
        ``y`` where ``y = x * x`` was computed on the tape); anything else (a constant, a tensor
        made before the tape) has no gradient."""
        if source.name in self._watched:
            return True
        if isinstance(source, _fw.Variable):
            return self._watch_variables and source.trainable
        made = _recorder.made_on_tape(source)
        if made is False or (made is None and self._eager_step):  # made before the tape
            return False
        for op in _fw.ancestor_ops([source.op]):
            if any(out.name in self._watched for out in op.outputs) or (
                    self._watch_variables and op.type == "Variable"):
                return True
        return False

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients (or "
                               "jacobians)")
        self._used = True
        targets = [_check(t, "target") for t in _flat(target)]
        flat_sources = [_check(s, "source") for s in _flat(sources)]
        weights = None if output_gradients is None else list(
            output_gradients if isinstance(output_gradients, (list, tuple)) else [output_gradients])
        keep = [_floating(t, "target") for t in targets]  # TF: an integer target has no gradient (None)
        targets = [t for t, k in zip(targets, keep) if k]
        if weights is not None:
            weights = [w for w, k in zip(weights, keep) if k]
        flags = [bool(targets) and _floating(s, "source") and self._differentiable(s) for s in flat_sources]
        live = [s for s, f in zip(flat_sources, flags) if f]
        grads = iter(_ops.gradients(targets, live, grad_ys=weights) if live else [])
        grads = [next(grads) if f else None for f in flags]
        if unconnected_gradients == UnconnectedGradients.ZERO:
            grads = [_ops.zeros_like(s) if g is None else g for g, s in zip(grads, flat_sources)]
        elif unconnected_gradients != UnconnectedGradients.NONE:
            raise ValueError("unconnected_gradients must be 'none' or 'zero', got %r" % (unconnected_gradients,))
        return _pack(sources, grads)

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...] for each source: shape target.shape + source.shape, one
        gradient per element of the target (its static shape must be known)."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients (or "
                               "jacobians)")
        self._used = True
        target = _check(target, "target")
        if target.shape is None or any(d is None for d in target.shape):
            raise ValueError("GradientTape.jacobian: target %s has shape %s; weft needs a fully known shape" %
                             (target.name, target.shape))
        flat_sources = [_check(s, "source") for s in _flat(sources)]
        n = int(np.prod(target.shape, dtype=np.int64))
        flat_target = _ops.reshape(target, [-1])
        rows = [self._row(_ops.gather(flat_target, i), flat_sources, unconnected_gradients) for i in range(n)]
        out = []
        for j, s in enumerate(flat_sources):
            col = [r[j] for r in rows]
            if any(c is None for c in col):
                out.append(None)
                continue
            stacked = _array_ops.stack(col)
            out.append(_ops.reshape(stacked, list(target.shape) + list(s.shape)))
        return _pack(sources, out)

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...] for each example b: shape [batch, *target.shape[1:],
        *source.shape[1:]], assuming (as TF's) that example b of the target depends only on example
        b of the source. The target's non-batch dims must be known (one gradient per element)."""
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients (or "
                               "jacobians)")
        self._used = True
        target, source = _check(target, "target"), _check(source, "source")
        if target.shape is None or len(target.shape) < 1 or any(d is None for d in target.shape[1:]):
            raise ValueError("GradientTape.batch_jacobian: target %s has shape %s; weft needs known dims after the "
                             "batch dim" % (target.name, target.shape))
        if source.shape is None or len(source.shape) < 1:
            raise ValueError("GradientTape.batch_jacobian: source %s needs a batch dim, got shape %s" % (
                source.name, source.shape))
        tb, sb = target.shape[0], source.shape[0]
        if tb is not None and sb is not None and tb != sb:
            raise ValueError("GradientTape.batch_jacobian: target %s has batch size %d but source %s has %d" % (
                target.name, tb, source.name, sb))
        n = int(np.prod(target.shape[1:], dtype=np.int64))
        flat = _ops.reshape(target, [-1, n])
        # Example b of the target depends on example b of the source only, so the gradient of the
        # sum over the batch of column i is, row by row, each example's own gradient.
        rows = [self._row(_ops.reduce_sum(flat[:, i]), [source], unconnected_gradients)[0] for i in range(n)]
        if any(r is None for r in rows):
            return None
        stacked = _array_ops.stack(rows, axis=1)  # [batch, n, *source.shape[1:]]
        if source.shape[1:] and any(d is None for d in source.shape[1:]):
            return stacked
        return _ops.reshape(stacked, [-1] + list(target.shape[1:]) + list(source.shape[1:]))

    def _row(self, y, sources, unconnected):
        live = [s for s in sources if self._differentiable(s)]
        grads = iter(_ops.gradients([y], live) if live else [])
        row = [next(grads) if self._differentiable(s) else None for s in sources]
        if unconnected == UnconnectedGradients.ZERO:
            row = [_ops.zeros_like(s) if g is None else g for g, s in zip(row, sources)]
        return row
