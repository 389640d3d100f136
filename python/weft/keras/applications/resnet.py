"""keras.applications.resnet (and resnet50, resnet_v2): ResNet50 / 101 / 152 and their V2
(pre-activation) forms as Keras defines them (layer names and parameter counts equal to Keras 3's:
tests/python/data/applications_keras.json)."""
from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions  # noqa: F401

_EPS = 1.001e-5


def _bn(name):
    return layers.BatchNormalization(epsilon=_EPS, name=name)


def ResNet(stack_fn, preact, use_bias, include_top=True, weights="imagenet", input_tensor=None,  # noqa: N802
           input_shape=None, pooling=None, classes=1000, classifier_activation="softmax", name="resnet",
           weights_name=None):
    """Keras' ResNet skeleton: stem, ``stack_fn``'s residual stacks, (post-activation,) head."""
    from ..models import Model
    imagenet_utils.check_weights(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32, data_format=None,
                                                    require_flatten=include_top, weights=weights)
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(img_input)
    x = layers.Conv2D(64, 7, strides=2, use_bias=use_bias, name="conv1_conv")(x)
    if not preact:
        x = _bn("conv1_bn")(x)
        x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    x = stack_fn(x)
    if preact:
        x = _bn("post_bn")(x)
        x = layers.Activation("relu", name="post_relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights, avg_name="avg_pool",
                           max_name="max_pool")
    return imagenet_utils.load_weights(Model(img_input, x, name=name), weights)


def residual_block_v1(x, filters, kernel_size=3, stride=1, conv_shortcut=True, name=None):
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = _bn(name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = _bn(name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, kernel_size, padding="same", name=name + "_2_conv")(x)
    x = _bn(name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = _bn(name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def stack_residual_blocks_v1(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v1(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = residual_block_v1(x, filters, conv_shortcut=False, name="%s_block%d" % (name, i))
    return x


def residual_block_v2(x, filters, kernel_size=3, stride=1, conv_shortcut=False, name=None):
    preact = _bn(name + "_preact_bn")(x)
    preact = layers.Activation("relu", name=name + "_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=name + "_1_conv")(preact)
    x = _bn(name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = layers.Conv2D(filters, kernel_size, strides=stride, use_bias=False, name=name + "_2_conv")(x)
    x = _bn(name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return layers.Add(name=name + "_out")([shortcut, x])


def stack_residual_blocks_v2(x, filters, blocks, stride1=2, name=None):
    x = residual_block_v2(x, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = residual_block_v2(x, filters, name="%s_block%d" % (name, i))
    return residual_block_v2(x, filters, stride=stride1, name="%s_block%d" % (name, blocks))


def _v1(blocks):
    def stack_fn(x):
        x = stack_residual_blocks_v1(x, 64, blocks[0], stride1=1, name="conv2")
        x = stack_residual_blocks_v1(x, 128, blocks[1], name="conv3")
        x = stack_residual_blocks_v1(x, 256, blocks[2], name="conv4")
        return stack_residual_blocks_v1(x, 512, blocks[3], name="conv5")
    return stack_fn


def _v2(blocks):
    def stack_fn(x):
        x = stack_residual_blocks_v2(x, 64, blocks[0], name="conv2")
        x = stack_residual_blocks_v2(x, 128, blocks[1], name="conv3")
        x = stack_residual_blocks_v2(x, 256, blocks[2], name="conv4")
        return stack_residual_blocks_v2(x, 512, blocks[3], stride1=1, name="conv5")
    return stack_fn


def _model(blocks, preact, default_name):
    def make(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax", name=default_name):
        return ResNet(_v2(blocks) if preact else _v1(blocks), preact, True, include_top=include_top,
                      weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                      classes=classes, classifier_activation=classifier_activation, name=name,
                      weights_name=default_name)
    make.__name__ = make.__qualname__ = {"resnet50": "ResNet50", "resnet101": "ResNet101", "resnet152": "ResNet152",
                                         "resnet50v2": "ResNet50V2", "resnet101v2": "ResNet101V2",
                                         "resnet152v2": "ResNet152V2"}[default_name]
    make.__doc__ = "Keras' %s (channels_last); weights: None or a weft weights file." % make.__name__
    return make


ResNet50 = _model((3, 4, 6, 3), False, "resnet50")
ResNet101 = _model((3, 4, 23, 3), False, "resnet101")
ResNet152 = _model((3, 8, 36, 3), False, "resnet152")
ResNet50V2 = _model((3, 4, 6, 3), True, "resnet50v2")
ResNet101V2 = _model((3, 4, 23, 3), True, "resnet101v2")
ResNet152V2 = _model((3, 8, 36, 3), True, "resnet152v2")


def preprocess_input(x, data_format=None):
    """ResNet (V1) preprocessing: RGB to BGR, then the ImageNet BGR means subtracted (mode "caffe")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")
