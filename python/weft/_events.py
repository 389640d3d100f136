"""TensorBoard event files, written without protobuf or tensorboard at run time.

An event file is a sequence of TFRecords (u64 length, masked CRC-32C of the length, the bytes,
masked CRC-32C of the bytes), each holding one ``tensorflow.Event`` protocol buffer encoded here
by hand. The field numbers are those of TensorFlow's event.proto, summary.proto, graph.proto,
node_def.proto, attr_value.proto and tensor.proto; only the fields weft writes are encoded.

    w = EventFileWriter("logs/train")             # logs/train/events.out.tfevents.<time>.<host>...
    w.add_scalar("loss", 0.25, step=3)             # a TF2 scalar (a float tensor, plugin "scalars")
    w.add_event(summary=summary_proto([simple_value("acc", 0.9)]), step=3)   # a TF1 simple_value
    w.add_graph(weft.get_default_graph())          # the GraphDef: node name, op, inputs, device
    w.close()
"""
import os
import socket
import struct
import threading
import time

import numpy as np

from . import _weft

# ---- protocol buffer wire format -----------------------------------------------------------------

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


def _varint(n):
    n &= (1 << 64) - 1  # negative int64s are ten-byte varints, as protobuf writes them
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint((field << 3) | wire)


def field_varint(field, n):
    return _key(field, _VARINT) + _varint(int(n))


def field_double(field, x):
    return _key(field, _FIXED64) + struct.pack("<d", float(x))


def field_float(field, x):
    return _key(field, _FIXED32) + struct.pack("<f", float(x))


def field_bytes(field, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, _BYTES) + _varint(len(data)) + bytes(data)


def field_packed_doubles(field, values):
    return field_bytes(field, np.asarray(values, dtype="<f8").tobytes())


# ---- messages ------------------------------------------------------------------------------------

# TensorFlow's DataType enum (types.proto) for weft's dtypes.
_DATA_TYPE = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int64": 9, "bool": 10, "bfloat16": 14,
              "float16": 19}


def simple_value(tag, value):
    """A TF1 ``Summary.Value`` with ``simple_value`` (what ``tf.compat.v1.summary.scalar`` writes)."""
    return field_bytes(1, tag) + field_float(2, value)


def _tensor_shape(shape):
    return b"".join(field_bytes(2, field_varint(1, d)) for d in shape)  # TensorShapeProto.dim {size}


def tensor_proto(value):
    """A TensorProto of a numpy value: numbers as little-endian tensor_content, strings as string_val."""
    a = np.asarray(value)
    if a.dtype.kind in "SUO":
        vals = [v if isinstance(v, bytes) else str(v).encode("utf-8") for v in a.ravel()]
        return field_varint(1, 7) + field_bytes(2, _tensor_shape(a.shape)) + b"".join(field_bytes(8, v) for v in vals)
    name = {"f4": "float32", "f8": "float64", "i4": "int32", "i8": "int64", "u1": "uint8", "b1": "bool"}.get(
        a.dtype.str[1:])
    if name is None:
        raise TypeError("no TensorProto encoding for numpy dtype %s" % a.dtype)
    data = a.astype(a.dtype.newbyteorder("<")).tobytes()
    return field_varint(1, _DATA_TYPE[name]) + field_bytes(2, _tensor_shape(a.shape)) + field_bytes(4, data)


# SummaryMetadata.DataClass
DATA_CLASS_SCALAR, DATA_CLASS_TENSOR, DATA_CLASS_BLOB_SEQUENCE = 1, 2, 3


def plugin_tensor_value(tag, plugin, data_class, value, description=None):
    """A TF2 ``Summary.Value``: a tensor with a plugin's metadata, as TF2's summary ops write them."""
    metadata = field_bytes(1, field_bytes(1, plugin) + field_bytes(2, b"")) + field_varint(4, data_class)
    if description:
        metadata += field_bytes(3, description)
    return field_bytes(1, tag) + field_bytes(9, metadata) + field_bytes(8, tensor_proto(value))


def scalar_tensor_value(tag, value, description=None):
    """A TF2 scalar: a float32 tensor with the "scalars" plugin's metadata (``tf.summary.scalar``)."""
    return plugin_tensor_value(tag, "scalars", DATA_CLASS_SCALAR, np.float32(value), description)


def histogram_tensor_value(tag, values, buckets=30, description=None):
    """A TF2 histogram (``tf.summary.histogram``): float64 [buckets, 3] rows of (left edge, right
    edge, count) over equal-width buckets between the values' min and max."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        rows = np.zeros((buckets, 3))
    else:
        lo, hi = float(v.min()), float(v.max())
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(v, bins=buckets, range=(lo, hi))
        rows = np.stack([edges[:-1], edges[1:], counts.astype(np.float64)], axis=1)
    return plugin_tensor_value(tag, "histograms", DATA_CLASS_TENSOR, rows, description)


def image_tensor_value(tag, images, max_outputs=3, description=None):
    """TF2 images (``tf.summary.image``): a string tensor [width, height, png, ...] of up to
    ``max_outputs`` images of [k, height, width, 1|2|3|4]; floats are read in [0, 1] (clipped)."""
    a = np.asarray(images)
    if a.ndim != 4 or a.shape[3] not in (1, 2, 3, 4):
        raise ValueError("image summary %r: need [k, height, width, 1|2|3|4 channels], got shape %s" % (tag, a.shape))
    if a.dtype != np.uint8:
        a = np.floor(np.clip(a.astype(np.float64) * 255.5, 0, 255)).astype(np.uint8)  # TF's convert_image_dtype
    pngs = [_png(a[i]) for i in range(min(max_outputs, a.shape[0]))]
    value = np.array([str(a.shape[2]).encode(), str(a.shape[1]).encode()] + pngs, dtype=object)
    return plugin_tensor_value(tag, "images", DATA_CLASS_BLOB_SEQUENCE, value, description)


def text_tensor_value(tag, text, description=None):
    """TF2 text (``tf.summary.text``): a string tensor with the "text" plugin's metadata."""
    return plugin_tensor_value(tag, "text", DATA_CLASS_TENSOR, np.array(text, dtype=object), description)


def histogram_value(tag, values):
    """A TF1 ``Summary.Value`` with a HistogramProto of ``values`` (30 equal buckets over their range)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        lo = hi = 0.0
        counts, edges = np.zeros(1), np.array([0.0, 0.0])
    else:
        lo, hi = float(v.min()), float(v.max())
        counts, edges = np.histogram(v, bins=30 if hi > lo else 1, range=(lo, hi if hi > lo else lo + 1e-12))
    histo = (field_double(1, lo) + field_double(2, hi) + field_double(3, v.size) + field_double(4, v.sum()) +
             field_double(5, np.square(v).sum()) + field_packed_doubles(6, edges[1:]) +
             field_packed_doubles(7, counts))
    return field_bytes(1, tag) + field_bytes(5, histo)


def _png(image):
    """PNG bytes of a uint8 [height, width, channels] array (1, 2, 3 or 4 channels): tf.io.encode_png's."""
    from .io._image_codecs import png_bytes
    return png_bytes(image)


def _image_uint8(image):
    """TF1's image summary scaling: uint8 as is; floats all >= 0 scaled so the largest is 255;
    floats with negatives shifted so 0 is 127 and scaled so the smallest is 0 or the largest 255."""
    if image.dtype == np.uint8:
        return image
    v = image.astype(np.float64)
    lo, hi = float(v.min()), float(v.max())
    if lo >= 0:
        out = v * (255.0 / hi if hi > 0 else 0.0)
    else:
        out = 127.0 + v * min(127.0 / -lo, 128.0 / hi if hi > 0 else np.inf)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def image_value(tag, image):
    """A TF1 ``Summary.Value`` with an Image: one [height, width, channels] array, PNG-encoded."""
    if image.ndim != 3 or image.shape[2] not in (1, 2, 3, 4):
        raise ValueError("image summary %r: need [height, width, 1|2|3|4 channels], got shape %s" % (tag, image.shape))
    h, w, c = image.shape
    img = field_varint(1, h) + field_varint(2, w) + field_varint(3, c) + field_bytes(4, _png(_image_uint8(image)))
    return field_bytes(1, tag) + field_bytes(4, img)


def summary_proto(values):
    """A ``Summary`` from encoded ``Summary.Value``s."""
    return b"".join(field_bytes(1, v) for v in values)


def graph_def(graph):
    """The GraphDef of a weft.Graph or a compiled Keras model's graph: every node's name, op,
    inputs ("node", "node:1", "^control") and device, and its output dtype as attr "T"."""
    out = bytearray()
    for name, op, inputs, device, dtype in _weft._graph_nodes(graph):
        node = field_bytes(1, name) + field_bytes(2, op)
        for i in inputs:
            node += field_bytes(3, i)
        if device:
            node += field_bytes(4, device)
        if dtype in _DATA_TYPE:
            node += field_bytes(5, field_bytes(1, "T") + field_bytes(2, field_varint(6, _DATA_TYPE[dtype])))
        out += field_bytes(1, node)
    out += field_bytes(4, field_varint(1, 1))  # versions { producer: 1 }
    return bytes(out)


def event(step=0, wall_time=None, file_version=None, graph=None, summary=None, tagged_run_metadata=None):
    """An encoded ``Event``: wall_time (seconds), step, and one of file_version, graph_def, summary,
    tagged_run_metadata (a (tag, RunMetadata bytes) pair)."""
    e = field_double(1, time.time() if wall_time is None else wall_time) + field_varint(2, step)
    if file_version is not None:
        e += field_bytes(3, file_version)
    if graph is not None:
        e += field_bytes(4, graph)
    if summary is not None:
        e += field_bytes(5, summary)
    if tagged_run_metadata is not None:
        e += field_bytes(8, field_bytes(1, tagged_run_metadata[0]) + field_bytes(2, tagged_run_metadata[1]))
    return e


# ---- TFRecord files ------------------------------------------------------------------------------

def _masked_crc(data):
    c = _weft._crc32c(bytes(data))
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data):
    """One TFRecord: length, masked CRC of the length, data, masked CRC of the data."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", _masked_crc(header)) + data + struct.pack("<I", _masked_crc(data))


_file_counter = [0]
_counter_lock = threading.Lock()


class EventFileWriter:
    """Appends events to a new file ``logdir/events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix>``
    (made with its directories); the first event is the file version, as TensorFlow writes it.
    Thread-safe. Events reach the disk on ``flush()``, ``close()``, or when Python's buffer fills."""

    def __init__(self, logdir, filename_suffix=""):
        self.logdir = str(logdir)
        os.makedirs(self.logdir, exist_ok=True)
        with _counter_lock:
            _file_counter[0] += 1
            n = _file_counter[0]
        name = "events.out.tfevents.%d.%s.%d.%d%s" % (time.time(), socket.gethostname(), os.getpid(), n,
                                                      filename_suffix or "")
        self.path = os.path.join(self.logdir, name)
        self._lock = threading.Lock()
        self._file = open(self.path, "wb")
        self.add_event(file_version="brain.Event:2")
        self.flush()

    @property
    def closed(self):
        return self._file is None

    def add_event(self, step=0, **what):
        data = tfrecord(event(step=step, **what))
        with self._lock:
            if self._file is None:
                raise ValueError("event file %s is closed" % self.path)
            self._file.write(data)

    def add_scalar(self, tag, value, step):
        self.add_event(step=step, summary=summary_proto([scalar_tensor_value(tag, value)]))

    def add_value(self, value, step):
        """Writes one encoded ``Summary.Value`` at ``step``."""
        self.add_event(step=step, summary=summary_proto([value]))

    def add_graph(self, graph, step=0):
        self.add_event(step=step, graph=graph_def(graph))

    def flush(self):
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self):
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
