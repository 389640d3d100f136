"""VGG16 and VGG19 as Keras defines them (keras.applications.vgg16 / vgg19: layer names and
parameter counts equal to Keras 3's, tests/python/data/applications_keras.json)."""
from .. import layers
from . import imagenet_utils


def VGG(convs_per_block, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,  # noqa: N802
        pooling=None, classes=1000, classifier_activation="softmax", name="vgg"):
    """Five blocks of 3x3 "same" ReLU convolutions (64, 128, 256, 512, 512 filters; ``convs_per_block``
    of them) each closed by a 2x2 max pooling; the top is Flatten, fc1, fc2 (4096, ReLU) and
    predictions."""
    from ..models import Model
    imagenet_utils.check_weights(weights, include_top, classes)
    imagenet_utils.check_pooling(pooling)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32, data_format=None,
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = img_input
    for b, (filters, n) in enumerate(zip((64, 128, 256, 512, 512), convs_per_block), start=1):
        for k in range(1, n + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name="block%d_conv%d" % (b, k))(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name="block%d_pool" % b)(x)
    if include_top:
        x = layers.Flatten(name="flatten")(x)
        x = layers.Dense(4096, activation="relu", name="fc1")(x)
        x = layers.Dense(4096, activation="relu", name="fc2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    else:
        x = imagenet_utils.top(x, False, pooling, classes, classifier_activation, weights)
    return imagenet_utils.load_weights(Model(img_input, x, name=name), weights)


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,  # noqa: N802
          classes=1000, classifier_activation="softmax", name="vgg16"):
    """Keras' VGG16 (channels_last); weights: None or a weft weights file."""
    return VGG((2, 2, 3, 3, 3), include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation, name)


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,  # noqa: N802
          classes=1000, classifier_activation="softmax", name="vgg19"):
    """Keras' VGG19 (channels_last); weights: None or a weft weights file."""
    return VGG((2, 2, 4, 4, 4), include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation, name)


def preprocess_input(x, data_format=None):
    """VGG preprocessing: RGB to BGR, then the ImageNet BGR means subtracted (mode "caffe")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")
