"""weft's exceptions: one class per C++ error code (core/status.h).

Every class derives from :class:`Error` and, where one fits, from the matching builtin, so
``except ValueError`` catches a bad argument and ``except KeyError`` a missing name::

    try:
        sess.run(y, feed_dict={x: np.zeros((2, 3), np.float64)})
    except weft.errors.InvalidArgumentError as e:   # also a ValueError
        print(e.code, e)     # InvalidArgument  feed 'x:0': dtype float64 but the placeholder is float32 ...

``str(e)`` is the C++ message (the node, op, shapes and dtypes involved); ``e.code`` is the code's
name. NotFoundError is a KeyError whose ``str`` is the plain message (KeyError would quote it).
"""


# TensorFlow's numeric error codes (tf.errors.OK, ...), by weft's code names.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = 0, 1, 2, 3, 4, 5, 6
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = 7, 8, 9, 10, 11
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 12, 13, 14, 15, 16
_NUMBERS = {"Ok": OK, "Cancelled": CANCELLED, "Unknown": UNKNOWN, "InvalidArgument": INVALID_ARGUMENT,
            "DeadlineExceeded": DEADLINE_EXCEEDED, "NotFound": NOT_FOUND, "AlreadyExists": ALREADY_EXISTS,
            "PermissionDenied": PERMISSION_DENIED, "ResourceExhausted": RESOURCE_EXHAUSTED,
            "FailedPrecondition": FAILED_PRECONDITION, "Aborted": ABORTED, "OutOfRange": OUT_OF_RANGE,
            "Unimplemented": UNIMPLEMENTED, "Internal": INTERNAL, "Unavailable": UNAVAILABLE, "DataLoss": DATA_LOSS,
            "Unauthenticated": UNAUTHENTICATED}


class Error(Exception):
    """Base class of every weft error (``tf.errors.OpError``). ``code`` names the C++ error code,
    ``error_code`` is TensorFlow's number for it, ``message`` is its text.

    Made as weft makes them, ``Error(message[, code])``, or as TensorFlow's are,
    ``InvalidArgumentError(node_def, op, message[, error_code])`` (programs raise those themselves)."""

    code = "Unknown"

    def __init__(self, *args, **kwargs):
        if len(args) >= 3 or "node_def" in kwargs:  # TensorFlow's (node_def, op, message[, error_code])
            names = ("node_def", "op", "message", "error_code")
            given = dict(zip(names, args), **kwargs)
            message, code = given.get("message", ""), given.get("error_code")
            self.node_def, self.op = given.get("node_def"), given.get("op")
            if isinstance(code, int):
                code = next((k for k, v in _NUMBERS.items() if v == code), None)
        else:
            message = args[0] if args else kwargs.get("message", "")
            code = args[1] if len(args) > 1 else kwargs.get("code")
            self.node_def = self.op = None
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    @property
    def error_code(self):
        return _NUMBERS.get(self.code, UNKNOWN)

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.code))


OpError = Error


class CancelledError(Error):
    """The step was cancelled (Session.cancel, Ctrl-C, or another step's failure)."""
    code = "Cancelled"


class InvalidArgumentError(Error, ValueError):
    """A bad argument: wrong shape or dtype, a bad attr, shapes that do not broadcast."""
    code = "InvalidArgument"


class NotFoundError(Error, KeyError):
    """Something named does not exist: a node, a tensor, a file, a checkpoint entry."""
    code = "NotFound"

    def __str__(self):
        return self.message


class AlreadyExistsError(Error):
    """Something named exists already."""
    code = "AlreadyExists"


class FailedPreconditionError(Error, RuntimeError):
    """The system is not in the state the call needs (e.g. an uninitialized variable)."""
    code = "FailedPrecondition"


class OutOfRangeError(Error, IndexError):
    """An index or a value outside its range."""
    code = "OutOfRange"


class UnimplementedError(Error, NotImplementedError):
    """Not supported (yet)."""
    code = "Unimplemented"


class ResourceExhaustedError(Error, MemoryError):
    """Memory (or another resource) ran out."""
    code = "ResourceExhausted"


class UnavailableError(Error, ConnectionError):
    """A peer or service is not reachable."""
    code = "Unavailable"


class DeadlineExceededError(Error, TimeoutError):
    """A deadline passed before the operation completed."""
    code = "DeadlineExceeded"


class AbortedError(Error, RuntimeError):
    """The operation was aborted (e.g. a step aborted everywhere after a failure)."""
    code = "Aborted"


class DataLossError(Error, OSError):
    """Unrecoverable data loss or corruption (a damaged graph or checkpoint file)."""
    code = "DataLoss"

    def __init__(self, message="", code=None):
        Error.__init__(self, message, code)

    def __str__(self):
        return self.message


class InternalError(Error, RuntimeError):
    """An invariant of weft itself is broken: a bug."""
    code = "Internal"


class UnauthenticatedError(Error, PermissionError):
    """A peer did not prove the cluster's secret (docs/security.md)."""
    code = "Unauthenticated"


class UnknownError(Error):
    """An error of no other class."""
    code = "Unknown"


class PermissionDeniedError(Error, PermissionError):
    """The caller may not run the operation."""
    code = "PermissionDenied"


class OperatorNotAllowedInGraphError(TypeError):
    """TensorFlow's error for using a symbolic tensor as a Python bool or iterable in a graph."""


_BY_CODE = {cls.code: cls for cls in (
    UnknownError, PermissionDeniedError,
    CancelledError, InvalidArgumentError, NotFoundError, AlreadyExistsError, FailedPreconditionError,
    OutOfRangeError, UnimplementedError, ResourceExhaustedError, UnavailableError, DeadlineExceededError,
    AbortedError, DataLossError, InternalError, UnauthenticatedError)}


def error_class(code):
    """The exception class for a C++ error code name ("InvalidArgument" -> InvalidArgumentError)."""
    return _BY_CODE.get(code, Error)


_CODE_NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
               "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
               "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]
__all__ = (["Error", "OpError", "OperatorNotAllowedInGraphError", "error_class"] + _CODE_NAMES
           + sorted(cls.__name__ for cls in _BY_CODE.values()))
