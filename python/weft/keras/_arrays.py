"""fit's array arguments read as Keras reads them: dtypes, validation_split, validation_data,
class_weight and sample_weight (numpy in, numpy out; the C++ loop does the rest)."""
import numpy as np


def numeric(a, what):
    """``a`` as a numpy array Keras would take (bool labels as float; ``[x]`` for a one-input model)."""
    if isinstance(a, (list, tuple)) and len(a) == 1 and hasattr(a[0], "shape"):
        a = a[0]
    a = np.asarray(a)
    if a.dtype == np.bool_:
        a = a.astype(np.float32)
    if a.dtype.kind not in "iuf":
        raise TypeError("fit: %s must be numeric (int or float), got dtype %s" % (what, a.dtype))
    return a


def numeric_list(a, n, what):
    """One array (n == 1, as ``numeric``), or a list of n for a model with n inputs or outputs."""
    if n == 1:
        return numeric(a, what)
    if isinstance(a, dict):
        raise TypeError("%s: a dict of arrays is not supported by weft; pass a list in the order of the model's "
                        "inputs / outputs" % what)
    if not isinstance(a, (list, tuple)) or len(a) != n:
        raise ValueError("%s: the model has %d inputs / outputs here, so this must be a list of %d arrays, got %s"
                         % (what, n, n, type(a).__name__ if not isinstance(a, (list, tuple)) else "%d" % len(a)))
    return [numeric(v, "%s[%d]" % (what, i)) for i, v in enumerate(a)]


def rows(a):
    """Examples in an array or a list of arrays (several inputs)."""
    return len(a[0]) if isinstance(a, list) else len(a)


def _take(a, sl):
    return [v[sl] for v in a] if isinstance(a, list) else a[sl]


def class_weights(y, class_weight):
    """Per-example weights from {class: weight}, as Keras maps them (one-hot labels by argmax)."""
    labels = np.asarray(y)
    if labels.ndim > 1:
        labels = np.argmax(labels, axis=-1) if labels.shape[-1] != 1 else np.squeeze(labels, axis=-1)
    labels = np.round(labels).astype(np.int64)
    w = np.ones(labels.shape[0], np.float32)
    for cls, weight in class_weight.items():
        w[labels == int(cls)] = weight
    return w


def fit_arrays(x, y, validation_split, validation_data, class_weight, sample_weight, n_in=1, n_out=1):
    """fit's array arguments as Keras reads them: (x, y, sample_weight, x_val, y_val); x (y) is a
    list of arrays for a model with several inputs (outputs)."""
    x, y = numeric_list(x, n_in, "fit: x"), numeric_list(y, n_out, "fit: y")
    for i, part in enumerate(x if n_in > 1 else [x]):
        if len(part) != rows(x):
            raise ValueError("fit: x[0] has %d examples but x[%d] has %d" % (rows(x), i, len(part)))
    for i, part in enumerate(y if n_out > 1 else [y]):
        if len(part) != rows(x):
            raise ValueError("fit: x has %d examples (shape %s) but y%s has %d (shape %s)" % (
                rows(x), (x[0] if n_in > 1 else x).shape, "[%d]" % i if n_out > 1 else "", len(part), part.shape))
    if class_weight is not None and sample_weight is not None:
        raise ValueError("fit: you cannot pass class_weight and sample_weight at the same time")
    sw = None
    if sample_weight is not None:
        sw = np.asarray(sample_weight, np.float32)
        if sw.shape != (rows(x),):
            raise ValueError("fit: sample_weight has shape %s but x has %d examples (it must be [N])" % (sw.shape,
                                                                                                       rows(x)))
    elif class_weight is not None:
        if not isinstance(class_weight, dict):
            raise TypeError("fit: class_weight must be a dict {class index: weight}, got %r" % (class_weight,))
        if n_out > 1:
            raise ValueError("fit: class_weight needs a model with one output (this one has %d)" % n_out)
        sw = class_weights(y, class_weight)
    vx = vy = None
    if validation_data is not None:
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("fit: validation_data must be (x_val, y_val) or (x_val, y_val, sample_weight_val)")
        vx = numeric_list(validation_data[0], n_in, "fit: validation x")
        vy = numeric_list(validation_data[1], n_out, "fit: validation y")
    elif validation_split:
        if not 0.0 < validation_split < 1.0:
            raise ValueError("fit: validation_split must be in (0, 1), got %r" % (validation_split,))
        # Keras: the last fraction, taken before any shuffling.
        split_at = int(np.floor(rows(x) * (1.0 - validation_split)))
        if split_at == 0 or split_at == rows(x):
            raise ValueError("fit: %d examples are not enough to split off validation_split=%r" % (rows(x),
                                                                                               validation_split))
        x, vx = _take(x, slice(None, split_at)), _take(x, slice(split_at, None))
        y, vy = _take(y, slice(None, split_at)), _take(y, slice(split_at, None))
        sw = None if sw is None else sw[:split_at]
    return x, y, sw, vx, vy
