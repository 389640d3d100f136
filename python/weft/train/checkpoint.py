"""TensorFlow 2's object-based checkpoints, ``tf.train.Checkpoint`` and ``CheckpointManager``, on
weft's checkpoint files (the format of ``Saver``: saver.py)::

    ckpt = weft.train.Checkpoint(step=weft.Variable(1), model=module)
    manager = weft.train.CheckpointManager(ckpt, "/tmp/run", max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)        # None: nothing to restore (starts from scratch)
    ckpt.step.assign_add(1)
    path = manager.save()                          # "/tmp/run/ckpt-1"

What is saved is the object graph under the Checkpoint's keyword arguments, each value under its
path of attribute names, as TF names them ("model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE"):
weft Variables, tf.Module attributes (walked as Module.variables walks them), Keras models and
layers (their weights, in order), Keras optimizers of custom training steps (their iteration count
and slots, by variable name; restored into an optimizer that has not stepped yet, its first
apply_gradients starts from them) and a ``save_counter``. The optimizer of a compiled model (its
slots live in the model) and dataset iterators are not saved: a NotImplementedError names them and
what to use instead.
"""
import os

from .. import _weft
from .saver import _SUFFIX, _data_file, _write_state, latest_checkpoint

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"


def _unsupported(path, obj, instead):
    return NotImplementedError("tf.train.Checkpoint: '%s' (%s) cannot be saved by weft; %s"
                               % (path, type(obj).__name__, instead))


class _Entries(list):
    """(key, get, set) entries, with the checkpoint path of each variable met ((id(graph), op name)
    -> path, for the optimizers' slots) and the optimizers met (collected after everything else)."""

    def __init__(self):
        super().__init__()
        self.var_paths = {}
        self.optimizers = []

    def path_of_name(self, graph, name):
        return self.var_paths.get((id(graph), name))


def _collect(obj, path, out, seen):
    """Appends (key, get, set) for every value under ``obj`` (at attribute path ``path``)."""
    from ..framework import Variable
    from ..keras.models import Model
    from ..keras.optimizers import Optimizer
    from .._module import Module
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, Variable):
        out.var_paths[(id(obj.graph), obj.op.name)] = path
        out.append((path + "/" + _VALUE, obj.numpy, obj.assign))
    elif isinstance(obj, Model) or hasattr(obj, "get_weights") and hasattr(obj, "set_weights"):
        _collect_keras(obj, path, out)
    elif isinstance(obj, Optimizer):
        _check_optimizer(obj, path)
        out.optimizers.append((obj, path))
    elif isinstance(obj, Checkpoint):  # every keyword argument must be saveable
        for name, value in sorted(vars(obj).items()):
            if not name.startswith("_"):
                (_collect_value if isinstance(value, (list, tuple, dict)) else _collect)(value, name, out, seen)
    elif isinstance(obj, Module):  # attributes that hold state; other values (numbers, functions) are not
        for name, value in sorted(vars(obj).items()):
            if not name.startswith("_"):
                _collect_value(value, path + "/" + name, out, seen)
    elif hasattr(obj, "__next__"):
        raise _unsupported(path, obj, "dataset iterators have no saved state in weft: leave it out and skip the "
                           "consumed elements (dataset.skip(n)) after restoring")
    else:
        raise _unsupported(path, obj, "a Checkpoint holds Variables, tf.Modules and Keras models")


def _collect_value(value, path, out, seen):
    """An attribute of a Module: objects that hold state, lists / tuples / dicts of them; other
    values (numbers, strings, functions) are not state."""
    from ..framework import Variable
    from .._module import Module
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _collect_value(v, "%s/%d" % (path, i), out, seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            _collect_value(v, "%s/%s" % (path, k), out, seen)
    elif isinstance(value, (Variable, Module)) or hasattr(value, "get_weights"):
        _collect(value, path, out, seen)


def _check_optimizer(opt, path):
    """A Keras optimizer of custom training steps is saved (its iteration counter and slots, the
    graph state apply_gradients made: keras/_custom_step.py); one that compile() gave a model keeps
    its slots in that model: a NotImplementedError says to save the model instead."""
    if opt._model is not None and opt._model() is not None:
        raise _unsupported(path, opt, "its slots live with the compiled model it trains: save the whole model with "
                           "model.save('x.keras'), or leave the optimizer out of the Checkpoint (it then restarts "
                           "its moments)")


def _optimizer_entries(opt, path, out):
    """Each slot is keyed by the checkpoint path of its variable (TF keys slots by the object too),
    so a restore into fresh objects finds them whatever the variables are named."""
    from ..keras import _custom_step
    for i, st in enumerate(_custom_step.optimizer_states(opt)):
        prefix = path if i == 0 else "%s/graph_%d" % (path, i)
        for key, var in st.checkpoint_entries(out.path_of_name):
            out.append(("%s/%s/%s" % (prefix, key, _VALUE), var.numpy, var.assign))


def _collect_keras(model, path, out):
    from ..keras import _custom_step
    for graph, variables in _custom_step.twin_variables(model):
        for i, v in enumerate(variables):
            out.var_paths[(id(graph), v.op.name)] = "%s/.weights/%d" % (path, i)
    weights = model.get_weights()
    if not weights and not getattr(model, "built", True):
        raise _unsupported(path, model, "build it first (call it on data once) before saving or restoring: weft does "
                           "not defer a restore until the model is built")

    def setter(i):
        def set_weight(value):
            w = model.get_weights()
            w[i] = value
            model.set_weights(w)
        return set_weight
    for i in range(len(weights)):
        out.append(("%s/.weights/%d/%s" % (path, i, _VALUE), (lambda i=i: model.get_weights()[i]), setter(i)))


class _Status:
    """What ``restore`` returns: TF's load-status checks."""

    def __init__(self, unmatched):
        self._unmatched = unmatched

    def assert_consumed(self):
        if self._unmatched:
            raise AssertionError("Unresolved object in checkpoint: %s" % ", ".join(sorted(self._unmatched)))
        return self

    def assert_existing_objects_matched(self):
        return self.assert_consumed()

    def expect_partial(self):
        return self

    def assert_nontrivial_match(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        return None


class Checkpoint:
    """``tf.train.Checkpoint(**objects)``: ``save(prefix)`` writes ``prefix-<n>`` (n counting saves),
    ``write(path)`` writes ``path``; ``restore`` / ``read`` set every saved value back (None: nothing,
    as when no checkpoint exists yet)."""

    def __init__(self, root=None, **kwargs):
        from ..framework import Variable
        if root is not None:
            kwargs.setdefault("root", root)
        for name, value in kwargs.items():
            setattr(self, name, value)
        self._save_counter = Variable(0, dtype="int64", trainable=False, name="save_counter")

    def _path_of(self, var):
        """The checkpoint path of a variable under this Checkpoint's objects, or None. The walk of
        the objects (which reads every model's weights) is kept and redone only when a variable is
        not in it: a model's twin made since (keras/_custom_step.py)."""
        key = (id(var.graph), var.op.name)
        paths = self.__dict__.get("_paths")
        if paths is None or key not in paths.var_paths:
            paths = self.__dict__["_paths"] = _Entries()
            _collect(self, "", paths, set())
        return paths.path_of_name(var.graph, var.op.name)

    @property
    def save_counter(self):
        return self._save_counter

    def _values(self):
        out = _Entries()
        _collect(self, "", out, set())
        for opt, path in out.optimizers:
            _optimizer_entries(opt, path, out)
        out.append(("save_counter/" + _VALUE, self._save_counter.numpy, self._save_counter.assign))
        return out

    def write(self, file_prefix, options=None):
        file_prefix = os.fspath(file_prefix)
        parent = os.path.dirname(os.path.abspath(file_prefix))
        os.makedirs(parent, exist_ok=True)
        import numpy as np
        _weft._save_checkpoint(file_prefix + _SUFFIX, [(k, np.asarray(get())) for k, get, _ in self._values()])
        return file_prefix

    def save(self, file_prefix, options=None):
        self._save_counter.assign_add(1)
        return self.write("%s-%d" % (os.fspath(file_prefix), int(self._save_counter.numpy())))

    def read(self, save_path, options=None):
        return self.restore(save_path)

    def restore(self, save_path, options=None):
        if save_path is None:
            return _Status(set())
        path = _data_file(os.fspath(save_path))
        if path is None and os.path.isdir(save_path):
            latest = latest_checkpoint(save_path)
            path = _data_file(latest) if latest else None
        if path is None:
            raise ValueError("tf.train.Checkpoint.restore: %s is not a checkpoint written by weft (no %s file)"
                             % (save_path, os.fspath(save_path) + _SUFFIX))
        loaded = _weft._load_checkpoint(path)
        mine = self._values()
        missing = [k for k, _, _ in mine if k not in loaded]
        if missing:
            from ..errors import NotFoundError
            raise NotFoundError("tf.train.Checkpoint.restore: %s holds no value for %s (it holds: %s)"
                                % (path, ", ".join(missing), ", ".join(sorted(loaded))), "NotFound")
        # Saved values under one of this Checkpoint's objects that has no such variable (yet): a
        # Module or model whose variables are made at its first call. TF restores them when they
        # are made; weft would leave fresh values there, so it says so instead.
        attrs = {k for k in vars(self) if not k.startswith("_")}
        unused = set(loaded) - {k for k, _, _ in mine}
        # An optimizer that has not stepped yet has no slots to set: its first step starts from them.
        from ..keras.optimizers import Optimizer
        from ..keras import _custom_step
        for name in sorted(attrs):
            opt = getattr(self, name)
            if isinstance(opt, Optimizer) and not _custom_step.optimizer_states(opt) and opt._model is None:
                mine_keys = {k[len(name) + 1:-len(_VALUE) - 1]: loaded[k] for k in unused
                             if k.startswith(name + "/") and k.endswith(_VALUE)}
                _custom_step.restore_later(opt, mine_keys, self._path_of)
                unused -= {k for k in unused if k.startswith(name + "/")}
        unbuilt = sorted(k for k in unused if k.split("/", 1)[0] in attrs)
        if unbuilt:
            raise NotImplementedError("tf.train.Checkpoint.restore: %s holds %s, which the objects have not made yet "
                                      "(variables made at the first call); weft does not defer a restore until "
                                      "then: call the model once on data, then restore" % (path, ", ".join(unbuilt)))
        for key, get, set_value in mine:
            have, want = loaded[key], get()
            if tuple(have.shape) != tuple(getattr(want, "shape", ())):
                raise ValueError("tf.train.Checkpoint.restore: %s has shape %s in %s but the object has %s"
                                 % (key, have.shape, path, getattr(want, "shape", ())))
            set_value(have)
        return _Status(unused)


class CheckpointManager:
    """``tf.train.CheckpointManager(checkpoint, directory, max_to_keep)``: ``save()`` writes
    ``directory/ckpt-<n>``, keeps the newest ``max_to_keep`` and the ``checkpoint`` state file
    ``latest_checkpoint`` reads."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        self._checkpoint = checkpoint
        self.directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._prefix = os.path.join(self.directory, checkpoint_name)
        from .saver import get_checkpoint_state
        state = get_checkpoint_state(self.directory) if os.path.isdir(self.directory) else None
        self._kept = [p for p in (state.all_model_checkpoint_paths if state else []) if _data_file(p)]

    @property
    def latest_checkpoint(self):
        return self._kept[-1] if self._kept else None

    @property
    def checkpoints(self):
        return list(self._kept)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        os.makedirs(self.directory, exist_ok=True)
        if checkpoint_number is None:
            path = self._checkpoint.save(self._prefix)
        else:
            self._checkpoint._save_counter.assign_add(1)
            path = self._checkpoint.write("%s-%d" % (self._prefix, int(checkpoint_number)))
        if path in self._kept:
            self._kept.remove(path)
        self._kept.append(path)
        while self._max_to_keep is not None and len(self._kept) > self._max_to_keep:
            old = self._kept.pop(0)
            if os.path.isfile(old + _SUFFIX):
                os.remove(old + _SUFFIX)
        _write_state(os.path.abspath(self.directory), "checkpoint", os.path.abspath(path),
                     [os.path.abspath(p) for p in self._kept])
        return path
