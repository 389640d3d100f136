"""keras.applications.resnet_v2: ResNet50V2 / 101V2 / 152V2 (resnet.py) with their preprocessing."""
from . import imagenet_utils
from .imagenet_utils import decode_predictions  # noqa: F401
from .resnet import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401


def preprocess_input(x, data_format=None):
    """Scales pixels from [0, 255] to [-1, 1] (mode "tf")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")
