"""``weft.compat.v1``: TensorFlow 1's graph-mode API, so TF1 programs run with
``import weft.compat.v1 as tf`` (or ``tf.compat.v1.X`` after ``import weft as tf``)::

    import weft.compat.v1 as tf
    tf.disable_eager_execution()                      # weft is graph mode already: a no-op
    x = tf.placeholder(tf.float32, [None, 784])
    y = tf.layers.dense(x, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, y)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=tf.train.get_or_create_global_step())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())

Everything of ``weft`` is here too; docs/python.md ("TF1 graph mode") lists what differs.
"""
import importlib as _importlib
import re as _re

from ... import *  # noqa: F401,F403 - weft's graph API is TF1's
from ... import train, _variables  # noqa: F401
from ...framework import get_default_graph, group, variables_initializer  # noqa: F401
from ...ops import cast as _cast, no_op as _no_op, divide as _raw_div
from ...math import divide, floordiv as _floordiv  # noqa: F401  (tf.divide is x / y: true division)
from ...session import (Session, InteractiveSession, ConfigProto, GPUOptions, RunOptions,  # noqa: F401
                        RunMetadata)
from ... import errors  # noqa: F401
from . import flags, gfile, layers, logging  # noqa: F401
# weft's own nn, summary, losses and metrics came in with the star import; `from . import` would
# return those.
nn = _importlib.import_module(__name__ + ".nn")
losses = _importlib.import_module(__name__ + ".losses")
metrics = _importlib.import_module(__name__ + ".metrics")
summary = _importlib.import_module(__name__ + ".summary")
from .variable_scope import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403 - reductions with reduction_indices= / keep_dims=, clipping
from .random import *  # noqa: F401,F403 - random ops seeded by set_random_seed
from .control_flow import cond, while_loop  # noqa: F401
from .variable_scope import glorot_uniform_initializer as _glorot_uniform
from .variable_scope import (zeros_initializer, ones_initializer, constant_initializer,  # noqa: F401
                             random_normal_initializer, truncated_normal_initializer, random_uniform_initializer,
                             variance_scaling_initializer, glorot_normal_initializer)

Summary = summary.Summary


def div(x, y, name=None):
    """TF1's div: Python 2 division -- floor division for integer tensors, x / y for floats."""
    x = convert_to_tensor(x)
    return _raw_div(x, y) if x.dtype in (float32, float64) else _floordiv(x, y)


def disable_eager_execution():
    """TF1's graph mode: top-level ``v.assign(...)`` waits for Session.run and tensors print as
    symbolic tensors (weft always builds graphs; TF2-style code runs them at once: _values.py)."""
    from ... import _values
    _values.graph_mode[0] = True


def disable_v2_behavior():
    """A no-op: weft's graph API already behaves as TF1's."""


def enable_v2_behavior():
    """A no-op: the TF2 names (weft.keras, weft.summary, ...) are available either way."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """TF1's switch to eager execution: weft has none to switch on (raises NotImplementedError). TF2
    programs get eager steps from GradientTape (weft/_recorder.py); TF1 programs build graphs."""
    raise NotImplementedError("weft has no eager execution to enable: build a graph and run it with weft.Session "
                              "(or train with weft.keras; a TF2 custom loop runs as eager steps from GradientTape)")


def executing_eagerly():
    """False: weft runs graphs in sessions."""
    return False


def placeholder_with_default(input, shape, name=None):
    """``input`` unless fed: weft can feed any tensor, so this is an Identity of ``input``
    (a fed value must have ``input``'s shape)."""
    from ...ops import identity
    return identity(input, name=name or "PlaceholderWithDefault")


def to_float(x, name="ToFloat"):
    return _cast(x, float32)


def to_int32(x, name="ToInt32"):
    return _cast(x, int32)


def to_int64(x, name="ToInt64"):
    return _cast(x, int64)


# ---- variables and collections ---------------------------------------------------------------------

def global_variables(scope=None):
    """Every variable of the default graph (optimizer slots and the global step included), or those
    whose name matches the regular expression ``scope`` from its start."""
    vs = _variables.all_variables(get_default_graph())
    return [v for v in vs if scope is None or _re.match(scope, v.op.name)]


def trainable_variables(scope=None):
    """The trainable variables of the default graph (filtered by ``scope`` as global_variables)."""
    return [v for v in global_variables(scope) if v.trainable]


all_variables = global_variables


def local_variables(scope=None):
    """The local variables of the default graph (the metrics' accumulators), filtered by ``scope``."""
    vs = _variables.local_variables(get_default_graph())
    return [v for v in vs if scope is None or _re.match(scope, v.op.name)]


def global_variables_initializer():
    """An operation that initializes every variable of the default graph."""
    from ...framework import global_variables_initializer as init
    return init()


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    """An operation that (re)initializes the local variables (the metrics' accumulators)."""
    return variables_initializer(local_variables(), name="init_1")


def tables_initializer(name="init_all_tables"):
    """A no-op: weft has no lookup tables."""
    return _no_op(name=name)


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    LOCAL_VARIABLES = "local_variables"
    UPDATE_OPS = "update_ops"
    SUMMARIES = "summaries"
    LOSSES = "losses"
    REGULARIZATION_LOSSES = "regularization_losses"
    GLOBAL_STEP = "global_step"
    TRAIN_OP = "train_op"


def _collections(g):
    return g.__dict__.setdefault("_tf1_collections", {})


def add_to_collection(name, value):
    """Appends ``value`` to the default graph's collection ``name``."""
    _collections(get_default_graph()).setdefault(name, []).append(value)


def get_collection(key, scope=None):
    """The collection ``key``: the graph's variables for GLOBAL_VARIABLES / TRAINABLE_VARIABLES,
    the global step for GLOBAL_STEP, batch_normalization's moving-average updates (and whatever
    the program added) for UPDATE_OPS, what ``add_to_collection`` put there otherwise, [] for a
    collection nobody filled."""
    if key == GraphKeys.GLOBAL_VARIABLES:
        return global_variables(scope)
    if key == GraphKeys.TRAINABLE_VARIABLES:
        return trainable_variables(scope)
    if key == GraphKeys.LOCAL_VARIABLES:
        return local_variables(scope)
    if key == GraphKeys.GLOBAL_STEP:
        step = train.get_global_step()
        return [step] if step is not None else []
    g = get_default_graph()
    items = list(_collections(g).get(key, []))
    if key == GraphKeys.UPDATE_OPS:  # layers.batch_normalization's moving-average updates
        items = [g.get_operation_by_name(n) for n in g.__dict__.get("_tf1_update_ops", [])] + items
    if scope is not None:
        items = [i for i in items if _re.match(scope, getattr(i, "name", ""))]
    return items


class initializers:  # noqa: N801 - TF's namespace tf.compat.v1.initializers
    zeros = zeros_initializer
    ones = ones_initializer
    constant = constant_initializer
    random_normal = random_normal_initializer
    truncated_normal = truncated_normal_initializer
    random_uniform = random_uniform_initializer
    variance_scaling = variance_scaling_initializer
    glorot_uniform = staticmethod(_glorot_uniform)
    glorot_normal = staticmethod(glorot_normal_initializer)

    @staticmethod
    def global_variables():
        return global_variables_initializer()


class app:  # noqa: N801 - TF's namespace tf.compat.v1.app
    flags = flags

    @staticmethod
    def run(main=None, argv=None):
        """Parses the flags from ``argv`` (default sys.argv), calls ``main(the other arguments)``
        (default: ``__main__.main``) and exits with its result."""
        import sys
        rest = flags.FLAGS(sys.argv if argv is None else argv)
        if main is None:
            main = sys.modules["__main__"].main
        sys.exit(main(rest))


# ---- more TF1 top-level names ------------------------------------------------------------------
from . import _aliases as _aliases  # noqa: E402


def __getattr__(name):  # TF1's names for functions weft keeps elsewhere (tf.cumprod, tf.arg_max, ...)
    return _aliases.resolve(name)


def __dir__():
    return sorted(set(globals()) | set(_aliases.names()))


def py_func(func, inp, Tout, stateful=True, name=None):
    """TF1's tf.py_func: ``func`` on the numpy values of ``inp`` (tf.numpy_function)."""
    from ... import numpy_function
    return numpy_function(func, inp, Tout, stateful=stateful, name=name)


def to_double(x, name="ToDouble"):
    return _cast(x, "float64", name=name)


def initialize_all_variables():
    """TF1's old name for global_variables_initializer()."""
    return global_variables_initializer()


def initialize_variables(var_list, name="init"):
    return variables_initializer(var_list, name=name)


def initialize_local_variables():
    return local_variables_initializer()


def _scatter_op(kind, nd):
    """TF1's tf.scatter_<kind> (rows along the first dim, ``nd`` False) or tf.scatter_nd_<kind> (index
    vectors): the variable set to tf.tensor_scatter_nd_<kind> of its value; returns its new value."""
    from ... import array_ops

    def op(ref, indices, updates, use_locking=None, name=None):
        idx = convert_to_tensor(indices)
        if not nd:
            from ... import ops as _o
            idx = _o.expand_dims(_o.cast(idx, "int32"), -1)
        upd = convert_to_tensor(updates, ref.dtype)
        if kind in ("mul", "div"):  # TF has no tensor_scatter_nd_mul / div: the same combination
            from ... import ops as _o
            f = _o.multiply if kind == "mul" else _o.divide
            return ref.assign(array_ops._scatter_combine(ref, idx, upd, f, op.__name__), name=name)
        return ref.assign(getattr(array_ops, "tensor_scatter_nd_" + kind)(ref, idx, upd), name=name)
    op.__name__ = op.__qualname__ = "scatter_%s%s" % ("nd_" if nd else "", kind)
    op.__doc__ = ("ref %s at the %s of ``indices`` (repeated indices add up); the variable's new value"
                  % ({"update": "set", "add": "plus updates", "sub": "minus updates"}.get(kind, kind + " with updates"),
                     "index vectors" if nd else "rows"))
    return op


scatter_update, scatter_add, scatter_sub = (_scatter_op(k, False) for k in ("update", "add", "sub"))
scatter_mul, scatter_div, scatter_max, scatter_min = (_scatter_op(k, False) for k in ("mul", "div", "max", "min"))
scatter_nd_update, scatter_nd_add, scatter_nd_sub = (_scatter_op(k, True) for k in ("update", "add", "sub"))


def dimension_value(dimension):
    """A TensorShape dim as an int (None when unknown)."""
    return None if dimension is None else int(getattr(dimension, "value", dimension))


def dimension_at_index(shape, index):
    from ...array_ops import TensorShape
    return TensorShape(shape).as_list()[index]


Dimension = int  # TF1's tf.Dimension(n): weft's shapes hold ints (None unknown)
VERSION = GIT_VERSION = COMPILER_VERSION = "weft"


def _no_op_switch(*args, **kwargs):
    """A TF1 behaviour switch with one setting in weft (resource variables, control flow v2,
    v2 tensor shapes, tensor equality): accepted."""


enable_resource_variables = disable_resource_variables = enable_control_flow_v2 = _no_op_switch
disable_control_flow_v2 = enable_v2_tensorshape = disable_v2_tensorshape = _no_op_switch
enable_tensor_equality = disable_tensor_equality = _no_op_switch


def resource_variables_enabled():
    return True


def control_flow_v2_enabled():
    return True


def executing_eagerly_outside_functions():
    return executing_eagerly()
