"""``weft.summary``: TensorBoard scalars and graphs, with TensorFlow 2's API.

    writer = weft.summary.create_file_writer("logs/run1")
    with writer.as_default():
        for step in range(100):
            weft.summary.scalar("loss", loss_value, step=step)   # a number (run the graph first)
    writer.flush()

The files are TensorBoard event files (``logs/run1/events.out.tfevents.*``) that TensorBoard and
its readers load; weft writes them itself (python/weft/_events.py). TF1's ``FileWriter`` and summary
ops are in ``weft.compat.v1.summary``. Values are numbers, numpy arrays and the tensors of an
eager step (weft/_recorder.py: a custom loop's loss); another graph tensor is run (``sess.run``)
before it is written (one that needs no feeds, such as a constant, is computed on the spot).
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
        step = _value_of(step, what, "step")
    return int(step)


def _value_of(data, what, name):
    """``data`` as numpy: a graph tensor that needs no feeds (constants and ops on them) is computed
    in a session of its own; one that needs feeds or variables is an error saying to run it first."""
    if not isinstance(data, Tensor):
        return np.asarray(data)
    from . import _recorder
    if _recorder.owns(data):  # a tensor of an eager step (a custom loop's loss): its value there
        return np.asarray(_recorder.value(data))
    from .session import Session
    try:
        with Session(graph=data.graph) as sess:
            return np.asarray(sess.run(data))
    except Exception as e:
        raise ValueError("weft.summary.%s(%s): %s is a graph tensor that cannot be computed alone (%s); run it "
                         "with your session and pass the value" % (what, name, data.name, e)) from e


def _write(what, name, step, encode):
    """Writes encode() to the default writer at the resolved step; False without a default writer."""
    if not _default_writer:
        return False
    step = _resolve_step(step, what)
    _default_writer[-1]._events.add_value(encode(), step)
    return True


def scalar(name, data, step=None, description=None):
    """Writes the scalar ``data`` under the tag ``name`` at ``step`` to the default writer, as a
    float32 tensor with the "scalars" plugin's metadata (TF2's form). Returns True if written,
    False when there is no default writer (as TF does)."""
    def encode():
        value = _value_of(data, "scalar", name)
        if value.size != 1 or not (np.issubdtype(value.dtype, np.number) or value.dtype == np.bool_):
            raise ValueError("weft.summary.scalar(%r): data must be one number, got %r" % (name, data))
        return _events.scalar_tensor_value(name, float(value.reshape(())), description)
    return _write("scalar", name, step, encode)


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of ``data`` (``buckets`` equal-width buckets, 30 by default) in TF2's form."""
    return _write("histogram", name, step, lambda: _events.histogram_tensor_value(
        name, _value_of(data, "histogram", name), 30 if buckets is None else int(buckets), description))


def image(name, data, step=None, max_outputs=3, description=None):
    """Writes up to ``max_outputs`` images of ``data`` [k, height, width, 1|2|3|4] (uint8, or floats in
    [0, 1]) as PNGs in TF2's form."""
    return _write("image", name, step, lambda: _events.image_tensor_value(
        name, _value_of(data, "image", name), int(max_outputs), description))


def text(name, data, step=None, description=None):
    """Writes a string (or an array of strings) for TensorBoard's text dashboard."""
    return _write("text", name, step, lambda: _events.text_tensor_value(
        name, data if not isinstance(data, Tensor) else _value_of(data, "text", name), description))


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


__all__ = ["SummaryWriter", "create_file_writer", "scalar", "histogram", "image", "text", "graph", "flush",
           "experimental"]
