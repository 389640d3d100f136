"""Layers shared between models, with Keras' meaning: one set of weights.

In Keras a layer owns its weights, so two models built from the same layer objects (an encoder
and the autoencoder it is part of, ``Sequential([model, Softmax()])``) see each other's training.
In weft each compiled model owns its variables. This module keeps them in step at the edges of
the Python API: every model that changes a layer's weights (compile's initialization when no model
had them, fit, set_weights, load_weights, load_model) becomes the layer's source, with a version;
before a model runs (fit, evaluate, predict, get_weights, save) it copies in the weights of every
layer whose source is another model with a version it has not copied yet. A copy costs one
get_weights / set_weights of those layers, and happens only after the other model changed them.
``layer.get_weights()`` / ``set_weights()`` go to the layer's source model.
"""
import itertools
import weakref

from .. import _weft

_key = _weft.keras._layer_key
_versions = itertools.count(1)
# layer key -> (weak reference to the model whose variables hold the layer's newest weights, version)
_source = {}


def _weighted(cpp):
    return [layer for layer in cpp.layers if layer.weights]


def _names(layer):
    return ["%s/%s" % (layer.name, w[0]) for w in layer.weights]


def _alive(ref):
    model = ref() if ref is not None else None
    return model if model is not None and model._cpp is not None and model._cpp.compiled else None


def claim(model, cpp, only_unclaimed=False):
    """``model`` (compiled as ``cpp``) now holds the newest weights of its layers (of those no
    live model holds yet, with ``only_unclaimed``: a fresh compile's initial values)."""
    if not only_unclaimed:
        from . import _custom_step
        _custom_step.model_changed(model)
    for key in [k for k, (ref, _) in _source.items() if ref() is None]:
        del _source[key]
    seen = model.__dict__.setdefault("_shared_seen", {})
    for layer in _weighted(cpp):
        key = _key(layer)
        if only_unclaimed and _alive(_source.get(key, (None, 0))[0]) not in (None, model):
            continue
        version = next(_versions)
        _source[key] = (weakref.ref(model), version)
        seen[key] = version


def refresh(model, cpp):
    """Copies into ``cpp`` the weights other models changed since ``model`` last took them."""
    from . import _custom_step
    _custom_step.pull(model, cpp)  # weights a custom training step gave it
    seen = model.__dict__.setdefault("_shared_seen", {})
    by_source = {}
    for layer in _weighted(cpp):
        key = _key(layer)
        ref, version = _source.get(key, (None, 0))
        src = _alive(ref)
        if src is None or src is model or seen.get(key) == version:
            continue
        by_source.setdefault(id(src), (src, []))[1].append((key, version, layer))
    for src, layers in by_source.values():
        values = dict(zip(src._cpp.layer_weight_names, src._cpp.get_weights()))
        wanted = set(cpp.layer_weight_names)
        cpp.set_variables({n: values[n] for _, _, layer in layers for n in _names(layer) if n in values and
                           n in wanted}, "the weights model '%s' trained for the layers it shares" % src.name)
        for key, version, _ in layers:
            seen[key] = version


def source(layer):
    """The compiled model holding the layer's newest weights, or None."""
    return _alive(_source.get(_key(layer), (None, 0))[0])


def _layer_get_weights(layer):
    """The layer's weights as numpy arrays (Dense: kernel, bias), as the model that last changed
    them holds them."""
    if not layer.weights:
        return []
    model = source(layer)
    if model is None:
        raise ValueError("layer '%s' has no weight values yet: weft creates them when its model compiles" % layer.name)
    from . import _custom_step
    _custom_step.pull(model, model._cpp)  # weights a custom training step gave it
    wanted = set(_names(layer))
    return [w for n, w in zip(model._cpp.layer_weight_names, model._cpp.get_weights()) if n in wanted]


def _layer_set_weights(layer, weights):
    """Sets the layer's weights (same count and shapes as get_weights); models sharing it take them."""
    from . import saving
    model = source(layer)
    if model is None:
        raise ValueError("layer '%s' has no weight values yet: weft creates them when its model compiles" % layer.name)
    from . import _custom_step
    _custom_step.pull(model, model._cpp)  # the layer's other weights stay as the last step left them
    saving.set_weights(model._cpp, weights, _names(layer), "layer '%s'.set_weights" % layer.name)
    _custom_step.model_changed(model)
    claim(model, model._cpp)


_weft.keras.Layer.get_weights = _layer_get_weights
_weft.keras.Layer.set_weights = _layer_set_weights
