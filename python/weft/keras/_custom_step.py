"""Custom training steps over Keras models, TensorFlow 2's custom training loop::

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)

Decorated, this works as a traced graph (without the decorator, as eager steps over the same
machinery: weft/_recorder.py): ``weft.function`` (_function.py)
traces the step once per argument signature over placeholders, and here

- a Keras model called on a graph tensor builds its forward pass in that graph (the C++ model's
  ``Apply``) over a *twin* of its weights: variables of that graph initialized from the model's
  weights. ``model.trainable_variables`` (and ``weights``, ``variables``) inside the trace are the
  twin's variables, so ``tape.gradient`` differentiates them; ``model.losses`` are the layers' loss
  terms of the last call in the trace;
- a Keras loss called on graph tensors adds its ops (the C++ loss, reduced as the loss says);
- ``optimizer.apply_gradients`` on twin (or any weft) variables adds the C++ optimizer's update
  ops (Keras 3's formulas, train/optimizers.h) with its slot variables and an iteration counter in
  the graph; the rate is the optimizer's schedule at that counter, fed at each run;
- a Keras metric given graph tensors records them: after each run the metric is updated with
  their values (metrics accumulate on the host, as weft's metrics always do).

Contract of the twin: the model and its twin in a graph hold the same weights at the API's edges.
A run that updated the twin marks it newer; the model copies its values in before it next runs
or shows weights (the same hook that keeps shared layers in step, _shared.py). The model changing
its weights itself (fit, set_weights, load_weights) marks the twin stale: the next traced run copies
the model's weights in first. Batch-norm moving averages update in training calls, as in fit.
"""
import contextlib
import sys
import weakref

import numpy as np

from .. import _recorder
from .. import framework as _fw

# The trace in progress (weft.function sets it): collects what each run must do besides fetching.
_active = []


class Trace:
    """What one traced function needs at each run: state-changing ops created while tracing,
    metric updates to apply with fetched values, and the twins it used."""

    def __init__(self, graph):
        self.graph = graph
        self.updates = []      # ops / tensors run at every call (optimizer, batch-norm, counters)
        self.metrics = []      # (update_state, [tensor or value ...], kwargs)
        self.twins = []        # _Twin objects used (to sync before and after runs)
        self.feeds = []        # (placeholder, function of nothing -> value) fed at every run


@contextlib.contextmanager
def tracing(trace):
    _active.append(trace)
    try:
        yield trace
    finally:
        _active.pop()


def current(graph=None):
    """The trace in progress for ``graph`` (default: the default graph), or None."""
    if not _active:
        return None
    t = _active[-1]
    g = graph if graph is not None else _fw.get_default_graph()
    return t if t.graph is g else None


def _new_variable(graph, value, name, trainable):
    with graph.as_default():
        return _fw.Variable(value, name=name, trainable=trainable)


# ---- twins: a model's weights as variables of a graph -----------------------------------------

class _Twin:
    def __init__(self, model, cpp, graph):
        with _recorder.plain():  # made once, as written, also in an eager step
            self._make(model, cpp, graph)

    def _make(self, model, cpp, graph):
        self.model = weakref.ref(model)
        self.graph = graph
        self.names = list(cpp.layer_weight_names)
        self.trainable = list(cpp._weight_trainable)
        values = cpp.get_weights()
        self.vars = [_new_variable(graph, np.asarray(v), "%s/%s" % (model.name, n.replace(":", "_")), t)
                     for n, v, t in zip(self.names, values, self.trainable)]
        with graph.as_default():
            self._feeds = [_fw.placeholder(v.dtype, tuple(v.shape)) for v in self.vars]
            from .. import ops as _ops
            self._assign = _fw.group(*[_ops.assign(v, p) for v, p in zip(self.vars, self._feeds)])
        self.newer = False   # the twin holds weights the model has not copied yet
        self.stale = False   # the model changed its weights since the twin copied them

    def push(self, session):
        """Copies the model's weights into the twin (before a run, when stale)."""
        model = self.model()
        if model is None or model._cpp is None:
            return
        values = model._cpp.get_weights()
        session.run(self._assign, feed_dict=dict(zip(self._feeds, values)))
        self.stale = False


_twins = weakref.WeakKeyDictionary()  # model -> {graph: _Twin}
_sessions = weakref.WeakKeyDictionary()  # twin graph -> the session whose values the twin holds


def twin(model, graph=None, create=True):
    graph = graph if graph is not None else _fw.get_default_graph()
    per = _twins.setdefault(model, weakref.WeakKeyDictionary())
    tw = per.get(graph)
    if tw is None and create:
        cpp = model._built(None, inference=True)
        tw = per[graph] = _Twin(model, cpp, graph)
    if tw is not None:
        t = current(graph)
        if t is not None and tw not in t.twins:
            t.twins.append(tw)
        _recorder.use_twin(graph, tw)
    return tw


def variables(model, which):
    """``model.trainable_variables`` / ``non_trainable_variables`` / ``variables`` in a trace: the
    twin's variables in the traced graph, or in the default graph in an eager step (_recorder.py);
    None otherwise (the caller gives numpy values)."""
    if current() is None and not _recorder.eager_twin(model) and not (
            model._cpp is None and not model._subclassed() and _recorder.recording() is not None):
        return None
    if model._cpp is None and not model._subclassed():
        # A model with no call of its own (a VAE or GAN holding an encoder and a decoder): the
        # variables of the models it holds as attributes, in assignment order (Keras' tracking).
        subs = _submodels(model)
        if not subs:
            return None
        return [v for sub in subs for v in (variables(sub, which) or [])]
    tw = twin(model, create=model._cpp is not None)
    if tw is None:
        return None
    if which == "trainable":
        return [v for v, t in zip(tw.vars, tw.trainable) if t]
    if which == "non_trainable":
        return [v for v, t in zip(tw.vars, tw.trainable) if not t]
    return [v for v, t in zip(tw.vars, tw.trainable) if t] + [v for v, t in zip(tw.vars, tw.trainable) if not t]


def _submodels(model):
    from .models import Model
    out = []
    for value in vars(model).values():
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(v, Model) and v is not model and v not in out:
                out.append(v)
    return out


def call(model, inputs, training):
    """The model applied to graph tensors (one, or a list for a model of several inputs) in
    their graph over the twin's weights: its output, or the list of its outputs."""
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    x = xs[0]
    if model._cpp is None:
        if x.shape is None:
            raise ValueError("model '%s' called on %s of unknown rank: build it first (model.build(input_shape))"
                             % (model.name, x.name))
        model.build((None,) + tuple(x.shape[1:]))
    tw = twin(model, x.graph)
    outs, updates, losses = _recorder.memo(x.graph, model, ("call", xs, bool(training), tw.vars),
                                           lambda: model._cpp._apply_in_graph(xs, bool(training), tw.vars))
    t = current(x.graph)
    if t is not None and training:
        t.updates.extend(updates)
    elif training:
        _recorder.add_updates(x.graph, updates)
    model._graph_losses = list(losses)
    return outs[0] if len(outs) == 1 else list(outs)


def model_changed(model):
    """The model changed its own weights (fit, set_weights, load_weights): its twins are stale."""
    for tw in (_twins.get(model) or {}).values():
        tw.stale = True
        tw.newer = False


def pull(model, cpp):
    """Copies a twin's newer weights into the model (before the model runs or shows weights)."""
    for graph, tw in list((_twins.get(model) or {}).items()):
        if not tw.newer:
            continue
        session = _sessions.get(graph)
        tw.newer = False
        if session is None:
            continue
        values = session.run(tw.vars)
        cpp.set_variables(dict(zip(tw.names, values)), "the weights a custom training step gave the model")


# ---- losses, metrics, optimizers on graph tensors ---------------------------------------------

def _graph_of(*xs):
    for x in xs:
        if isinstance(x, _fw.Tensor):
            return x.graph
    return None


def loss(loss_obj, y_true, y_pred, sample_weight):
    """A Keras loss of graph tensors (or None when none of the arguments is one)."""
    graph = _graph_of(y_true, y_pred, sample_weight)
    if graph is None:
        return None
    from .. import ops as _ops
    with graph.as_default():
        y_pred = _ops.cast(_fw.convert_to_tensor(y_pred), "float32")
        y_true = _fw.convert_to_tensor(y_true)
        if (getattr(loss_obj._cpp, "name", "") == "sparse_categorical_crossentropy" and y_true.shape is not None
                and y_pred.shape is not None and len(y_true.shape) == len(y_pred.shape) > 2 and y_true.shape[-1] == 1):
            # Keras squeezes (batch, h, w, 1) masks against (batch, h, w, classes) scores, as fit's C++ loop does.
            y_true = _ops.squeeze(y_true, [-1])
        rank = len(y_pred.shape) if y_pred.shape is not None else 0
        if rank >= 3:
            # Sequence outputs [B, T, ..., C]: Keras' loss per position (y_pred.shape[:-1]), each
            # weighted by sample_weight broadcast from the left ([B] or [B, T]), reduced over all.
            per = loss_values(loss_obj, y_true, y_pred)
            if sample_weight is not None:
                sw = _ops.cast(_fw.convert_to_tensor(sample_weight), "float32")
                k = len(sw.shape) if sw.shape is not None else 0
                if 0 < k < rank - 1:
                    sw = _ops.reshape(sw, _ops.concat([_ops.shape(sw), _fw.constant([1] * (rank - 1 - k))], 0))
                per = per * sw
        else:
            per = _built_loss(loss_obj, y_true, y_pred)
            if sample_weight is not None:
                sw = _ops.cast(_fw.convert_to_tensor(sample_weight), "float32")
                per = per * (_ops.reshape(sw, [-1]) if sw.shape is not None and len(sw.shape) > 1 else sw)
        if loss_obj.reduction in ("none", None):
            return per
        total = _ops.reduce_sum(per)
        if loss_obj.reduction == "sum":
            return total
        return total / _ops.cast(_ops.maximum(_ops.size(per), 1), "float32")


def _built_loss(loss_obj, y_true, y_pred):
    """The C++ loss' per-sample values (recorded once per occurrence in an eager step, by the
    loss' class and configuration: a loss object made anew at each step builds nothing new)."""
    config = loss_obj.get_config() if hasattr(loss_obj, "get_config") else {"id": id(loss_obj)}
    return _recorder.memo(y_pred.graph, None, ("loss", type(loss_obj).__name__, config, y_true, y_pred),
                          lambda: loss_obj._cpp._build_in_graph(y_true, y_pred))


def loss_values(loss_obj, y_true, y_pred):
    """Keras' loss function (``keras.losses.binary_crossentropy(y_true, y_pred)``) of graph
    tensors: the loss over the last axis, shape y_pred.shape[:-1] (None when no argument is a
    graph tensor)."""
    graph = _graph_of(y_true, y_pred)
    if graph is None:
        return None
    from .. import ops as _ops
    with graph.as_default():
        y_pred = _ops.cast(_fw.convert_to_tensor(y_pred), "float32")
        y_true = _fw.convert_to_tensor(y_true)
        rank = len(y_pred.shape) if y_pred.shape is not None else None
        if rank is None or rank < 2:
            return _built_loss(loss_obj, y_true, _ops.reshape(y_pred, [-1, 1]) if rank == 1 else y_pred)
        last = y_pred.shape[-1] if y_pred.shape[-1] is not None else -1
        sparse = y_true.shape is not None and len(y_true.shape) == rank - 1
        flat_pred = _ops.reshape(y_pred, [-1, last])
        flat_true = _ops.reshape(y_true, [-1] if sparse else [-1, last])
        per = _built_loss(loss_obj, flat_true, flat_pred)
        dims = list(y_pred.shape[:-1])
        if all(d is not None and d >= 0 for d in dims):
            return _ops.reshape(per, [int(d) for d in dims])  # the static shape too
        return _ops.reshape(per, _ops.strided_slice(_ops.shape(y_pred), [0], [rank - 1]))


def python_loss(loss_obj, y_true, y_pred, sample_weight):
    """A loss written in Python (its ``call``) of tensors -- ops in their graph -- or of arrays --
    its value -- reduced as Keras reduces a loss: over every value ``call`` returns."""
    from .. import ops as _ops
    from .losses import value as _value
    graph = _graph_of(y_true, y_pred, sample_weight)
    with (graph or _fw.get_default_graph()).as_default():
        y_pred = _fw.convert_to_tensor(y_pred)
        if not y_pred.dtype.is_floating:
            y_pred = _ops.cast(y_pred, "float32")
        y_true = _ops.cast(_fw.convert_to_tensor(y_true), y_pred.dtype)  # Keras converts y_true to the loss dtype
        values = _fw.convert_to_tensor(loss_obj.call(y_true, y_pred))
        if sample_weight is not None:
            sw = _ops.cast(_fw.convert_to_tensor(sample_weight), values.dtype)
            rank = len(values.shape) if values.shape is not None else 1
            if sw.shape is not None and len(sw.shape) == 1 and rank > 1:
                sw = _ops.reshape(sw, [-1] + [1] * (rank - 1))
            values = values * sw
        if loss_obj.reduction in ("none", None):
            out = values
        else:
            out = _ops.reduce_sum(values)
            if loss_obj.reduction != "sum":
                out = out / _ops.cast(_ops.maximum(_ops.size(values), 1), values.dtype)
    return out if graph is not None else _value(np.asarray(out))


def defer_metric(update_state, args, kwargs):
    """Records a metric update of graph tensors for after each run; False when there are none."""
    graph = _graph_of(*args, *kwargs.values())
    if graph is None:
        return False
    t = current(graph)
    if t is None and _recorder.recording(graph) is not None:
        # An eager step: the tensors' values now (computed in this step), then the update as on arrays.
        def now(x):
            return np.asarray(x) if isinstance(x, _fw.Tensor) else x
        update_state(*[now(a) for a in args], **{k: now(v) for k, v in kwargs.items()})
        return True
    if t is None:
        # TF2's eager tensors (computed from constants and variables): their values now.
        try:
            vals = [x.numpy() if isinstance(x, _fw.Tensor) else x for x in args]
            kw = {k: v.numpy() if isinstance(v, _fw.Tensor) else v for k, v in kwargs.items()}
        except Exception as e:  # noqa: BLE001 - a tensor without a value (a placeholder's)
            raise ValueError("a Keras metric was given graph tensors without values outside a weft.function "
                             "(tf.function) step: metrics accumulate values, so call it on arrays (or inside the "
                             "traced step)") from e
        update_state(*vals, **kw)
        return True
    t.metrics.append((update_state, list(args), dict(kwargs)))
    return True


class _OptimizerState:
    """An optimizer's graph state in one graph: the iteration counter and the slots per variable."""

    def __init__(self, graph, name, restored=None):
        from .. import ops as _ops
        self.graph = graph
        # Values a tf.train.Checkpoint restored before this state existed: ({"iter": v,
        # "slots/<variable's checkpoint path>/<slot>": v}, variable -> its checkpoint path or None).
        values, self.path_of = restored or ({}, lambda var: None)
        self.restored = dict(values)
        self.iterations = _new_variable(graph, np.int64(self.restored.pop("iter", 0)), name + "/iterations", False)
        with graph.as_default(), _recorder.plain():
            self.lr = _fw.placeholder("float32", (), name=name + "/learning_rate")
        self.slots = {}
        self._ops = _ops
        self._steps = None  # the counter's value, kept on the host once read (no run per step)

    def next_step(self):
        """The step the next run updates at (the counter before it), counted on the host: read
        from the session once, then one more per run that feeds this optimizer's rate."""
        if self._steps is None:
            self._steps = int(_iterations_now(self))
        step, self._steps = self._steps, self._steps + 1
        return step

    def slot(self, var, name):
        key = (var.name, name)
        if key not in self.slots:
            value = None
            if self.restored:
                value = self.restored.pop("slots/%s/%s" % (self.path_of(var) or var.op.name, name), None)
            if value is None:
                value = np.zeros([int(d) for d in var.shape], var.dtype.as_numpy_dtype)
            self.slots[key] = _new_variable(self.graph, value, "%s/%s" % (var.op.name, name), False)
        return self.slots[key]

    def checkpoint_entries(self, path_of_name):
        """(key, variable) for tf.train.Checkpoint: the counter and every slot, under the checkpoint
        path of the variable it belongs to (``path_of_name(graph, op name)``; its name when the
        checkpoint does not hold it)."""
        out = [("iter", self.iterations)]
        for (v, n), slot in sorted(self.slots.items()):
            name = v.split(":")[0]
            out.append(("slots/%s/%s" % (path_of_name(self.graph, name) or name, n), slot))
        return out


_opt_states = weakref.WeakKeyDictionary()  # optimizer -> {graph: _OptimizerState}
_restored = weakref.WeakKeyDictionary()  # optimizer -> values restored before its first apply_gradients


def optimizer_states(optimizer):
    """The optimizer's graph states (custom training steps), oldest first."""
    return list((_opt_states.get(optimizer) or {}).values())


def restore_later(optimizer, values, path_of):
    """Keeps checkpoint values for an optimizer that has no graph state yet: its first
    apply_gradients starts from them (TF's deferred restoration of slots). ``path_of(variable)``
    gives a variable's checkpoint path then."""
    _restored[optimizer] = (dict(values), path_of)


def twin_variables(model):
    """(graph, [variables]) of each twin of the model, in get_weights order."""
    return [(g, list(tw.vars)) for g, tw in (_twins.get(model) or {}).items()]


def apply_gradients(optimizer, grads_and_vars):
    """The optimizer's update of graph variables as ops in their graph: an op that also counts
    the iteration (None when the variables are not graph variables)."""
    pairs = list(grads_and_vars)
    if not pairs or not all(isinstance(v, _fw.Tensor) for _, v in pairs):
        return None
    graph = pairs[0][1].graph
    per = _opt_states.setdefault(optimizer, weakref.WeakKeyDictionary())
    st = per.get(graph)
    if st is None:
        st = per[graph] = _OptimizerState(graph, "%s_%d" % (optimizer.name, id(optimizer) % 10000),
                                          _restored.pop(optimizer, None))
    ops = st._ops
    with graph.as_default():
        grads = [None if g is None else ops.cast(_fw.convert_to_tensor(g), v.dtype) for g, v in pairs]
        if all(g is None for g in grads):
            raise ValueError("No gradients provided for any variable: %s" % ", ".join(v.name for _, v in pairs))
        variables = [v for _, v in pairs]

        def build():
            updates = optimizer._cpp._apply_in_graph(variables, grads, st.lr, st.iterations,
                                                     lambda var, name: st.slot(var, name))
            with _fw.control_dependencies([u.op if hasattr(u, "op") else u for u in updates]), _recorder.plain():
                return ops.assign_add(st.iterations, np.int64(1))
        step = _recorder.memo(graph, optimizer, ("apply_gradients", variables, grads), build)
    if st.restored:  # checkpoint slots for variables this optimizer does not update: say so, never drop them
        left, st.restored = sorted(st.restored), {}
        raise ValueError("tf.train.Checkpoint.restore: optimizer '%s' restored values for %s, but it updates %s (the "
                         "checkpoint was written for other variables, or models named differently)"
                         % (optimizer.name, ", ".join(left), ", ".join(v.op.name for v in variables)))
    t = current(graph)
    feed = (st.lr, lambda: np.float32(optimizer._cpp.learning_rate_at(st.next_step())))
    if t is not None:
        t.updates.append(step)
        t.feeds.append(feed)
    elif _recorder.recording(graph) is not None:
        _recorder.change_state(graph, [step], {st.lr.name: feed[1]})  # eager: the update runs now
    return step


def _iterations_now(st):
    session = _sessions.get(st.graph)
    return 0 if session is None else session.run(st.iterations)


def optimizer_iterations(optimizer):
    """The iteration count of the optimizer's graph state (custom steps), or None without one."""
    for st in (_opt_states.get(optimizer) or {}).values():
        return _iterations_now(st)
    return None


# ---- running a trace --------------------------------------------------------------------------

def run(trace, session, fetches, feed_dict):
    """One call of a traced function: sync the twins in, run the fetches with the trace's updates,
    apply the metric updates, and mark the twins newer."""
    _sessions[trace.graph] = session
    for tw in trace.twins:
        if tw.stale:  # the model changed its weights (fit, set_weights, load_weights) since
            tw.push(session)
    feeds = dict(feed_dict)
    for placeholder, value in trace.feeds:
        feeds[placeholder] = value()
    metric_tensors = [a for _, args, kw in trace.metrics for a in list(args) + list(kw.values())
                      if isinstance(a, _fw.Tensor)]
    out = session.run([fetches, metric_tensors, trace.updates], feed_dict=feeds)
    values, metric_values = out[0], iter(out[1])
    for update_state, args, kw in trace.metrics:
        a = [next(metric_values) if isinstance(x, _fw.Tensor) else x for x in args]
        k = {n: next(metric_values) if isinstance(x, _fw.Tensor) else x for n, x in kw.items()}
        update_state(*a, **k)
    for tw in trace.twins:
        if trace.updates:
            tw.newer = True
    return values


# ---- fit with an overridden train_step (Keras' "customizing what happens in fit") -------------

class MetricsContainer(list):
    """``model.compiled_metrics``: the compiled metric objects, with Keras 2's
    ``update_state(y, y_pred)`` over all of them."""

    def update_state(self, y_true, y_pred, sample_weight=None):
        for m in self:
            m.update_state(y_true, y_pred, sample_weight)

    def reset_state(self):
        for m in self:
            m.reset_state()


class Deferred:
    """``metric.result()`` asked inside a trace: the value it has after each run (train_step's
    ``return {m.name: m.result() for m in self.metrics}``)."""

    def __init__(self, metric):
        self.metric = metric

    def value(self):
        return self.metric.result()


def deferred_result(metric):
    return Deferred(metric) if _active else None


def _batches(x, y, batch_size, shuffle, rng):
    """Each epoch's batches: a weft.data Dataset's elements as they come; arrays cut into
    batch_size rows (shuffled when asked), as (x, y) or x alone."""
    from . import _data_adapter
    if _data_adapter.is_dataset(x):
        return lambda: iter(x)
    # Arrays: x (or a tuple of arrays cut alike) and y.
    parts = [np.asarray(p) for p in x] if isinstance(x, tuple) else [np.asarray(x)]
    if y is not None:
        parts.append(np.asarray(y))
    n = len(parts[0])

    def epoch():
        order = rng.permutation(n) if shuffle else np.arange(n)
        for i in range(0, n, batch_size):
            idx = order[i:i + batch_size]
            cut = tuple(p[idx] for p in parts)
            yield cut[0] if len(cut) == 1 else cut
    return epoch


def _scalar_logs(out):
    if not isinstance(out, dict):
        return {} if out is None else {"loss": float(np.mean(np.asarray(out)))}
    logs = {}
    for k, v in out.items():
        v = v.value() if isinstance(v, Deferred) else v
        try:
            logs[k] = float(np.mean(np.asarray(v)))
        except (TypeError, ValueError):
            logs[k] = v
    return logs


def unpack(data):
    """Keras' unpack_x_y_sample_weight: x, (x,), (x, y) or (x, y, sample_weight) -> a triple."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError("data is expected to be x, (x,), (x, y) or (x, y, sample_weight), got a tuple of %d" % len(data))


def _traced(model, name):
    from .. import _function
    attr = "_traced_" + name
    step = getattr(model, attr, None)
    if step is None:
        step = _function.function(getattr(model, name))
        setattr(model, attr, step)
    return step


def evaluate(model, x, y, batch_size, steps, callbacks, sample_weight=None):
    """Keras' evaluate through the traced test_step: metrics reset, every batch (or ``steps``),
    the logs after the last one (each metric's mean over the data)."""
    from .callbacks import CallbackList
    step = _traced(model, "test_step")
    if sample_weight is not None and y is not None and not hasattr(x, "cardinality"):
        batches = _batches((np.asarray(x), np.asarray(y), np.asarray(sample_weight)), None, int(batch_size or 32),
                           False, None)
    else:
        batches = _batches(x, y, int(batch_size or 32), False, None)
    model.reset_metrics()
    hooks = CallbackList(list(callbacks or []), model=model)
    hooks.on_test_begin({})
    logs = {}
    for i, batch in enumerate(batches()):
        if steps is not None and i >= steps:
            break
        logs = _scalar_logs(step(batch))
    hooks.on_test_end(dict(logs))
    return logs


def fit(model, x, y, batch_size, epochs, verbose, callbacks, shuffle, steps_per_epoch, initial_epoch,
        validation_data=None, validation_split=0.0):
    """Keras' fit through the traced train_step (a subclass' own, or Model's for a Python loss or
    metric): called on each batch, metrics reset at each epoch, validation through test_step,
    callbacks and History as fit's."""
    from . import _progbar
    from .callbacks import CallbackList, History
    step = _traced(model, "train_step")
    if validation_split and y is not None and not hasattr(x, "cardinality"):
        n = len(x)
        cut = n - int(n * float(validation_split))
        x, y, validation_data = x[:cut], y[:cut], (x[cut:], y[cut:])
    batches = _batches(x, y, int(batch_size or 32), shuffle, np.random.default_rng(0))
    history = History(model=model)
    history.history = {}
    params = {"epochs": epochs, "steps": steps_per_epoch, "verbose": verbose}
    cbs = CallbackList(list(callbacks or []), model=model, **params)
    from ._progbar import line_verbose
    verbose = line_verbose(1 if verbose == "auto" else int(verbose))
    if verbose == 1 and not sys.stdout.isatty():
        verbose = 2  # as Keras' progress bar off a terminal: one line per epoch
    from .callbacks import own_progbar
    if own_progbar(callbacks):
        verbose = 0  # a ProgbarLogger draws it
    model.stop_training = False
    cbs.on_train_begin({})
    logs = {}
    for epoch in range(int(initial_epoch), int(epochs)):
        for m in getattr(model, "metrics", None) or []:
            if hasattr(m, "reset_state"):
                m.reset_state()
        cbs.on_epoch_begin(epoch, {})
        if verbose:
            print("Epoch %d/%d" % (epoch + 1, epochs))
        target = steps_per_epoch
        if target is None:
            try:
                target = len(x) if hasattr(x, "cardinality") else -(-len(x) // int(batch_size or 32))
            except TypeError:
                target = None  # a dataset of unknown length
        # The logs are running results already (metrics' result()): shown as they are.
        bar = _progbar.Progbar(target, verbose=verbose, stateful_metrics=set(logs) | {
            getattr(m, "name", "") for m in getattr(model, "metrics", None) or []} | {"loss"})
        for i, batch in enumerate(batches()):
            if steps_per_epoch is not None and i >= steps_per_epoch:
                break
            cbs.on_train_batch_begin(i, {})
            logs = _scalar_logs(step(batch))
            cbs.on_train_batch_end(i, logs)
            bar.update(i + 1, [(k, v) for k, v in logs.items() if isinstance(v, float)], finalize=False)
            if model.stop_training:
                break
        bar.update(bar._seen, [], finalize=True)
        epoch_logs = dict(logs)
        if validation_data is not None:
            vd = validation_data
            vx, vy, vsw = unpack(vd) if isinstance(vd, (tuple, list)) else (vd, None, None)
            val = evaluate(model, vx, vy, batch_size, None, None, vsw)
            epoch_logs.update({"val_" + k: v for k, v in val.items()})
            if verbose:
                print(" - ".join("%s: %.4f" % (k, v) for k, v in epoch_logs.items() if k.startswith("val_")))
        cbs.on_epoch_end(epoch, epoch_logs)
        history.epoch.append(epoch)
        for k, v in epoch_logs.items():
            history.history.setdefault(k, []).append(v)
        if model.stop_training:
            break
    cbs.on_train_end(logs)
    model.history = history
    return history
