"""TF1's random ops with TF's seed rule, so ``set_random_seed`` makes a program repeat:
an op seed alone uses TF's default graph seed; a graph seed alone gives each new op the next
op seed of a per-graph counter; neither leaves the op unseeded (the kernel draws its own)."""
from ... import ops as _ops
from ...framework import float32, get_default_graph

_DEFAULT_GRAPH_SEED = 87654321  # TF's DEFAULT_GRAPH_SEED (as ops/random.cc)


def seeds(op_seed=None):
    """(seed, seed2) for a new random op of the default graph, by TF's rule."""
    g = get_default_graph()
    if op_seed:
        return (g.seed or _DEFAULT_GRAPH_SEED), int(op_seed)
    if g.seed:
        n = g.__dict__.get("_tf1_op_seed", 0) + 1
        g._tf1_op_seed = n
        return g.seed, n
    return 0, 0


def set_random_seed(seed):
    """The default graph's seed: random ops (and initializers) made after it without their own seed
    derive theirs from it, so the same program gives the same values."""
    get_default_graph().seed = int(seed)


def random_uniform(shape, minval=0, maxval=None, dtype=float32, seed=None, name=None):
    s, s2 = seeds(seed)
    return _ops.raw_ops.RandomUniform(shape=[int(d) for d in shape], minval=float(minval),
                                      maxval=1.0 if maxval is None else float(maxval), dtype=dtype, seed=s, seed2=s2,
                                      name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    s, s2 = seeds(seed)
    return _ops.raw_ops.RandomNormal(shape=[int(d) for d in shape], mean=float(mean), stddev=float(stddev),
                                     dtype=dtype, seed=s, seed2=s2, name=name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    s, s2 = seeds(seed)
    return _ops.raw_ops.TruncatedNormal(shape=[int(d) for d in shape], mean=float(mean), stddev=float(stddev),
                                        dtype=dtype, seed=s, seed2=s2, name=name)


normal = random_normal
uniform = random_uniform

__all__ = ["set_random_seed", "random_uniform", "random_normal", "truncated_normal"]
