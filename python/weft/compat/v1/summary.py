"""TF1's summaries (``tf.compat.v1.summary``): summary ops run by the session, the ``Summary``
message, and ``FileWriter`` writing TensorBoard event files (python/weft/_events.py).

    tf.summary.scalar("loss", loss)                    # tag "loss" (prefixed by the name scope)
    merged = tf.summary.merge_all()
    writer = tf.summary.FileWriter("logs/train", sess.graph)
    summary, _ = sess.run([merged, train_op], feed_dict=...)   # serialized Summary bytes
    writer.add_summary(summary, step)
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="acc", simple_value=0.9)]), step)
    writer.close()
"""
from ... import _events
from ...framework import Graph, Tensor, get_default_graph


class Summary:
    """TF's ``Summary`` message for simple values: ``Summary(value=[Summary.Value(tag=, simple_value=)])``."""

    class Value:
        def __init__(self, tag="", simple_value=0.0, node_name=""):
            self.tag = tag
            self.simple_value = simple_value
            self.node_name = node_name

        def __repr__(self):
            return "Summary.Value(tag=%r, simple_value=%r)" % (self.tag, self.simple_value)

    def __init__(self, value=None):
        self.value = list(value or [])

    def SerializeToString(self):  # noqa: N802 - protobuf's name
        return _events.summary_proto([_events.simple_value(v.tag, v.simple_value) for v in self.value])


class _SummaryOp:
    """What the summary functions return: ``sess.run`` of it runs the summarized tensors and gives
    the serialized ``Summary`` (bytes) that ``FileWriter.add_summary`` takes."""

    def __init__(self, entries):
        self._entries = list(entries)  # (kind, tag, tensor, max_outputs)

    def _weft_fetch(self):
        def finish(values):
            out = []
            for (kind, tag, _, max_outputs), v in zip(self._entries, values):
                if kind == "scalar":
                    if v.size != 1:
                        raise ValueError("summary scalar %r: tensor has shape %s, not a scalar" % (tag, v.shape))
                    out.append(_events.simple_value(tag, float(v.reshape(()))))
                elif kind == "histogram":
                    out.append(_events.histogram_value(tag, v))
                else:
                    if v.ndim != 4:
                        raise ValueError("summary image %r: need [batch, height, width, channels], got shape %s" %
                                         (tag, v.shape))
                    n = min(max_outputs, v.shape[0])
                    out.extend(_events.image_value(tag + "/image" + ("/%d" % i if max_outputs > 1 else ""), v[i])
                               for i in range(n))
            return _events.summary_proto(out)
        return [t for _, _, t, _ in self._entries], finish

    def __repr__(self):
        return "<summary op %s>" % [tag for _, tag, _, _ in self._entries]


def _collection(g):
    c = getattr(g, "_tf1_summaries", None)
    if c is None:
        c = []
        g._tf1_summaries = c
    return c


def _summary_op(kind, name, tensor, collections, max_outputs=0):
    if not isinstance(tensor, Tensor):
        raise TypeError("summary %s %r: needs a graph tensor, got %r" % (kind, name, tensor))
    g = tensor.graph
    tag = "/".join(g._name_stack + [name])
    if collections is None or collections:  # collections=[] keeps it out of merge_all, as in TF
        _collection(g).append((kind, tag, tensor.name, max_outputs))  # by name: the graph holds no tensor objects
    return _SummaryOp([(kind, tag, tensor, max_outputs)])


def scalar(name, tensor, collections=None, family=None):
    """A summary op of the scalar ``tensor`` under the tag ``name`` (as a TF1 ``simple_value``)."""
    return _summary_op("scalar", name, tensor, collections)


def histogram(name, values, collections=None, family=None):
    """A summary op of a histogram of ``values`` (30 equal-width buckets between min and max)."""
    return _summary_op("histogram", name, values, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A summary op of up to ``max_outputs`` images of ``tensor`` [batch, height, width, 1|3|4],
    PNG-encoded and scaled as TF1 documents it; tags "<name>/image/<i>" ("<name>/image" for one)."""
    return _summary_op("image", name, tensor, collections, int(max_outputs))


def merge(inputs, collections=None, name=None):
    """One summary op running all of ``inputs`` (summary ops)."""
    entries = []
    for s in inputs:
        if not isinstance(s, _SummaryOp):
            raise TypeError("summary.merge takes summary ops, got %r" % (s,))
        entries.extend(s._entries)
    return _SummaryOp(entries)


def merge_all(key=None, scope=None, name=None):
    """A summary op of every summary made in the default graph (with a tag starting with
    ``scope`` if given), or None when there is none."""
    g = get_default_graph()
    entries = [(k, tag, g.get_tensor_by_name(t), n) for k, tag, t, n in _collection(g)
               if scope is None or tag.startswith(scope)]
    return _SummaryOp(entries) if entries else None


class FileWriter:
    """Writes summaries and graphs to a TensorBoard event file in ``logdir`` (made if missing).
    ``graph``: written at once (``sess.graph`` or a weft.Graph). ``max_queue``, ``flush_secs`` and
    ``session`` are accepted for TF's signature; events go to the file on ``flush``/``close``."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        self._logdir = str(logdir)
        self._suffix = filename_suffix
        self._events = _events.EventFileWriter(self._logdir, filename_suffix)
        if graph is not None:
            self.add_graph(graph)

    def get_logdir(self):
        return self._logdir

    def add_summary(self, summary, global_step=None):
        """Writes a serialized Summary (``sess.run`` of a summary op) or a ``Summary`` at ``global_step``."""
        if isinstance(summary, Summary):
            summary = summary.SerializeToString()
        if not isinstance(summary, (bytes, bytearray)):
            raise TypeError("add_summary takes the bytes of sess.run(summary_op) or a Summary, got %r" % (summary,))
        self._events.add_event(step=int(global_step or 0), summary=bytes(summary))

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes a tagged RunMetadata event; weft records no step statistics, so it is empty."""
        self._events.add_event(step=int(global_step or 0), tagged_run_metadata=(tag, b""))

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes ``graph`` (a weft.Graph) as a GraphDef: node names, ops, inputs and devices."""
        if not isinstance(graph, Graph):
            raise TypeError("FileWriter.add_graph needs a weft.Graph (e.g. sess.graph), got %r" % (graph,))
        self._events.add_graph(graph, step=int(global_step or 0))

    def flush(self):
        self._events.flush()

    def close(self):
        self._events.close()

    def reopen(self):
        """After ``close()``: continues in a new event file in the same directory."""
        if self._events.closed:
            self._events = _events.EventFileWriter(self._logdir, self._suffix)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


__all__ = ["Summary", "FileWriter", "scalar", "histogram", "image", "merge", "merge_all"]
