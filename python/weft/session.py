"""weft.Session: runs a graph with numpy feeds and nested fetches, as TF1's Session does.

    with weft.Session() as sess:
        sess.run(weft.global_variables_initializer())
        loss_value, _ = sess.run([loss, train_op], feed_dict={x: xb, y: yb})
        out = sess.run({"loss": loss, "w": [w, b]}, feed_dict=...)   # same structure back

The GIL is released while a step runs; Ctrl-C cancels the step and raises KeyboardInterrupt (the
session and its variables stay usable).
"""

from . import _weft
from .framework import Graph, Operation, Tensor, get_default_graph


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

    An operation pinned with ``weft.device("/device:GPU:0")`` runs there; without a GPU it runs on the
    CPU (soft_placement=True) or the run raises InvalidArgumentError saying why there is no GPU.
    """

    def __init__(self, graph=None, inter_op_threads=0, intra_op_threads=0, constant_folding=True, cse=True,
                 num_cpu_devices=1, soft_placement=True, target="", step_timeout=30.0):
        """``target``: a weft.distribute.Server's ``target`` (of this process): the graph's steps run
        over its cluster, each task's operations on its server; a step fails (naming the task) when
        a task fails or it takes longer than ``step_timeout`` seconds."""
        graph = graph if graph is not None else get_default_graph()
        if not isinstance(graph, Graph):
            raise TypeError("Session(graph=...) needs a weft.Graph, got %r" % (graph,))
        server = None
        if target:
            from .distribute import _server_for_target
            server = _server_for_target(target)
        super().__init__(graph, inter_op_threads, intra_op_threads, constant_folding, cse, num_cpu_devices,
                         soft_placement, server, int(step_timeout * 1000))

    def run(self, fetches, feed_dict=None):
        """Runs the step that computes ``fetches`` and returns their values as numpy arrays, in the
        same structure (a tensor, an operation (-> None), a "name:0" string, or lists, tuples,
        namedtuples and dicts of them).

        feed_dict maps tensors (usually placeholders; or "name:0") to values: numpy arrays of the
        tensor's dtype are used in place (no copy when C-contiguous and 64-byte aligned); Python
        numbers and lists are converted to the tensor's dtype. A feed of the wrong dtype or shape
        raises InvalidArgumentError naming both.
        """
        f = _Fetches(self.graph, fetches)
        feeds = []
        if feed_dict:
            for k, v in feed_dict.items():
                if isinstance(k, str):
                    k = self.graph.get_tensor_by_name(k)
                elif not isinstance(k, Tensor):
                    raise TypeError("feed_dict keys must be tensors or names, got %r" % (k,))
                feeds.append((k, v))
        values = self._run(feeds, f.tensors, f.targets)
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


class _DefaultSession:
    def __init__(self, sess, close):
        self.sess = sess

    def __enter__(self):
        _session_stack.append(self.sess)
        return self.sess

    def __exit__(self, *exc):
        _session_stack.remove(self.sess)
        return False


InteractiveSession = Session
__all__ = ["Session", "get_default_session"]
