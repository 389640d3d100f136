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


class Error(Exception):
    """Base class of every weft error. ``code`` names the C++ error code, ``message`` is its text."""

    code = "Unknown"

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message

    def __reduce__(self):
        return (type(self), (self.message, self.code))


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


_BY_CODE = {cls.code: cls for cls in (
    CancelledError, InvalidArgumentError, NotFoundError, AlreadyExistsError, FailedPreconditionError,
    OutOfRangeError, UnimplementedError, ResourceExhaustedError, UnavailableError, DeadlineExceededError,
    AbortedError, DataLossError, InternalError, UnauthenticatedError)}


def error_class(code):
    """The exception class for a C++ error code name ("InvalidArgument" -> InvalidArgumentError)."""
    return _BY_CODE.get(code, Error)


__all__ = ["Error", "error_class"] + sorted(cls.__name__ for cls in _BY_CODE.values())
