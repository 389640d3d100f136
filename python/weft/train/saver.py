"""TF1's ``Saver`` and checkpoint look-ups, on weft's checkpoint format (train/checkpoint.h).

    saver = weft.train.Saver(max_to_keep=3)
    path = saver.save(sess, "/tmp/run/model.ckpt", global_step=100)     # "/tmp/run/model.ckpt-100"
    saver.restore(sess, weft.train.latest_checkpoint("/tmp/run"))

A checkpoint "prefix" (what ``save`` returns and ``restore`` takes) is one file, ``prefix + ".weft"``:
weft's CRC-checked checkpoint of the variables' values under their names. As TensorFlow does,
``save`` also keeps the text file ``checkpoint`` in the directory (``model_checkpoint_path`` and
``all_model_checkpoint_paths``) that ``latest_checkpoint`` reads, and deletes the oldest checkpoint
beyond ``max_to_keep``. Values travel through the session (``sess.run`` to save, Assign ops fed
the loaded arrays to restore), so variables on a ps task of a DistributedSession work too.
"""
import logging
import os
import re

from .. import _variables, _weft, errors
from ..framework import Variable, get_default_graph, placeholder, _weft_error

_SUFFIX = ".weft"
_STATE = "checkpoint"


def _data_file(prefix):
    """The file behind a checkpoint prefix: ``prefix.weft``, or ``prefix`` itself when it is a
    .weft file (weft's own ckpt-<step>.weft files are valid prefixes too); None if neither exists."""
    if os.path.isfile(prefix + _SUFFIX):
        return prefix + _SUFFIX
    if prefix.endswith(_SUFFIX) and os.path.isfile(prefix):
        return prefix
    return None


class Saver:
    """Saves and restores variables (default: every variable of the default graph, optimizer slots
    and the global step included). ``var_list``: a list of Variables (saved under their names) or a
    dict {checkpoint name: Variable}. Other TF arguments are accepted and have no effect."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5, keep_checkpoint_every_n_hours=10000.0,
                 name=None, restore_sequentially=False, saver_def=None, builder=None, defer_build=False,
                 allow_empty=False, write_version=2, pad_step_number=False, save_relative_paths=False, filename=None):
        g = get_default_graph()
        if var_list is None:
            var_list = _variables.all_variables(g)
        if isinstance(var_list, dict):
            named = list(var_list.items())
        else:
            named = [(v.op.name, v) for v in var_list]
        if not named and not allow_empty:
            raise ValueError("No variables to save")
        seen = set()
        for key, v in named:
            if not isinstance(v, Variable):
                raise TypeError("Saver: %r (for %r) is not a weft Variable" % (v, key))
            if key in seen:
                raise ValueError("At least two variables have the same name: %s" % key)
            seen.add(key)
        if named:
            g = named[0][1].graph  # the variables' graph, default or not
        self._named = named
        self._graph = g
        self._max_to_keep = max_to_keep
        self._last = []  # the prefixes this saver wrote, oldest first
        # Restore ops, made now (as TF1's Saver builds its graph): one fed placeholder and Assign per
        # variable, on the variable's device.
        self._restore = []
        with g.as_default(), g.name_scope(name or "save"):
            for key, v in named:
                with v.graph.device(None), v.graph.device(v.op.device or None):
                    p = placeholder(v.dtype, shape=None, name="restore_value")
                    self._restore.append((key, v, p, v.assign(p, name="restore_" + v.op.name.replace("/", "_"))))

    @property
    def last_checkpoints(self):
        """The prefixes of the checkpoints this saver wrote and has not deleted, oldest first."""
        return list(self._last)

    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Writes the variables' current values to ``save_path`` (``-<global_step>`` appended when
        given: a number or a tensor) and returns that prefix; with ``write_meta_graph`` also the graph
        as ``prefix.meta`` (weft's graph file, for ``import_meta_graph``)."""
        if global_step is not None:
            step = global_step if isinstance(global_step, int) else int(sess.run(global_step))
            save_path = "%s-%d" % (save_path, step)
        parent = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(parent):
            raise ValueError("Parent directory of %s doesn't exist, can't save." % save_path)
        values = sess.run([v for _, v in self._named]) if self._named else []
        _weft._save_checkpoint(save_path + _SUFFIX, [(k, val) for (k, _), val in zip(self._named, values)])
        if save_path in self._last:
            self._last.remove(save_path)
        self._last.append(save_path)
        if self._max_to_keep:
            while len(self._last) > self._max_to_keep:
                old = self._last.pop(0)
                for f in (old + _SUFFIX, old + "." + meta_graph_suffix):
                    if os.path.isfile(f):
                        os.remove(f)
        if write_state:
            _write_state(parent, latest_filename or _STATE, save_path, self._last)
        if write_meta_graph:
            # weft's graph file (docs/graph-format.md). The checkpoint is what save() promises: a graph
            # the file format cannot hold (an op with an attr it does not encode) only costs the .meta.
            try:
                self._graph.save(save_path + "." + meta_graph_suffix)
            except errors.Error as e:
                logging.getLogger("weft").warning("Saver: the graph was not written to %s.%s (%s); the checkpoint "
                                                  "was", save_path, meta_graph_suffix, e)
        return save_path

    def restore(self, sess, save_path):
        """Sets every variable of the saver from the checkpoint ``save_path`` (a prefix from ``save``
        or ``latest_checkpoint``). All names, dtypes and shapes are checked before any is assigned."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        path = _data_file(save_path)
        if path is None:
            raise ValueError("The passed save_path is not a valid checkpoint: %s" % save_path)
        loaded = _weft._load_checkpoint(path)
        feeds = {}
        for key, v, p, _ in self._restore:
            if key not in loaded:
                raise _weft_error("NotFound", "Key %s not found in checkpoint %s (it holds: %s)" %
                                  (key, path, ", ".join(sorted(loaded)) or "nothing"))
            value = loaded[key]
            shape = tuple(v.shape) if v.shape is not None else None
            if shape is not None and (len(shape) != value.ndim or
                                      any(d is not None and d != n for d, n in zip(shape, value.shape))):
                raise _weft_error("InvalidArgument", "Saver.restore: variable %s has shape %s but checkpoint %s holds "
                                  "shape %s under %r" % (v.op.name, shape, path, value.shape, key))
            if value.dtype != v.dtype.as_numpy_dtype:
                raise _weft_error("InvalidArgument", "Saver.restore: variable %s is %s but checkpoint %s holds %s under %r"
                                  % (v.op.name, v.dtype, path, value.dtype, key))
            feeds[p] = value
        sess.run([a for _, _, _, a in self._restore], feed_dict=feeds)


def _write_state(directory, filename, latest, all_paths):
    def rel(p):
        return os.path.relpath(p, directory) if os.path.dirname(os.path.abspath(p)) == directory else p
    lines = ['model_checkpoint_path: "%s"' % rel(latest)]
    lines += ['all_model_checkpoint_paths: "%s"' % rel(p) for p in all_paths]
    tmp = os.path.join(directory, filename + ".tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(directory, filename))


def import_meta_graph(meta_graph_or_file, clear_devices=False, import_scope=None, **unused):
    """Loads the graph file a Saver wrote next to a checkpoint (``prefix.meta``) as the default
    graph and returns a Saver of its variables, for ``saver.restore(sess, prefix)``. weft replaces
    the default graph rather than merging into it, so the default graph must be empty (call
    ``reset_default_graph()`` first) and ``import_scope`` is not supported; devices are kept
    (soft placement runs ops pinned to a missing GPU on the CPU), so ``clear_devices`` changes nothing."""
    from .. import framework
    if import_scope:
        raise NotImplementedError("import_meta_graph(import_scope=...): weft loads the graph as it was saved")
    if framework._graph_stack or framework.get_default_graph().num_nodes:
        raise ValueError("import_meta_graph: weft loads %s as the default graph, which must be empty: call "
                         "tf.reset_default_graph() first" % meta_graph_or_file)
    g = framework.Graph.load(meta_graph_or_file)
    # The variables (and their initializers) of the loaded graph, for global_variables() and Saver().
    g._initializer_names = [op.name + "/Assign" for op in g.get_operations() if op.type == "Variable" and
                            _has_op(g, op.name + "/Assign")]
    framework._global_graph[0] = g
    return Saver(allow_empty=True)


def _has_op(g, name):
    try:
        g.get_operation_by_name(name)
        return True
    except KeyError:  # weft.errors.NotFoundError
        return False


class CheckpointState:
    """What the ``checkpoint`` file says: ``model_checkpoint_path`` and ``all_model_checkpoint_paths``."""

    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)

    def __repr__(self):
        return "CheckpointState(model_checkpoint_path=%r)" % self.model_checkpoint_path


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of ``checkpoint_dir`` (paths made absolute), or None without a state file."""
    path = os.path.join(checkpoint_dir, latest_filename or _STATE)
    if not os.path.isfile(path):
        return None
    latest, everything = None, []
    with open(path) as f:
        for line in f:
            m = re.match(r'\s*(model_checkpoint_path|all_model_checkpoint_paths)\s*:\s*"(.*)"\s*$', line)
            if not m:
                continue
            p = m.group(2) if os.path.isabs(m.group(2)) else os.path.join(checkpoint_dir, m.group(2))
            if m.group(1) == "model_checkpoint_path":
                latest = p
            else:
                everything.append(p)
    if latest is None:
        raise ValueError("Invalid checkpoint state loaded from %s: no model_checkpoint_path" % path)
    return CheckpointState(latest, everything)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in ``checkpoint_dir``: the one the ``checkpoint`` file
    names (if its file exists), else weft's highest ``ckpt-<step>.weft``; None when there is none."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is not None and _data_file(state.model_checkpoint_path):
        return state.model_checkpoint_path
    return _weft._latest_weft_checkpoint(checkpoint_dir) or None


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint file exists for the prefix."""
    return _data_file(checkpoint_prefix) is not None


def load_checkpoint(ckpt_dir_or_file):
    """{name: numpy array} of a checkpoint (a prefix, a .weft file or a directory: its latest)."""
    path = _data_file(ckpt_dir_or_file)
    if path is None and os.path.isdir(ckpt_dir_or_file):
        latest = latest_checkpoint(ckpt_dir_or_file)
        path = _data_file(latest) if latest else None
    if path is None:
        raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given directory %s" % ckpt_dir_or_file)
    return _weft._load_checkpoint(path)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of a checkpoint, sorted by name."""
    return sorted((k, list(v.shape)) for k, v in load_checkpoint(ckpt_dir_or_file).items())


def load_variable(ckpt_dir_or_file, name):
    """The value of one checkpoint entry (NotFoundError listing the names if absent)."""
    d = load_checkpoint(ckpt_dir_or_file)
    if name not in d:
        raise _weft_error("NotFound", "Key %s not found in checkpoint %s (it holds: %s)" %
                          (name, ckpt_dir_or_file, ", ".join(sorted(d))))
    return d[name]


__all__ = ["Saver", "import_meta_graph", "latest_checkpoint", "get_checkpoint_state", "checkpoint_exists", "load_checkpoint",
           "list_variables", "load_variable", "CheckpointState"]
