"""Eager execution of TensorFlow 2 programs over weft's graphs: the custom training loop without
``@tf.function``::

    for xb, yb in ds:
        with tf.GradientTape() as tape:            # opens an eager step
            logits = model(xb, training=True)      # a tensor of the model's graph
            loss = loss_fn(yb, logits)
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))   # runs now
        print(float(loss))                         # the loss of this step, before the update

How. An eager step opens when a GradientTape is entered outside a tf.function trace and outside a
``with Session()`` block (an outer tape already open keeps the step), and lasts until the next one
opens. Inside the tape's block every operation made in the default graph is *recorded*; after it,
those whose inputs are recorded tensors or variables recorded ops read (``tape.gradient``,
``lr * dw``, ``w.assign_sub``), and small unnamed constants; other graph code is built as written.
Recording means:

- each one is looked up by its signature (op, input names, attrs, name scope, device and control
  inputs) and its occurrence in the step: the k-th ``x * y`` of a step is the same node at every
  step. So a loop whose iterations do the same thing builds its nodes once: one graph per
  signature of the recorded ops, as tf.function traces once per signature, and a step of
  thousands of iterations does not grow the graph. The C++ builders (a model's forward pass, a
  Keras loss, ``gradients``, an optimizer's update) are looked up the same way (``memo``);
- data (numpy arrays, float numbers) becomes a placeholder of its dtype and shape, the k-th of
  that dtype and shape in the step, fed with the value at each run; integer scalars and index
  vectors (shapes, axes) stay constants, so shape functions still see them;
- nothing runs until a value is needed: ``.numpy()`` / ``float()`` of a tensor, a metric update,
  or a state change (``optimizer.apply_gradients``, ``v.assign_sub``), which runs at once. Each
  run also fetches every tensor of the step that Python still holds and that has no value yet,
  and feeds the values the step already has, so a value is that of the state when it was first
  computed, never after a later update of the same step (``dw`` and ``db`` of one tape, applied
  one after the other, as in eager TensorFlow). A random op draws once per occurrence per step.

Variables live in the graph's own session (_function.graph_session), the one tf.function steps
run in, and a Keras model's weights in its twin in that graph (keras/_custom_step.py): eager
steps, tf.function steps, fit and evaluate share them.
Not thread-safe: one Python thread records (as the GIL and TF's eager context of one thread).
"""
import contextlib
import weakref

import numpy as np

from . import framework as _fw

_NEVER_MEMO = {"Variable", "Placeholder", "VariableV2", "VarHandleOp"}  # each call makes a new one
_MUTATING = {"Assign", "AssignAdd", "AssignSub"}  # run when made, never fetched again


class _Step:
    """One eager step's data: feeds, occurrence counts, values computed, tensors given out."""

    def __init__(self, state):
        self.state = state
        self.feeds = {}        # placeholder name -> value
        self.slot_counts = {}  # (dtype, shape) -> placeholders of that kind used so far
        self.counts = {}       # signature -> occurrences so far
        self.values = {}       # tensor name -> numpy value, as first computed in this step
        self.pending = []      # weak references to the tensors given out in this step
        self.updates = []      # state updates to run with the next run (batch-norm statistics)


class _State:
    """A graph's recording: the memo (signature, occurrence) -> node names, and the open step."""

    def __init__(self, graph):
        self.graph = weakref.ref(graph)
        self.memo = {}
        self.nodes = set()   # names of the nodes made through the memo
        self.step = None
        # Keras twins used by eager steps (kept in step with their models); held weakly: a twin
        # holds its graph, the key of this state in _states.
        self.twins = weakref.WeakSet()
        self.outside = {}    # name of a tensor made before any step -> whether its value is fed (_inside)
        self.variables = set()  # names of the variables recorded ops read (a model's twin: all of its)
        self.runs_at_once = {}  # assign op name -> whether it runs when made (assign_now)


_states = weakref.WeakKeyDictionary()  # graph -> _State
_given = {}  # id(tensor) -> (weak reference, _Step): which step a tensor given out belongs to
_depth = [0]  # eager tapes open


_lazy = {}  # modules imported at first use (they import this one)


def _context_is_eager():
    if not _lazy:
        from .keras import _custom_step
        from . import session
        _lazy["traces"], _lazy["sessions"] = _custom_step._active, session._session_stack
    return not _lazy["traces"] and not _lazy["sessions"]


def recording(graph=None):
    """The graph's _State when operations made in it now are recorded, else None."""
    g = graph if graph is not None else _fw.get_default_graph()
    st = _states.get(g)
    if st is None or st.step is None or _fw._plain_depth[0] or g is not _fw.get_default_graph():
        return None
    return st if _context_is_eager() else None


@contextlib.contextmanager
def plain():
    """Operations made inside are built as written (variables, their initial values, twins)."""
    _fw._plain_depth[0] += 1
    try:
        yield
    finally:
        _fw._plain_depth[0] -= 1


# ---- tapes open and close steps ---------------------------------------------------------------

def tape_entered():
    """A GradientTape was entered: opens a new eager step when no eager tape is open. Returns
    whether the tape is eager (to pass to tape_exited)."""
    if not _context_is_eager():
        return False
    if _depth[0] == 0:
        g = _fw.get_default_graph()
        st = _states.get(g)
        if st is None:
            st = _states[g] = _State(g)
            _fw._op_hook[0] = _create_op
        if st.step is not None:
            _flush(st.step)
        st.step = _Step(st)
    _depth[0] += 1
    return True


def tape_exited(eager):
    if eager:
        _depth[0] -= 1


def _flush(step):
    """Values for the tensors of a closing step that Python still holds (computed with its feeds).
    A failure here is not the new tape's: those tensors stay without a value, and reading one
    later says so (value)."""
    if next(_unvalued(step), None) is not None or step.updates:
        try:
            _run(step, [], [])
        except Exception:  # noqa: BLE001 - see the docstring
            step.updates = []


def _unvalued(step):
    for ref in step.pending:
        t = ref()
        if t is not None and t.name not in step.values:
            yield t


# ---- recording operations ---------------------------------------------------------------------

def _key(v):
    if isinstance(v, np.ndarray):
        return ("nd", v.dtype.str, v.shape, v.tobytes())
    if isinstance(v, _fw.Tensor):
        return ("t", v.name)
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(_key(x) for x in v)
    if isinstance(v, dict):
        return ("d",) + tuple((k, _key(v[k])) for k in sorted(v))
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return ("r", repr(v))


def _occurrence(step, sig):
    n = step.counts.get(sig, 0)
    step.counts[sig] = n + 1
    return (sig, n)


def taping():
    """Whether an eager tape is open (its block is running) and recording."""
    return _depth[0] > 0 and recording() is not None


def _create_op(graph, op_type, inputs, attrs, name, build):
    """Graph.create_op while recording (framework._op_hook): the memoized node, or a placeholder
    for data; ``build(inputs)`` makes the node as written.

    Inside an eager tape every op is recorded. After the tape's block, while its step lasts
    (``tape.gradient``, ``apply_gradients``, ``w.assign_sub(lr * dw)``, ``float(loss)``), an op
    is recorded when an input is a recorded tensor or a variable, and unnamed small constants are
    shared by value; other ops (graph code of a TF1 program) are built as written."""
    st = recording(graph)
    if st is None or op_type in _NEVER_MEMO:
        return build()
    step = st.step
    taped = _depth[0] > 0
    if _fw._flow_depth[0] and not inputs:
        # A node without inputs made in a cond branch or loop body belongs to that context: shared
        # with another (a constant of the same value in the other branch), it would be dead there.
        return build()
    if op_type == "Const":
        arr = attrs["value"]
        if taped and not _fw._index_depth[0] and (arr.dtype.kind in "fc" or arr.ndim >= 1):
            return _slot(graph, st, step, arr).op
        if name not in (None, "", "Const") or arr.size > 64:
            return build()
        full = ("const", _key(attrs))  # a constant is a value: one node per value
        op_name = st.memo.get(full)
        if op_name is None:
            op_name = st.memo[full] = build().name
            st.nodes.add(op_name)
        return graph.get_operation_by_name(op_name)
    if not taped and not _eager_input(st, inputs):
        return build()
    _note_variables(st, inputs)
    inputs = [_inside(graph, st, step, x) for x in inputs]
    sig = (op_type, _key(inputs), _key(attrs), tuple(graph._name_stack),
           tuple(d if isinstance(d, str) else repr(d) for d in graph._device_stack),
           tuple(o.name for o in graph._control_stack))
    full = _occurrence(step, sig)
    op_name = st.memo.get(full)
    if op_name is not None:
        return graph.get_operation_by_name(op_name)
    op = build(inputs)
    st.memo[full] = op.name
    st.nodes.add(op.name)
    return op


def _eager_input(st, x):
    if isinstance(x, list):
        return any(_eager_input(st, v) for v in x)
    if not isinstance(x, _fw.Tensor):
        return False
    if isinstance(x, _fw.Variable):
        return x.op.name in st.variables
    return x.op.name in st.nodes or id(x) in _given


def _note_variables(st, inputs):
    """Remembers the variables a recorded op read: ops on them after a tape are recorded too."""
    for x in inputs:
        if isinstance(x, list):
            _note_variables(st, x)
        elif isinstance(x, _fw.Variable):
            st.variables.add(x.op.name)


def _inside(graph, st, step, x):
    """An input of a recorded op: a tensor made before the step from constants only (random
    draws included, ``y = f(x) + noise``) is its value, remembered as eager TensorFlow holds it,
    fed as data; anything else as it is."""
    if isinstance(x, list):
        return [_inside(graph, st, step, v) for v in x]
    if not isinstance(x, _fw.Tensor) or isinstance(x, _fw.Variable) or x.op.name in st.nodes:
        return x
    fixed = st.outside.get(x.name)
    if fixed is None:
        from . import _values
        fixed = st.outside[x.name] = x.op.type != "Const" and _values._needs(x)[0] is None
    if not fixed:
        return x
    from . import _values
    return _slot(graph, st, step, _values.value(x))


def _slot(graph, st, step, arr):
    kind = (arr.dtype.str, arr.shape)
    k = step.slot_counts.get(kind, 0)
    step.slot_counts[kind] = k + 1
    full = ("slot",) + kind + (k,)
    op_name = st.memo.get(full)
    if op_name is None:
        p = _fw.placeholder(_fw.as_dtype(arr.dtype), arr.shape, name="eager_input")
        st.memo[full] = p.op.name
        st.nodes.add(p.op.name)
    else:
        p = graph.get_operation_by_name(op_name).outputs[0]
    step.feeds[p.name] = arr
    return p


def _names(x):
    if isinstance(x, _fw.Tensor):
        return ("T", x.op.name, x.value_index)
    if isinstance(x, _fw.Operation):
        return ("O", x.name)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_names(v) for v in x])
    return ("V", x)


def _objects(graph, n):
    tag, a = n[0], n[1]
    if tag == "T":
        return graph.get_operation_by_name(a).outputs[n[2]]
    if tag == "O":
        return graph.get_operation_by_name(a)
    if tag in ("list", "tuple"):
        items = [_objects(graph, v) for v in a]
        return items if tag == "list" else tuple(items)
    return a


def memo(graph, owner, key, build):
    """``build()`` (a C++ builder: model call, loss, gradients, optimizer update) once per
    (owner, key, occurrence in the step) while recording; as written otherwise. ``owner``: the
    object whose builder it is (held weakly: a new object at a reused id builds anew) or None;
    ``key``: tensors (by name) and plain values."""
    st = recording(graph)
    if st is None:
        return build()
    full = _occurrence(st.step, ("memo", id(owner)) + _key(tuple(key)))
    entry = st.memo.get(full)
    if entry is not None and (owner is None or entry[0]() is owner):
        return given(_objects(graph, entry[1]))
    result = build()
    st.memo[full] = (None if owner is None else weakref.ref(owner), _names(result))
    return given(result)


def given(result):
    """Marks the tensors in ``result`` as given out in the open step (their values come from it)."""
    st = _states.get(_fw.get_default_graph())
    if st is None or st.step is None or recording() is None:
        return result
    step = st.step

    def mark(x):
        if isinstance(x, (list, tuple)):
            for v in x:
                mark(v)
        elif isinstance(x, _fw.Tensor) and not isinstance(x, _fw.Variable):
            key = id(x)
            ref = weakref.ref(x, lambda r, key=key: _given.get(key, (None,))[0] is r and _given.pop(key))
            _given[key] = (ref, step, _depth[0] > 0)
            if x.op.type not in _MUTATING:  # an assign runs when made, never again as a pending fetch
                step.pending.append(ref)
    mark(result)
    return result


# ---- running ----------------------------------------------------------------------------------

def _session(graph):
    from ._function import graph_session
    from .keras import _custom_step
    session = graph_session(graph)
    _custom_step._sessions[graph] = session  # where twins' newer weights are read (pull)
    return session


def _run(step, fetches, targets, extra_feeds=None):
    """One run of the step's graph: ``fetches`` and every unvalued tensor Python holds, with
    ``targets`` and the step's pending updates, feeding the step's data and values."""
    graph = _graph_of_step(step)
    session = _session(graph)
    for tw in step.state.twins:
        if tw.stale:  # the model changed its weights (fit, set_weights) since the twin copied them
            tw.push(session)
    want = [t for t in fetches if t.name not in step.values]
    seen = {t.name for t in want}
    for t in _unvalued(step):
        if t.name not in seen:
            seen.add(t.name)
            want.append(t)
    feeds = dict(step.feeds)
    feeds.update(step.values)
    # Values asked for now, after the session has initialized new variables (a learning rate
    # read at the optimizer's counter).
    feeds.update({k: v() if callable(v) else v for k, v in (extra_feeds or {}).items()})
    updates, step.updates = step.updates, []
    values, _ = session.run([want, list(targets) + updates], feed_dict=feeds)
    for t, v in zip(want, values):
        step.values[t.name] = np.asarray(v)


def _graph_of_step(step):
    g = step.state.graph()
    if g is None:
        raise RuntimeError("the graph of this eager step is gone")
    return g


def change_state(graph, targets, extra_feeds=None):
    """Runs state-changing ops now (an optimizer's update, ``assign_sub``), after the values the
    step's tensors have at this point: True when recording (they ran), False otherwise."""
    st = recording(graph)
    if st is None:
        return False
    _run(st.step, [], targets, extra_feeds)
    for tw in st.twins:
        tw.newer = True
    return True


def assign_now(tensor):
    """A variable's assign op recorded in an eager step: runs it at once (its value is the new
    value). One that needs a placeholder of the user's (graph code) is left to Session.run."""
    st = recording(tensor.graph)
    if st is None or tensor.op.name not in st.nodes:
        return tensor
    now = st.runs_at_once.get(tensor.op.name)
    if now is None:
        now = st.runs_at_once[tensor.op.name] = not any(
            op.type == "Placeholder" and op.name not in st.nodes for op in _fw.ancestor_ops([tensor.op]))
    if not now:
        return tensor
    given(tensor)
    _run(st.step, [tensor], [])
    for tw in st.twins:
        tw.newer = True
    return tensor


def add_updates(graph, updates):
    """State updates of a recorded call (batch-norm statistics): run with the step's next run."""
    st = recording(graph)
    if st is None:
        return False
    st.step.updates.extend(updates)
    return True


def session_feeds(graph, fed):
    """For Session.run of a graph with an eager step open: the step's data, so a tensor recorded
    in it (``g = tape.gradient(y, x)`` then ``sess.run(g)``) runs on the values it was made from.
    ``fed``: the tensors the caller feeds itself."""
    st = _states.get(graph)
    if st is None or st.step is None or not st.step.feeds:
        return []
    names = {t.name for t in fed}
    return [(graph.get_tensor_by_name(n), v) for n, v in st.step.feeds.items() if n not in names]


def eager_twin(model):
    """Whether ``model`` was called in an eager step of the default graph (its variables are then
    its twin's, as in a traced step)."""
    st = recording()
    return st is not None and any(tw.model() is model for tw in st.twins)


def use_twin(graph, tw):
    st = recording(graph)
    if st is not None:
        st.twins.add(tw)
        st.variables.update(v.op.name for v in tw.vars)


def made_on_tape(tensor):
    """Whether an eager step's tensor was made inside a tape's block (None: not such a tensor)."""
    entry = _given.get(id(tensor))
    if entry is None or entry[0]() is not tensor:
        return None
    return entry[2]


def owns(tensor):
    """Whether ``tensor`` was given out by an eager step (its value is that step's)."""
    entry = _given.get(id(tensor))
    return entry is not None and entry[0]() is tensor


def value(tensor):
    """The eager value of a tensor made while recording (None for other tensors, and inside a
    ``with Session()`` block, where the user's session gives values)."""
    from .session import _session_stack
    if _session_stack:
        return None
    entry = _given.get(id(tensor))
    step = entry[1] if entry is not None and entry[0]() is tensor else None
    if step is None:
        st = _states.get(tensor.graph)
        if st is None or st.step is None or tensor.op.name not in st.nodes:
            return None
        step = st.step
    if tensor.name in step.values:
        return step.values[tensor.name]
    if step is not step.state.step:
        raise ValueError("tensor '%s' belongs to an eager step that has ended and was not computed in it" %
                         tensor.name)
    _run(step, [tensor], [])
    return step.values[tensor.name]
