"""keras.applications.densenet: DenseNet121 / 169 / 201 as Keras defines them (layer names and
parameter counts equal to Keras 3's: tests/python/data/applications_keras.json)."""
from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions  # noqa: F401

_EPS = 1.001e-5


def conv_block(x, growth_rate, name):
    """BN-ReLU-Conv1x1(4k)-BN-ReLU-Conv3x3(k), concatenated to its input."""
    x1 = layers.BatchNormalization(epsilon=_EPS, name=name + "_0_bn")(x)
    x1 = layers.Activation("relu", name=name + "_0_relu")(x1)
    x1 = layers.Conv2D(4 * growth_rate, 1, use_bias=False, name=name + "_1_conv")(x1)
    x1 = layers.BatchNormalization(epsilon=_EPS, name=name + "_1_bn")(x1)
    x1 = layers.Activation("relu", name=name + "_1_relu")(x1)
    x1 = layers.Conv2D(growth_rate, 3, padding="same", use_bias=False, name=name + "_2_conv")(x1)
    return layers.Concatenate(axis=-1, name=name + "_concat")([x, x1])


def dense_block(x, blocks, name):
    for i in range(blocks):
        x = conv_block(x, 32, name="%s_block%d" % (name, i + 1))
    return x


def transition_block(x, reduction, name):
    x = layers.BatchNormalization(epsilon=_EPS, name=name + "_bn")(x)
    x = layers.Activation("relu", name=name + "_relu")(x)
    x = layers.Conv2D(int(x.shape[-1] * reduction), 1, use_bias=False, name=name + "_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=name + "_pool")(x)


def DenseNet(blocks, include_top=True, weights="imagenet", input_tensor=None, input_shape=None,  # noqa: N802
             pooling=None, classes=1000, classifier_activation="softmax", name="densenet"):
    """Keras' DenseNet with ``blocks`` conv blocks in its four dense blocks."""
    from ..models import Model
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32, data_format=None,
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1_conv")(x)
    x = layers.BatchNormalization(epsilon=_EPS, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for i, n in enumerate(blocks):
        x = dense_block(x, n, name="conv%d" % (i + 2))
        if i < 3:
            x = transition_block(x, 0.5, name="pool%d" % (i + 2))
    x = layers.BatchNormalization(epsilon=_EPS, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights, avg_name="avg_pool",
                           max_name="max_pool")
    return imagenet_utils.load_weights(Model(img_input, x, name=name), weights)


def _model(blocks, default_name, public):
    def make(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name=default_name):
        return DenseNet(blocks, include_top, weights, input_tensor, input_shape, pooling, classes,
                        classifier_activation, name)
    make.__name__ = make.__qualname__ = public
    make.__doc__ = "Keras' %s (channels_last); weights: None or a weft weights file." % public
    return make


DenseNet121 = _model((6, 12, 24, 16), "densenet121", "DenseNet121")
DenseNet169 = _model((6, 12, 32, 32), "densenet169", "DenseNet169")
DenseNet201 = _model((6, 12, 48, 32), "densenet201", "DenseNet201")


def preprocess_input(x, data_format=None):
    """DenseNet preprocessing: [0, 1] scaling, then the ImageNet per-channel mean and std (mode "torch")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")
