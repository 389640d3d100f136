"""``weft.strings`` (tf.strings) on host string values.

weft's graphs carry numbers and bools; text is a host value (_text_values.py): a numpy object array
of ``bytes``, viewed as ``weft.data.EagerValue`` so that it answers as TensorFlow's eager string
tensor does (``.numpy()`` gives ``b'...'`` or an object array of bytes, printing shows
``dtype=string``, ``== "text"`` compares with the UTF-8 bytes). Every function takes a str / bytes,
a (nested) list or numpy array of them, or such a value, and returns TensorFlow's result the same
way: strings as bytes (as TF's ``.numpy()``), numbers as numpy arrays of TF's dtype, ragged results
(``split`` of a vector) as ``weft.ragged.RaggedTensor`` of rank 2. They run in Python, on the host:
in a host dataset's ``map`` (data/_host.py), a TextVectorization ``standardize``, or at top level.

Semantics are TensorFlow's documented ones (checked against TF 2.21's output kept in
tests/python/data/text_data_reference.json): ``lower`` / ``upper`` with the default encoding ''
change ASCII letters only; ``regex_replace`` takes RE2 patterns (Python's re for the syntax they
share) and a rewrite with ``\\0`` and ``\\1``..``\\9``; ``split(sep=None)`` splits on whitespace
runs. On a graph tensor (numbers) they are NotImplementedError: weft has no string tensors.
"""
import re

import numpy as np

from . import _text_values as _tv
from ._text_values import decode as _dec, encode as _enc

_REWRITE_GROUP = re.compile(r"\\(\d)")
_len = len  # substr's argument `len` shadows the builtin (TF's name)


def _check_host(v, what):
    from .framework import Tensor
    if isinstance(v, Tensor):
        raise unsupported("tf.strings.%s of a graph tensor (%s)" % (what, v.name))


def _strings(input, what):
    """``input`` as an object array of bytes (0-d for one string)."""
    _check_host(input, what)
    if isinstance(input, np.ndarray) and input.dtype.kind not in "USO" and input.size:
        raise TypeError("tf.strings.%s takes strings, got a %s array" % (what, input.dtype))
    try:
        return _tv.as_bytes_array(input, "tf.strings.%s" % what)
    except TypeError:
        raise TypeError("tf.strings.%s takes strings (str, bytes, or lists / numpy arrays of them), got %r"
                        % (what, input)) from None


def _map(input, fn, what, dtype=object):
    """fn(bytes) for every string of ``input``: an eager value of the input's shape."""
    arr = _strings(input, what)
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, s in enumerate(arr.reshape(-1).tolist()):
        flat[i] = fn(s)
    return _tv.wrap(out if dtype is object else out.astype(dtype))


def _one(v, what):
    """A scalar string argument (a pattern, a separator) as str."""
    if isinstance(v, (str, np.str_)):
        return str(v)
    arr = _strings(v, what)
    if arr.ndim:
        raise ValueError("tf.strings.%s: expected one string, got shape %s" % (what, arr.shape))
    return _dec(arr[()])


def _encoding(encoding, what):
    if encoding not in ("", "utf-8", "UTF-8"):
        raise ValueError("tf.strings.%s: encoding must be '' (ASCII) or 'utf-8', got %r" % (what, encoding))
    return encoding != ""


def lower(input, encoding="", name=None):
    """Lower case: ASCII letters only with encoding '' (TF's default), every letter with 'utf-8'."""
    utf8 = _encoding(encoding, "lower")
    return _map(input, (lambda b: _enc(_dec(b).lower())) if utf8 else bytes.lower, "lower")


def upper(input, encoding="", name=None):
    """Upper case: ASCII letters only with encoding '' (TF's default), every letter with 'utf-8'."""
    utf8 = _encoding(encoding, "upper")
    return _map(input, (lambda b: _enc(_dec(b).upper())) if utf8 else bytes.upper, "upper")


def strip(input, name=None):
    """Leading and trailing whitespace removed (TF's ASCII whitespace)."""
    return _map(input, lambda b: b.strip(b" \t\n\r\v\f"), "strip")


def _check_unit(unit, what):
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError("tf.strings.%s: unit must be 'BYTE' or 'UTF8_CHAR', got %r" % (what, unit))


def length(input, unit="BYTE", name=None):
    """Bytes (unit 'BYTE', TF's default) or code points ('UTF8_CHAR') of each string (int32)."""
    _check_unit(unit, "length")
    return _map(input, len if unit == "BYTE" else (lambda b: len(_dec(b))), "length", np.int32)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Every match of ``pattern`` (only the first with replace_global=False) replaced by
    ``rewrite``, in which ``\\0`` is the match and ``\\1``..``\\9`` its groups (RE2's rewrite)."""
    pattern_text = _one(pattern, "regex_replace")
    try:
        compiled = re.compile(pattern_text)
    except re.error as e:
        raise ValueError("tf.strings.regex_replace: invalid pattern %r: %s" % (pattern_text, e)) from None
    # RE2's rewrite: a backslash before a digit names a group, "\\\\" is a backslash, nothing else is special.
    rewrite_text = _one(rewrite, "regex_replace")
    parts = re.split(r"(\\\\|\\\d)", rewrite_text)
    for p in parts:
        if _REWRITE_GROUP.fullmatch(p) and int(p[1]) > compiled.groups:
            raise ValueError("tf.strings.regex_replace: the rewrite %r names group %s; the pattern %r has %d"
                             % (rewrite_text, p[1], pattern_text, compiled.groups))

    def expand(m):
        out = []
        for p in parts:
            if p == "\\\\":
                out.append("\\")
            elif _REWRITE_GROUP.fullmatch(p):
                out.append(m.group(int(p[1])) or "")
            else:
                out.append(p)
        return "".join(out)

    count = 0 if replace_global else 1
    return _map(input, lambda b: _enc(compiled.sub(expand, _dec(b), count=count)), "regex_replace")


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern`` (bool)."""
    compiled = re.compile(_one(pattern, "regex_full_match"))
    return _map(input, lambda b: compiled.fullmatch(_dec(b)) is not None, "regex_full_match", bool)


# ---- splitting: a scalar gives a vector, a vector a RaggedTensor of rank 2 -----------------------
def _split_each(input, fn, what, dtype=object):
    arr = _strings(input, what)
    if arr.ndim == 0:
        return _tv.wrap(_vector(fn(arr[()]), dtype))
    if arr.ndim > 1:
        raise NotImplementedError("tf.strings.%s of a rank-%d input (a RaggedTensor of rank %d) is not supported by "
                                  "weft: weft.ragged holds rank 2; split each row" % (what, arr.ndim, arr.ndim + 1))
    from .ragged import RaggedTensor
    rows = [fn(s) for s in arr.tolist()]
    flat = [x for r in rows for x in r]
    return RaggedTensor(_vector(flat, dtype), np.concatenate([[0], np.cumsum([len(r) for r in rows])]))


def _vector(items, dtype):
    if dtype is object:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out
    return np.array(items, dtype=dtype).reshape(-1)


def split(input, sep=None, maxsplit=-1, name=None):
    """Splits each string at ``sep`` (None: at whitespace runs, with no empty strings at the ends;
    else at every ``sep``, empty fields kept), at most ``maxsplit`` times (-1: no limit). One
    string gives a vector of bytes, a vector of strings a RaggedTensor [n, None]."""
    sep_b = None if sep is None else _tv.to_bytes(_one(sep, "split"))
    if sep_b == b"":
        raise ValueError("tf.strings.split: sep must not be empty (None splits at whitespace)")
    maxsplit = int(maxsplit)

    def pieces(b):
        out = b.split(sep_b, maxsplit)
        if sep_b is None and maxsplit > 0 and len(out) == maxsplit:
            out.append(b"")  # TF's whitespace split ends with an empty field when it used up maxsplit exactly
        return out
    return _split_each(input, pieces, "split")


def bytes_split(input, name=None):
    """Each string as its single bytes (b'h', b'e', ...)."""
    return _split_each(input, lambda b: [b[i:i + 1] for i in range(len(b))], "bytes_split")


def _check_utf8(input_encoding, errors, what):
    if input_encoding not in ("UTF-8", "utf-8", "UTF8", "utf8"):
        raise NotImplementedError("tf.strings.%s: input_encoding %r is not supported by weft (UTF-8)"
                                  % (what, input_encoding))
    if errors not in ("replace", "strict", "ignore"):
        raise ValueError("tf.strings.%s: errors must be 'replace', 'strict' or 'ignore', got %r" % (what, errors))


def _code_points(b, errors, replacement_char, what):
    if errors == "strict":
        try:
            return [ord(c) for c in b.decode("utf-8")]
        except UnicodeDecodeError as e:
            from .framework import _weft_error
            raise _weft_error("InvalidArgument", "tf.strings.%s: invalid UTF-8 in %r: %s" % (what, b, e)) from None
    text = b.decode("utf-8", "replace" if errors == "replace" else "ignore")
    return [replacement_char if c == "\ufffd" and errors == "replace" else ord(c) for c in text]


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533, replace_control_characters=False,
                   name=None):
    """The code points (int32) of each string; a vector of strings gives a RaggedTensor."""
    _check_utf8(input_encoding, errors, "unicode_decode")

    def points(b):
        out = _code_points(b, errors, replacement_char, "unicode_decode")
        if replace_control_characters:
            out = [replacement_char if c < 32 or 127 <= c < 160 else c for c in out]
        return out
    return _split_each(input, points, "unicode_decode", np.int32)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):
    """Each string as its characters (UTF-8 bytes each); a vector gives a RaggedTensor."""
    _check_utf8(input_encoding, errors, "unicode_split")
    return _split_each(input, lambda b: [chr(c).encode("utf-8", "surrogatepass")
                                         for c in _code_points(b, errors, replacement_char, "unicode_split")],
                       "unicode_split")


# ---- joining --------------------------------------------------------------------------------------
def join(inputs, separator="", name=None):
    """Element-wise concatenation of the strings of ``inputs`` (a list of values of one shape,
    or scalars, which broadcast), with ``separator`` between them."""
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("tf.strings.join takes a list of string values, got %r" % (inputs,))
    sep = _tv.to_bytes(_one(separator, "join"))
    arrays = np.broadcast_arrays(*[_strings(v, "join") for v in inputs]) if inputs else []
    if not arrays:
        return _tv.wrap(_tv.as_bytes_array(b""))
    out = np.empty(arrays[0].shape, dtype=object)
    flat = out.reshape(-1)
    for i, parts in enumerate(zip(*[a.reshape(-1).tolist() for a in arrays])):
        flat[i] = sep.join(parts)
    return _tv.wrap(out)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings of ``inputs`` joined along ``axis`` (None: all of them, in row-major order)."""
    arr = _strings(inputs, "reduce_join")
    sep = _tv.to_bytes(_one(separator, "reduce_join"))
    if axis is None:
        out = _tv.as_bytes_array(sep.join(arr.reshape(-1).tolist()))
        return _tv.wrap(out.reshape((1,) * arr.ndim) if keepdims else out)
    axis = int(axis)
    if not -arr.ndim <= axis < max(arr.ndim, 1):
        raise ValueError("tf.strings.reduce_join: axis %d is out of range for rank %d" % (axis, arr.ndim))
    moved = np.moveaxis(arr, axis, -1)
    out = np.empty(moved.shape[:-1], dtype=object)
    flat = out.reshape(-1)
    for i, row in enumerate(moved.reshape(-1, moved.shape[-1]).tolist()):
        flat[i] = sep.join(row)
    return _tv.wrap(np.expand_dims(out, axis) if keepdims else out)


# ---- numbers and strings ----------------------------------------------------------------------------
def _numbers(input, what):
    _check_host(input, what)
    if hasattr(input, "numpy") and not isinstance(input, np.ndarray):
        input = input.numpy()
    arr = np.asarray(input)
    if arr.dtype.kind in "USO":
        raise TypeError("tf.strings.%s takes numbers or bools, got strings (%r)" % (what, arr.reshape(-1)[:1]))
    if arr.dtype == np.float64 and not isinstance(input, np.ndarray):
        arr = arr.astype(np.float32)  # Python floats are float32, as TF converts them
    return arr


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):
    """Each number as text, as TF's printf formats: integers ``%d``, floats ``%f`` (``%.{precision}f``,
    ``%e`` with ``scientific``, ``%g`` with ``shortest``), bools ``true`` / ``false``; ``width`` pads
    on the left with ``fill`` (a space, or '0')."""
    arr = _numbers(input, "as_string")
    if scientific and shortest:
        raise ValueError("tf.strings.as_string: cannot select both scientific and shortest notation")
    if fill not in ("", " ", "0"):
        raise ValueError("tf.strings.as_string: fill must be '', ' ' or '0' (TF's printf flags), got %r" % (fill,))
    if precision > -1 and arr.dtype.kind not in "fc":
        raise ValueError("tf.strings.as_string: precision is only for floats, got %s" % arr.dtype)
    flags = "0" if fill == "0" else ""
    w = str(width) if width > -1 else ""
    if arr.dtype.kind == "b":
        fmt = None
    elif arr.dtype.kind in "iu":
        fmt = "%" + flags + w + "d"
    else:
        p = ".%d" % precision if precision > -1 else ""
        fmt = "%" + flags + w + p + ("g" if shortest else "e" if scientific else "f")
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.reshape(-1).tolist()):
        text = ("true" if v else "false").rjust(max(width, 0)) if fmt is None else fmt % v
        flat[i] = text.encode("ascii")
    return _tv.wrap(out)


_OUT_TYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}


def to_number(input, out_type="float32", name=None):
    """Each string parsed as a number of ``out_type`` (float32, float64, int32, int64); text that
    is not one is InvalidArgumentError, as TF's StringToNumber."""
    from .framework import _weft_error
    key = str(out_type).replace("weft.", "").replace("tf.", "")
    if key not in _OUT_TYPES:
        raise TypeError("tf.strings.to_number: out_type must be float32, float64, int32 or int64, got %r" % (out_type,))
    np_type = _OUT_TYPES[key]

    def parse(b):
        text = _dec(b)
        try:
            if np_type in (np.int32, np.int64):
                v = int(text.strip())
                info = np.iinfo(np_type)
                if not info.min <= v <= info.max:
                    raise ValueError
                return v
            return float(text.strip())
        except ValueError:
            raise _weft_error("InvalidArgument", "StringToNumberOp could not correctly convert string: %s" % text) \
                from None
    return _map(input, parse, "to_number", np_type)


def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TF's argument name
    """``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative: from the end);
    a ``pos`` outside the string is InvalidArgumentError, a ``len`` past its end stops there.
    ``pos`` and ``len`` are numbers or arrays of the input's shape."""
    from .framework import _weft_error
    _check_unit(unit, "substr")
    arr = _strings(input, "substr")
    pos_a, len_a = (np.broadcast_to(np.asarray(v, np.int64), arr.shape) for v in (pos, len))
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (b, p, n) in enumerate(zip(arr.reshape(-1).tolist(), pos_a.reshape(-1).tolist(),
                                      len_a.reshape(-1).tolist())):
        s = b if unit == "BYTE" else _dec(b)
        size = _len(s)
        start = p + size if p < 0 else p
        if not 0 <= start <= size:
            raise _weft_error("InvalidArgument", "pos %d out of range for string b'%s' at index %d"
                              % (p, _dec(b), i))
        piece = s[start:start + max(n, 0)]
        flat[i] = piece if unit == "BYTE" else _enc(piece)
    return _tv.wrap(out)



def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001 - tf.strings.format
    """``template`` with each ``placeholder`` replaced by the next of ``inputs`` (one value or a
    list of them), printed as tf.print prints tensors (``summarize`` elements at each end)."""
    from .logging_ops import format_array
    values = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    pieces = _one(template, "format").split(placeholder)
    if _len(pieces) - 1 != _len(values):
        raise ValueError("tf.strings.format: %d placeholders (%r) in the template for %d inputs"
                         % (_len(pieces) - 1, placeholder, _len(values)))
    out = [pieces[0]]
    for v, rest in zip(values, pieces[1:]):
        out.append(_formatted(v, summarize, format_array) + rest)
    return _tv.wrap(_tv.as_bytes_array("".join(out)))


def _formatted(v, summarize, format_array):
    if _tv.is_text(v):
        arr = _tv.as_bytes_array(v)
        quoted = np.vectorize(lambda b: '"%s"' % _dec(b), otypes=[object])(arr) if arr.size else arr
        return format_array(quoted, summarize) if arr.ndim else quoted[()]
    from .framework import Tensor
    if isinstance(v, Tensor):
        from ._values import _eager_value
        value = _eager_value(v)
        if value is None:
            raise unsupported("tf.strings.format of a graph tensor (%s) that is not computed from constants" % v.name)
        v = value
    return format_array(np.asarray(v), summarize)


def unsupported(name):
    """The error for TensorFlow's string function or value ``name``."""
    return NotImplementedError(
        "%s is not supported by weft: weft's graphs carry numbers and bools, not strings. Text is a host value "
        "(tf.strings functions, host datasets of strings, TextVectorization / StringLookup on the host turn it "
        "into numbers)" % (name if "." in name else "tf.strings." + name))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(name)


__all__ = ["lower", "upper", "strip", "length", "regex_replace", "regex_full_match", "split", "bytes_split",
           "unicode_decode", "unicode_split", "join", "reduce_join", "as_string", "to_number", "substr", "format"]
