"""Protocol buffer wire format, read side, and the TensorProto of ``tf.io.serialize_tensor`` /
``parse_tensor``. The write side (varints, keys, fields) is python/weft/_events.py's.

    for field, wire, value in fields(buf, "Example"):   # value: int (varint), bytes (others)
        ...
    serialize_tensor(np.arange(3, dtype=np.int32))      # TensorProto bytes, as TF writes them
    parse_tensor(data, weft.int32)                       # -> numpy array

Contract: a truncated or malformed buffer is DataLossError naming what was parsed and the byte
offset; unknown fields are skipped, as protobuf does.
"""
import numpy as np

from .. import _events
from .. import _text_values as _tv
from .. import framework as _fw

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5


def _data_loss(what, offset, why):
    return _fw._weft_error("DataLoss", "Could not parse %s: %s at byte %d" % (what, why, offset))


def varint(buf, pos, what):
    """(value, next position) of the varint at ``pos``."""
    if pos < len(buf) and buf[pos] < 0x80:  # one byte: keys, lengths and small numbers
        return buf[pos], pos + 1
    shift = result = 0
    start = pos
    while True:
        if pos >= len(buf):
            raise _data_loss(what, start, "truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result & ((1 << 64) - 1), pos
        shift += 7
        if shift >= 70:
            raise _data_loss(what, start, "varint longer than 10 bytes")


def fields(buf, what):
    """(field number, wire type, value) for each field of the message in ``buf`` (bytes)."""
    buf = bytes(buf)
    pos, end = 0, len(buf)
    while pos < end:
        start = pos
        key, pos = varint(buf, pos, what)
        field, wire = key >> 3, key & 7
        if field == 0:
            raise _data_loss(what, start, "field number 0")
        if wire == BYTES:
            n, pos = varint(buf, pos, what)
            if pos + n > end:
                raise _data_loss(what, start, "field %d runs past the end (%d bytes)" % (field, n))
            value, pos = buf[pos:pos + n], pos + n
        elif wire == VARINT:
            value, pos = varint(buf, pos, what)
        elif wire in (FIXED64, FIXED32):
            n = 8 if wire == FIXED64 else 4
            if pos + n > end:
                raise _data_loss(what, start, "truncated fixed%d" % (n * 8))
            value, pos = buf[pos:pos + n], pos + n
        else:
            raise _data_loss(what, start, "wire type %d" % wire)
        yield field, wire, value


def signed64(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def packed_varints(data, what):
    out, pos = [], 0
    while pos < len(data):
        n, pos = varint(data, pos, what)
        out.append(signed64(n))
    return out


# ---- TensorProto (tensor.proto): dtype = 1, tensor_shape = 2, tensor_content = 4, *_val ------------------
_NUMPY = {1: np.float32, 2: np.float64, 3: np.int32, 4: np.uint8, 5: np.int16, 6: np.int8, 9: np.int64,
          10: np.bool_, 17: np.uint16, 19: np.float16, 22: np.uint32, 23: np.uint64}
_STRING = 7
# The repeated *_val field that holds each dtype when tensor_content is absent.
_VAL_FIELD = {1: (5, "<f4"), 2: (6, "<f8"), 3: (7, None), 4: (7, None), 5: (7, None), 6: (7, None), 9: (10, None),
              10: (11, None), 17: (7, None), 19: (13, None), 22: (16, None), 23: (17, None)}


def serialize_tensor(tensor, name=None):
    """tf.io.serialize_tensor: the TensorProto of a value (numbers in ``tensor_content``,
    strings in ``string_val``), as a host string value."""
    a = _value(tensor, "serialize_tensor")
    return _tv.wrap(_tv.as_bytes_array(_events.tensor_proto(a)))


def _value(tensor, what):
    if isinstance(tensor, np.ndarray) and tensor.dtype == object:
        return tensor.view(np.ndarray)
    if _tv.is_text(tensor):
        return _tv.as_bytes_array(tensor, what)
    from ..data import _structure
    return _structure.to_array(tensor, what)


def _shape(data, what):
    dims = []
    for field, _, value in fields(data, what):
        if field == 2:  # dim { size = 1 }
            size = 0
            for f, _, v in fields(value, what):
                if f == 1:
                    size = signed64(v)
            dims.append(size)
        elif field == 3 and value:
            raise _fw._weft_error("InvalidArgument", "%s: the tensor's shape has unknown_rank" % what)
    return tuple(dims)


def parse_tensor(serialized, out_type, name=None):
    """tf.io.parse_tensor: the value of a serialized TensorProto; its dtype must be ``out_type``
    (InvalidArgumentError naming both otherwise)."""
    what = "parse_tensor"
    data = _tv.to_bytes(serialized.item() if isinstance(serialized, np.ndarray) else serialized, what)
    dtype, shape, content, vals = None, (), None, []
    for field, wire, value in fields(data, "TensorProto"):
        if field == 1:
            dtype = value
        elif field == 2:
            shape = _shape(value, what)
        elif field == 4:
            content = value
        elif field >= 5:
            vals.append((field, wire, value))
    want = _fw.as_dtype(out_type) if not isinstance(out_type, _tv.StringDType) and out_type != "string" else _tv.string
    got_name = "string" if dtype == _STRING else str(_fw.as_dtype(_NUMPY[dtype])) if dtype in _NUMPY else dtype
    if (dtype == _STRING) != (want == _tv.string) or (dtype != _STRING and got_name != str(want)):
        raise _fw._weft_error("InvalidArgument", "Type mismatch between parsed tensor (%s) and dtype (%s)" %
                              (got_name, want))
    n = int(np.prod(shape)) if shape else 1
    if dtype == _STRING:
        strings = [v for f, _, v in vals if f == 8]
        out = np.empty(n, dtype=object)
        out[:] = strings if len(strings) == n else (strings * n if len(strings) == 1 else _bad(n, len(strings)))
        return _tv.wrap(out.reshape(shape))
    np_dtype = np.dtype(_NUMPY[dtype]).newbyteorder("<")
    if content is not None:
        if len(content) != n * np_dtype.itemsize:
            _bad(n, len(content) // max(1, np_dtype.itemsize))
        out = np.frombuffer(content, np_dtype).astype(np_dtype.newbyteorder("="))
    else:
        number, fixed = _VAL_FIELD[dtype]
        items = []
        for f, wire, v in vals:
            if f != number:
                continue
            if fixed:
                items.extend(np.frombuffer(v if wire == BYTES else v, fixed).tolist())
            else:
                items.extend(packed_varints(v, what) if wire == BYTES else [signed64(v)])
        if dtype == 19:  # half_val holds the float16 bits
            items = np.asarray(items, np.uint16).view(np.float16).tolist()
        out = np.asarray(items if len(items) != 1 or n == 1 else items * n, np_dtype.newbyteorder("="))
        if out.size != n:
            _bad(n, out.size)
    return _tv.wrap(out.reshape(shape))


def _bad(n, got):
    raise _fw._weft_error("InvalidArgument", "parse_tensor: the TensorProto's shape holds %d values but it has %d"
                          % (n, got))
