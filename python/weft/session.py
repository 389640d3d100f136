"""weft.Session: runs a graph with numpy feeds and nested fetches, as TF1's Session does.

    with weft.Session() as sess:
        sess.run(weft.global_variables_initializer())
        loss_value, _ = sess.run([loss, train_op], feed_dict={x: xb, y: yb})
        out = sess.run({"loss": loss, "w": [w, b]}, feed_dict=...)   # same structure back

The GIL is released while a step runs; Ctrl-C cancels the step and raises KeyboardInterrupt (the
session and its variables stay usable).
"""

import numpy as np

from . import _recorder, _weft
from . import errors as _errors
from .framework import Graph, Operation, Tensor, get_default_graph
from .data import _graph_iterator


class _Fetches:
    """Flattens a nested fetch structure into tensors and targets, and rebuilds it from results."""

    def __init__(self, graph, fetches):
        self.graph = graph
        self.tensors = []
        self.targets = []
        self.template = self._flatten(fetches)

    def _flatten(self, f):
        if isinstance(f, Tensor):
            self.tensors.append(f)
            return ("t", len(self.tensors) - 1)
        if isinstance(f, Operation):
            self.targets.append(f)
            return ("op",)
        if isinstance(f, str):
            if ":" in f:
                return self._flatten(self.graph.get_tensor_by_name(f))
            return self._flatten(self.graph.get_operation_by_name(f))
        if hasattr(f, "_weft_fetch"):  # e.g. a TF1 summary op: tensors to run, then a function of their values
            inner, finish = f._weft_fetch()
            return ("custom", finish, self._flatten(inner))
        if isinstance(f, dict):
            return ("dict", type(f), [(k, self._flatten(v)) for k, v in f.items()])
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            return ("namedtuple", type(f), [self._flatten(v) for v in f])
        if isinstance(f, (list, tuple)):
            return ("seq", type(f), [self._flatten(v) for v in f])
        if f is None:
            raise TypeError("fetch argument None is not a tensor, operation or name")
        raise TypeError("cannot fetch %r (of type %s): fetch tensors, operations, names, or lists, tuples "
                        "and dicts of them" % (f, type(f).__name__))

    def build(self, values, t=None):
        t = self.template if t is None else t
        kind = t[0]
        if kind == "t":
            return values[t[1]]
        if kind == "op":
            return None
        if kind == "custom":
            return t[1](self.build(values, t[2]))
        if kind == "dict":
            d = {k: self.build(values, v) for k, v in t[2]}
            return t[1](d) if t[1] is not dict else d
        if kind == "namedtuple":
            return t[1](*[self.build(values, v) for v in t[2]])
        return t[1](self.build(values, v) for v in t[2])


_session_stack = []


def get_default_session():
    """The innermost session entered with ``with`` (or ``as_default()``)."""
    if not _session_stack:
        raise ValueError("no default session: use `with weft.Session() as sess:` or pass session=")
    return _session_stack[-1]


class Session(_weft.Session):
    """Runs ``graph`` (default: the default graph) on CPU devices ``CPU:0 .. CPU:num_cpu_devices-1``
    and every GPU weft finds (``weft.gpu_info()``). Threads: 0 means one per hardware thread.

    TensorFlow's argument order: ``Session(target='', graph=None, config=None)``; a weft.Graph as
    the first argument is taken as ``graph`` (weft's earlier order, still accepted).

    An operation pinned with ``weft.device("/device:GPU:0")`` runs there; without a GPU it runs on the
    CPU (soft_placement=True) or the run raises InvalidArgumentError saying why there is no GPU.
    """

    def __init__(self, target="", graph=None, config=None, *, inter_op_threads=None, intra_op_threads=None,
                 constant_folding=True, cse=True, num_cpu_devices=1, soft_placement=None, step_timeout=30.0):
        """``target``: a weft.distribute.Server's ``target`` ("ucx://host:port", of this process; a
        "grpc://host:port" names the same server): the graph's steps run over its cluster, each
        task's operations on its server; a step fails (naming the task) when a task fails or it
        takes longer than ``step_timeout`` seconds. ``config``: a ``ConfigProto`` (see its doc for
        the fields weft maps); explicit keyword arguments win over it."""
        if isinstance(target, Graph):
            if graph is not None:
                raise TypeError("Session(%r, graph=%r): two graphs; TensorFlow's order is Session(target='', "
                                "graph=None, config=None)" % (target, graph))
            target, graph = "", target
        if isinstance(target, bytes):
            target = target.decode("utf-8")
        if target is None:
            target = ""
        if not isinstance(target, str):
            raise TypeError("Session(target=...) takes a server's target string (\"ucx://host:port\", from "
                            "weft.distribute.Server(...).target) or '', got %r" % (target,))
        graph = graph if graph is not None else get_default_graph()
        if not isinstance(graph, Graph):
            raise TypeError("Session(graph=...) needs a weft.Graph, got %r" % (graph,))
        cfg = _config_settings(config)
        # Unset: weft.config's process-wide defaults (tf.config.threading, set_soft_device_placement).
        from .config._state import defaults
        inter_op_threads = (cfg.get("inter_op_threads", defaults["inter_op_threads"]) if inter_op_threads is None
                            else inter_op_threads)
        intra_op_threads = (cfg.get("intra_op_threads", defaults["intra_op_threads"]) if intra_op_threads is None
                            else intra_op_threads)
        soft_placement = cfg.get("soft_placement", defaults["soft_placement"]) if soft_placement is None else soft_placement
        # A remote session's partitions live on its servers: there is nothing local to log.
        self._log_device_placement = cfg.get("log_device_placement", False) and not target
        self._operation_timeout_ms = cfg.get("operation_timeout_in_ms", 0)
        server = None
        if target:
            from .distribute import _server_for_target
            server = _server_for_target("ucx://" + target[len("grpc://"):] if target.startswith("grpc://") else target)
        super().__init__(graph, inter_op_threads, intra_op_threads, constant_folding, cse, num_cpu_devices,
                         soft_placement, server, int(step_timeout * 1000), defaults["use_gpus"],
                         defaults["device_memory_limit"])

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs the step that computes ``fetches`` and returns their values as numpy arrays, in the
        same structure (a tensor, an operation (-> None), a "name:0" string, or lists, tuples,
        namedtuples and dicts of them).

        feed_dict maps tensors (usually placeholders; or "name:0") to values: numpy arrays of the
        tensor's dtype are used in place (no copy when C-contiguous and 64-byte aligned); Python
        numbers, lists and numpy arrays of the same kind (float64 for a float32 tensor, as TF
        allows) are converted to the tensor's dtype. A feed of another kind (float for an int
        tensor) or of the wrong shape raises InvalidArgumentError naming both.

        ``options``: a ``RunOptions``; its ``timeout_in_ms`` (> 0) bounds the step, as in TF: past it
        the step is cancelled and DeadlineExceededError names the step and what it still waited for
        (0 or unset: the ConfigProto's ``operation_timeout_in_ms``, else no limit). Ctrl-C cancels a
        running step (KeyboardInterrupt), whatever it waits on. ``run_metadata`` (TF's tracing) is
        accepted and ignored.
        """
        f = _Fetches(self.graph, fetches)
        feeds = []
        if feed_dict:
            for k, v in feed_dict.items():
                if isinstance(k, str):
                    k = self.graph.get_tensor_by_name(k)
                elif not isinstance(k, Tensor):
                    raise TypeError("feed_dict keys must be tensors or names, got %r" % (k,))
                feeds.append((k, _converted_feed(k, v)))
        feeds += _graph_iterator.feeds(self.graph, f.tensors, f.targets, [t for t, _ in feeds])  # TF1 get_next()
        feeds += _recorder.session_feeds(self.graph, [t for t, _ in feeds])  # data of an eager step
        compiled = self.num_compiled if self._log_device_placement else 0
        values = self._run(feeds, f.tensors, f.targets, _timeout_ms(options, self._operation_timeout_ms))
        if self._log_device_placement and self.num_compiled != compiled:
            _log_placement(self._placement([t for t, _ in feeds], f.tensors, f.targets))
        return f.build(values)

    def as_default(self):
        """``with sess.as_default():`` makes ``Tensor.eval()`` use this session."""
        return _DefaultSession(self, close=False)

    def __enter__(self):
        _session_stack.append(self)
        return self

    def __exit__(self, *exc):
        _session_stack.remove(self)
        self.close()
        return False


def _converted_feed(tensor, value):
    """A numpy feed converted to the tensor's dtype when the conversion keeps the kind (float64 ->
    float32, int64 -> int32, int -> float, bool -> number), as TF converts feeds; other mismatches
    (float -> int, ...) are left for the run to reject, naming both dtypes. The conversion is
    checked: int64 values out of int32's range are an InvalidArgumentError naming the value and
    dtype (in-range values convert). (On every run's path: the common case, a feed of the right
    dtype, costs two attribute reads and a comparison.)"""
    if not isinstance(value, (np.ndarray, np.generic)):
        return value
    try:
        want = tensor.dtype.as_numpy_dtype
    except (AttributeError, TypeError):  # bfloat16 has no numpy dtype
        return value
    if value.dtype == want or not np.can_cast(value.dtype, want, casting="same_kind"):
        return value
    try:
        return _weft._checked_array(value, tensor.dtype)
    except _errors.InvalidArgumentError as e:
        raise _errors.InvalidArgumentError("feed %s: %s" % (tensor.name, e)) from None


class _DefaultSession:
    def __init__(self, sess, close):
        self.sess = sess

    def __enter__(self):
        _session_stack.append(self.sess)
        return self.sess

    def __exit__(self, *exc):
        _session_stack.remove(self.sess)
        return False


class InteractiveSession(Session):
    """A Session that makes itself the default session when made (``Tensor.eval()`` and
    ``Operation.run()`` use it) until ``close()``, as TF's InteractiveSession does."""

    def __init__(self, target="", graph=None, config=None, **kwargs):
        super().__init__(target, graph, config, **kwargs)
        _session_stack.append(self)

    def close(self):
        if self in _session_stack:
            _session_stack.remove(self)
        super().close()


class _Options:
    """A TF options message: fields given as keyword arguments or set as attributes."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


class GPUOptions(_Options):
    """Accepted for TF1 programs (``allow_growth``, ``per_process_gpu_memory_fraction``, ...); weft's CUDA
    allocator grows as needed, so the fields have no effect."""


class ConfigProto(_Options):
    """TF1's session configuration. weft maps ``inter_op_parallelism_threads`` and
    ``intra_op_parallelism_threads`` (0: one per hardware thread) to the session's thread pools,
    ``allow_soft_placement`` to soft placement (weft's default is on, so an op pinned to a GPU
    runs on the CPU when there is none; set False to fail instead) and ``log_device_placement`` to
    a "name: (Op): device" line per node on stderr after each new step is compiled, and
    ``operation_timeout_in_ms`` (> 0) to every run's limit (see ``Session.run``). The other fields
    (``device_count``, ``gpu_options``, ``graph_options``, ...) are accepted and have no effect."""

    def __init__(self, **fields):
        fields.setdefault("gpu_options", GPUOptions())
        super().__init__(**fields)


class RunOptions(_Options):
    """``Session.run(options=...)``: ``timeout_in_ms`` (> 0) bounds the step (DeadlineExceededError past
    it); the tracing fields are accepted and have no effect (weft does not trace steps here)."""
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3


class RunMetadata(_Options):
    """Accepted by ``Session.run(run_metadata=...)``; left empty (weft does not trace steps)."""


def _timeout_ms(options, default_ms):
    """The step's limit in ms from RunOptions.timeout_in_ms (0: none, then ``default_ms``)."""
    if options is None:
        return default_ms
    if not isinstance(options, _Options):
        raise TypeError("Session.run(options=...) takes a weft.compat.v1.RunOptions, got %r" % (options,))
    value = getattr(options, "timeout_in_ms", 0) or 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError("RunOptions.timeout_in_ms must be an int (milliseconds), got %r" % (value,))
    if value < 0 or value > 2**62:
        raise ValueError("RunOptions.timeout_in_ms must be 0 (no limit) or a positive number of milliseconds "
                         "below 2**62, got %d" % value)
    return int(value) or default_ms


def _config_settings(config):
    """The Session settings a ConfigProto (or None) asks for."""
    if config is None:
        return {}
    if not isinstance(config, _Options):
        raise TypeError("Session(config=...) takes a weft.compat.v1.ConfigProto, got %r" % (config,))
    d = config.__dict__
    out = {}
    for field, key in (("inter_op_parallelism_threads", "inter_op_threads"),
                       ("intra_op_parallelism_threads", "intra_op_threads")):
        if d.get(field):
            out[key] = int(d[field])
    if d.get("operation_timeout_in_ms"):
        out["operation_timeout_in_ms"] = _timeout_ms(RunOptions(timeout_in_ms=d["operation_timeout_in_ms"]), 0)
    if "allow_soft_placement" in d:
        out["soft_placement"] = bool(d["allow_soft_placement"])
    out["log_device_placement"] = bool(d.get("log_device_placement", False))
    return out


def _log_placement(placement):
    import sys
    for name, op, device in placement:
        print("%s: (%s): %s" % (name, op, device), file=sys.stderr)


__all__ = ["Session", "InteractiveSession", "get_default_session", "ConfigProto", "GPUOptions", "RunOptions",
           "RunMetadata"]
