"""What Keras' applications share (keras.applications.imagenet_utils): input shape checks,
ImageNet preprocessing, decode_predictions, and the ``weights`` argument.

weft downloads nothing and reads no HDF5 files, so ``weights="imagenet"`` is an error that says
what to do instead; ``weights=<path>`` loads a file weft's own ``save_weights`` / ``save`` wrote
(the same architecture, so the same layer and weight names)."""
import json
import os
import warnings

import numpy as np

CLASS_INDEX = None
_CLASS_INDEX_FILE = "imagenet_class_index.json"


def check_weights(weights, include_top, classes):
    """Keras' checks of ``weights`` / ``classes``, and weft's refusal of ImageNet downloads."""
    if not (weights in {"imagenet", None} or (isinstance(weights, (str, os.PathLike)) and os.path.exists(weights))):
        raise ValueError("The `weights` argument should be either `None` (random initialization), `imagenet` "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  Received "
                         "`weights=%s`" % (weights,))
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights="imagenet"` with `include_top` as true, `classes` should be 1000. '
                         "Received `classes=%s`" % (classes,))


def load_weights(model, weights):
    """``weights`` ("imagenet", None or a path) loaded into the built model."""
    if weights is None:
        return model
    if weights == "imagenet":
        raise ValueError("weights='imagenet': weft cannot download pretrained weights (it fetches nothing at run "
                         "time) and does not read Keras' HDF5 (.h5) weight files. Build with weights=None, or pass "
                         "weights=<local path of a weights file written by weft's model.save_weights or save>")
    path = os.fspath(weights)
    with open(path, "rb") as f:
        if f.read(8) == b"\x89HDF\r\n\x1a\n":
            raise NotImplementedError("weights=%r is an HDF5 (.h5) Keras weights file, which weft does not read; "
                                      "pass a file written by weft's model.save_weights or save" % path)
    model.load_weights(path)
    return model


def validate_activation(classifier_activation, weights):
    """Pretrained weights allow only a softmax or no classifier activation (Keras' rule)."""
    if weights is None:
        return
    if classifier_activation not in (None, "softmax", "linear"):
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                         "when using pretrained weights, with `include_top=True`; Received: classifier_activation=%s"
                         % (classifier_activation,))


def check_pooling(pooling):
    if pooling not in (None, "avg", "max"):
        raise ValueError("`pooling` must be None, 'avg' or 'max'. Received: pooling=%r" % (pooling,))


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten, weights=None):
    """Keras' obtain_input_shape (channels_last): the model's input shape (h, w, c) from the
    user's, the default size and the minimum size."""
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("keras.applications: weft is channels_last, got data_format=%r" % (data_format,))
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        if input_shape[-1] not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an input_shape "
                          "with %s input channels." % (input_shape[-1],), stacklevel=3)
        default_shape = (default_size, default_size, input_shape[-1])
    else:
        default_shape = (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` should be "
                             "%s.  Received: input_shape=%s" % (default_shape, input_shape))
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        if input_shape[-1] != 3 and weights == "imagenet":
            raise ValueError("The input must have 3 channels; Received `input_shape=%s`" % (input_shape,))
        if (input_shape[0] is not None and input_shape[0] < min_size) or \
                (input_shape[1] is not None and input_shape[1] < min_size):
            raise ValueError("Input size must be at least %dx%d; Received: input_shape=%s"
                             % (min_size, min_size, input_shape))
    else:
        input_shape = default_shape if require_flatten else (None, None, 3)
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. Received: "
                         "input_shape=%s" % (input_shape,))
    return input_shape


def model_input(input_tensor, input_shape):
    """The model's Input: ``input_tensor`` when it is a Keras tensor, else a new Input."""
    from ... import _weft
    from .. import layers
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not isinstance(input_tensor, _weft.keras.KerasTensor):
        raise ValueError("input_tensor is not a Keras tensor (keras.Input(...)); Received `input_tensor=%r`"
                         % (input_tensor,))
    return input_tensor


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) zero padding of a stride-2 convolution (Keras')."""
    input_size = tuple(inputs.shape[1:3])
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if input_size[0] is None else (1 - input_size[0] % 2, 1 - input_size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def top(x, include_top, pooling, classes, classifier_activation, weights, avg_name=None, max_name=None):
    """The classifier head (global average pooling + Dense "predictions") or the pooling of a
    feature extractor, as Keras' applications end."""
    from .. import layers
    check_pooling(pooling)
    if include_top:
        x = layers.GlobalAveragePooling2D(name=avg_name)(x) if avg_name else layers.GlobalAveragePooling2D()(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=avg_name)(x) if avg_name else layers.GlobalAveragePooling2D()(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=max_name)(x) if max_name else layers.GlobalMaxPooling2D()(x)
    return x


# ---- preprocessing and decoding -----------------------------------------------------------------

_MEAN_CAFFE = [103.939, 116.779, 123.68]  # BGR
_MEAN_TORCH, _STD_TORCH = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def preprocess_input(x, data_format=None, mode="caffe"):
    """Keras' ImageNet preprocessing of images [..., 3] (numpy in place when float, or a tensor):
    "tf" scales to [-1, 1]; "torch" to [0, 1] then per-channel (x - mean) / std; "caffe" RGB to
    BGR then subtracts the BGR means."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError("Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode=%s" % (mode,))
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("preprocess_input: weft is channels_last, got data_format=%r" % (data_format,))
    if isinstance(x, np.ndarray):
        if not issubclass(x.dtype.type, np.floating):
            x = x.astype("float32", copy=False)
        if mode == "tf":
            x /= 127.5
            x -= 1.0
            return x
        if mode == "torch":
            x /= 255.0
            return (x - np.asarray(_MEAN_TORCH, x.dtype)) / np.asarray(_STD_TORCH, x.dtype)
        x = x[..., ::-1]
        return x - np.asarray(_MEAN_CAFFE, x.dtype)
    from ... import _weft
    from ... import ops as _ops
    from ...framework import convert_to_tensor
    from ...manip_ops import reverse as _reverse
    # A Keras tensor (a model's Input) takes the arithmetic as op layers; other tensors as ops.
    t = x if isinstance(x, _weft.keras.KerasTensor) else _ops.cast(convert_to_tensor(x), "float32")
    if mode == "tf":
        return t / 127.5 - 1.0
    if mode == "torch":
        return (t / 255.0 - np.asarray(_MEAN_TORCH, np.float32)) / np.asarray(_STD_TORCH, np.float32)
    return _reverse(t, [-1]) - np.asarray(_MEAN_CAFFE, np.float32)


def _class_index():
    global CLASS_INDEX
    if CLASS_INDEX is None:
        from .._files import _cache_dir
        path = os.path.join(_cache_dir(None), "models", _CLASS_INDEX_FILE)
        if not os.path.exists(path):
            raise FileNotFoundError("decode_predictions needs ImageNet's class index %s at %s (Keras' cache; weft "
                                    "downloads nothing): put the file there" % (_CLASS_INDEX_FILE, path))
        with open(path) as f:
            CLASS_INDEX = json.load(f)
    return CLASS_INDEX


def decode_predictions(preds, top=5):
    """Keras' decode_predictions: for each row of ``preds`` (samples, 1000), the ``top``
    (class id, class name, score) tuples, best first, from imagenet_class_index.json in Keras'
    cache (``~/.keras/models``, or ``$KERAS_HOME/models``)."""
    preds = np.asarray(preds.numpy() if hasattr(preds, "numpy") else preds)
    if len(preds.shape) != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, "
                         "1000)). Received array with shape: %s" % (preds.shape,))
    index = _class_index()
    results = []
    for pred in preds:
        top_indices = pred.argsort()[-top:][::-1]
        result = [tuple(index[str(i)]) + (pred[i],) for i in top_indices]
        result.sort(key=lambda t: t[2], reverse=True)
        results.append(result)
    return results
