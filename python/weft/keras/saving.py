"""Whole-model files, model configs and weights lists (Keras' saving API).

A weft model file (``model.save("m.keras")``; any name) is a zip archive of three members:

- ``metadata.json``: ``{"format": "weft.keras", "version": 1, "weft_version": ...}``
- ``config.json``: the architecture as :func:`model_config` writes it (``module``, ``class_name``,
  ``config``), plus ``compile_config`` (loss, optimizer, metrics as serialized by
  ``_config.serialize``, or null) and ``build_input_shape``.
- ``model.weft``: the variables in weft's checkpoint format (docs/checkpoint-format.md): the
  layers' weights, and with ``include_optimizer`` the optimizer's slots and the step counter.

The archive is written to a temporary file and renamed, so a crash leaves the old file or the new
one. ``load_model`` checks the zip's CRCs, the metadata, and the checkpoint's own CRCs; a damaged
or truncated file is DataLossError, a file that is not a weft model or whose weights do not fit
its architecture is InvalidArgumentError, each naming the file, and no model is returned.
"""
import inspect
import json
import os
import tempfile
import warnings
import zipfile
import zlib

import numpy as np

from .. import _weft, errors
from . import _config, _custom, _layer_call, _shared

FORMAT, VERSION = "weft.keras", 1
# The model file inside a directory written by weft.saved_model.save (or model.export).
SAVED_MODEL_FILE = "model.keras"
_MEMBERS = ("metadata.json", "config.json")


# ---- configs --------------------------------------------------------------------------------
def compile_config(optimizer, loss, metrics):
    """compile's arguments as JSON data, or None (with a warning) when one cannot be serialized."""
    try:
        return {"optimizer": _config.serialize(optimizer, "optimizer"), "loss": _config.serialize(loss, "loss"),
                "metrics": [_config.serialize(m, "metric") for m in metrics]}
    except TypeError as e:
        warnings.warn("the compile arguments cannot be saved with the model (%s): model.save will store the model "
                      "without them" % e)
        return None


def _layer_entry(layer):
    data = _config.recorded(layer)
    if data is None or data.get("config") is None:
        why = data.get("error") if data else "it was not made by a weft.keras.layers factory"
        raise TypeError("layer '%s' (%s) cannot be saved in a model config: %s" % (layer.name, layer.type, why))
    config = data["config"]
    if getattr(layer, "_adapt_shape", None) is not None and config.get("mean") is None:
        # An adapted Normalization: weft builds the layer from its statistics, so the config
        # carries them (Keras restores them from the weights; the weights are restored too).
        mean, variance = layer.get_weights()[:2]
        data = dict(data, config=dict(config, mean=mean.tolist(), variance=variance.tolist()))
    return data


def model_config(model):
    """``{"module", "class_name", "config"}`` of a Sequential, functional or subclassed model."""
    from . import models
    cls = type(model)
    if isinstance(model, models.Sequential) and cls.get_config is models.Model.get_config:
        shape = model.input_shape[1:] if model._cpp is not None else model._input_shape
        entries = [] if shape is None else [{"module": "weft.keras.layers", "class_name": "InputLayer",
                                             "config": {"shape": list(shape)}}]
        config = {"name": model.name, "layers": entries + [_layer_entry(l) for l in model._layers]}
        return {"module": "weft.keras.models", "class_name": "Sequential", "config": config}
    if model._inputs is not None and cls is models.Model:
        return {"module": "weft.keras.models", "class_name": "Functional", "config": _functional_config(model)}
    if cls.get_config is not models.Model.get_config:
        config = model.get_config()
    else:
        config = _init_config(model)
    return {"module": cls.__module__, "class_name": cls.__name__, "config": config}


def _init_config(model):
    """A subclassed model's recorded __init__ arguments, as Keras 3 records them."""
    args, kwargs = getattr(model, "_init_args", ((), {}))
    init = type(model).__init__
    init = getattr(init, "__wrapped__", init)
    try:
        bound = inspect.signature(init).bind(model, *args, **kwargs)
        config = {k: v for k, v in bound.arguments.items() if k != "self"}
        for k, p in inspect.signature(init).parameters.items():
            if p.kind == p.VAR_KEYWORD and k in config:
                config.update(config.pop(k))
        return _config.serialize(config, "%s.__init__ arguments" % type(model).__name__)
    except TypeError as e:
        raise NotImplementedError("%s cannot be saved: its __init__ arguments are not serializable (%s); override "
                                  "get_config() (and from_config)" % (type(model).__name__, e)) from e


def _functional_config(model):
    """The graph of layer calls: ``nodes`` in topological order (an input, or a layer applied to
    earlier nodes), ``layers`` by name, and the ``inputs`` / ``outputs`` node indices."""
    nodes, index, layers = [], {}, {}

    def visit(t):
        key = _weft.keras._sym_id(t)
        if key not in index:
            layer, inputs, out_index, first = _weft.keras._sym_history(t)
            if out_index > 0:  # another output of a call (an RNN's state): the call's node, once
                entry = {"output_of": visit(first), "index": out_index}
                index[key] = len(nodes)
                nodes.append(entry)
                return index[key]
            ins = [visit(i) for i in inputs]
            if layer is None:
                entry = {"input": t.name, "shape": list(t.shape)[1:]}
                if t.dtype != "float32":
                    entry["dtype"] = t.dtype
            else:
                if layer.name not in layers:
                    layers[layer.name] = _layer_entry(layer)
                entry = {"layer": layer.name, "inputs": ins}
            index[key] = len(nodes)
            nodes.append(entry)
        return index[key]

    as_list = lambda t: list(t) if isinstance(t, (list, tuple)) else [t]  # noqa: E731
    outputs = [visit(t) for t in as_list(model._outputs)]
    inputs = [visit(t) for t in as_list(model._inputs)]
    return {"name": model.name, "layers": list(layers.values()), "nodes": nodes, "inputs": inputs, "outputs": outputs}


def model_from_config(cls, config, custom_objects=None):
    """A model of class ``cls`` from ``config`` (get_config's data)."""
    from . import layers as layers_mod, models
    if "nodes" in config:  # functional
        made = {entry["config"]["name"]: _config.deserialize(entry, custom_objects) for entry in config["layers"]}
        syms, calls = [], {}
        for node in config["nodes"]:
            if "input" in node:
                syms.append(models.Input(node["shape"], name=node["input"], dtype=node.get("dtype")))
            elif "output_of" in node:
                syms.append(calls[node["output_of"]][node["index"]])
            else:
                ins = [syms[i] for i in node["inputs"]]
                # The C++ call: a list is the layer's inputs as recorded (an RNN's initial states too);
                # a Python custom layer (_custom.Layer, TFOpLambda) through its own __call__, which traces it.
                layer = made[node["layer"]]
                arg = ins[0] if len(ins) == 1 else ins
                out = layer(arg) if isinstance(layer, _custom.Layer) else _layer_call._layer_call_cpp(layer, arg)
                if isinstance(out, list):
                    calls[len(syms)] = out
                    out = out[0]
                syms.append(out)
        pick = lambda idx: syms[idx[0]] if len(idx) == 1 else [syms[i] for i in idx]  # noqa: E731
        return models.Model(pick(config["inputs"]), pick(config["outputs"]), name=config.get("name"))
    if issubclass(cls, models.Sequential) and "layers" in config:
        model = cls(name=config.get("name"))
        for entry in config["layers"]:
            if entry["class_name"] == "InputLayer":
                model.add(layers_mod.InputLayer(shape=tuple(entry["config"]["shape"])))
            else:
                model.add(_config.deserialize(entry, custom_objects))
        return model
    if cls in (models.Model, models.Sequential):
        raise ValueError("Model.from_config: this config is not a Sequential or functional model's (keys: %s)"
                         % ", ".join(sorted(config)))
    return cls(**_config.deserialize(config, custom_objects))


def model_from_json(json_string, custom_objects=None):
    """A new (uncompiled) model from ``model.to_json()``'s text."""
    return _from_data(json.loads(json_string), custom_objects)


def _from_data(data, custom_objects):
    """The model that ``{"module", "class_name", "config"}`` describes (its class's from_config)."""
    cls = _class_of(data, custom_objects)
    if _takes_custom(cls):
        return cls.from_config(data["config"], custom_objects)
    return cls.from_config(data["config"])


def _class_of(data, custom_objects):
    from . import models
    if data["class_name"] in ("Sequential", "Functional") and data.get("module") == "weft.keras.models":
        return models.Sequential if data["class_name"] == "Sequential" else models.Model
    return _config.lookup(data.get("module"), data["class_name"], custom_objects)


def register_keras_serializable(package="Custom", name=None):
    """Class decorator: load_model finds the class by its name without custom_objects."""
    def register(cls):
        _config.registered[name or cls.__name__] = cls
        return cls
    return register


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class registered (or in custom_objects / module_objects) under ``name``, or None."""
    for table in (custom_objects, _config.registered, module_objects):
        if table and name in table:
            return table[name]
    return None


# ---- weights lists ------------------------------------------------------------------------------
def set_weights(cpp, weights, names=None, who="set_weights"):
    """Keras' set_weights on the compiled C++ model (``names``: a subset of its layer weights, in
    order): count and shapes checked, then all assigned together."""
    all_names = cpp.layer_weight_names
    names = all_names if names is None else list(names)
    weights = list(weights)
    if len(weights) != len(names):
        raise ValueError("%s: expected %d weights (%s) but %d arrays were given" % (
            who, len(names), ", ".join(names), len(weights)))
    current = dict(zip(all_names, cpp.get_weights()))
    values = {}
    for name, w in zip(names, weights):
        w, have = np.asarray(w), current[name]
        if w.shape != have.shape:
            raise ValueError("%s: weight '%s' has shape %s but the array given for it has shape %s" % (
                who, name, have.shape, w.shape))
        values[name] = np.ascontiguousarray(w, dtype=have.dtype)
    cpp.set_variables(values, who)


# ---- files ------------------------------------------------------------------------------------
def save_model(model, filepath, overwrite=True, **kwargs):
    """``model.save(filepath, ...)``: the whole model in one file (see the module docstring)."""
    model.save(filepath, overwrite=overwrite, **kwargs)


def write_model(model, filepath, overwrite=True, include_optimizer=True, save_format=None, zipped=None):
    """Writes the whole model to ``filepath`` (see the module docstring)."""
    path = os.fspath(filepath)
    if os.path.isdir(path):  # a SavedModel directory (tf.saved_model.save, TF 2.x's model.save(dir))
        path = os.path.join(path, SAVED_MODEL_FILE)
    if not overwrite and os.path.exists(path):
        raise FileExistsError("model.save: '%s' exists and overwrite=False" % path)
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)  # as TF 2.x's model.save("saved_model/my_model")
    try:  # a model whose build waits for data (a Sequential) is built now when it can be
        model._built(inference=True)
    except ValueError:
        pass  # no input shape yet: the file holds the architecture only
    doc = model_config(model)
    doc["compile_config"] = model._compile_config if model._compile_args is not None else None
    doc["build_input_shape"] = list(model.input_shape) if model._cpp is not None else None
    meta = {"format": FORMAT, "version": VERSION, "weft_version": _weft_version()}
    cpp = model._cpp if model._cpp is not None and model._cpp.compiled else None
    directory = os.path.dirname(os.path.abspath(path))
    with tempfile.TemporaryDirectory(dir=directory, prefix=".weft-save-") as tmp:
        if cpp is not None:
            values = cpp.variable_values()
            if not include_optimizer:
                values = {k: values[k] for k in cpp.layer_weight_names}
            _weft.keras._save_checkpoint(os.path.join(tmp, "model.weft"), values)
        archive = os.path.join(tmp, "model.zip")
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
            z.writestr("metadata.json", json.dumps(meta, indent=1))
            z.writestr("config.json", json.dumps(doc, indent=1))
            if cpp is not None:
                z.write(os.path.join(tmp, "model.weft"), "model.weft")
        os.replace(archive, path)  # atomic: the old file or the new one


def _weft_version():
    import weft
    return getattr(weft, "__version__", "unknown")


def _open(path):
    """The archive's metadata, config and (possibly None) checkpoint bytes, all CRC-checked."""
    if not os.path.exists(path):
        raise errors.NotFoundError("load_model: no file '%s'" % path)
    _weft._check_regular_file(os.fspath(path), "load_model: model file")  # a FIFO would block the open
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()  # reads every member, checking its CRC-32
            if bad is not None:
                raise zipfile.BadZipFile("member '%s' fails its CRC check" % bad)
            names = set(z.namelist())
            missing = [m for m in _MEMBERS if m not in names]
            if missing:
                raise errors.InvalidArgumentError("load_model: '%s' is not a weft model file (no %s)" % (
                    path, ", ".join(missing)))
            meta, config = z.read("metadata.json"), z.read("config.json")
            weights = z.read("model.weft") if "model.weft" in names else None
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile, OSError, zlib.error) as e:
        if isinstance(e, errors.Error):
            raise
        raise errors.DataLossError("load_model: '%s' is truncated or corrupted, or not a weft model file (%s)" % (
            path, e)) from None
    try:
        meta, config = json.loads(meta), json.loads(config)
    except ValueError as e:
        raise errors.DataLossError("load_model: '%s' has a damaged metadata or config member (%s)" % (path, e)) from None
    for name, value in (("metadata.json", meta), ("config.json", config)):
        if not isinstance(value, dict):
            raise errors.DataLossError("load_model: '%s' has a damaged %s member (a JSON %s, not an object)" % (
                path, name, type(value).__name__))
    if meta.get("format") != FORMAT:
        raise errors.InvalidArgumentError("load_model: '%s' is not a weft model file (format %r, expected %r)" % (
            path, meta.get("format"), FORMAT))
    version = meta.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise errors.DataLossError("load_model: '%s' has a damaged metadata member (format version %r)" % (
            path, version))
    if version > VERSION:
        raise errors.FailedPreconditionError("load_model: '%s' is format version %s; this weft reads up to %d" % (
            path, meta.get("version"), VERSION))
    return config, weights


def _checkpoint_values(path, weights):
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "model.weft")
        with open(ckpt, "wb") as f:
            f.write(weights)
        try:
            return _weft.keras._load_checkpoint(ckpt)
        except errors.Error as e:
            raise type(e)("'%s' (its model.weft member): %s" % (path, str(e).replace(ckpt, "model.weft"))) from None


def load_weights_from(cpp, path):
    """model.load_weights of a weft model file: its weights (and optimizer state when it has one)."""
    _config_unused, weights = _open(path)
    if weights is None:
        raise errors.InvalidArgumentError("load_weights: '%s' holds no weights (saved before compile)" % path)
    _assign(cpp, _checkpoint_values(path, weights), path)


def _assign(cpp, values, path):
    missing = [n for n in cpp.layer_weight_names if n not in values]
    if missing:
        raise errors.InvalidArgumentError("'%s' does not hold this model's weights (missing %s; it has %s): is it "
                                          "from another model?" % (path, ", ".join(missing), ", ".join(sorted(values))))
    mine = set(cpp.variable_names)
    cpp.set_variables({k: v for k, v in values.items() if k in mine}, "model file '%s'" % path)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """The model saved by ``model.save(filepath)``: architecture, compile settings, weights and
    optimizer state (training continues where it stopped). ``custom_objects``: {name: class}
    for subclassed models and your own objects."""
    path = os.fspath(filepath)
    if os.path.isdir(path):  # written by weft.saved_model.save / model.export
        path = os.path.join(path, SAVED_MODEL_FILE)
    config, weights = _open(path)
    try:
        model = _from_data(config, custom_objects)
        if config.get("build_input_shape") is not None and model._cpp is None:
            model.build(config["build_input_shape"])
        cc = config.get("compile_config")
        if compile and cc is not None:
            model.compile(optimizer=_config.deserialize(cc["optimizer"], custom_objects),
                          loss=_config.deserialize(cc["loss"], custom_objects),
                          metrics=[_config.deserialize(m, custom_objects) for m in cc["metrics"]])
        elif weights is not None:
            model._built(inference=True)  # weft creates the variables when it compiles
    # The config came from a file: whatever it holds, a value of the wrong JSON type or shape
    # surfaces here as one of these (an int where a name belongs: AttributeError; a short list:
    # IndexError; 10**400 as a size: OverflowError) and is the file's fault, not a weft bug.
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as e:
        if isinstance(e, errors.Error):
            raise type(e)("load_model: '%s': %s" % (path, e)) from None
        raise errors.InvalidArgumentError("load_model: '%s' holds a model config weft cannot rebuild: %s: %s" % (
            path, type(e).__name__, e)) from None
    if weights is not None:
        _assign(model._built(inference=True), _checkpoint_values(path, weights), path)
        _shared.claim(model, model._cpp)
    return model


def _takes_custom(cls):
    try:
        return "custom_objects" in inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return False


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same architecture and freshly initialized weights (Keras' clone_model)."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("clone_model: input_tensors and clone_function are not supported by weft")
    return _from_data(model_config(model), None)
