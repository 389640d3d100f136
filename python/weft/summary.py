"""``weft.summary``: TensorBoard scalars and graphs, with TensorFlow 2's API.

    writer = weft.summary.create_file_writer("logs/run1")
    with writer.as_default():
        for step in range(100):
            weft.summary.scalar("loss", loss_value, step=step)   # a number (run the graph first)
    writer.flush()

The files are TensorBoard event files (``logs/run1/events.out.tfevents.*``) that TensorBoard and
its readers load; weft writes them itself (python/weft/_events.py). TF1's ``FileWriter`` and summary
ops are in ``weft.compat.v1.summary``. Values are numbers: weft has no eager tensors, so a graph
tensor is run (``sess.run``) before it is written.
"""
import contextlib

import numpy as np

from . import _events
from .framework import Tensor, Graph

_default_writer = []   # the stack of writers made default by as_default()
_step = [None]          # tf.summary.experimental.set_step's value


class SummaryWriter:
    """Writes summaries to an event file in ``logdir`` (see ``create_file_writer``)."""

    def __init__(self, logdir, filename_suffix=None):
        self._events = _events.EventFileWriter(logdir, filename_suffix or ".v2")

    @property
    def logdir(self):
        return self._events.logdir

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Summaries written inside go to this writer; ``step`` (if given) is their default step."""
        _default_writer.append(self)
        saved = _step[0]
        if step is not None:
            _step[0] = step
        try:
            yield self
        finally:
            _step[0] = saved
            _default_writer.remove(self)
            self.flush()

    def set_as_default(self, step=None):
        """Makes this the default writer from now on (``step``: the default step)."""
        _default_writer.append(self)
        if step is not None:
            _step[0] = step

    def init(self):
        """Nothing to do: the file is opened when the writer is made (kept for TF's API)."""

    def flush(self):
        self._events.flush()

    def close(self):
        self._events.close()
        while self in _default_writer:
            _default_writer.remove(self)

    def _write_scalar(self, name, value, step):
        self._events.add_scalar(name, value, step)


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """A SummaryWriter for an event file in ``logdir`` (created if missing). ``max_queue``,
    ``flush_millis`` and ``name`` are accepted for TF's signature: weft writes each summary when it
    is made and pushes it to the file on ``flush()``, ``close()`` or leaving ``as_default()``."""
    return SummaryWriter(logdir, filename_suffix)


def _resolve_step(step, what):
    step = _step[0] if step is None else step
    if step is None:
        raise ValueError("weft.summary.%s: no step: pass step=, or set one with "
                         "weft.summary.experimental.set_step(step) or writer.as_default(step=...)" % what)
    if isinstance(step, Tensor):
        raise TypeError("weft.summary.%s: step must be a number, not the graph tensor %s (run it first)" %
                        (what, step.name))
    return int(step)


def scalar(name, data, step=None, description=None):
    """Writes the scalar ``data`` under the tag ``name`` at ``step`` to the default writer, as a
    float32 tensor with the "scalars" plugin's metadata (TF2's form). Returns True if written,
    False when there is no default writer (as TF does)."""
    if not _default_writer:
        return False
    if isinstance(data, Tensor):
        raise TypeError("weft.summary.scalar(%r): data is the graph tensor %s; run it (sess.run) and pass its "
                        "value" % (name, data.name))
    value = np.asarray(data)
    if value.size != 1 or not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
        raise ValueError("weft.summary.scalar(%r): data must be one number, got %r" % (name, data))
    _default_writer[-1]._write_scalar(name, float(value.reshape(())), _resolve_step(step, "scalar"))
    return True


def graph(graph_data):
    """Writes a weft.Graph (or a compiled Keras model's graph) to the default writer. Returns
    True if written, False when there is no default writer."""
    if not _default_writer:
        return False
    if not isinstance(graph_data, Graph) and not hasattr(graph_data, "_cpp"):
        raise TypeError("weft.summary.graph needs a weft.Graph or a compiled keras Model, got %r" % (graph_data,))
    target = graph_data if isinstance(graph_data, Graph) else graph_data._cpp
    _default_writer[-1]._events.add_graph(target)
    return True


def flush(writer=None, name=None):
    """Flushes ``writer`` (default: the default writer)."""
    w = writer if writer is not None else (_default_writer[-1] if _default_writer else None)
    if w is not None:
        w.flush()


class experimental:  # noqa: N801 - TF's namespace tf.summary.experimental
    """``weft.summary.experimental.set_step`` / ``get_step``: the default step of summaries."""

    @staticmethod
    def set_step(step):
        _step[0] = None if step is None else int(step)

    @staticmethod
    def get_step():
        return _step[0]


__all__ = ["SummaryWriter", "create_file_writer", "scalar", "graph", "flush", "experimental"]
