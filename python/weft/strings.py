"""``weft.strings`` (tf.strings). weft's graphs and datasets carry numbers and bools, not strings:
there are no string tensors and no string ops.

- The functions text preprocessing applies to one string run on the host: ``lower``, ``upper``,
  ``strip``, ``length``, ``regex_replace``, ``regex_full_match`` take a Python str or bytes, or a
  list / numpy array of them, and return the same kind (str results; arrays keep their shape).
  They exist for a TextVectorization ``standardize`` function written for TensorFlow
  (``tf.strings.regex_replace(tf.strings.lower(x), "<br />", " ")``, keras.io's text
  classification), which TextVectorization calls on each text. Semantics are TensorFlow's
  documented ones: ``lower`` / ``upper`` with the default encoding '' change ASCII letters only
  (with "utf-8", every letter); ``regex_replace`` takes RE2 patterns (Python's re for the syntax
  they share) and a rewrite with ``\\0`` (the whole match) and ``\\1``..``\\9``.
- Every other ``tf.strings.*`` name (``split``, ``join``, ``to_number``, whose results TF gives
  as tensors of bytes or ragged tensors) raises NotImplementedError naming itself and the way weft
  programs handle text: Python's own string functions on the host, then numbers into weft.
"""
import re

import numpy as np

_REWRITE_GROUP = re.compile(r"\\(\d)")


def _text(v, what):
    if isinstance(v, bytes):
        return v.decode("utf-8")
    if isinstance(v, (str, np.str_)):
        return str(v)
    from .framework import Tensor
    if isinstance(v, Tensor):
        raise unsupported("tf.strings.%s of a tensor (%s)" % (what, v.name))
    raise TypeError("tf.strings.%s takes strings (str, bytes, or lists / numpy arrays of them), got %r" % (what, v))


def _each(input, fn, what):
    """fn applied to every string of ``input`` (one string, or a nested list / array of them)."""
    if isinstance(input, (str, bytes, np.str_, np.bytes_)):
        return fn(_text(input, what))
    if isinstance(input, (list, tuple)):
        return [_each(v, fn, what) for v in input]
    if isinstance(input, np.ndarray):
        out = [fn(_text(v, what)) for v in input.reshape(-1).tolist()]
        return np.array(out, dtype=object).reshape(input.shape)
    return fn(_text(input, what))


def _ascii_lower(s):
    return s.translate(_LOWER)


_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _encoding(encoding, what):
    if encoding not in ("", "utf-8", "UTF-8"):
        raise ValueError("tf.strings.%s: encoding must be '' (ASCII) or 'utf-8', got %r" % (what, encoding))
    return encoding != ""


def lower(input, encoding="", name=None):
    """Lower case: ASCII letters only with encoding '' (TF's default), every letter with 'utf-8'."""
    utf8 = _encoding(encoding, "lower")
    return _each(input, str.lower if utf8 else _ascii_lower, "lower")


def upper(input, encoding="", name=None):
    """Upper case: ASCII letters only with encoding '' (TF's default), every letter with 'utf-8'."""
    utf8 = _encoding(encoding, "upper")
    return _each(input, str.upper if utf8 else (lambda s: s.translate(_UPPER)), "upper")


def strip(input, name=None):
    """Leading and trailing whitespace removed (TF's ASCII whitespace)."""
    return _each(input, lambda s: s.strip(" \t\n\r\v\f"), "strip")


def length(input, unit="BYTE", name=None):
    """Bytes (unit 'BYTE', TF's default) or code points ('UTF8_CHAR') of each string."""
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise ValueError("tf.strings.length: unit must be 'BYTE' or 'UTF8_CHAR', got %r" % (unit,))
    count = (lambda s: len(s.encode("utf-8"))) if unit == "BYTE" else len
    out = _each(input, count, "length")
    return out.astype(np.int32) if isinstance(out, np.ndarray) else out


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Every match of ``pattern`` (only the first with replace_global=False) replaced by
    ``rewrite``, in which ``\\0`` is the match and ``\\1``..``\\9`` its groups (RE2's rewrite)."""
    try:
        compiled = re.compile(_text(pattern, "regex_replace"))
    except re.error as e:
        raise ValueError("tf.strings.regex_replace: invalid pattern %r: %s" % (pattern, e)) from None
    # RE2's rewrite: a backslash before a digit names a group, "\\\\" is a backslash, nothing else is special.
    parts = re.split(r"(\\\\|\\\d)", _text(rewrite, "regex_replace"))

    def expand(m):
        out = []
        for p in parts:
            if p == "\\\\":
                out.append("\\")
            elif _REWRITE_GROUP.fullmatch(p):
                k = int(p[1])
                if k > compiled.groups:
                    raise ValueError("tf.strings.regex_replace: the rewrite %r names group %d; the pattern %r has %d"
                                     % (rewrite, k, pattern, compiled.groups))
                out.append(m.group(k) or "")
            else:
                out.append(p)
        return "".join(out)

    count = 0 if replace_global else 1
    return _each(input, lambda s: compiled.sub(expand, s, count=count), "regex_replace")


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern``."""
    compiled = re.compile(_text(pattern, "regex_full_match"))
    out = _each(input, lambda s: compiled.fullmatch(s) is not None, "regex_full_match")
    return out.astype(bool) if isinstance(out, np.ndarray) else out


# What each TensorFlow function not provided above is on the host, for the error message.
_HOST = {
    "split": "str.split(sep)",
    "to_number": "float(s) / int(s) (np.array(s.split(), np.float32))",
    "bytes_split": "list(s.encode())",
    "join": "sep.join(parts)",
    "substr": "s[pos:pos + len]",
    "unicode_decode": "[ord(c) for c in s]",
    "unicode_split": "list(s)",
    "as_string": "str(x)",
    "reduce_join": "''.join(parts)",
    "to_hash_bucket_fast": "keras.layers.Hashing on the host",
}


def unsupported(name):
    """The error for TensorFlow's string function or value ``name``."""
    host = _HOST.get(name.rsplit(".", 1)[-1])
    return NotImplementedError(
        "%s is not supported by weft: weft's graphs carry numbers and bools, not strings. Process text on the host "
        "in Python%s and give weft numbers (keras.layers.TextVectorization / StringLookup turn text into ids)"
        % (name if "." in name else "tf.strings." + name, " (%s)" % host if host else ""))


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise unsupported(name)


__all__ = ["lower", "upper", "strip", "length", "regex_replace", "regex_full_match"]
