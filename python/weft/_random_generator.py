"""``tf.random.Generator``: a random-number generator object with its own state.

A generator is a 64-bit key (from its seed) and a counter. Each draw takes the next counter
value and runs the stateless op of its distribution on seed [key, counter], so two draws never
share a seed, and the same seed replays the same draws in the same order. The counter is an int64
variable of the graph (one per graph the generator is used in, created on first use), advanced by
AssignAdd when the draw runs: at top level (TF2 style) every call draws anew at once, and a draw
inside a traced step (weft.function, a Keras step) or a TF1 Session draws anew on every run, as
TensorFlow's generator does. Inside one step the draws of one generator are chained by control
dependencies, so which draw gets which counter value follows the program order, not the
scheduler. The numbers are weft's, not TensorFlow's (see _stateless_random.py).
"""
import random as _py_random
import weakref

from . import _stateless_random as _sl
from . import framework as _fw
from . import ops as _ops

_MASK = (1 << 64) - 1


def _mix(x):
    """SplitMix64 of an int (a well-spread 64-bit key from any seed)."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _signed(x):
    return x - (1 << 64) if x >= 1 << 63 else x


def _key_of(seed):
    """The generator key of a seed: an int, or a sequence of ints (TF accepts both)."""
    if isinstance(seed, _fw.Tensor):
        raise TypeError("weft.random.Generator.from_seed takes a Python int or a list of ints, not a tensor")
    try:
        parts = [int(s) for s in seed]
    except TypeError:
        parts = [int(seed)]
    key = 0x5EED
    for p in parts:
        key = _mix(key ^ (p & _MASK))
    return key


class Generator:
    """TensorFlow's ``tf.random.Generator``: ``Generator.from_seed(1234)``, ``g.normal([2, 3])``,
    ``g.uniform(...)``, ``g.truncated_normal(...)``, ``g.uniform_full_int(...)``, ``g.binomial(...)``,
    ``g.make_seeds(count)``, ``g.split(count)``; see the module docstring."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            self._reset(copy_from._key, copy_from._start)
        elif state is not None:
            vals = [int(v) for v in getattr(state, "numpy", lambda: state)()]
            self._reset(_key_of(vals), 0)
        else:
            raise ValueError("weft.random.Generator needs copy_from or state; use Generator.from_seed(seed) or "
                             "Generator.from_non_deterministic_state()")
        self._alg = alg or "philox"

    @classmethod
    def from_seed(cls, seed, alg=None):
        g = cls.__new__(cls)
        g._reset(_key_of(seed), 0)
        g._alg = alg or "philox"
        return g

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls.from_seed(_py_random.SystemRandom().getrandbits(63), alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg=None):
        g = cls.from_seed(int(key), alg)
        g._start = int(sum(int(c) for c in counter))
        return g

    def _reset(self, key, start):
        self._key, self._start = key, start
        self._splits = 0
        self._vars = weakref.WeakKeyDictionary()  # graph -> its counter Variable
        self._last = weakref.WeakKeyDictionary()  # graph -> the last draw's AssignAdd (chained in a step)

    def reset_from_seed(self, seed):
        """Restarts the generator as ``Generator.from_seed(seed)``."""
        self._reset(_key_of(seed), 0)

    @property
    def algorithm(self):
        return self._alg

    @property
    def key(self):
        return _signed(self._key)

    def _counter(self, graph):
        v = self._vars.get(graph)
        if v is None:
            with graph.as_default(), _fw.name_scope("random_generator"), _fw.control_dependencies(None):
                v = _fw.Variable(_ops.constant([self._start], dtype=_ops.int64), trainable=False, name="counter")
            self._vars[graph] = v
        return v

    def _next_seed(self):
        """An int64 seed [key, counter] for one draw; the counter advances each time it runs."""
        from . import _values
        graph = _fw.get_default_graph()
        v = self._counter(graph)
        prev = self._last.get(graph)
        chain = [prev] if prev is not None and not _values._top_level() else []
        with _fw.control_dependencies(chain):
            count = v.assign_add(_ops.constant([1], dtype=_ops.int64))
        self._last[graph] = count
        return _ops.concat([_ops.constant([_signed(self._key)], dtype=_ops.int64), count], axis=0)

    def uniform(self, shape, minval=0, maxval=None, dtype=_ops.float32, name=None):
        return _sl.stateless_uniform(shape, self._next_seed(), minval, maxval, dtype, name)

    def uniform_full_int(self, shape, dtype=_ops.int64, name=None):
        return _sl.stateless_uniform(shape, self._next_seed(), None, None, dtype, name)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_ops.float32, name=None):
        return _sl.stateless_normal(shape, self._next_seed(), mean, stddev, dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_ops.float32, name=None):
        return _sl.stateless_truncated_normal(shape, self._next_seed(), mean, stddev, dtype, name)

    def binomial(self, shape, counts, probs, dtype=_ops.int32, name=None):
        return _sl.stateless_binomial(shape, self._next_seed(), counts, probs, dtype, name)

    def make_seeds(self, count=1):
        """int64 [2, count]: seeds for the stateless functions, one per column (as TF: a full-range
        draw over a row of zeros)."""
        keys = self.uniform_full_int([int(count)], dtype=_ops.int64)
        from .array_ops import stack
        return stack([keys, _ops.zeros_like(keys)])

    def split(self, count=1):
        """``count`` new generators, independent of this one and of each other; the same parent
        seed gives the same children."""
        self._splits += 1
        return [Generator.from_seed([_signed(self._key), self._splits, i]) for i in range(int(count))]


_global = weakref.WeakKeyDictionary()  # graph -> its global generator (one per default graph)


def get_global_generator():
    """The global generator (made from a non-deterministic state on first use, as TF's)."""
    graph = _fw.get_default_graph()
    g = _global.get(graph)
    if g is None:
        g = _global[graph] = Generator.from_non_deterministic_state()
    return g


def set_global_generator(generator):
    """Replaces the global generator (of the default graph)."""
    if not isinstance(generator, Generator):
        raise TypeError("set_global_generator takes a weft.random.Generator, got %r" % (generator,))
    _global[_fw.get_default_graph()] = generator
