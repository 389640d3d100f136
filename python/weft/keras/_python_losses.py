"""Keras 3 losses written with weft ops (Keras' own formulas, keras/src/losses/losses.py): the
focal cross-entropies, Dice, Tversky and the generalized cross-entropy. They are Python losses
(losses.Loss subclasses with a ``call``): a model compiled with one trains through traced steps
(_custom_step.py), and the gradient comes from the ops' own gradients. Each has Keras' function
form too, the per-example values (``keras.losses.dice(y_true, y_pred)``), on arrays or tensors::

    loss = keras.losses.BinaryFocalCrossentropy(gamma=2.0, from_logits=True)
    loss([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8]).numpy()    # 0.691 (Keras' docstring)
"""
import numpy as np

from .. import framework as _fw, ops as _o
from . import _custom_step

_EPSILON = 1e-7  # Keras' backend.epsilon()


def _clip(x, lo, hi):
    return _o.minimum(_o.maximum(x, lo), hi)


def _mean(x, axis):
    return _o.reduce_mean(x, axis=axis)


def _sum(x, axis, keepdims=False):
    return _o.reduce_sum(x, axis=axis, keepdims=keepdims)


def binary_focal(y_true, y_pred, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
                 label_smoothing=0.0, axis=-1):
    """Keras' binary_focal_crossentropy of float tensors: (1 - p_t)**gamma * bce, times
    alpha / (1 - alpha) for positives / negatives with apply_class_balancing, mean over ``axis``."""
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = _o.sigmoid(y_pred)
    p = _clip(y_pred, _EPSILON, 1.0 - _EPSILON)
    bce = -(y_true * _o.log(p) + (1.0 - y_true) * _o.log(1.0 - p))
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = _o.pow(1.0 - p_t, float(gamma)) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return _mean(focal, axis)


def categorical_focal(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    """Keras' categorical_focal_crossentropy: sum over ``axis`` of
    -alpha * (1 - p)**gamma * y_true * log(p), p the predictions normalized to sum 1 and clipped."""
    if label_smoothing:
        classes = y_true.shape[axis]
        if classes is None:
            raise ValueError("categorical_focal_crossentropy: label_smoothing needs a known class dimension, got "
                             "labels of shape %s" % (y_true.shape,))
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        from .. import nn
        y_pred = nn.softmax(y_pred, axis=axis)
    p = _clip(y_pred / _sum(y_pred, axis, keepdims=True), _EPSILON, 1.0 - _EPSILON)
    cce = -y_true * _o.log(p)
    return _sum(_o.pow(1.0 - p, float(gamma)) * alpha * cce, axis)


def dice(y_true, y_pred, axis=None):
    """1 - 2 sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + eps), the sums over ``axis``
    (None: everything, one value for the batch)."""
    intersection = _sum(y_true * y_pred, axis)
    return 1.0 - 2.0 * intersection / (_sum(y_true, axis) + _sum(y_pred, axis) + _EPSILON)


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    """1 - tp / (tp + alpha fp + beta fn + eps) with soft counts summed over ``axis``
    (Keras' argument order: fp = sum((1 - y_pred) * y_true), fn = sum(y_pred * (1 - y_true)))."""
    intersection = _sum(y_true * y_pred, axis)
    fp = _sum((1.0 - y_pred) * y_true, axis)
    fn = _sum(y_pred * (1.0 - y_true), axis)
    return 1.0 - intersection / (intersection + fp * alpha + fn * beta + _EPSILON)


def generalized_ce(y_true, y_pred, q=0.5):
    """Keras' categorical_generalized_cross_entropy of integer labels y_true against class
    probabilities: (1 - p_label**q) / q."""
    classes = y_pred.shape[-1]
    if classes is None:
        raise ValueError("categorical_generalized_cross_entropy needs a known class dimension, got %s" % (y_pred.shape,))
    labels = _o.cast(_o.reshape(y_true, [-1]), "int32")
    p = _sum(_o.one_hot(labels, int(classes), dtype=y_pred.dtype) * _o.reshape(y_pred, [-1, int(classes)]), -1)
    return (1.0 - _o.pow(p, float(q))) / q


def per_example(impl, y_true, y_pred, **kwargs):
    """``impl`` (a function above) of y_true, y_pred as tensors of y_pred's float dtype: graph
    tensors in, a tensor of their graph out; arrays in, the values as a numpy array."""
    from .losses import value
    graph = _custom_step._graph_of(y_true, y_pred)
    with (graph or _fw.get_default_graph()).as_default():
        y_pred = _fw.convert_to_tensor(y_pred)
        if not y_pred.dtype.is_floating:
            y_pred = _o.cast(y_pred, "float32")
        out = impl(_o.cast(_fw.convert_to_tensor(y_true), y_pred.dtype), y_pred, **kwargs)
    return out if graph is not None else value(np.asarray(out))
