"""keras.utils: label encoding, seeding, normalization, model pictures, sequence padding and
windows (_sequences.py), image and text datasets of directories (_image_dataset.py, _text_dataset.py), PyDataset / Sequence inputs (_pydataset.py), get_file from the cache
(_files.py), Progbar and custom-object scopes."""
import os
import re
import random as _py_random
import shutil
import subprocess

import numpy as np

from .. import random as _random
from .saving import register_keras_serializable, get_registered_object  # noqa: F401  (keras.utils has them too)
from ._config import CustomObjectScope, global_custom_objects as _global_custom_objects
from ._files import get_file  # noqa: F401
from ._progbar import Progbar  # noqa: F401
from ._pydataset import PyDataset, Sequence  # noqa: F401
from ._sequences import pad_sequences, split_dataset, timeseries_dataset_from_array  # noqa: F401
from ._text_dataset import text_dataset_from_directory  # noqa: F401
from ._image_dataset import array_to_img, image_dataset_from_directory, load_img, save_img  # noqa: F401

custom_object_scope = CustomObjectScope


def get_custom_objects():
    """The process-wide {name: object} dict consulted by every load (add your classes to it)."""
    return _global_custom_objects


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for integer class labels: ``y`` of shape [N] (or [N, 1]) -> [N, num_classes]
    (num_classes defaults to max(y) + 1); other shapes gain a last axis of num_classes."""
    y = np.asarray(y)
    if y.dtype.kind == "f":
        if not np.all(np.equal(np.mod(y, 1), 0)):
            raise ValueError("to_categorical: labels must be whole numbers, got %r" % (y[np.mod(y, 1) != 0][:5],))
    elif y.dtype.kind not in "iub":
        raise TypeError("to_categorical: labels must be integers, got dtype %s" % y.dtype)
    y = y.astype(np.int64)
    shape = y.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    if y.size and y.min() < 0:
        raise ValueError("to_categorical: labels must be >= 0, got %d" % y.min())
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    elif y.size and y.max() >= num_classes:
        raise ValueError("to_categorical: label %d is out of range for num_classes=%d" % (y.max(), num_classes))
    out = np.zeros((y.size, int(num_classes)), dtype=dtype)
    out[np.arange(y.size), y] = 1
    return out.reshape(tuple(shape) + (int(num_classes),))


def set_random_seed(seed):
    """Seeds Python's ``random``, numpy's global generator and weft (``weft.random.set_seed``), as
    Keras' set_random_seed does: the same seed gives the same initial weights and the same training."""
    if not isinstance(seed, int):
        raise ValueError("set_random_seed: seed must be an int, got %r" % (seed,))
    _py_random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    os.environ["PYTHONHASHSEED"] = str(seed)
    _random.set_seed(seed)


def normalize(x, axis=-1, order=2):
    """``x`` divided by its ``order``-norm along ``axis`` (zero norms left as zeros)."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


def img_to_array(img, data_format=None, dtype=None):
    """An image (a PIL image or anything numpy reads: nested lists, arrays) as a float32 numpy
    array (height, width, channels), as Keras: a 2-D image gets a channel axis; with
    data_format="channels_first" the result is (channels, height, width)."""
    data_format = data_format or "channels_last"
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("img_to_array: unknown data_format %r (channels_first or channels_last)" % (data_format,))
    x = np.asarray(img, dtype=dtype or "float32")
    if x.ndim == 2:
        x = x[None] if data_format == "channels_first" else x[..., None]
    elif x.ndim == 3:
        if data_format == "channels_first":
            x = x.transpose(2, 0, 1)
    else:
        raise ValueError("img_to_array: unsupported image shape %s (an image has 2 or 3 dimensions)" % (x.shape,))
    return x


def _output_shapes(model):
    """{layer name: output shape text} from the model's summary table (one row per layer call)."""
    shapes = {}
    for line in model._build().summary_text().splitlines():
        m = re.match(r"^ (\S+) \((\w+)\)\s+(\(.*?\))\s+\d", line)
        if m:
            shapes.setdefault(m.group(1), m.group(3))
    return shapes


def _dot_label(layer, shapes, show_shapes, show_layer_names):
    text = "%s (%s)" % (layer.name, layer.type) if show_layer_names else layer.type
    if show_shapes and layer.name in shapes:
        text += "\\noutput: %s" % shapes[layer.name]
    return text


def model_to_dot(model, show_shapes=False, show_layer_names=True, rankdir="TB"):
    """Graphviz DOT text of the model's layers and the tensors between them."""
    from . import saving
    cfg = saving.model_config(model)
    shapes = _output_shapes(model) if show_shapes else {}
    lines = ["digraph model {", '  rankdir=%s;' % rankdir, "  node [shape=record, fontname=Helvetica];"]
    if cfg["class_name"] == "Sequential" or "nodes" not in cfg["config"]:
        # A chain: the input, then each layer in order (subclassed models: the traced layers).
        cpp = model._build()
        lines.append('  n0 [label="input\\n%s"];' % (tuple(cpp.input_shape),) if show_shapes else '  n0 [label="input"];')
        for i, layer in enumerate(cpp.layers, 1):
            lines.append('  n%d [label="%s"];' % (i, _dot_label(layer, shapes, show_shapes, show_layer_names)))
            lines.append("  n%d -> n%d;" % (i - 1, i))
    else:
        by_name = {l.name: l for l in model.layers}
        for i, node in enumerate(cfg["config"]["nodes"]):
            if "input" in node:
                label = node["input"] + ("\\ninput: %s" % ((None,) + tuple(node["shape"]),) if show_shapes else "")
            else:
                label = _dot_label(by_name[node["layer"]], shapes, show_shapes, show_layer_names)
            lines.append('  n%d [label="%s"];' % (i, label))
            for j in node.get("inputs", []):
                lines.append("  n%d -> n%d;" % (j, i))
    lines.append("}")
    return "\n".join(lines) + "\n"


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, show_layer_names=True, rankdir="TB",
               expand_nested=False, dpi=200, **kwargs):
    """Draws the model's layers with graphviz's ``dot`` into ``to_file`` (.png, .svg, .pdf or .dot by its
    extension). Needs the ``dot`` program (Debian: graphviz)."""
    dot = model_to_dot(model, show_shapes=show_shapes, show_layer_names=show_layer_names, rankdir=rankdir)
    to_file = os.fspath(to_file)
    ext = os.path.splitext(to_file)[1].lstrip(".").lower() or "png"
    if ext == "dot":
        with open(to_file, "w") as f:
            f.write(dot)
        return None
    exe = shutil.which("dot")
    if exe is None:
        raise ImportError("plot_model needs graphviz's `dot` program on PATH (Debian: apt-get install graphviz)")
    subprocess.run([exe, "-T" + ext, "-Gdpi=%d" % dpi, "-o", to_file], input=dot, text=True, check=True,
                   capture_output=True)
    return None


def is_keras_tensor(x):
    """Whether ``x`` is a symbolic Keras tensor (keras.Input or a layer's output on one)."""
    from .. import _weft
    return isinstance(x, _weft.keras.KerasTensor)


def get_source_inputs(tensor):
    """The keras.Input tensors ``tensor`` was computed from, each once, in the order found."""
    from .. import _weft
    k = _weft.keras
    if not is_keras_tensor(tensor):
        raise ValueError("get_source_inputs takes a KerasTensor, got %r" % (tensor,))
    found, seen, stack = [], set(), [tensor]
    while stack:
        t = stack.pop()
        key = k._sym_id(t)
        if key in seen:
            continue
        seen.add(key)
        if k._is_input(t):
            found.append(t)
        else:
            stack.extend(reversed(k._sym_history(t)[1]))
    return found


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """The tuple a data pipeline yields: x alone (as (x,) when x is a tuple or list), (x, y) or
    (x, y, sample_weight); unpack_x_y_sample_weight undoes it."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) from x, (x,), (x, y) or (x, y, sample_weight), Nones for the missing."""
    from ._custom_step import unpack
    return unpack(data)


def serialize_keras_object(obj):
    """``obj`` as Keras config data: {"module", "class_name", "config"} for a Keras object, a name
    for a built-in function, plain JSON values as they are."""
    from . import _config
    return _config.serialize(obj, "object")


def deserialize_keras_object(config, module_objects=None, custom_objects=None, printable_module_name="object",
                             **kwargs):
    """The object of serialize_keras_object's data (classes found by their module, then in
    ``custom_objects`` / ``module_objects``, registered and custom-object-scope names)."""
    from . import _config
    objects = dict(module_objects or {}, **(custom_objects or {}))
    if isinstance(config, str) and config in objects:
        return objects[config]
    return _config.deserialize(config, objects or None)


def get_registered_name(obj):
    """The name ``obj`` (a class or function) is saved under: 'package>Name' when registered with
    register_keras_serializable, else its own __name__."""
    from . import _config
    for name, registered in _config.registered.items():
        if registered is obj:
            return name
    return getattr(obj, "__name__", type(obj).__name__)


def clear_session(free_memory=True):
    """keras.backend.clear_session: a new, empty default graph."""
    from . import backend
    backend.clear_session(free_memory)


def standardize_dtype(dtype):
    """The dtype's Keras name: None -> 'float32' (floatx), Python int -> 'int64', float ->
    'float32', bool -> 'bool', numpy and weft dtypes -> their names; ValueError otherwise."""
    from .. import framework as _fw
    if dtype is None:
        return "float32"
    dtype = {int: "int64", float: "float32", bool: "bool", str: "string", "int": "int64", "float": "float32"}.get(
        dtype, dtype)
    try:
        name = _fw.as_dtype(dtype).name
    except (TypeError, ValueError, KeyError) as e:
        raise ValueError("Invalid dtype: %r" % (dtype,)) from e
    return name


class Config:
    """Keras 3's ``keras.utils.Config``: a dict of settings read and written as keys or attributes
    (``config.learning_rate``); ``freeze()`` makes it read-only (a ValueError on changes)."""

    def __init__(self, **kwargs):
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self):
        return self._frozen

    def freeze(self):
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self):
        object.__setattr__(self, "_frozen", False)

    def _check(self):
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def __getattr__(self, name):
        if name.startswith("__") or name in ("_config", "_frozen"):  # copy / pickle probe before __init__
            raise AttributeError(name)
        try:
            return self._config[name]
        except KeyError:
            raise AttributeError("Unknown attribute: '%s'" % name) from None

    def __setattr__(self, name, value):
        self._check()
        self._config[name] = value

    def __delattr__(self, name):
        self._check()
        try:
            del self._config[name]
        except KeyError:
            raise AttributeError("Unknown attribute: '%s'" % name) from None

    def __getitem__(self, key):
        return self._config[key]

    def __setitem__(self, key, value):
        self._check()
        self._config[key] = value

    def __delitem__(self, key):
        self._check()
        del self._config[key]

    def __contains__(self, key):
        return key in self._config

    def __iter__(self):
        return iter(self._config)

    def __len__(self):
        return len(self._config)

    def get(self, key, default=None):
        return self._config.get(key, default)

    def pop(self, *args):
        self._check()
        return self._config.pop(*args)

    def update(self, *args, **kwargs):
        self._check()
        self._config.update(*args, **kwargs)

    def keys(self):
        return self._config.keys()

    def values(self):
        return self._config.values()

    def items(self):
        return self._config.items()

    def as_dict(self):
        return dict(self._config)

    def to_json(self):
        import json
        return json.dumps(self._config)

    def __repr__(self):
        return "<Config %r>" % (self._config,)


from ._progbar import (enable_interactive_logging, disable_interactive_logging,  # noqa: E402,F401
                       is_interactive_logging_enabled)


__all__ = ["Config", "is_keras_tensor", "get_source_inputs", "pack_x_y_sample_weight", "unpack_x_y_sample_weight",
           "serialize_keras_object", "deserialize_keras_object", "get_registered_name", "clear_session",
           "standardize_dtype", "enable_interactive_logging", "disable_interactive_logging",
           "is_interactive_logging_enabled", "img_to_array", "to_categorical", "set_random_seed", "normalize", "plot_model", "model_to_dot",
           "register_keras_serializable", "get_registered_object", "get_file", "Progbar", "PyDataset", "Sequence",
           "pad_sequences", "split_dataset", "timeseries_dataset_from_array", "text_dataset_from_directory",
           "image_dataset_from_directory", "load_img", "array_to_img", "save_img", "custom_object_scope",
           "CustomObjectScope", "get_custom_objects"]
