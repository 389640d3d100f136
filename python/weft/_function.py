"""``weft.function`` (tf.function): weft always builds graphs, so a decorated function runs as
written, adding its ops to the default graph at each call (with weft tensors, numpy arrays or
numbers as arguments); its results are graph tensors, whose ``.numpy()`` works when they come
from constants (_values.py). TensorFlow's tracing options are accepted; ``input_signature`` is
checked against the arguments' ranks and dtypes when they are weft tensors.
"""
import functools

from . import framework as _fw


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_compile=None, experimental_relax_shapes=None, **kwargs):
    """Decorator (``@weft.function`` or ``@weft.function(...)``) or call (``weft.function(f)``)."""
    if kwargs:
        raise TypeError("weft.function got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))

    def wrap(f):
        @functools.wraps(f)
        def call(*args, **kw):
            if input_signature is not None:
                _check_signature(f, input_signature, args)
            return f(*args, **kw)
        call.python_function = f
        call.input_signature = input_signature
        return call
    return wrap if func is None else wrap(func)


def _check_signature(f, signature, args):
    if len(args) != len(signature):
        raise TypeError("%s: input_signature has %d entries but %d arguments were given" % (
            getattr(f, "__name__", "function"), len(signature), len(args)))
    for i, (spec, arg) in enumerate(zip(signature, args)):
        if not isinstance(arg, _fw.Tensor) or getattr(spec, "shape", None) is None:
            continue
        want = tuple(spec.shape)
        have = arg.shape
        ok = have is None or (len(have) == len(want) and all(w is None or h is None or w == h
                                                             for w, h in zip(want, have)))
        if not ok or (spec.dtype is not None and _fw.as_dtype(spec.dtype) != arg.dtype):
            raise ValueError("%s: argument %d (%s %s) does not match input_signature %r" % (
                getattr(f, "__name__", "function"), i, arg.dtype, have, spec))
