"""``weft.compat``: ``weft.compat.v1`` is TensorFlow 1's graph-mode API (``import weft.compat.v1 as tf``)."""
from . import v1  # noqa: F401
