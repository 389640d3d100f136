"""String values on the host: what TensorFlow's string tensors are in weft.

weft's graphs and its C++ pipeline carry numbers and bools. Text lives on the host as numpy
arrays of dtype object whose items are Python ``bytes`` (a TensorFlow string tensor's
``.numpy()``), viewed as ``weft.data.EagerValue`` so that ``.numpy()``, ``.shape`` and printing
answer as TensorFlow's eager tensors do (``<weft.Tensor: shape=(), dtype=string, numpy=b'a b'>``).
``weft.string`` is their dtype. tf.strings (strings.py), host datasets (data/_host.py) and the
Keras text layers share these helpers."""
import numpy as np


class StringDType:
    """``weft.string`` (tf.string): the dtype of host string values and of TensorSpecs that
    describe them. Not a graph dtype: a placeholder or constant of it is refused."""

    name = "string"
    as_numpy_dtype = object
    is_floating = is_integer = is_bool = is_complex = is_quantized = False
    size = 0

    def __repr__(self):
        return "weft.string"

    def __str__(self):
        return "string"

    def __eq__(self, other):
        return other is self or (isinstance(other, str) and other in ("string", "str"))

    def __hash__(self):
        return hash("string")

    def __reduce__(self):
        return "string"


string = StringDType()


def is_text(value):
    """True for a str / bytes, a numpy array of them (or of objects that are), or a (nested)
    list / tuple whose first leaf is one: what TensorFlow would make a string tensor of."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, (str, bytes, np.str_, np.bytes_)):
        return True
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "US":
            return True
        return value.dtype == object and value.size > 0 and isinstance(value.flat[0], (str, bytes))
    return False


def to_bytes(s, what="a string"):
    """One string as bytes: str is UTF-8 encoded (TensorFlow's strings are bytes)."""
    if isinstance(s, (bytes, np.bytes_)):
        return bytes(s)
    if isinstance(s, (str, np.str_)):
        return str(s).encode("utf-8")
    raise TypeError("%s: expected a string (str or bytes), got %r" % (what, s))


def as_bytes_array(value, what="a string value"):
    """``value`` (a str / bytes, a nested list of them, a numpy array of them) as a numpy object
    array of bytes, its shape kept (a scalar gives a 0-d array)."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        arr = value
    elif isinstance(value, (str, bytes, np.str_, np.bytes_)):
        arr = np.empty((), dtype=object)
        arr[()] = value
    else:
        arr = np.array(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(arr.reshape(-1).tolist()):
        flat[i] = to_bytes(s, what)
    return out


def decode(b):
    """bytes -> str for Python's text functions; bytes that are not UTF-8 survive the round trip
    (surrogateescape), as TensorFlow's byte strings hold any bytes."""
    return b.decode("utf-8", "surrogateescape")


def encode(s):
    return s.encode("utf-8", "surrogateescape")


def wrap(arr):
    """A numpy array (object of bytes, or numbers) as an eager value with ``.numpy()``."""
    from .data.dataset import EagerValue
    return np.asarray(arr).view(EagerValue)
