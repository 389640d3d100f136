"""``keras.preprocessing.image``: Keras' PIL-image helpers (keras.utils' load_img, img_to_array,
array_to_img, save_img) and smart_resize."""
from .._image_dataset import array_to_img, load_img, save_img, smart_resize  # noqa: F401
from ..utils import img_to_array  # noqa: F401

__all__ = ["load_img", "img_to_array", "array_to_img", "save_img", "smart_resize"]
