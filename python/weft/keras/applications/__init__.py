"""``keras.applications``: Keras' image classification architectures (MobileNetV2, ResNet V1 / V2,
VGG, DenseNet), built from weft's Keras layers with Keras' layer names and parameter counts
(tests/python/test_applications.py compares them with TF 2.21's, kept as data):

    base = tf.keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights=None)
    base.trainable = False
    x = tf.keras.applications.mobilenet_v2.preprocess_input(inputs)

Each module has its ``preprocess_input`` and ``decode_predictions`` (imagenet_utils.py). weft
downloads nothing: ``weights="imagenet"`` is an error; ``weights=<path>`` loads a weft weights
file. channels_last only."""
from . import densenet, imagenet_utils, mobilenet_v2, resnet, resnet50, resnet_v2, vgg16, vgg19  # noqa: F401
from .densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .resnet import ResNet50, ResNet101, ResNet152, ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from .vgg import VGG16, VGG19  # noqa: F401

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "densenet", "MobileNetV2", "ResNet50", "ResNet101", "ResNet152", "ResNet50V2", "ResNet101V2", "ResNet152V2", "VGG16",
           "VGG19", "imagenet_utils", "mobilenet_v2", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19"]
