"""keras.applications.vgg16 (vgg.py)."""
from .imagenet_utils import decode_predictions  # noqa: F401
from .vgg import VGG16, preprocess_input  # noqa: F401
