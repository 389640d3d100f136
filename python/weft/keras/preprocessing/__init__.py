"""``keras.preprocessing``: Keras 2's module of input helpers (``sequence.pad_sequences``)."""
from . import sequence  # noqa: F401

__all__ = ["sequence"]
