"""``keras.layers.Hashing``: values to bins by TensorFlow's string fingerprint, on the host.

A value (a str / bytes, or an int, hashed as its decimal string, as Keras does) goes to bin
Fingerprint64(utf-8 bytes) mod num_bins: FarmHash's Fingerprint64 (farmhashna::Hash64), the hash of
``tf.strings.to_hash_bucket_fast``, so the bins are TensorFlow's (checked against TF 2.21:
tests/python/data/hashing_tf.json). With ``mask_value`` that value goes to bin 0 and the others to
1 + fingerprint mod (num_bins - 1). Like StringLookup it runs on the host over lists and numpy
arrays (weft's graphs carry no strings) and returns int64 arrays; ``salt`` (SipHash) is not supported.
"""
import numpy as np

_M = (1 << 64) - 1
_K0, _K1, _K2 = 0xc3a5c85c97cb3127, 0xb492b66fbe98f273, 0x9ae16a3b2f90404f


def _fetch64(s, i):
    return int.from_bytes(s[i:i + 8], "little")


def _fetch32(s, i):
    return int.from_bytes(s[i:i + 4], "little")


def _rot(v, shift):
    return v if shift == 0 else ((v >> shift) | (v << (64 - shift))) & _M


def _mix(v):
    return v ^ (v >> 47)


def _len16(u, v, mul):
    a = ((u ^ v) * mul) & _M
    a ^= a >> 47
    b = ((v ^ a) * mul) & _M
    b ^= b >> 47
    return (b * mul) & _M


def _len0to16(s, n):
    if n >= 8:
        mul = (_K2 + n * 2) & _M
        a = (_fetch64(s, 0) + _K2) & _M
        b = _fetch64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & _M
        d = ((_rot(a, 25) + b) * mul) & _M
        return _len16(c, d, mul)
    if n >= 4:
        mul = (_K2 + n * 2) & _M
        return _len16((n + (_fetch32(s, 0) << 3)) & _M, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xffffffff
        z = (n + (s[n - 1] << 2)) & 0xffffffff
        return (_mix(((y * _K2) ^ (z * _K0)) & _M) * _K2) & _M
    return _K2


def _len17to32(s, n):
    mul = (_K2 + n * 2) & _M
    a = (_fetch64(s, 0) * _K1) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    return _len16((_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)


def _len33to64(s, n):
    mul = (_K2 + n * 2) & _M
    a = (_fetch64(s, 0) * _K2) & _M
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & _M
    d = (_fetch64(s, n - 16) * _K2) & _M
    y = (_rot((a + b) & _M, 43) + _rot(c, 30) + d) & _M
    z = _len16(y, (a + _rot((b + _K2) & _M, 18) + c) & _M, mul)
    e = (_fetch64(s, 16) * mul) & _M
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & _M
    h = ((z + _fetch64(s, n - 24)) * mul) & _M
    return _len16((_rot((e + f) & _M, 43) + _rot(g, 30) + h) & _M, (e + _rot((f + a) & _M, 18) + g) & _M, mul)


def _weak32(s, i, a, b):
    w, x, y, z = _fetch64(s, i), _fetch64(s, i + 8), _fetch64(s, i + 16), _fetch64(s, i + 24)
    a = (a + w) & _M
    b = _rot((b + a + z) & _M, 21)
    c = a
    a = (a + x + y) & _M
    b = (b + _rot(a, 44)) & _M
    return (a + z) & _M, (b + c) & _M


def fingerprint64(data):
    """FarmHash Fingerprint64 of bytes (farmhashna::Hash64)."""
    s, n = bytes(data), len(data)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _M
    z = (_mix((y * _K2 + 113) & _M) * _K2) & _M
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _fetch64(s, 0)) & _M
    end = ((n - 1) // 64) * 64
    last64 = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * _K1) & _M
        y = (_rot((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * _K1) & _M
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, i + 40)) & _M
        z = (_rot((z + w[0]) & _M, 33) * _K1) & _M
        v = _weak32(s, i, (v[1] * _K1) & _M, (x + w[0]) & _M)
        w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = (_K1 + ((z & 0xff) << 1)) & _M
    i = last64
    w = ((w[0] + ((n - 1) & 63)) & _M, w[1])
    v = ((v[0] + w[0]) & _M, v[1])
    w = ((w[0] + v[0]) & _M, w[1])
    x = (_rot((x + y + v[0] + _fetch64(s, i + 8)) & _M, 37) * mul) & _M
    y = (_rot((y + v[1] + _fetch64(s, i + 48)) & _M, 42) * mul) & _M
    x ^= (w[1] * 9) & _M
    y = (y + v[0] * 9 + _fetch64(s, i + 40)) & _M
    z = (_rot((z + w[0]) & _M, 33) * mul) & _M
    v = _weak32(s, i, (v[1] * mul) & _M, (x + w[0]) & _M)
    w = _weak32(s, i + 32, (z + w[1]) & _M, (y + _fetch64(s, i + 16)) & _M)
    z, x = x, z
    return _len16((_len16(v[0], w[0], mul) + _mix(y) * _K0 + z) & _M, (_len16(v[1], w[1], mul) + x) & _M, mul)


def _as_bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (int, np.integer)):
        return str(int(v)).encode("ascii")
    raise TypeError("Hashing takes strings, bytes or integers, got %r" % (v,))


class Hashing:
    """keras.layers.Hashing(num_bins, mask_value=None, salt=None, output_mode="int"): see the module
    docstring. Called on a list / numpy array (any shape) of values; returns int64 bins of that shape."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if int(num_bins) < 1 or (mask_value is not None and int(num_bins) < 2):
            raise ValueError("Hashing: num_bins must be >= 1 (>= 2 with a mask_value), got %r" % (num_bins,))
        if salt is not None:
            raise NotImplementedError("Hashing: salt (TF's keyed SipHash buckets) is not supported by weft")
        if output_mode != "int" or sparse:
            raise NotImplementedError("Hashing: weft supports output_mode='int' (dense), got %r" % (output_mode,))
        self.num_bins, self.mask_value = int(num_bins), mask_value
        self.name = kwargs.get("name", "hashing")

    def _bin(self, v):
        if self.mask_value is not None and _as_bytes(v) == _as_bytes(self.mask_value):
            return 0
        if self.mask_value is not None:
            return 1 + fingerprint64(_as_bytes(v)) % (self.num_bins - 1)
        return fingerprint64(_as_bytes(v)) % self.num_bins

    def __call__(self, inputs):
        values = np.asarray(getattr(inputs, "numpy", lambda: inputs)(), dtype=object)
        return np.vectorize(self._bin, otypes=[np.int64])(values) if values.size else values.astype(np.int64)

    def get_config(self):
        return {"name": self.name, "num_bins": self.num_bins, "mask_value": self.mask_value, "salt": None,
                "output_mode": "int"}
