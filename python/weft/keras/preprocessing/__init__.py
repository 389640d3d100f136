"""``keras.preprocessing``: Keras 2's module of input helpers (``sequence.pad_sequences``,
``image.load_img`` / ``img_to_array`` / ``smart_resize``, ``text_dataset_from_directory``,
``image_dataset_from_directory``)."""
from . import image, sequence  # noqa: F401
from .._image_dataset import image_dataset_from_directory  # noqa: F401
from .._text_dataset import text_dataset_from_directory  # noqa: F401

__all__ = ["image", "sequence", "image_dataset_from_directory", "text_dataset_from_directory"]
