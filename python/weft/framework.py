"""Graphs, tensors, variables and the context managers of the graph API (TF1 style).

    g = weft.Graph()
    with g.as_default(), weft.name_scope("layer"), weft.device("/device:CPU:0"):
        x = weft.placeholder(weft.float32, shape=(None, 3), name="x")      # "layer/x:0"
        w = weft.Variable(np.zeros((3, 1), np.float32), name="w")
        y = x @ w                                                          # MatMul, shape (None, 1)
"""
import contextlib
import sys
import weakref

import numpy as np

from . import _weft

DType = _weft.DType
_DTYPE_NAMES = {v: k for k, v in DType.__members__.items()}
DType.__str__ = lambda d: _DTYPE_NAMES[d]
DType.__repr__ = lambda d: "weft." + _DTYPE_NAMES[d]
float32 = DType.float32
float64 = DType.float64
int32 = DType.int32
int64 = DType.int64
uint8 = DType.uint8
bool_ = DType.bool
float16 = DType.float16
bfloat16 = DType.bfloat16
as_dtype = _weft.as_dtype

Tensor = _weft.Tensor
Operation = _weft.Operation


class Graph(_weft.Graph):
    """A dataflow graph: nodes (operations) joined by tensors. Build into it with ``as_default()``.

    ``Graph.load(path)`` reads a graph file, ``save(path)`` writes one and ``to_dot()`` returns
    Graphviz text. Name scopes, device specs and control dependencies are per graph.
    """

    def __init__(self, path=None, serialized=None):
        super().__init__(path=path, serialized=serialized)
        self._name_stack = []
        self._device_stack = []
        self._control_stack = []
        self._variables = []  # weak references to the Variables made in this graph
        self._initializer_names = []  # every variable's initializer, even of Variables no longer referenced

    @classmethod
    def load(cls, path):
        """Reads a graph file written by ``save`` (validated as it is rebuilt)."""
        return cls(path=path)

    @classmethod
    def from_bytes(cls, data):
        """Rebuilds a graph from ``serialize()``'d bytes."""
        return cls(serialized=data)

    @contextlib.contextmanager
    def as_default(self):
        """Makes this the graph new operations go to, inside the ``with`` block."""
        _graph_stack.append(self)
        try:
            yield self
        finally:
            _graph_stack.pop()

    @contextlib.contextmanager
    def name_scope(self, name):
        """Prefixes the names of operations made inside with ``name/`` (nests; None or "" resets)."""
        saved = self._name_stack
        if name:
            self._name_stack = saved + [name.rstrip("/")]
        else:
            self._name_stack = []
        try:
            yield "/".join(self._name_stack) + "/" if self._name_stack else ""
        finally:
            self._name_stack = saved

    @contextlib.contextmanager
    def device(self, spec):
        """Records ``spec`` ("/device:CPU:0", "/job:worker/task:1") on operations made inside;
        an inner spec overrides the fields it sets. ``None`` clears it. ``spec`` may also be a
        device function, as in TF: called with each new operation's description (``.type``,
        ``.name``, ``.device``: the spec so far) it returns a spec, e.g. replica_device_setter."""
        if spec is not None and not callable(spec):
            _weft.merge_device("", spec)  # validates now, naming the bad spec
        saved = self._device_stack
        self._device_stack = saved + [spec] if spec is not None else []
        try:
            yield
        finally:
            self._device_stack = saved

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Operations made inside run after ``control_inputs`` (operations or tensors).
        ``None`` clears the dependencies of enclosing blocks."""
        saved = self._control_stack
        if control_inputs is None:
            self._control_stack = []
        else:
            self._control_stack = saved + [_as_operation(c) for c in control_inputs]
        try:
            yield
        finally:
            self._control_stack = saved

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """TF's ``graph.gradient_override_map({"OpType": "Name"})``: ops of those types made inside
        take their gradient from the function ``@tf.RegisterGradient("Name")`` registered
        (_custom_gradient.overridden)."""
        saved = self.__dict__.get("_gradient_override_map", {})
        self._gradient_override_map = dict(saved, **op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    def create_op(self, op_type, inputs, attrs=None, name=None):
        """Adds an operation of registered op ``op_type``. ``inputs``: tensors (a list for a list
        argument). Returns the Operation; errors name the node, op, shapes and dtypes. In an eager
        step (_recorder.py) the node made by the same call in an earlier step is returned instead;
        inside ``GradientTape.stop_recording()`` the inputs pass through StopGradient first."""
        inputs, attrs = list(inputs), dict(attrs or {})
        inputs = [[self._capture(t) for t in i] if isinstance(i, list) else self._capture(i) for i in inputs]
        if _stop_depth[0] and op_type != "StopGradient":
            inputs = [_stopped(self, i) for i in inputs]

        def build(inputs=inputs):
            return self._add_op(op_type, inputs, attrs, name or "", "/".join(self._name_stack),
                                self._devices_for(op_type, name), list(self._control_stack))
        if _op_hook[0] is not None and not _plain_depth[0]:
            return _op_hook[0](self, op_type, inputs, attrs, name, build)
        return build()

    def _capture(self, t):
        """An input from another graph: TF2 captures an eager tensor (one computed from constants,
        such as a layer's ``self.pos_encoding = tf.cast(table, tf.float32)`` made at top level) as a
        constant of the function's graph; weft does the same, once per tensor. Other tensors pass
        (a placeholder's or variable's from another graph stays an error naming it)."""
        if not isinstance(t, Tensor) or isinstance(t, Variable) or t.graph is self:
            return t
        from . import _values
        if t.graph is not _global_graph[0] or _values.graph_mode[0]:
            return t  # only TF2's top-level (eager) tensors are captured; TF1 graphs do not mix
        cache = self.__dict__.setdefault("_captures", {})
        key = (id(t.graph), t.name)
        if key not in cache:
            from ._values import get_static_value
            try:
                v = get_static_value(t)
            except Exception:  # noqa: BLE001 - not computable here: leave the error to the op
                v = None
            if v is None:
                return t
            _plain_depth[0] += 1
            try:
                with self.as_default():
                    cache[key] = constant(np.asarray(v), dtype=t.dtype)
            finally:
                _plain_depth[0] -= 1
        return cache[key]

    def _devices_for(self, op_type, name=None):
        """The device specs of a new ``op_type`` operation: the stack, device functions applied."""
        if not any(callable(d) for d in self._device_stack):
            return list(self._device_stack)
        out = []
        for d in self._device_stack:
            if callable(d):
                merged = ""
                for spec in out:
                    merged = _weft.merge_device(merged, spec)
                d = d(_OpDescription(op_type, name or op_type, merged))
                if not d:
                    continue
            out.append(d)
        return out

    def _track_variable(self, var):
        self._variables.append(weakref.ref(var))
        self._initializer_names.append(var.initializer.name)

    def _live_variables(self):
        alive = [r() for r in self._variables]
        return [v for v in alive if v is not None]

    def __repr__(self):
        return "<weft.Graph with %d nodes>" % self.num_nodes


# Set by _recorder.py once an eager step has opened: Graph.create_op goes through it.
_op_hook = [None]
_plain_depth = [0]   # > 0: operations are made as written (variables, twins), never recorded
_index_depth = [0]   # > 0: a constant of indices / dims is being made (stays a constant in eager steps)
_stop_depth = [0]    # > 0: inside GradientTape.stop_recording()
_flow_depth = [0]    # > 0: inside a cond branch or while_loop body (control_flow_ops), whose nodes belong to it


def _stopped(graph, x):
    """``x`` cut from the gradient (a float tensor through StopGradient; lists item by item)."""
    if isinstance(x, (list, tuple)):
        return [_stopped(graph, v) for v in x]
    if isinstance(x, Tensor) and x.dtype in (float32, float64, float16, bfloat16):
        return graph.create_op("StopGradient", [x]).outputs[0]
    return x


class _OpDescription:
    """What a device function sees of the operation being made: ``type``, ``name`` and ``device``
    (the device spec from the enclosing blocks so far)."""

    def __init__(self, op_type, name, device):
        self.type, self.name, self.device = op_type, name, device


_graph_stack = []
_global_graph = [None]


def get_default_graph():
    """The graph new operations go to: the innermost ``as_default()`` one, else a global graph."""
    if _graph_stack:
        return _graph_stack[-1]
    if _global_graph[0] is None:
        _global_graph[0] = Graph()
    return _global_graph[0]


def reset_default_graph():
    """Replaces the global default graph with a new, empty one."""
    if _graph_stack:
        raise AssertionError("reset_default_graph inside a Graph.as_default() block")
    _global_graph[0] = Graph()


def name_scope(name):
    """``with weft.name_scope("layer"):`` prefixes names of new operations with "layer/"."""
    return get_default_graph().name_scope(name)


def device(spec):
    """``with weft.device("/device:CPU:0"):`` records the device spec on new operations."""
    return get_default_graph().device(spec)


def control_dependencies(control_inputs):
    """``with weft.control_dependencies([op]):`` new operations run after ``op``."""
    return get_default_graph().control_dependencies(control_inputs)


def _as_operation(x):
    if isinstance(x, Operation):
        return x
    if isinstance(x, Tensor):
        return x.op
    raise TypeError("expected an Operation or a Tensor, got %r" % (x,))


# ---- values -> tensors ------------------------------------------------------------------------

def ancestor_ops(ops):
    """Each operation that ``ops`` depend on (themselves included, data and control inputs,
    transitively), once, depth first. Stop early by leaving the loop."""
    stack, seen = list(ops), set()
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        yield op
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)


def _numpy_value(value, dtype=None):
    """A numpy array for ``value``: Python floats become float32 and ints int32 (as in TF) unless
    ``dtype`` is given; numpy arrays keep their dtype unless ``dtype`` is given. The conversion is
    checked (``_weft._checked_array``): a value the dtype cannot hold (``2**40`` as int32) is an
    InvalidArgumentError naming the value and the dtype, never a wrapped number."""
    if dtype is not None:
        return _weft._checked_array(value, as_dtype(dtype))
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    arr = _weft._checked_array(value)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64:
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            return arr
        return arr.astype(np.int32)
    return arr


def _index_constant(values, name="Const"):
    """Integers (indices, dims: a list, tuple or numpy array) as a constant: int32 when every value
    fits, else int64 (shapes and indices are int64 everywhere, so none wraps); checked as every
    conversion (a value beyond int64 or a fraction is an InvalidArgumentError)."""
    arr = _weft._checked_array(values)
    if arr.dtype.kind not in "iub" and arr.size:
        arr = _weft._checked_array(values, int64)  # whole floats convert; fractions are rejected
    fits = arr.size == 0 or (int(arr.min()) >= -2**31 and int(arr.max()) < 2**31)
    _index_depth[0] += 1
    try:
        return constant(arr, dtype=int32 if fits else int64, name=name)
    finally:
        _index_depth[0] -= 1


def constant(value, dtype=None, shape=None, name="Const"):
    """A constant tensor from a Python value or numpy array (copied into the graph).

    dtype: the element type (default: from the value; Python floats give float32, ints int32).
    shape: when given, a scalar value is broadcast to it, else the value is reshaped to it.
    """
    if _is_text(value) or str(dtype) == "string":
        # TF2's eager string tensor: a host value (numpy object array of bytes with .numpy(),
        # _text_values.py); weft's graphs carry no strings.
        from . import _text_values
        if dtype is not None and str(dtype) != "string":
            raise TypeError("tf.constant: cannot make %s from text %r" % (dtype, value))
        arr = _text_values.as_bytes_array(value, "tf.constant")
        return _text_values.wrap(np.broadcast_to(arr, tuple(shape)).copy() if shape is not None else arr)
    arr = _numpy_value(value, dtype)
    if shape is not None:
        shape = tuple(shape)
        arr = np.broadcast_to(arr, shape) if arr.size == 1 else arr.reshape(shape)
        arr = np.ascontiguousarray(arr)
    g = get_default_graph()
    return g.create_op("Const", [], {"value": arr, "dtype": as_dtype(arr.dtype)}, name).outputs[0]


def _is_text(value):
    """True for a str / bytes, a numpy array of them, or a (nested) list whose first leaf is one."""
    from ._text_values import is_text
    return is_text(value)


def placeholder(dtype, shape=None, name=None):
    """A value fed at run time: ``sess.run(y, feed_dict={x: array})``.

    shape: a tuple with None for dims that vary (e.g. the batch), or None for any shape.
    """
    return get_default_graph().create_op("Placeholder", [], {"dtype": as_dtype(dtype), "shape": shape},
                                         name or "Placeholder").outputs[0]


def convert_to_tensor(value, dtype=None, name=None):
    """``value`` as a Tensor: tensors and variables as they are (dtype checked), anything else
    as a constant of ``dtype``."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != as_dtype(dtype):
            raise _weft_error("InvalidArgument", "tensor %s has dtype %s, expected %s" %
                              (value.name, value.dtype, as_dtype(dtype)))
        return value
    if _is_text(value):
        from .strings import unsupported
        raise unsupported("a string tensor (%r)" % (value if len(repr(value)) < 40 else type(value)))
    return constant(value, dtype=dtype, name=name or "Const")


def _weft_error(code, message):
    from .errors import error_class
    return error_class(code)(message, code)


# ---- variables --------------------------------------------------------------------------------

class Variable(Tensor):
    """A mutable tensor that lives in the session across steps (TF1 style).

        w = weft.Variable(np.zeros((3, 1), np.float32), name="w")
        sess.run(weft.global_variables_initializer())   # runs w.initializer
        sess.run(w.assign_add(np.ones((3, 1), np.float32)))

    initial_value: a tensor, a numpy array / Python value, or a callable returning one.
    The variable reads as a Tensor (its value) wherever a tensor is expected.
    """

    def __init__(self, initial_value, trainable=True, name=None, dtype=None, shape=None, validate_shape=True,
                 caching_device=None, constraint=None, synchronization=None, aggregation=None, import_scope=None,
                 distribute_strategy=None, experimental_enable_variable_lifting=True):
        # TF2's other arguments are accepted: synchronization / aggregation describe how a
        # distribution strategy treats the variable (weft's strategies mirror trainable variables
        # and all-reduce their gradients whatever they say); caching_device is a placement hint.
        if constraint is not None and not callable(constraint):
            raise ValueError("Variable: constraint must be callable, got %r" % (constraint,))
        self.constraint = constraint
        self.synchronization, self.aggregation = synchronization, aggregation
        # Made as written, also in an eager step: its initial value is a constant of the graph.
        _plain_depth[0] += 1
        try:
            self._make(initial_value, trainable, name, dtype, shape)
        finally:
            _plain_depth[0] -= 1

    def _make(self, initial_value, trainable, name, dtype, shape):
        g = get_default_graph()
        if callable(initial_value):
            initial_value = initial_value()
        base = name or "Variable"
        init = initial_value if isinstance(initial_value, Tensor) else \
            convert_to_tensor(initial_value, dtype=dtype, name=base + "/initial_value")
        if dtype is not None and init.dtype != as_dtype(dtype):
            raise _weft_error("InvalidArgument", "Variable '%s': initial value %s is %s, not %s" %
                              (base, init.name, init.dtype, as_dtype(dtype)))
        var_shape = init.shape if shape is None else tuple(shape)
        with g.control_dependencies(None):
            op = g.create_op("Variable", [], {"dtype": init.dtype, "shape": var_shape}, base)
            Tensor.__init__(self, op.outputs[0])
            # The initializer sits next to the variable: "<variable>/Assign".
            self.initializer = g._add_op("Assign", [self, init], {}, op.name + "/Assign", "",
                                         [op.device] if op.device else [], [])
        self.initial_value = init
        self.trainable = trainable
        g._track_variable(self)

    def assign(self, value, name=None):
        """An operation's output that sets the variable to ``value`` (copied) when run."""
        return _assigned(self.graph.create_op("Assign", [self, convert_to_tensor(value, self.dtype)], {}, name))

    def assign_add(self, value, name=None):
        """Adds ``value`` in place when run; returns the new value."""
        return _assigned(self.graph.create_op("AssignAdd", [self, convert_to_tensor(value, self.dtype)], {}, name))

    def assign_sub(self, value, name=None):
        """Subtracts ``value`` in place when run; returns the new value."""
        return _assigned(self.graph.create_op("AssignSub", [self, convert_to_tensor(value, self.dtype)], {}, name))

    def value(self):
        return Tensor(self)

    def __repr__(self):
        from . import _values
        return _values.variable_repr(self)

    __str__ = __repr__  # as TF's variables print


def _assigned(op):
    """An assign op's output; in an eager step the assign runs at once (_recorder.py)."""
    out = op.outputs[0]
    from . import _recorder, _values
    if _op_hook[0] is not None:
        _recorder.assign_now(out)
    if not _recorder.owns(out):
        _values.assign_at_top_level(out)
    return out


def global_variables():
    """The Variables of the default graph that Python still refers to (the graph holds them weakly)."""
    return get_default_graph()._live_variables()


def trainable_variables():
    """The trainable Variables of the default graph."""
    return [v for v in global_variables() if v.trainable]


def group(*inputs, name=None):
    """One operation that runs after all of ``inputs`` (operations or tensors)."""
    g = get_default_graph()
    flat = []
    for i in inputs:
        flat.extend(i if isinstance(i, (list, tuple)) else [i])
    with g.control_dependencies(None):
        return g._add_op("NoOp", [], {}, name or "group_deps", "/".join(g._name_stack), g._devices_for("NoOp", name),
                         [_as_operation(i) for i in flat])


def variables_initializer(var_list, name="init"):
    """An operation that runs the initializers of ``var_list``."""
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer():
    """An operation that initializes every variable made in the default graph (also those no
    Python object refers to any more, e.g. ``x @ weft.Variable(...)``)."""
    g = get_default_graph()
    return group(*[g.get_operation_by_name(n) for n in g._initializer_names], name="init")


# ---- graph files ------------------------------------------------------------------------------

def load_graph(path):
    """A Graph read from a graph file (``Graph.save``); errors name the file and node."""
    return Graph.load(path)


def save_graph(graph, path):
    """Writes ``graph`` (default: the default graph) to ``path``."""
    (graph or get_default_graph()).save(path)


def graph_to_dot(graph=None):
    """Graphviz text for ``graph`` (default: the default graph)."""
    return (graph or get_default_graph()).to_dot()


def api():
    """The weft package, for modules imported while it initializes that call its public functions
    (spread over ops, math, nn, ...): looked up when called, not at import."""
    return sys.modules["weft"]
