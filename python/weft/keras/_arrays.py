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


def fit_arrays(x, y, validation_split, validation_data, class_weight, sample_weight):
    """fit's array arguments as Keras reads them: (x, y, sample_weight, x_val, y_val)."""
    x, y = numeric(x, "x"), numeric(y, "y")
    if len(x) != len(y):
        raise ValueError("fit: x has %d examples (shape %s) but y has %d (shape %s)" % (len(x), x.shape, len(y),
                                                                                       y.shape))
    if class_weight is not None and sample_weight is not None:
        raise ValueError("fit: you cannot pass class_weight and sample_weight at the same time")
    sw = None
    if sample_weight is not None:
        sw = np.asarray(sample_weight, np.float32)
        if sw.shape != (len(x),):
            raise ValueError("fit: sample_weight has shape %s but x has %d examples (it must be [N])" % (sw.shape,
                                                                                                       len(x)))
    elif class_weight is not None:
        if not isinstance(class_weight, dict):
            raise TypeError("fit: class_weight must be a dict {class index: weight}, got %r" % (class_weight,))
        sw = class_weights(y, class_weight)
    vx = vy = None
    if validation_data is not None:
        if not isinstance(validation_data, (tuple, list)) or len(validation_data) not in (2, 3):
            raise ValueError("fit: validation_data must be (x_val, y_val) or (x_val, y_val, sample_weight_val)")
        vx, vy = numeric(validation_data[0], "validation x"), numeric(validation_data[1], "validation y")
    elif validation_split:
        if not 0.0 < validation_split < 1.0:
            raise ValueError("fit: validation_split must be in (0, 1), got %r" % (validation_split,))
        # Keras: the last fraction, taken before any shuffling.
        split_at = int(np.floor(len(x) * (1.0 - validation_split)))
        if split_at == 0 or split_at == len(x):
            raise ValueError("fit: %d examples are not enough to split off validation_split=%r" % (len(x),
                                                                                               validation_split))
        x, vx, y, vy = x[:split_at], x[split_at:], y[:split_at], y[split_at:]
        sw = None if sw is None else sw[:split_at]
    return x, y, sw, vx, vy
