"""``weft.io``: TensorFlow's ``tf.io`` file helpers (``weft.io.gfile``) and ``decode_raw`` of
Python bytes (weft has no string tensors: weft/strings.py)."""
import numpy as np

from . import gfile  # noqa: F401


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

    if isinstance(input_bytes, (bytes, bytearray, str)):
        return constant(one(input_bytes))
    rows = [one(b) for b in input_bytes]
    if len({r.size for r in rows}) > 1:
        raise ValueError("weft.io.decode_raw: the inputs have different lengths (%s bytes); TensorFlow requires one "
                         "length" % sorted({r.size * dtype.itemsize for r in rows}))
    return constant(np.stack(rows) if rows else np.zeros((0, 0), dtype.newbyteorder("=")))


__all__ = ["gfile", "decode_raw"]
