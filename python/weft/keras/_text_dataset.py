"""keras.utils.text_dataset_from_directory: a host dataset of (texts, labels) batches read from
``directory/<class name>/**/*.txt``, as Keras 3 makes it (TensorFlow 2.21):

- class names are the sub-directories (sorted; not those starting with "."), or ``class_names``
  in the given order; files are found by walking each one (``.txt`` by any case of the suffix,
  sorted by directory, then name), labelled by the index of their class;
- with ``shuffle`` the file list and the labels are permuted by ``np.random.RandomState(seed)``
  (Keras' call, so a subset holds the same files as Keras' does), and the last
  ``int(validation_split * n)`` files are the validation subset, the others the training one;
- the training subset (or the whole set) is then shuffled again every epoch by a buffer of
  ``batch_size * 8`` elements, the validation subset is not, and both are batched.

The texts are read when the dataset is iterated (bytes, cut to ``max_length`` bytes), labels are
int32 (``label_mode="int"``), float32 one-hot rows ("categorical") or float32 ``(1,)`` rows
("binary"). Keras' checks and messages are kept (tests/python/test_text_data.py compares them,
and the subsets, with TF 2.21's)."""
import os

import numpy as np

from .. import _text_values as _tv
from ..data import _host
from ..data import _structure as _st


def _check_labels(labels, class_names, label_mode, files, samples):
    """Keras' checks of ``labels`` / ``class_names`` / ``label_mode`` (``files`` and ``samples``
    name what the directory holds in its messages: "text files", "images")."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError("`labels` argument should be a list/tuple of integer labels, of the same size as the "
                             "number of %s in the target directory. If you wish to infer the labels from the "
                             "subdirectory names in the target directory, pass `labels=\"inferred\"`. If you wish to "
                             "get a dataset that only contains %s (no labels), pass `labels=None`. "
                             "Received: labels=%s" % (files, samples, labels))
        if class_names:
            raise ValueError("You can only pass `class_names` if `labels=\"inferred\"`. Received: labels=%s, and "
                             "class_names=%s" % (labels, class_names))
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", or None. Received: '
                         'label_mode=%s' % (label_mode,))


def _check_split(validation_split, subset, shuffle, seed):
    if validation_split and not 0 < validation_split < 1:
        raise ValueError("`validation_split` must be between 0 and 1, received: %s" % (validation_split,))
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", "validation" or "both", received: %s' % (subset,))
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide a `seed` argument, to "
                         "make sure that there is no overlap between the training and validation subset.")


def _index(directory, labels, class_names, shuffle, seed, follow_links, verbose, formats=(".txt",)):
    """(file paths, int labels or None, class names), as Keras' dataset_utils.index_directory:
    the files whose names end (in any case) with one of ``formats``."""
    if not os.path.isdir(directory):
        from ..framework import _weft_error
        raise _weft_error("NotFound", "Could not find directory %s" % directory)
    if labels == "inferred":
        subdirs = [d for d in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, d)) and not d.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(subdirs)):
                raise ValueError("The `class_names` passed did not match the names of the subdirectories of the "
                                 "target directory. Expected: %s (or a subset of it), but received: class_names=%s"
                                 % (subdirs, class_names))
            subdirs = list(class_names)
    else:
        subdirs = [""]
        if class_names is not None:
            if labels is None:
                raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be specified.")
            raise ValueError("When argument `labels` is specified, argument `class_names` cannot be specified (the "
                             "`class_names` will be the sorted list of labels).")
    files, found = [], []
    for k, sub in enumerate(subdirs):
        root_dir = os.path.join(directory, sub)
        for root, _, names in sorted(os.walk(root_dir, followlinks=follow_links), key=lambda w: w[0]):
            for name in sorted(names):
                if name.lower().endswith(formats):
                    files.append(os.path.join(directory, sub, os.path.relpath(os.path.join(root, name), root_dir)))
                    found.append(k)
    if labels == "inferred":
        labels = np.array(found, dtype="int32")
        class_names = list(subdirs)
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(files):
            raise ValueError("Expected the lengths of `labels` to match the number of files in the target directory. "
                             "len(labels) is %d while we found %d files in directory %s." %
                             (len(labels), len(files), directory))
        class_names = [str(label) for label in sorted(set(labels))]
        labels = np.asarray(labels)
    if verbose:
        print("Found %d files." % len(files) if labels is None else
              "Found %d files belonging to %d classes." % (len(files), len(class_names)))
    if shuffle:
        rng = np.random.RandomState(seed)
        rng.shuffle(files)
        if labels is not None:
            rng = np.random.RandomState(seed)
            rng.shuffle(labels)
    return files, labels, class_names


def _split(files, labels, validation_split, subset):
    if not validation_split:
        return files, labels
    n_val = int(validation_split * len(files))
    if subset == "training":
        print("Using %d files for training." % (len(files) - n_val))
        return files[:-n_val], None if labels is None else labels[:-n_val]
    if subset == "validation":
        print("Using %d files for validation." % n_val)
        return files[-n_val:], None if labels is None else labels[-n_val:]
    raise ValueError('`subset` must be either "training" or "validation", received: %s' % (subset,))


def _label_rows(labels, label_mode, num_classes):
    """Keras' label arrays: int32 ("int"), float32 one-hot rows ("categorical"), float32 (1,) rows
    ("binary"), or None."""
    if label_mode == "binary":
        ys = np.asarray(labels, np.float32).reshape(-1, 1)
    elif label_mode == "categorical":
        ys = np.eye(num_classes, dtype=np.float32)[np.asarray(labels, np.int64)]
    elif label_mode == "int":
        ys = np.asarray(labels, np.int32)
    else:
        ys = None
    return ys


def _path_dataset(files, ys, shuffle, buffer_size, seed, what):
    """The host dataset of (path, label) (or path) elements, shuffled as Keras does (before the
    files are read)."""
    paths = _tv.as_bytes_array(files, what)
    if ys is None:
        items = _host.HostDataset(lambda: ([paths[i, ...]] for i in range(len(files))),
                                  _st.TensorSpec((), _tv.string), len(files))
    else:
        spec = (_st.TensorSpec((), _tv.string), _st.TensorSpec(ys.shape[1:], ys.dtype))
        items = _host.HostDataset(lambda: ([paths[i, ...], ys[i, ...]] for i in range(len(files))), spec, len(files))
    return items.shuffle(buffer_size, seed=seed) if shuffle else items


def _dataset(files, labels, label_mode, num_classes, max_length, shuffle, buffer_size, seed, batch_size):
    """The host dataset of (text, label) (or text) elements, shuffled and batched as Keras does."""
    ys = _label_rows(labels, label_mode, num_classes)

    def read(path):
        with open(_tv.decode(path[()]), "rb") as f:
            text = f.read()
        return _tv.as_bytes_array(text if max_length is None else text[:max_length])

    items = _path_dataset(files, ys, shuffle, buffer_size, seed, "text_dataset_from_directory")
    # The files are read when the element is (Keras maps tf.io.read_file over the paths).
    out = _host.HostDataset(lambda: ([read(e[0])] + e[1:] for e in items._make()), items._spec, items._card)
    return out.batch(batch_size) if batch_size is not None else out


def text_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                                max_length=None, shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # noqa: A002 - Keras' name
    """Keras' text_dataset_from_directory (see the module doc): a weft.data Dataset of
    ``(texts, labels)`` batches (texts: a string vector) with ``class_names``; with
    ``subset="both"``, the (training, validation) pair."""
    _check_labels(labels, class_names, label_mode, "text files", "text samples")
    if format != "tf":
        raise ValueError('`format` should be "tf" in weft (a weft.data Dataset). Received: format=%s' % (format,))
    if labels is None or label_mode is None:
        labels = label_mode = None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    directory = os.fspath(directory)
    files, labels, class_names = _index(directory, labels, class_names, shuffle, seed, follow_links, verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 class_names. Received: '
                         'class_names=%s' % (class_names,))
    buffer_size = batch_size * 8 if batch_size is not None else 1024
    num_classes = len(class_names) if class_names else 0

    def make(subset_name, shuffled):
        f, y = _split(files, labels, validation_split, subset_name)
        if not f:
            kind = {"training": "training ", "validation": "validation "}.get(subset_name, "") \
                if subset == "both" else ""
            raise ValueError("No %stext files found in directory %s. Allowed format: .txt" % (kind, directory))
        ds = _dataset(f, y, label_mode, num_classes, max_length, shuffled, buffer_size, seed, batch_size)
        ds.class_names = class_names
        return ds
    if subset == "both":
        return make("training", shuffle), make("validation", False)
    return make(subset, shuffle)
