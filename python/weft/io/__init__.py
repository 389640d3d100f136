"""``weft.io``: TensorFlow's ``tf.io`` file helpers (``weft.io.gfile``)."""
from . import gfile  # noqa: F401

__all__ = ["gfile"]
