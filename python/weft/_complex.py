"""Complex values for ``tf.signal``: weft has no complex dtype (its kernels are real), so a complex
tensor is a pair of real tensors of one shape, ``ComplexTensor(real, imag)``, with TF's names for
what programs do with one: ``tf.abs(c)`` (the magnitude), ``tf.math.real`` / ``imag`` / ``conj`` /
``angle``,
``tf.complex(real, imag)``, ``+ - *`` (with complex or real operands), ``c.numpy()`` (a numpy
complex array), ``c.dtype`` (``weft.complex64`` / ``complex128``: markers, not graph dtypes)::

    spec = tf.signal.stft(wave, frame_length=255, frame_step=128)   # a ComplexTensor
    mag = tf.abs(spec)                                               # a float32 weft tensor

Gradients flow through both parts (they are ordinary graph tensors); the magnitude's gradient at 0
is NaN (sqrt at 0), where TF gives 0.
"""
import numpy as np

from . import framework as _fw

__all__ = ["ComplexTensor", "ComplexDType", "complex64", "complex128", "complex", "real", "imag", "conj", "angle"]


class ComplexDType:
    """``weft.complex64`` / ``complex128``: the dtype a ComplexTensor reports (real parts float32 /
    float64). Not accepted where a graph dtype is expected (cast, placeholder, Variable)."""

    is_complex, is_floating, is_integer = True, False, False

    def __init__(self, name, real_dtype):
        self.name, self.real_dtype = name, real_dtype

    def __repr__(self):
        return "tf.%s" % self.name


complex64 = ComplexDType("complex64", _fw.float32)
complex128 = ComplexDType("complex128", _fw.float64)


def _tf():
    return _fw.api()


class ComplexTensor:
    """A complex tensor as two real weft tensors of the same shape and dtype."""

    def __init__(self, real, imag):
        self._re = _fw.convert_to_tensor(real)
        self._im = _fw.convert_to_tensor(imag, self._re.dtype)
        if self._re.dtype not in (_fw.float32, _fw.float64):
            raise TypeError("ComplexTensor: the parts must be float32 or float64, got %s" % self._re.dtype.name)

    real = property(lambda self: self._re)
    imag = property(lambda self: self._im)
    shape = property(lambda self: self._re.shape)
    ndim = property(lambda self: self._re.ndim)
    dtype = property(lambda self: complex64 if self._re.dtype == _fw.float32 else complex128)

    def numpy(self):
        return np.asarray(self._re.numpy()) + 1j * np.asarray(self._im.numpy())

    def __array__(self, dtype=None, copy=None):
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self):
        return "<weft.ComplexTensor shape=%s dtype=%s>" % (self.shape, self.dtype.name)

    def __abs__(self):
        return _tf().sqrt(self._re * self._re + self._im * self._im)

    def __weft_unary__(self, name):
        """The elementwise functions of weft.ops on a complex value (ops._unary)."""
        if name == "abs":
            return abs(self)
        if name == "negative":
            return -self
        if name in ("identity", "stop_gradient", "zeros_like", "ones_like"):
            f = getattr(_tf(), name)
            return ComplexTensor(f(self._re), _tf().zeros_like(self._im) if name == "ones_like" else f(self._im))
        raise TypeError("tf.%s of a complex value: weft has no complex kernels (docs/python.md, tf.signal); "
                        "use tf.abs, tf.math.real / imag" % name)

    def __neg__(self):
        return ComplexTensor(-self._re, -self._im)

    def __add__(self, other):
        o = _as_complex(other, self)
        return ComplexTensor(self._re + o._re, self._im + o._im)

    __radd__ = __add__

    def __sub__(self, other):
        o = _as_complex(other, self)
        return ComplexTensor(self._re - o._re, self._im - o._im)

    def __rsub__(self, other):
        return _as_complex(other, self) - self

    def __mul__(self, other):
        if not isinstance(other, ComplexTensor) and not isinstance(other, (complex, np.complexfloating)):
            return ComplexTensor(self._re * other, self._im * other)
        o = _as_complex(other, self)
        return ComplexTensor(self._re * o._re - self._im * o._im, self._re * o._im + self._im * o._re)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, (ComplexTensor, complex, np.complexfloating)):
            o = _as_complex(other, self)
            d = o._re * o._re + o._im * o._im
            return ComplexTensor((self._re * o._re + self._im * o._im) / d, (self._im * o._re - self._re * o._im) / d)
        return ComplexTensor(self._re / other, self._im / other)


def _as_complex(x, like):
    if isinstance(x, ComplexTensor):
        return x
    if isinstance(x, (complex, np.complexfloating)) or (isinstance(x, np.ndarray) and x.dtype.kind == "c"):
        arr = np.asarray(x)
        dt = like._re.dtype
        return ComplexTensor(_fw.constant(arr.real, dt), _fw.constant(arr.imag, dt))
    re = _fw.convert_to_tensor(x, like._re.dtype) if not isinstance(x, _fw.Tensor) else x
    return ComplexTensor(re, _tf().zeros_like(re))


def complex(real, imag, name=None):  # noqa: A001 - tf.complex
    """``tf.complex(real, imag)``: a ComplexTensor from two float tensors of one dtype."""
    return ComplexTensor(real, imag)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """``tf.math.real``: the real part (a real input is returned as it is)."""
    return input.real if isinstance(input, ComplexTensor) else _fw.convert_to_tensor(input)


def imag(input, name=None):  # noqa: A002
    """``tf.math.imag``: the imaginary part (zeros for a real input)."""
    return input.imag if isinstance(input, ComplexTensor) else _tf().zeros_like(_fw.convert_to_tensor(input))


def conj(x, name=None):
    """``tf.math.conj``: the complex conjugate (a real input is returned as it is)."""
    return ComplexTensor(x.real, -x.imag) if isinstance(x, ComplexTensor) else _fw.convert_to_tensor(x)


def angle(input, name=None):  # noqa: A002
    """``tf.math.angle``: atan2(imag, real) of a complex value; of a real tensor, pi where it is
    negative and 0 elsewhere (TF's)."""
    tf = _tf()
    if isinstance(input, ComplexTensor):
        return tf.math.atan2(input.imag, input.real)
    x = _fw.convert_to_tensor(input)
    return tf.where(x < 0, tf.ones_like(x) * np.pi, tf.zeros_like(x))
