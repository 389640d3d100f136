"""keras.applications.vgg19 (vgg.py)."""
from .imagenet_utils import decode_predictions  # noqa: F401
from .vgg import VGG19, preprocess_input  # noqa: F401
