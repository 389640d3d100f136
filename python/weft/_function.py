"""``weft.function`` (tf.function).

Called with weft tensors (graph code, TF1 style) a decorated function runs as written, adding its
ops to their graph. Called with data -- numpy arrays (a weft.data batch), Python numbers -- it is
traced as TensorFlow traces it: once per argument signature (each array's dtype and shape -- with
``reduce_retracing=True`` (``experimental_relax_shapes``) or an ``input_signature``, its rank and
non-batch dims only, the batch dim left open so a short last batch reuses the trace; each number's
value), over placeholders in the default graph; then every call runs that graph in a session and
returns numpy values (with ``.numpy()``). The state-changing ops the trace created (optimizer
updates, batch-norm statistics, ``assign*`` on variables) run at every call, as TF2 runs a
function's stateful ops; Keras models, losses, metrics and optimizers used inside make custom
training steps work (keras/_custom_step.py). TensorFlow's tracing options are accepted;
``input_signature`` is checked against the arguments' ranks and dtypes when they are weft tensors.
"""
import functools
import weakref

import numpy as np

from . import errors as _errors
from . import framework as _fw
from . import ops as _ops


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_compile=None, experimental_relax_shapes=None, **kwargs):
    """Decorator (``@weft.function`` or ``@weft.function(...)``) or call (``weft.function(f)``)."""
    if kwargs:
        raise TypeError("weft.function got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))

    def wrap(f):
        traces = {}
        # TF traces each new shape (tensor.shape inside is the argument's, batch included), and
        # leaves dims open where reduce_retracing or an input_signature asks it to.
        relax = bool(reduce_retracing or experimental_relax_shapes or input_signature is not None)
        as_written = set()  # signatures of eager-tensor calls that need Python control flow on values

        @functools.wraps(f)
        def call(*args, **kw):
            if input_signature is not None:
                _check_signature(f, input_signature, args)
            from . import config
            if config.functions_run_eagerly():
                return f(*args, **kw)  # tf.config.run_functions_eagerly(True): as written, every call
            eager = _map((args, kw), _eager_array)
            leaves = _leaves(eager)
            converted = any(a is not b for a, b in zip(leaves, _leaves((args, kw))))
            if any(isinstance(x, _fw.Tensor) for x in leaves) or not any(isinstance(x, np.ndarray) for x in leaves):
                return f(*args, **kw)  # graph code (or numbers only): as written
            if converted and _signature_key(eager, relax) in as_written:
                return _map(f(*args, **kw), _output_tensor)
            try:
                return _traced_call(f, traces, relax, *eager)
            except _ops.TruthValueError:
                if not converted:
                    raise
                # Python control flow on a tensor's value (TF's AutoGraph turns it into tf.cond):
                # called with eager tensors, the function runs as written on them instead.
                as_written.add(_signature_key(eager, relax))
                return _map(f(*args, **kw), _output_tensor)
        call.python_function = f
        call.input_signature = input_signature
        call.get_concrete_function = lambda *a, **k: ConcreteFunction(call, f, input_signature or a, k)
        return call
    return wrap if func is None else wrap(func)


def _eager_array(x):
    """An argument that is TF2's eager tensor (a weft tensor computed from constants, at top level:
    _values.py) as its numpy value, so the call is traced once per signature as TensorFlow traces
    a function called with tensors. Variables (passed by reference), tensors of an eager step (the
    tape records through the call) and graph tensors stay as they are."""
    if not isinstance(x, _fw.Tensor) or isinstance(x, _fw.Variable):
        return x
    from . import _recorder, _values
    if _recorder.owns(x) or not _values._top_level() or _values._needs(x)[0] is not None:
        return x
    return np.asarray(_values.value(x))




class ConcreteFunction:
    """``f.get_concrete_function(tf.TensorSpec(...) or example values)``: the function for that
    signature. Calls are checked against the TensorSpecs (dtype, rank, known dims) and run as the
    weft.function runs them (traced once per signature); weft keeps no separate graph per
    concrete function (no ``.graph`` / ``.inputs``)."""

    def __init__(self, call, f, args, kwargs):
        self._call, self._f = call, f
        self.structured_input_signature = (tuple(args), dict(kwargs))
        self._specs = [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
        self.__name__ = getattr(f, "__name__", "function")

    def __call__(self, *args, **kwargs):
        if len(self._specs) == len(args) and all(not isinstance(s, (np.ndarray, _fw.Tensor)) for s in self._specs):
            _check_signature(self._f, self._specs, [_fw.convert_to_tensor(a) if not isinstance(a, _fw.Tensor) else a
                                                     for a in args])
        return self._call(*args, **kwargs)


def _output_tensor(x):
    """A number a function run as written returns, as a tensor: TensorFlow's functions return
    tensors (``return 0`` gives a scalar tensor)."""
    if isinstance(x, (bool, int, float, np.ndarray, np.generic)):
        return _fw.convert_to_tensor(x)
    return x


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in x for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for item in x for v in _leaves(item)]
    return [x]


def _map(x, fn):
    if isinstance(x, dict):
        return {k: _map(v, fn) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_map(v, fn) for v in x]
        return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
    return fn(x)


def _spec(x, relax=False):
    """The part of an argument that selects a trace: an array's dtype and shape (relaxed: rank and
    non-batch dims); any other value itself (by identity when it cannot be hashed)."""
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.ndim, x.shape[1:] if relax else x.shape)
    try:
        hash(x)
        return ("value", type(x).__name__, x)
    except TypeError:
        return ("object", id(x))


class _Trace:
    def __init__(self, f, args, kw, graph, relax=False):
        from .keras import _custom_step
        self.graph = graph
        self.placeholders = []
        self.state = _custom_step.Trace(graph)

        def placeholder(x):
            if not isinstance(x, np.ndarray):
                return x
            dtype = _fw.as_dtype(x.dtype)
            shape = ((None,) + tuple(x.shape[1:]) if relax else tuple(x.shape)) if x.ndim else ()
            p = _fw.placeholder(dtype, shape, name="%s_arg" % getattr(f, "__name__", "function"))
            self.placeholders.append(p)
            return p

        with graph.as_default(), _custom_step.tracing(self.state):
            targs, tkw = _map(args, placeholder), _map(kw, placeholder)
            self.outputs = f(*targs, **tkw)
        # Stateful ops the function created directly (v.assign_add(...), counters) run every call.
        self.fetch = [o for o in _leaves(self.outputs) if isinstance(o, (_fw.Tensor, _fw.Operation))]

    def run(self, args, kw):
        from .keras import _custom_step, _eager
        from .session import _session_stack
        if _session_stack and _session_stack[-1].graph is self.graph:
            session = _session_stack[-1]  # the user's session holds the variables (TF1 style)
        else:
            session = graph_session(self.graph)
        feeds = dict(zip(self.placeholders, [x for x in _leaves((args, kw)) if isinstance(x, np.ndarray)]))
        values = iter(_custom_step.run(self.state, session, self.fetch, feeds))

        def out(o):
            if isinstance(o, _custom_step.Deferred):
                return o.value()  # a metric's result, as it is after this run
            if isinstance(o, _fw.Operation):
                next(values)
                return None
            if isinstance(o, _fw.Tensor):
                v = np.asarray(next(values))
                return np.array(v).view(_eager.EagerArray)  # prints as TF's eager tensor
            return o
        return _map(self.outputs, out)


_sessions = weakref.WeakKeyDictionary()  # graph -> (session, number of its variables initialized)


def graph_session(graph):
    """The session that holds a graph's variables for TensorFlow 2 style code (traced functions,
    ``.numpy()`` of a tensor read from variables outside any ``with Session()``): made at first
    use; each variable is initialized once, when it is first needed after its creation (a
    variable made later, by a new trace or at top level, starts from its initial value)."""
    from .session import Session
    entry = _sessions.get(graph)
    if entry is None:
        entry = _sessions[graph] = [Session(graph), 0]
    names = graph._initializer_names
    if entry[1] < len(names):
        inits = [graph.get_operation_by_name(n) for n in names[entry[1]:]]
        try:
            entry[0].run(inits)
        except _errors.FailedPreconditionError:
            # An initial value that reads another new variable (tf.Variable(a)): one at a time, in
            # the order they were made, so each reads the value of those before it.
            for op in inits:
                entry[0].run(op)
        entry[1] = len(names)
    return entry[0]


def _signature_key(args_kw, relax=False):
    """The key of a call's trace: the default graph and each argument's _spec."""
    args, kw = args_kw
    return (id(_fw.get_default_graph()),
            _map((args, tuple(sorted(kw.items()))), lambda x: _spec(x, relax)).__repr__())


def _traced_call(f, traces, relax, args, kw):
    graph = _fw.get_default_graph()
    key = _signature_key((args, kw), relax)
    trace = traces.get(key)
    if trace is None or trace.graph is not graph:
        trace = traces[key] = _Trace(f, args, kw, graph, relax)
    return trace.run(args, kw)


def _check_signature(f, signature, args):
    if len(args) != len(signature):
        raise TypeError("%s: input_signature has %d entries but %d arguments were given" % (
            getattr(f, "__name__", "function"), len(signature), len(args)))
    for i, (spec, arg) in enumerate(zip(signature, args)):
        if not isinstance(arg, _fw.Tensor) or getattr(spec, "shape", None) is None:
            continue
        want = tuple(spec.shape)
        have = arg.shape
        ok = have is None or (len(have) == len(want) and all(w is None or h is None or w == h
                                                             for w, h in zip(want, have)))
        if not ok or (spec.dtype is not None and _fw.as_dtype(spec.dtype) != arg.dtype):
            raise ValueError("%s: argument %d (%s %s) does not match input_signature %r" % (
                getattr(f, "__name__", "function"), i, arg.dtype, have, spec))


def inside_function():
    """``tf.inside_function()``: True while weft.function (or a Keras step) traces."""
    from .keras import _custom_step
    return bool(_custom_step._active)


def init_scope():
    """``tf.init_scope()``: TF lifts what it builds out of the function graph; weft builds state
    (Variables) in the graph being traced, whose session keeps it between calls, so this context
    changes nothing."""
    import contextlib
    return contextlib.nullcontext()
