"""TFRecord files: ``tf.io.TFRecordWriter``, ``tf.data.TFRecordDataset``,
``tf.compat.v1.io.tf_record_iterator``.

    with tf.io.TFRecordWriter("data.tfrecord", options="GZIP") as w:
        w.write(example.SerializeToString())
    ds = tf.data.TFRecordDataset(["data.tfrecord"], compression_type="GZIP").map(parse_fn)

A record is framed as in python/weft/_events.py (u64 length, masked CRC-32C of the length, the
bytes, masked CRC-32C of the bytes); the file may be gzip'd or zlib'd as a whole (TF's
compression types). Reading checks both CRCs: a bad one, or a file that ends inside a record, is
DataLossError naming the file and the record's byte offset.
"""
import gzip
import os
import struct
import zlib

from .. import _events
from .. import _text_values as _tv
from .. import framework as _fw
from ..data import _host
from ..data import _structure as _st
from ..data.dataset import Dataset

_COMPRESSION = {None: "", "": "", "NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


class TFRecordOptions:
    """tf.io.TFRecordOptions: ``compression_type`` None, "", "GZIP" or "ZLIB";
    ``compression_level`` 0-9 (None: the library's default)."""

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None,
                 window_bits=None, compression_level=None, compression_method=None, mem_level=None,
                 compression_strategy=None):
        self.compression_type = _compression(compression_type, "TFRecordOptions")
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options):
        if options is None:
            return ""
        return options.compression_type if isinstance(options, TFRecordOptions) else _compression(options, "options")


def _compression(kind, what):
    if isinstance(kind, TFRecordOptions):
        return kind.compression_type
    key = kind.upper() if isinstance(kind, str) else kind
    if key not in _COMPRESSION:
        raise ValueError("%s: compression_type must be None, '', 'GZIP' or 'ZLIB', got %r" % (what, kind))
    return _COMPRESSION[key]


def _path(p):
    p = p.item() if hasattr(p, "item") and getattr(p, "ndim", 1) == 0 else p
    return os.fspath(_tv.decode(p) if isinstance(p, bytes) else p)


class _ZlibWriter:
    def __init__(self, f, level):
        self._f, self._z = f, zlib.compressobj(-1 if level is None else level)

    def write(self, data):
        self._f.write(self._z.compress(data))

    def flush(self):
        self._f.flush()

    def close(self):
        self._f.write(self._z.flush())
        self._f.close()


class TFRecordWriter:
    """tf.io.TFRecordWriter(path, options=None): ``write(record)`` appends one record (bytes or
    str); ``flush()``, ``close()``; a context manager."""

    def __init__(self, path, options=None):
        self._path = _path(path)
        kind = _compression(options, "TFRecordWriter")
        level = options.compression_level if isinstance(options, TFRecordOptions) else None
        try:
            raw = open(self._path, "wb")
        except OSError as e:
            raise _fw._weft_error("NotFound" if isinstance(e, FileNotFoundError) else "Unknown",
                                  "TFRecordWriter: %s: %s" % (self._path, e.strerror)) from None
        if kind == "GZIP":
            self._f = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9 if level is None else level)
            self._raw = raw
        elif kind == "ZLIB":
            self._f, self._raw = _ZlibWriter(raw, level), None
        else:
            self._f, self._raw = raw, None

    def write(self, record):
        if self._f is None:
            raise _fw._weft_error("FailedPrecondition", "TFRecordWriter: %s is closed" % self._path)
        record = record.numpy() if hasattr(record, "numpy") else record
        self._f.write(_events.tfrecord(_tv.to_bytes(record, "TFRecordWriter.write")))

    def flush(self):
        if self._f is not None:
            self._f.flush()

    def close(self):
        if self._f is not None:
            self._f.close()
            if self._raw is not None:
                self._raw.close()
            self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class DatasetWriter:
    """tf.data.experimental.TFRecordWriter(filename, compression_type=None): ``write(dataset)``
    writes a dataset of scalar strings as one TFRecord file."""

    def __init__(self, filename, compression_type=None):
        self._path, self._kind = filename, _compression(compression_type, "TFRecordWriter")

    def write(self, dataset):
        spec = dataset.element_spec
        if not isinstance(spec, _st.TensorSpec) or spec.dtype != _tv.string or spec.shape != ():
            raise TypeError("tf.data.experimental.TFRecordWriter: the dataset must hold scalar strings, got %r" %
                            (spec,))
        with TFRecordWriter(self._path, options=self._kind) as w:
            for record in dataset.as_numpy_iterator():
                w.write(record)


def _open(path, kind):
    if kind == "GZIP":
        return gzip.open(path, "rb")
    f = open(path, "rb")
    if kind == "ZLIB":
        data = f.read()
        f.close()
        import io
        try:
            return io.BytesIO(zlib.decompress(data))
        except zlib.error as e:
            raise _fw._weft_error("DataLoss", "%s: not a ZLIB stream (%s)" % (path, e)) from None
    return f


def records(path, compression_type=None):
    """The records of one TFRecord file, as bytes, checked (see the module doc)."""
    kind = _compression(compression_type, "TFRecordDataset")
    path = _path(path)
    try:
        f = _open(path, kind)
    except FileNotFoundError:
        raise _fw._weft_error("NotFound", "%s; No such file or directory" % path) from None

    def loss(offset, why):
        return _fw._weft_error("DataLoss", "%s: corrupted record at %d: %s" % (path, offset, why))
    with f:
        offset = 0
        while True:
            try:
                header = f.read(12)
            except (OSError, EOFError) as e:  # a gzip stream cut short or damaged
                raise loss(offset, str(e)) from None
            if not header:
                return
            if len(header) < 12:
                raise loss(offset, "the file ends inside a record's header (%d of 12 bytes)" % len(header))
            length, crc = struct.unpack("<QI", header)
            if crc != _events._masked_crc(header[:8]):
                raise loss(offset, "the length's CRC does not match")
            try:
                body = f.read(length + 4)
            except (OSError, EOFError) as e:
                raise loss(offset, str(e)) from None
            if len(body) < length + 4:
                raise loss(offset, "the file ends inside the record (%d of %d bytes)" % (len(body), length + 4))
            data = body[:length]
            if struct.unpack("<I", body[length:])[0] != _events._masked_crc(data):
                raise loss(offset, "the data's CRC does not match")
            yield data
            offset += 12 + length + 4


def tf_record_iterator(path, options=None):
    """tf.compat.v1.io.tf_record_iterator: the records of a file, as bytes."""
    return records(path, options)


class TFRecordDataset(_host.HostDataset):
    """tf.data.TFRecordDataset: a dataset of the files' records (scalar strings), file after
    file. ``filenames``: a path, a list of paths or a dataset of them."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        if isinstance(filenames, Dataset):
            filenames = [e for e in filenames.as_numpy_iterator()]
        paths = [_path(p) for p in _tv.as_bytes_array(filenames, "TFRecordDataset: filenames").reshape(-1)]
        kind = _compression(compression_type, "TFRecordDataset")
        for p in paths:
            if not os.path.isfile(p):
                raise _fw._weft_error("NotFound", "TFRecordDataset: %s; No such file or directory" % p)

        def elements():
            for p in paths:
                for r in records(p, kind):
                    yield [_tv.as_bytes_array(r)]
        super().__init__(elements, _st.TensorSpec((), _tv.string), _host.UNKNOWN)
