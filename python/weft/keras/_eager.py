"""Keras' eager conveniences on layers, in a graph framework.

- Calling a layer on data (``layer(np_array)``, ``normalizer(x).numpy()``) runs it: weft builds,
  once per input shape, a one-layer functional model ``Model(Input(shape), layer(Input))`` and
  predicts with it. Inside an eager tape (weft/_recorder.py) the call applies that model in the
  step instead and returns a tensor (``call_in_step``). That model shares the layer with every other model using it (_shared.py), so
  the values are those of the model that last changed the layer's weights; a layer no model has
  built yet gets fresh initial weights, as Keras builds a layer at its first call.
- A built layer's weights are attributes (and ``trainable_weights`` / ``non_trainable_weights``
  lists; a model's ``weights``, ``trainable_variables``, ...), as Keras' variables are (``dense.kernel``,
  ``dense.bias``, ``batch_norm.moving_mean``, ``normalizer.mean``): a numpy array of the current
  value with ``.numpy()``, ``.name`` (``"dense/kernel"``) and ``.assign(value)``.
"""
import numpy as np

from .. import _weft
from . import _shared
from ._arrays import numeric


class EagerArray(np.ndarray):
    """What calling a model or layer on data returns (and a traced tf.function call): a numpy
    array that also answers ``.numpy()`` and prints as the eager tensor TensorFlow returns does
    (``model(x).numpy()``, ``print(model(x))``: ``tf.Tensor([[0.5]], shape=(1, 1), dtype=float32)``)."""

    def numpy(self):
        return np.asarray(self)

    def __str__(self):
        from .._values import _numpy_text
        v = np.asarray(self)
        return "tf.Tensor(%s, shape=%s, dtype=%s)" % (_numpy_text(v), v.shape, v.dtype)

    def __repr__(self):
        from .._values import _numpy_text
        v = np.asarray(self)
        return "<tf.Tensor: shape=%s, dtype=%s, numpy=%s>" % (v.shape, v.dtype, _numpy_text(v, True))


class WeightValue(EagerArray):
    """A layer weight's value (a copy): ``.numpy()``, ``.name``, ``.assign(value)`` (sets the
    layer's weight in the model that holds it, as ``layer.set_weights`` does)."""

    def assign(self, value):
        layer, index = self._layer, self._index
        weights = _shared._layer_get_weights(layer)
        weights[index] = np.asarray(value, dtype=weights[index].dtype).reshape(weights[index].shape)
        _shared._layer_set_weights(layer, weights)
        self[...] = weights[index]
        return self

    def __repr__(self):
        from .._values import _numpy_text
        v = np.asarray(self)
        return "<tf.Variable '%s:0' shape=%s dtype=%s, numpy=%s>" % (getattr(self, "name", "weight"), v.shape, v.dtype,
                                                                     _numpy_text(v, True))

    __str__ = __repr__


def _one_layer_model(layer, shape, call):
    """The model ``Model(Input(shape), layer(Input))`` that runs ``layer`` on data, once per shape."""
    from .models import Input, Model
    cache = layer.__dict__.setdefault("_eager_models", {})
    model = cache.get(shape)
    if model is None:
        inp = Input(shape=shape)
        model = Model(inp, call(layer, inp), name="%s_eager" % layer.name)
        cache[shape] = model
    return model


def call_on_data(layer, data, call):
    """``layer(data)`` for numpy data: its output as an EagerArray. ``call(layer, symbolic)`` is the
    symbolic call (Layer.__call__ on a KerasTensor)."""
    x = numeric(data, "the input of layer '%s'" % layer.name)
    if x.ndim == 0:
        raise ValueError("layer '%s' was called on a scalar; Keras layers take a batch [N, ...]" % layer.name)
    model = _one_layer_model(layer, tuple(x.shape[1:]), call)
    out = model.predict(x, batch_size=max(len(x), 1), verbose=0)
    # A call with several outputs (an RNN's return_state) gives a list, as Keras.
    return [o.view(EagerArray) for o in out] if isinstance(out, list) else out.view(EagerArray)


# Keras' image layers take one image (height, width, channels) or a batch of them; the others a batch.
_IMAGE_LAYERS = ("Resizing", "CenterCrop", "RandomFlip", "RandomRotation", "RandomZoom", "RandomTranslation",
                 "RandomCrop", "RandomContrast", "RandomBrightness")


def call_in_data_trace(layer, x, call, training):
    """``layer(x)`` on a symbolic tensor of a Dataset.map / filter trace (weft/data/_trace.py): its
    one-layer model (as above) applied in the trace graph. The pipeline's graph holds no variables,
    so the layer's weights enter as constants of their values when the function is traced (an
    adapted Normalization's mean and variance), as tf.data captures a layer's state. ``training``
    left None is the layer's own default in Keras 3: True for the random augmentation layers (they
    augment in map, one draw per image per element), False for the others (Dropout passes through,
    BatchNormalization uses its moving statistics). An image layer also takes one image (rank 3),
    an adapted layer (Normalization) one example of the shape it adapted on."""
    from .. import framework as _fw
    from .. import ops as _ops
    if x.shape is None or len(x.shape) == 0:
        raise ValueError("layer '%s' was called on %s of shape %s in a tf.data function; Keras layers take a batch "
                         "[N, ...]" % (layer.name, x.name, x.shape))
    if training is None:
        training = layer.type.startswith("Random") if hasattr(layer, "type") else False
    # One example, not a batch: an image for an image layer; an adapted layer's example shape.
    adapted = getattr(layer, "_adapt_shape", None)
    one_image = (getattr(layer, "type", None) in _IMAGE_LAYERS and len(x.shape) == 3) or (
        adapted is not None and len(x.shape) == len(tuple(adapted)))
    if one_image:
        x = _ops.expand_dims(x, 0)
    if x.dtype != _fw.float32:
        x = _ops.cast(x, "float32")  # Keras' preprocessing layers compute in float32 (their compute dtype)
    outs = _apply_with_constants(_one_layer_model(layer, tuple(x.shape[1:]), call), [x], training)
    outs = [_ops.squeeze(o, [0]) if one_image else o for o in outs]
    return outs[0] if len(outs) == 1 else list(outs)


def _apply_with_constants(model, xs, training):
    """The model's outputs on graph tensors xs in their graph, over constants of its weights."""
    from .. import framework as _fw
    if model._cpp is None and xs[0].shape is not None:
        model.build((None,) + tuple(xs[0].shape[1:]))  # a subclassed model not built yet
    cpp = model._built(None, inference=True)
    weights = [_fw.constant(np.asarray(v)) for v in cpp.get_weights()]
    return list(cpp._apply_in_graph(xs, bool(training), weights)[0])


# Layers whose training pass differs from inference without being augmentation.
_TRAINING_LAYERS = ("Dropout", "SpatialDropout1D", "SpatialDropout2D", "GaussianDropout", "AlphaDropout",
                    "GaussianNoise", "BatchNormalization")


def model_in_data_trace(model, inputs, training):
    """``model(x)`` on tensors of a Dataset.map / filter trace (a ``data_augmentation = Sequential([
    RandomFlip(...), ...])`` mapped over the data): the model applied in the trace graph over
    constants of its weights, as call_in_data_trace does for one layer. One ``training`` holds for
    the whole model, so left None it is Keras' per-layer default where the model's layers agree:
    True when it has augmentation (Random*) layers, False otherwise; a model mixing them with
    Dropout or BatchNormalization needs ``training`` given."""
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if training is None:
        types = {getattr(layer, "type", None) for layer in model.layers}
        random = sorted(t for t in types if t and t.startswith("Random"))
        other = sorted(t for t in types if t in _TRAINING_LAYERS)
        if random and other:
            raise ValueError("model '%s' called in a tf.data function without training=: its %s layers augment by "
                             "default there (Keras) and its %s layers do not; pass training=True or False" % (
                                 model.name, "/".join(random), "/".join(other)))
        training = bool(random)
    outs = _apply_with_constants(model, xs, training)
    return outs[0] if len(outs) == 1 else outs


def call_in_step(layer, data, call, training):
    """``layer(x)`` inside an eager tape (weft/_recorder.py), x data or a tensor: the output tensor of
    its one-layer model applied in the step, whose twin holds the layer's weights (the layer's
    ``trainable_variables`` are then that twin's variables, as TF's layer variables are)."""
    from .. import framework as _fw
    from . import _custom_step
    if isinstance(data, _fw.Tensor):
        x = data
        if x.shape is None or len(x.shape) == 0:
            raise ValueError("layer '%s' was called on %s of shape %s; Keras layers take a batch [N, ...]" % (
                layer.name, x.name, x.shape))
    else:
        arr = numeric(data, "the input of layer '%s'" % layer.name)
        if arr.ndim == 0:
            raise ValueError("layer '%s' was called on a scalar; Keras layers take a batch [N, ...]" % layer.name)
        x = _fw.convert_to_tensor(arr.astype(np.float32) if arr.dtype.kind in "fub" else arr)
    if x.dtype != _fw.float32 and x.dtype.is_floating:
        raise ValueError("layer '%s' takes float32 inputs, got %s (%s)" % (layer.name, x.dtype, x.name))
    model = _one_layer_model(layer, tuple(x.shape[1:]), call)
    layer.__dict__["_step_model"] = model
    return _custom_step.call(model, x, training)


def _step_variables(layer, trainable):
    """The layer's variables in an eager step where it was called by itself (call_in_step), or None."""
    from .. import _recorder
    from . import _custom_step
    model = layer.__dict__.get("_step_model")
    if model is None or not _recorder.eager_twin(model):
        return None
    return _custom_step.variables(model, "trainable" if trainable else "non_trainable")


def _weight_attribute(layer, attr):
    """Layer.__getattr__: a declared weight of a built layer by its name (``kernel``)."""
    if attr.startswith("_"):
        raise AttributeError(attr)
    if not layer._weight_specs and getattr(layer, "_adapt_shape", None) is not None:
        # An adapted preprocessing layer (Normalization) no model has built yet: build it on the
        # shape adapt saw, as Keras builds it in adapt.
        call_on_data(layer, np.zeros((1,) + tuple(layer._adapt_shape), np.float32), _call_symbolic)
    names = [w[0] for w in layer._weight_specs]
    if attr not in names:
        if not layer._weight_specs:
            raise AttributeError("'%s' layer '%s' has no attribute '%s' (its weights, if it has any, exist once the "
                                 "layer is built: call it on data or build its model)" % (layer.type, layer.name, attr))
        raise AttributeError("'%s' layer '%s' has no attribute '%s' (its weights: %s)" % (
            layer.type, layer.name, attr, ", ".join(names)))
    index = names.index(attr)
    if _shared.source(layer) is None:
        raise AttributeError("layer '%s': weight '%s' has no value yet: weft creates the values when its model "
                             "compiles (or when the layer is called on data)" % (layer.name, attr))
    value = _shared._layer_get_weights(layer)[index].view(WeightValue)
    value._layer, value._index, value.name = layer, index, "%s/%s" % (layer.name, attr)
    return value


def _weight_values(layer, trainable):
    """The layer's weights (trainable or not) as WeightValue arrays, in declaration order; in an
    eager step where the layer was called by itself, its variables there."""
    in_step = _step_variables(layer, trainable)
    if in_step is not None:
        return in_step
    return [_weight_attribute(layer, w[0]) for w in layer._weight_specs if bool(w[2]) == trainable]


_call_symbolic = _weft.keras.Layer.__call__  # the C++ call on KerasTensors (before models.py wraps it)
_weft.keras.Layer.__getattr__ = _weight_attribute
# Keras' weight lists of a built layer (values, as the attributes above); `layer.weights` stays weft's
# declaration list of (name, shape, trainable).
_weft.keras.Layer.trainable_weights = property(lambda layer: _weight_values(layer, True))
_weft.keras.Layer.non_trainable_weights = property(lambda layer: _weight_values(layer, False))
_weft.keras.Layer.trainable_variables = _weft.keras.Layer.trainable_weights
_weft.keras.Layer.non_trainable_variables = _weft.keras.Layer.non_trainable_weights
