"""``weft.strings`` (tf.strings): weft's graphs carry numbers and bools, not strings, so there
are no string tensors and no string ops. Every ``tf.strings.*`` name raises NotImplementedError
naming itself and the way weft programs handle text: Python's own string functions on the host
(``str.split``, ``float(s)``, ``s.encode()``), then numbers into weft (numpy arrays, Keras'
``TextVectorization`` / ``StringLookup``, which run on the host: docs/python.md).
"""

# What each TensorFlow function is on the host, for the error message.
_HOST = {
    "split": "str.split(sep)",
    "to_number": "float(s) / int(s) (np.array(s.split(), np.float32))",
    "bytes_split": "list(s.encode())",
    "length": "len(s)",
    "lower": "str.lower()",
    "upper": "str.upper()",
    "join": "sep.join(parts)",
    "regex_replace": "re.sub",
    "substr": "s[pos:pos + len]",
    "unicode_decode": "[ord(c) for c in s]",
    "unicode_split": "list(s)",
    "as_string": "str(x)",
    "strip": "str.strip()",
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
