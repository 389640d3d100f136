"""``keras.preprocessing``: Keras 2's module of input helpers (``sequence.pad_sequences``,
``text_dataset_from_directory``)."""
from . import sequence  # noqa: F401
from .._text_dataset import text_dataset_from_directory  # noqa: F401

__all__ = ["sequence", "text_dataset_from_directory"]
