"""TF1's ``get_variable`` / ``variable_scope`` and its initializers (graph ops run by the
variables' initializers, so ``set_random_seed`` makes them reproducible).

    with tf.variable_scope("layer1"):
        w = tf.get_variable("w", [784, 10], initializer=tf.glorot_uniform_initializer())  # "layer1/w"
    with tf.variable_scope("layer1", reuse=True):
        same = tf.get_variable("w")                                                      # the same node
"""
import contextlib
import math

import numpy as np

from ... import _variables
from ...framework import Tensor, Variable, as_dtype, constant, convert_to_tensor, float32, get_default_graph
from ...ops import fill
from .random import random_normal, random_uniform, truncated_normal

AUTO_REUSE = "AUTO_REUSE"


# ---- initializers ------------------------------------------------------------------------------

class _Initializer:
    """Called as ``init(shape, dtype=None, partition_info=None)``: a tensor of initial values."""

    def __init__(self, dtype=float32):
        self.dtype = as_dtype(dtype)

    def _dtype(self, dtype):
        return as_dtype(dtype) if dtype is not None else self.dtype


class zeros_initializer(_Initializer):  # noqa: N801 - TF's names
    def __call__(self, shape, dtype=None, partition_info=None):
        return fill(list(shape), constant(0, dtype=self._dtype(dtype)))


class ones_initializer(_Initializer):  # noqa: N801
    def __call__(self, shape, dtype=None, partition_info=None):
        return fill(list(shape), constant(1, dtype=self._dtype(dtype)))


class constant_initializer(_Initializer):  # noqa: N801
    """A scalar fills the shape; an array must have the shape's number of elements (reshaped)."""

    def __init__(self, value=0, dtype=float32, verify_shape=False):
        super().__init__(dtype)
        self.value = value

    def __call__(self, shape, dtype=None, partition_info=None):
        dt = self._dtype(dtype)
        v = np.asarray(self.value, dtype=dt.as_numpy_dtype)
        if v.size == 1:
            return fill(list(shape), constant(v.reshape(()), dtype=dt))
        if v.size != int(np.prod(shape)):
            raise ValueError("constant_initializer: %d values for shape %s" % (v.size, list(shape)))
        return constant(v.reshape(shape), dtype=dt)


class random_normal_initializer(_Initializer):  # noqa: N801
    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=float32):
        super().__init__(dtype)
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_normal(shape, self.mean, self.stddev, self._dtype(dtype), self.seed)


class truncated_normal_initializer(random_normal_initializer):  # noqa: N801
    """Normal values redrawn beyond two standard deviations."""

    def __call__(self, shape, dtype=None, partition_info=None):
        return truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype), self.seed)


class random_uniform_initializer(_Initializer):  # noqa: N801
    def __init__(self, minval=0.0, maxval=None, seed=None, dtype=float32):
        super().__init__(dtype)
        self.minval, self.maxval, self.seed = minval, 1.0 if maxval is None else maxval, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        return random_uniform(shape, self.minval, self.maxval, self._dtype(dtype), self.seed)


class variance_scaling_initializer(_Initializer):  # noqa: N801
    """stddev = sqrt(scale / n), n = fan_in, fan_out or their mean ("fan_avg"); "uniform" draws in
    [-sqrt(3 scale / n), +...], "truncated_normal" divides stddev by 0.8796... (the truncated
    distribution's own stddev), "untruncated_normal" draws plainly. Fans as TF computes them."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=float32):
        super().__init__(dtype)
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError("variance_scaling_initializer: mode %r is not one of fan_in, fan_out, fan_avg" % mode)
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError("variance_scaling_initializer: distribution %r is not one of uniform, truncated_normal, "
                             "untruncated_normal" % distribution)
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed

    def __call__(self, shape, dtype=None, partition_info=None):
        shape = [int(d) for d in shape]
        receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
        fan_in = shape[-2] * receptive if len(shape) >= 2 else (shape[0] if shape else 1)
        fan_out = shape[-1] * receptive if len(shape) >= 2 else (shape[0] if shape else 1)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        dt, seed = self._dtype(dtype), self.seed
        if self.distribution == "uniform":
            limit = math.sqrt(3.0 * scale)
            return random_uniform(shape, -limit, limit, dt, seed)
        if self.distribution == "truncated_normal":
            return truncated_normal(shape, 0.0, math.sqrt(scale) / 0.87962566103423978, dt, seed)
        return random_normal(shape, 0.0, math.sqrt(scale), dt, seed)


def glorot_uniform_initializer(seed=None, dtype=float32):
    return variance_scaling_initializer(1.0, "fan_avg", "uniform", seed, dtype)


def glorot_normal_initializer(seed=None, dtype=float32):
    return variance_scaling_initializer(1.0, "fan_avg", "truncated_normal", seed, dtype)


def he_normal(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed=None):
    return variance_scaling_initializer(2.0, "fan_in", "uniform", seed)


# ---- variable scopes ---------------------------------------------------------------------------

class VariableScope:
    """A variable scope: its ``name`` (the prefix of get_variable's names), ``reuse`` and default
    ``initializer``."""

    def __init__(self, name, reuse=False, initializer=None, dtype=float32):
        self.name, self.reuse, self.initializer, self.dtype = name, reuse, initializer, dtype

    @property
    def original_name_scope(self):
        return self.name + "/" if self.name else ""

    def reuse_variables(self):
        self.reuse = True


def _scope_stack(g):
    s = getattr(g, "_tf1_var_scopes", None)
    if s is None:
        s = [VariableScope("")]
        g._tf1_var_scopes = s
    return s


def get_variable_scope():
    """The innermost variable scope of the default graph."""
    return _scope_stack(get_default_graph())[-1]


@contextlib.contextmanager
def variable_scope(name_or_scope, default_name=None, values=None, initializer=None, regularizer=None, reuse=None,
                   dtype=None, auxiliary_name_scope=True, **unused):
    """Prefixes get_variable's names (and, as a name scope, the names of new ops) with the scope's
    name. ``reuse=True`` makes get_variable return existing variables (and fail for new ones);
    ``AUTO_REUSE`` returns or creates; reuse is inherited by inner scopes."""
    g = get_default_graph()
    stack = _scope_stack(g)
    outer = stack[-1]
    if isinstance(name_or_scope, VariableScope):
        full = name_or_scope.name
    elif name_or_scope:
        full = outer.original_name_scope + name_or_scope
    else:
        if default_name is None:
            raise TypeError("variable_scope: name_or_scope or default_name is needed")
        counts = g.__dict__.setdefault("_tf1_scope_counts", {})
        base = outer.original_name_scope + default_name
        n = counts.get(base, 0)
        counts[base] = n + 1
        full = base if n == 0 else "%s_%d" % (base, n)
    if reuse is None or reuse is False:
        reuse = outer.reuse
    scope = VariableScope(full, reuse, initializer or outer.initializer, dtype or outer.dtype)
    stack.append(scope)
    try:
        with g.name_scope(None), g.name_scope(full if auxiliary_name_scope else None):
            yield scope
    finally:
        stack.remove(scope)


def _made_by_get_variable(g):
    return g.__dict__.setdefault("_tf1_get_variables", set())


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, **unused):
    """The variable "<variable scope>/<name>": made (with ``initializer``, default the scope's or
    glorot_uniform) unless the scope reuses variables, in which case the existing one is returned."""
    g = get_default_graph()
    scope = _scope_stack(g)[-1]
    full = scope.original_name_scope + name
    made = _made_by_get_variable(g)
    if full in made:
        if not scope.reuse:
            raise ValueError("Variable %s already exists, disallowed. Did you mean to set reuse=True or "
                             "reuse=tf.AUTO_REUSE in VarScope?" % full)
        v = _variables.view(g, full)
        if shape is not None and tuple(int(d) for d in shape) != tuple(v.shape):
            raise ValueError("Trying to share variable %s, but specified shape %s and found shape %s." %
                             (full, tuple(shape), tuple(v.shape)))
        return v
    if scope.reuse is True:
        raise ValueError("Variable %s does not exist, or was not created with tf.get_variable(). Did you mean to "
                         "set reuse=tf.AUTO_REUSE in VarScope?" % full)
    dt = as_dtype(dtype) if dtype is not None else scope.dtype
    init = initializer if initializer is not None else scope.initializer
    if isinstance(init, (Tensor, np.ndarray, list, float, int)):
        value = convert_to_tensor(init, None if isinstance(init, Tensor) else dt)
    else:
        if shape is None or any(d is None for d in shape):
            raise ValueError("Shape of a new variable (%s) must be fully defined, but instead was %s." % (full, shape))
        if init is None:
            init = glorot_uniform_initializer() if dt in (float32, as_dtype("float64")) else zeros_initializer()
        with g.name_scope(None), g.name_scope(full + "/Initializer"):
            value = init([int(d) for d in shape], dtype=dt)
    with g.name_scope(None), g.name_scope(scope.name or None):
        v = Variable(value, trainable=True if trainable is None else bool(trainable), name=name)
    if v.op.name != full:
        raise ValueError("get_variable(%r): the graph already has a node named %s" % (name, full))
    made.add(full)
    _variables.register(v, v.trainable)
    return v


__all__ = ["AUTO_REUSE", "VariableScope", "get_variable", "get_variable_scope", "variable_scope",
           "zeros_initializer", "ones_initializer", "constant_initializer", "random_normal_initializer",
           "truncated_normal_initializer", "random_uniform_initializer", "variance_scaling_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer", "he_normal", "he_uniform"]
