"""``tf.compat.v1.logging``: TF1's logging calls over Python's ``logging`` (logger "weft")."""
import logging as _logging

DEBUG, INFO, WARN, ERROR, FATAL = _logging.DEBUG, _logging.INFO, _logging.WARNING, _logging.ERROR, _logging.FATAL
_log = _logging.getLogger("weft")


def set_verbosity(v):
    _log.setLevel(v)


def get_verbosity():
    return _log.getEffectiveLevel()


def debug(msg, *args, **kwargs):
    _log.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _log.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _log.warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    _log.error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    _log.fatal(msg, *args, **kwargs)
