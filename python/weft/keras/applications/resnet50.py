"""keras.applications.resnet50: ResNet50 (resnet.py) with its preprocessing."""
from .imagenet_utils import decode_predictions  # noqa: F401
from .resnet import ResNet50, preprocess_input  # noqa: F401
