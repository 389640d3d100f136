"""Values of graph tensors for TensorFlow 2 style code: ``tf.argmax(probs, 1).numpy()``,
``float(tf.reduce_sum(c))``, ``np.asarray(tf.nn.softmax(logits))``.

weft builds graphs; TensorFlow 2 runs ops eagerly. A tensor computed from constants only (numpy
arrays, Python numbers, ``weft.constant``) has one value, so ``Tensor.numpy()`` runs it in a
session on its graph and remembers the value: asking again gives the same value, as an eager
tensor's does (a random op is drawn once). A tensor that depends on a Variable is read in the
default session (``with weft.Session() as sess:``), which holds the variables' values, or outside
any, in the graph's own session (_function.graph_session: each variable initialized once, where
traced functions run); one that depends on a placeholder has no value without a feed: an error
naming the node. A tensor of an eager step (a GradientTape entered outside tf.function,
_recorder.py) has the value of that step.
Functions traced by weft.data (map, filter) refuse these conversions, naming the construct
(data/_trace.py).
"""
import weakref

import numpy as np

from . import framework as _fw

_FEEDS = ("Placeholder", "PlaceholderWithDefault")
_STATE = ("Variable", "VarHandleOp", "VariableV2")

# Per graph: its session for constant tensors, and the values given out ((node, index) -> array).
_per_graph = weakref.WeakKeyDictionary()
# Per graph: the values of the assigns run at top level (assign_at_top_level), by tensor name.
_ran_assigns = weakref.WeakKeyDictionary()


def _needs(tensor):
    """('feed' | 'state' | None, the first such node) over the tensor's inputs, transitively."""
    state = None
    for op in _fw.ancestor_ops([tensor.op]):
        if op.type in _FEEDS:
            return "feed", op
        if op.type in _STATE and state is None:
            state = op
    return ("state", state) if state is not None else (None, None)


def value(tensor):
    """The tensor's value as a numpy array (see the module docstring)."""
    from . import _recorder
    eager = _recorder.value(tensor)  # a tensor of an eager step: its value in that step
    if eager is not None:
        return eager
    ran = _ran_assigns.get(tensor.graph)
    if ran and tensor.name in ran:
        return ran[tensor.name]
    kind, node = _needs(tensor)
    if kind == "feed":
        raise ValueError("tensor '%s' depends on placeholder '%s', which has no value outside Session.run: run it "
                         "with sess.run(tensor, feed_dict={...})" % (tensor.name, node.name))
    if kind == "state":
        from .session import _session_stack
        if not _session_stack:
            # TensorFlow 2 style: the graph's own session holds its variables (each initialized
            # once, at first need), the one traced functions run in.
            from ._function import graph_session
            return np.asarray(graph_session(tensor.graph).run(tensor))
        return np.asarray(_session_stack[-1].run(tensor))
    graph = tensor.graph
    state = _per_graph.get(graph)
    if state is None:
        from .session import Session
        state = _per_graph[graph] = {"session": Session(graph), "values": {}}
    key = tensor.name
    if key not in state["values"]:
        # Every random draw among the inputs is fed its remembered value (drawn once, on its own),
        # so that tensors computed from one draw agree, as eager tensors do: y = x * 3 + noise
        # reads the same x that x.numpy() gives, whichever is asked first.
        feeds = {}
        for op in _fw.ancestor_ops([tensor.op]):
            if op.name != tensor.op.name and _is_random(op):
                for out in op.outputs:
                    feeds[out] = value(out)
        state["values"][key] = np.asarray(state["session"].run(tensor, feed_dict=feeds or None))
    return state["values"][key]


def _is_random(op):
    """True for an op that draws random numbers (a new draw at every run)."""
    return "Random" in op.type or op.type in ("TruncatedNormal", "Dropout", "Multinomial")


def _numpy(self):
    v = value(self)
    return v[()] if v.ndim == 0 else v


def _array(self, dtype=None, copy=None):
    v = value(self)
    return v.astype(dtype) if dtype is not None else v


_symbolic_repr = None  # the graph tensor's repr (ops.py), kept by _install


def _format(self, spec):
    """``f"{loss:2.5f}"`` formats the value, as an eager tensor does; no spec: the tensor's str."""
    if not spec:
        return str(self)
    return format(_numpy(self), spec)


def _iter(self):
    """``for row in t``: ``t[0]``, ``t[1]``, ... over a first dimension the static shape knows, as
    iterating an eager tensor gives its rows."""
    shape = self.shape
    if not shape or shape[0] is None:
        raise TypeError("tensor '%s' of shape %s cannot be iterated: its first dimension is not known when the "
                        "graph is built" % (self.name, shape))
    return (self[i] for i in range(shape[0]))


# Set by weft.compat.v1.disable_eager_execution(): TF1 graph mode, where top-level code only builds
# (assigns wait for Session.run, tensors print as symbolic tensors).
graph_mode = [False]


def _top_level():
    """True where TensorFlow 2 would run ops at once: outside TF1 graph mode (disable_eager_execution,
    or a ``with tf.Graph().as_default():`` block of a graph other than the global one, where TF2
    builds graphs too), any ``with Session()`` block, and any trace (weft.function, Keras steps,
    weft.data functions)."""
    from .data import _trace
    from .keras import _custom_step
    from .session import _session_stack
    own_graph = any(g is not _fw._global_graph[0] for g in _fw._graph_stack)
    return not (graph_mode[0] or own_graph or _session_stack or _custom_step._active or _trace.tracing())


def executing_eagerly():
    """``tf.executing_eagerly()``: True at top level, where weft gives tensors their values as TF2
    runs ops eagerly (_top_level); False in TF1 graph mode, a Session block or a trace."""
    return _top_level()


def elementwise_equality():
    """Whether ``t == x`` is elementwise here (ops._equality): at top level (_top_level) and in any
    trace (weft.function, Keras steps, weft.data functions), as TF2 compares eager tensors and
    those of a function graph; not in TF1 graph mode, a user's Graph block or a Session block."""
    from .data import _trace
    from .keras import _custom_step
    return bool(_custom_step._active or _trace.tracing()) or _top_level()


def get_static_value(tensor, partial=False):
    """``tf.get_static_value``: the value of a tensor computed from constants only (numpy), a
    non-tensor as numpy, and None for one that needs a feed or a variable, as TF's."""
    if not isinstance(tensor, _fw.Tensor):
        return np.asarray(tensor)
    if _needs(tensor)[0] is not None:
        return None
    return value(tensor)


def assign_at_top_level(tensor):
    """TF2's ``v.assign(x)`` at top level (outside an eager step, which runs its own: _recorder.py)
    runs at once in the graph's own session, where ``v.numpy()`` and tf.function steps read the
    variable. An assign whose value needs a placeholder, or made in a Session block, a trace or TF1
    graph mode, waits for Session.run as in TF1."""
    if not _top_level() or _needs(tensor)[0] == "feed":
        return
    from ._function import graph_session
    from .errors import Error
    try:
        got = np.asarray(graph_session(tensor.graph).run(tensor))
    except Error:
        # A TF1 graph whose variables start from placeholders (initialized by the user's own
        # Session.run with a feed) has no TF2 top level: the assign waits for Session.run there.
        inits = [tensor.graph.get_operation_by_name(n) for n in tensor.graph._initializer_names]
        if any(op.type in _FEEDS for op in _fw.ancestor_ops(inits)):
            return
        raise
    # Its value is the variable's value after this run; reading it must not run the assign again.
    _ran_assigns.setdefault(tensor.graph, {})[tensor.name] = got


def _eager_value(self):
    """The value printing shows, as TensorFlow's eager tensors show theirs: an eager step's tensor
    (_recorder.py), or, at top level, one computed from constants and variables; None for the
    others (a placeholder's, one inside a trace or Session block), which print as symbolic
    tensors, as TF's graph tensors do."""
    from . import _recorder
    try:
        if _recorder.owns(self):
            return _recorder.value(self)
        if _top_level() and _needs(self)[0] != "feed":
            return value(self)
    except Exception:  # noqa: BLE001 - a value that cannot be computed prints as the symbolic tensor
        pass
    return None


def variable_repr(var):
    """TensorFlow's ``<tf.Variable 'w:0' shape=(2,) dtype=float32, numpy=array([1., 2.], ...)>``;
    without the value where it cannot be read (TF1 graph mode, a Session block, a trace)."""
    v = _eager_value(var)
    head = "<tf.Variable '%s' shape=%s dtype=%s" % (var.name, tuple(var.shape or ()), var.dtype)
    return head + (">" if v is None else ", numpy=%s>" % _numpy_text(np.asarray(v), True))


def _numpy_text(v, is_repr=False):
    """TensorFlow's value text (ops.py's _numpy_text): numpy's text (its repr for ``repr``, a
    scalar's plain digits either way), on a line of its own when it spans several."""
    text = repr(v) if is_repr and v.ndim else str(v[()] if v.ndim == 0 else v)
    return "\n" + text if "\n" in text else text


def _str(self):
    """``print(t)``: ``tf.Tensor([[2 3]\n [4 5]], shape=(2, 2), dtype=int32)``, TensorFlow's form."""
    v = _eager_value(self)
    if v is None:
        return _symbolic_repr(self)
    v = np.asarray(v)
    return "tf.Tensor(%s, shape=%s, dtype=%s)" % (_numpy_text(v), tuple(v.shape), self.dtype)


def _repr(self):
    """``repr(t)``: ``<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>``."""
    v = _eager_value(self)
    if v is None:
        return _symbolic_repr(self)
    v = np.asarray(v)
    return "<tf.Tensor: shape=%s, dtype=%s, numpy=%s>" % (tuple(v.shape), self.dtype, _numpy_text(v, True))


def _bool(self):
    """``if t:`` of a tensor with a value (as _eager_value: TF2's eager tensors) is the truth of
    that value (a tensor of one element); elsewhere the graph tensor's TypeError."""
    v = _eager_value(self)
    if v is None:
        return _symbolic_bool(self)
    return bool(np.asarray(v))


_symbolic_bool = None  # the graph tensor's __bool__ (ops.py): a TypeError


def _install():
    global _symbolic_repr, _symbolic_bool
    T = _fw.Tensor
    _symbolic_repr = T.__repr__
    _symbolic_bool = T.__bool__
    T.__bool__ = _bool
    T.__repr__ = _repr
    T.__str__ = _str
    T.__iter__ = _iter
    T.__format__ = _format
    T.numpy = _numpy
    T.__array__ = _array
    T.__float__ = lambda t: float(value(t))
    T.__int__ = lambda t: int(value(t))


_install()
