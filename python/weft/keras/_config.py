"""Keras configs without per-class code: every public layer, initializer, loss, optimizer and
schedule factory is wrapped so that the object it makes remembers the arguments it was made
with. ``get_config()`` returns them (positional ones under their parameter names, plus the
object's final ``name``) and ``from_config(config)`` calls the factory with them again. A module
opts in with one line at its end: ``_config.record_module(globals(), __all__)``.

Serialized form (JSON), as Keras writes it: ``{"module": "weft.keras.layers", "class_name":
"Dense", "config": {...}}``. Argument values are JSON values, recorded objects (nested the same
way), callables by name (activations) and plain Python objects whose ``__dict__`` is their
constructor's keyword arguments (``regularizers.L2``).
"""
import functools
import importlib
import inspect
import json
import re
import weakref

from .. import _weft

# Recorded configs of objects that cannot carry attributes (C++ values such as Initializer).
_side = weakref.WeakKeyDictionary()
_side_by_id = {}  # for objects that cannot be weakly referenced either: id -> (object, config)


def _param_names(fn):
    """The parameter names of a Python or pybind11 function, in order."""
    try:
        return [p.name for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):
        pass
    # pybind11 documents its signature in the docstring: "Dense(units: int, activation: ..." (an
    # overloaded function lists each; the first is taken).
    m = re.search(r"\w+\((.*?)\)\s*->", (getattr(fn, "__doc__", None) or ""))
    if not m:
        return []
    names, depth, start, text = [], 0, 0, m.group(1) + ","
    for i, c in enumerate(text):
        if c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
        elif c == "," and depth == 0:
            part = text[start:i].strip()
            start = i + 1
            if part and part not in ("*", "/") and not part.startswith("*"):
                names.append(part.split(":")[0].split("=")[0].strip())
    return names


def _set(obj, config):
    if isinstance(obj, _weft.keras.Layer):
        _weft.keras._set_layer_config(obj, json.dumps(config))
        return
    try:
        object.__setattr__(obj, "_keras_config", config)
        return
    except (AttributeError, TypeError):
        pass
    try:
        _side[obj] = config
    except TypeError:
        _side_by_id[id(obj)] = (obj, config)


def recorded(obj):
    """The serialized form of an object made by a recorded factory, or None."""
    if isinstance(obj, _weft.keras.Layer) and hasattr(obj, "_custom_entry"):
        return obj._custom_entry()  # a custom layer: its class and get_config (_custom.py)
    if isinstance(obj, _weft.keras.Layer):
        text = _weft.keras._layer_config(obj)
        if text is None:
            return None
        config = json.loads(text)
        if obj.name and config.get("config") is not None:  # (None: not serializable, "error" says why)
            config["config"]["name"] = obj.name  # the model may have named it since
        return config
    config = getattr(obj, "_keras_config", None)
    if config is None:
        try:
            config = _side.get(obj)
        except TypeError:
            pass
    if config is None and id(obj) in _side_by_id and _side_by_id[id(obj)][0] is obj:
        config = _side_by_id[id(obj)][1]
    return config


def serialize(value, what="value"):
    """``value`` as JSON-able data (see the module docstring); TypeError names what cannot be."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [serialize(v, what) for v in value]
    if isinstance(value, dict):
        return {str(k): serialize(v, "%s[%r]" % (what, k)) for k, v in value.items()}
    if type(value).__module__ == "numpy":
        return value.tolist()
    config = recorded(value)
    if config is not None:
        return config
    if hasattr(value, "get_config") and not isinstance(value, type):
        cls = type(value)
        return {"module": cls.__module__, "class_name": cls.__name__, "config": serialize(value.get_config(), what)}
    if callable(value) and getattr(value, "__name__", None) and not isinstance(value, type):
        if value.__name__ == "<lambda>":
            raise TypeError("%s: a lambda cannot be saved by name; use a named function" % what)
        return value.__name__  # an activation or loss function: saved by name
    if hasattr(value, "__dict__") and not isinstance(value, type):
        cls = type(value)
        return {"module": cls.__module__, "class_name": cls.__name__, "config": serialize(vars(value), what)}
    raise TypeError("%s: cannot serialize %r (%s) into a Keras config" % (what, value, type(value).__name__))


def deserialize(data, custom_objects=None):
    """The inverse of :func:`serialize`: ``{"module", "class_name", "config"}`` dicts are made again."""
    if isinstance(data, list):
        return [deserialize(v, custom_objects) for v in data]
    if isinstance(data, str) and custom_objects and data in custom_objects:
        return custom_objects[data]  # a function saved by name
    if isinstance(data, str) and data in global_custom_objects:
        return global_custom_objects[data]
    if not isinstance(data, dict):
        return data
    if "class_name" not in data or "config" not in data:
        return {k: deserialize(v, custom_objects) for k, v in data.items()}
    cls = lookup(data.get("module"), data["class_name"], custom_objects)
    config = {k: deserialize(v, custom_objects) for k, v in data["config"].items()}
    if hasattr(cls, "from_config"):
        return cls.from_config(config)
    return cls(**config)


def deserialize_in(module, data, custom_objects=None):
    """deserialize for one Keras module's own ``deserialize``: Keras' data names "keras.losses"
    (or "keras.src...") as the module, which here is ``module`` (weft.keras.losses)."""
    if isinstance(data, dict) and "class_name" in data and not str(data.get("module") or "").startswith("weft"):
        data = dict(data, module=module)
    return deserialize(data, custom_objects)


# Classes registered with keras.saving.register_keras_serializable: class name -> class.
registered = {}
# keras.utils.get_custom_objects(): name -> class or function, for every load (custom_object_scope
# adds to it for the length of a with block).
global_custom_objects = {}


class CustomObjectScope:
    """``with keras.utils.custom_object_scope({'MyLayer': MyLayer}):`` -- the objects are found by
    name (load_model, model_from_json, deserialize) inside the block, as if passed as custom_objects."""

    def __init__(self, *args):
        for a in args:
            if not isinstance(a, dict):
                raise TypeError("custom_object_scope takes dicts of {name: object}, got %r" % (a,))
        self._objects = args
        self._backup = None

    def __enter__(self):
        self._backup = dict(global_custom_objects)
        for objects in self._objects:
            global_custom_objects.update(objects)
        return self

    def __exit__(self, *exc):
        global_custom_objects.clear()
        global_custom_objects.update(self._backup)
        return False


def lookup(module, class_name, custom_objects=None):
    """The factory or class ``module.class_name`` (custom_objects first, then registered classes);
    ValueError lists the known names."""
    if custom_objects and class_name in custom_objects:
        return custom_objects[class_name]
    if class_name in global_custom_objects:
        return global_custom_objects[class_name]
    if class_name in registered:
        return registered[class_name]
    mod = None
    if module:
        try:
            mod = importlib.import_module(module)
        except ImportError:
            mod = None
    found = mod
    for part in class_name.split("."):
        found = getattr(found, part, None) if found is not None else None
    if found is None:
        known = sorted(n for n in dir(mod) if n[:1].isalpha() and isinstance(getattr(mod, n), type)
                       or n[:1].isupper() and callable(getattr(mod, n))) if mod is not None else []
        raise ValueError("unknown Keras object '%s' (module %s); known: %s. Pass custom_objects={'%s': ...} for "
                         "your own classes" % (class_name, module, ", ".join(known) or "none", class_name))
    return found


def _record_call(factory, module, class_name, args, kwargs):
    names = _param_names(factory)
    config = dict(zip(names, args))
    config.update(kwargs)
    try:
        if len(args) > len(names):
            raise TypeError("the names of its positional arguments are unknown")
        data = {"module": module, "class_name": class_name, "config": serialize(config, class_name)}
    except TypeError as e:
        data = {"module": module, "class_name": class_name, "config": None, "error": str(e)}
    return data


def _wrap_factory(factory, module, class_name):
    @functools.wraps(factory)
    def make(*args, **kwargs):
        obj = factory(*args, **kwargs)
        _set(obj, _record_call(factory, module, class_name, args, kwargs))
        return obj

    make.from_config = lambda config: make(**deserialize(config))
    make._weft_factory = factory
    return make


def _wrap_class(cls, module):
    init = cls.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if type(self) is cls:  # a subclass records its own arguments
            _set(self, _record_call(init, module, cls.__name__, args, kwargs))

    cls.__init__ = __init__
    if "from_config" not in vars(cls):
        cls.from_config = classmethod(lambda c, config: c(**deserialize(config)))
    if "get_config" not in vars(cls):
        cls.get_config = get_config
    return cls


def get_config(obj):
    """The recorded constructor arguments of ``obj`` (a Keras layer, loss, optimizer ...)."""
    data = recorded(obj)
    if data is None:
        raise NotImplementedError("%r was not made by a weft.keras factory, so it has no recorded config; "
                                  "override get_config() in your class" % (obj,))
    if data.get("config") is None:
        raise TypeError("%r: its arguments cannot be serialized: %s" % (obj, data.get("error")))
    return json.loads(json.dumps(data["config"]))  # a copy the caller may change


_NOT_FACTORIES = ("get", "serialize", "deserialize", "Input", "Layer")


def record_module(namespace, names, module=None, prefix=""):
    """Wraps every factory (and plain Python class) named in ``names`` in ``namespace`` so its
    objects remember their arguments. Base classes and helpers (``get``, ``Layer``) are skipped.
    ``prefix`` goes before each name in the recorded class_name ("schedules." for a submodule)."""
    module = module or namespace.get("__name__")
    # C++ factories bound here but left out of __all__ are recorded too.
    names = list(names) + [n for n, v in list(namespace.items()) if n not in names and callable(v) and
                           not isinstance(v, type) and getattr(v, "__module__", "").startswith("weft._weft")]
    for name in names:
        obj = namespace.get(name)
        if obj is None or name in _NOT_FACTORIES or name.startswith("_"):
            continue
        if isinstance(obj, type):
            if obj.__module__.startswith(("weft._weft", "_weft")):
                continue  # a C++ class (a base or value type): nothing to wrap
            # A class with a get_config of its own or inherited (the losses, optimizers, metrics)
            # serializes through it; the others record their constructor arguments.
            if not hasattr(obj, "get_config") and not getattr(obj, "_weft_recorded", False):
                obj._weft_recorded = True
                _wrap_class(obj, module)  # records under its own __name__
        elif callable(obj) and not hasattr(obj, "_weft_factory") and not isinstance(obj, type(json)):
            namespace[name] = _wrap_factory(obj, module, prefix + name)


# Layer objects answer get_config() like Keras' (a method on the C++ class).
_weft.keras.Layer.get_config = get_config
