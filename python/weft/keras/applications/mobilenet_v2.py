"""keras.applications.mobilenet_v2: MobileNetV2 as Keras defines it (layer names, shapes and
parameter counts equal to Keras 3's: tests/python/data/applications_keras.json)."""
from .. import layers
from . import imagenet_utils
from .imagenet_utils import decode_predictions  # noqa: F401


def _make_divisible(v, divisor, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:  # rounding down must not lose more than 10%
        new_v += divisor
    return new_v


def _bn(name):
    return layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    in_channels = inputs.shape[-1]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = "block_%d_" % block_id
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=prefix + "expand")(x)
        x = _bn(prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=prefix + "depthwise")(x)
    x = _bn(prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=prefix + "project")(x)
    x = _bn(prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


# (filters, stride, expansion) of blocks 0..16
_BLOCKS = [(16, 1, 1), (24, 2, 6), (24, 1, 6), (32, 2, 6), (32, 1, 6), (32, 1, 6), (64, 2, 6), (64, 1, 6),
           (64, 1, 6), (64, 1, 6), (96, 1, 6), (96, 1, 6), (96, 1, 6), (160, 2, 6), (160, 1, 6), (160, 1, 6),
           (320, 1, 6)]


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None,  # noqa: N802
                pooling=None, classes=1000, classifier_activation="softmax", name=None):
    """Keras' MobileNetV2 (channels_last). ``weights``: None or a weft weights file
    (imagenet_utils: "imagenet" cannot be fetched here)."""
    from ..models import Model
    imagenet_utils.check_weights(weights, include_top, classes)
    if input_shape is None and input_tensor is not None:
        rows, cols = input_tensor.shape[1], input_tensor.shape[2]
        default_size = rows if rows == cols and rows in (96, 128, 160, 192, 224) else 224
    elif input_shape is None:
        default_size = 224
    else:
        rows, cols = input_shape[0], input_shape[1]
        default_size = rows if rows == cols and rows in (96, 128, 160, 192, 224) else 224
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=None, require_flatten=include_top, weights=weights)
    rows = input_shape[0]
    if weights == "imagenet" and alpha not in (0.35, 0.50, 0.75, 1.0, 1.3, 1.4):
        raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, `1.0`, "
                         "`1.3` or `1.4` only; Received `alpha=%s`" % (alpha,))
    img_input = imagenet_utils.model_input(input_tensor, input_shape)
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(img_input)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    for block_id, (filters, stride, expansion) in enumerate(_BLOCKS):
        x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride, expansion=expansion,
                                block_id=block_id)
    last_block_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_block_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.BatchNormalization(epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.top(x, include_top, pooling, classes, classifier_activation, weights)
    model = Model(img_input, x, name=name or "mobilenetv2_%0.2f_%s" % (alpha, rows))
    return imagenet_utils.load_weights(model, weights)


def preprocess_input(x, data_format=None):
    """Scales pixels from [0, 255] to [-1, 1] (mode "tf")."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")
