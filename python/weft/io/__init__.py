"""``weft.io``: TensorFlow's ``tf.io`` file helpers (``weft.io.gfile``), ``read_file``,
``write_file`` and ``decode_raw`` on the host (weft's string tensors are host values:
weft/_text_values.py); the image codecs (_image_codecs.py); TFRecord files (_tfrecord.py),
tf.train.Example parsing (_parse.py), ``serialize_tensor`` / ``parse_tensor`` (_wire.py),
``decode_csv`` (data/_csv.py)."""
import numpy as np

from . import gfile  # noqa: F401
from ._image_codecs import (decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg,  # noqa: F401
                            encode_png, extract_jpeg_shape, is_jpeg, write_file)
from ._tfrecord import TFRecordOptions, TFRecordWriter, tf_record_iterator  # noqa: F401
from ._wire import serialize_tensor, parse_tensor  # noqa: F401
from ._parse import (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, parse_example,  # noqa: F401
                     parse_single_example)
from ..data._csv import decode_csv  # noqa: F401


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """``tf.io.decode_raw``: the bytes of ``input_bytes`` (Python bytes or str, or a list of
    them of one length) read as numbers of ``out_type``, a tensor of shape [..., len / size].
    weft has no string tensors, so the bytes are Python's, decoded on the host into a constant."""
    from ..framework import Tensor, as_dtype, constant
    if isinstance(input_bytes, Tensor):
        raise TypeError("weft.io.decode_raw takes Python bytes or str (weft has no string tensors), got tensor %s"
                        % input_bytes.name)
    if fixed_length is not None:
        raise NotImplementedError("weft.io.decode_raw(fixed_length=...) is not supported: slice the bytes in Python")
    dtype = np.dtype(str(as_dtype(out_type))).newbyteorder("<" if little_endian else ">")

    def one(b):
        b = b.encode() if isinstance(b, str) else bytes(b)
        if len(b) % dtype.itemsize:
            raise ValueError("weft.io.decode_raw: %d bytes are not a whole number of %s (%d bytes each)"
                             % (len(b), as_dtype(out_type), dtype.itemsize))
        return np.frombuffer(b, dtype).astype(dtype.newbyteorder("="))

    if isinstance(input_bytes, np.ndarray) and input_bytes.dtype == object:  # a host string value
        if input_bytes.ndim == 0:
            return constant(one(input_bytes.item()))
        input_bytes = input_bytes.reshape(-1).tolist()
    if isinstance(input_bytes, (bytes, bytearray, str)):
        return constant(one(input_bytes))
    rows = [one(b) for b in input_bytes]
    if len({r.size for r in rows}) > 1:
        raise ValueError("weft.io.decode_raw: the inputs have different lengths (%s bytes); TensorFlow requires one "
                         "length" % sorted({r.size * dtype.itemsize for r in rows}))
    return constant(np.stack(rows) if rows else np.zeros((0, 0), dtype.newbyteorder("=")))


def read_file(filename, name=None):
    """``tf.io.read_file``: the whole file as a host string value (bytes, ``.numpy()``); a missing
    file is NotFoundError, as TF's."""
    from .. import _text_values
    from ..framework import _weft_error
    path = filename.item() if isinstance(filename, np.ndarray) else filename
    path = path.decode("utf-8") if isinstance(path, bytes) else str(path)
    try:
        with open(path, "rb") as f:
            return _text_values.wrap(_text_values.as_bytes_array(f.read()))
    except FileNotFoundError:
        raise _weft_error("NotFound", "%s; No such file or directory" % path) from None


__all__ = ["gfile", "decode_raw", "read_file", "write_file", "decode_png", "decode_jpeg", "decode_bmp", "decode_gif",
           "decode_image", "encode_png", "encode_jpeg", "is_jpeg", "extract_jpeg_shape", "TFRecordOptions",
           "TFRecordWriter", "tf_record_iterator", "serialize_tensor", "parse_tensor", "FixedLenFeature",
           "FixedLenSequenceFeature", "VarLenFeature", "parse_example", "parse_single_example", "decode_csv"]
