"""Keras 3 losses written with weft ops (Keras' own formulas, keras/src/losses/losses.py): the
focal cross-entropies, Dice, Tversky and the generalized cross-entropy. They are Python losses
(losses.Loss subclasses with a ``call``): a model compiled with one trains through traced steps
(_custom_step.py), and the gradient comes from the ops' own gradients. Each has Keras' function
form too, the per-example values (``keras.losses.dice(y_true, y_pred)``), on arrays or tensors::

    loss = keras.losses.BinaryFocalCrossentropy(gamma=2.0, from_logits=True)
    loss([0, 1, 0, 0], [-18.6, 0.51, 2.94, -12.8]).numpy()    # 0.691 (Keras' docstring)
"""
import numpy as np

from .. import array_ops as _a, framework as _fw, ops as _o
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


_NEG = -1e30  # log(0) for the CTC recursion: finite, so max-shifted sums never meet inf - inf


def ctc(y_true, y_pred, label_length=None, logit_length=None, blank=0):
    """Keras' ctc loss per example: -log p(labels | logits), y_true [batch, max_label] integer
    labels padded with 0 (Keras' blank, mask_index=0), y_pred [batch, time, classes] logits (a
    log-softmax is taken); every example uses all ``time`` steps. The forward (alpha) recursion of
    Graves et al. over the blank-extended labels, in log space, unrolled over the time steps
    (which must be known when the graph is built); the gradient comes from the ops'.
    ``label_length`` / ``logit_length`` (keras.ops.ctc_loss' target_length / output_length, [batch]
    ints): each example's label count (default: its nonzero labels) and time steps (default: all).
    ``blank``: the blank class (Keras 2's backend ctc_batch_cost uses the last one)."""
    from .. import nn
    if y_true.shape is None or len(y_true.shape) != 2:
        raise ValueError("ctc: y_true must be (batch_size, max_length) integer labels, got shape %s" % (y_true.shape,))
    if y_pred.shape is None or len(y_pred.shape) != 3:
        raise ValueError("ctc: y_pred must be (batch_size, time, num_classes) logits, got shape %s" % (y_pred.shape,))
    steps, classes, max_label = y_pred.shape[1], y_pred.shape[2], y_true.shape[1]
    if None in (steps, classes, max_label):
        raise ValueError("ctc: the time, class and label dims must be known, got y_true %s and y_pred %s"
                         % (y_true.shape, y_pred.shape))
    steps, classes, max_label = int(steps), int(classes), int(max_label)
    ext_len = 2 * max_label + 1
    logp = nn.log_softmax(y_pred, axis=-1)
    labels = _o.cast(y_true, "int32")
    # The extended labels: blank, l1, blank, l2, ..., blank (with blank 0, padding zeros become
    # blanks too; positions past an example's labels are never read).
    blanks = _o.zeros_like(labels) + int(blank)
    pairs = _o.reshape(_a.stack([blanks, labels], axis=2), [-1, 2 * max_label])
    ext = _o.concat([pairs, blanks[:, :1]], 1)  # [batch, S]
    hot = _o.one_hot(ext, classes, dtype=logp.dtype)  # [batch, S, classes]
    emit = _o.matmul(logp, _o.transpose(hot, [0, 2, 1]))  # [batch, time, S]: log p_t(ext[s])
    ext_back2 = _o.concat([_o.zeros_like(ext[:, :2]) - 1, ext[:, :-2]], 1)
    skip = _o.logical_and(_o.not_equal(ext, _o.zeros_like(ext) + int(blank)), _o.not_equal(ext, ext_back2))
    neg = _o.zeros_like(emit[:, 0, :]) + _NEG  # [batch, S]
    neg_col = neg[:, :1]
    start = np.zeros((1, ext_len), bool)
    start[0, :2] = True
    alpha = _o.where(_o.logical_and(_o.cast(_fw.convert_to_tensor(start), "bool"), _o.ones_like(neg) > 0),
                     emit[:, 0, :], neg)
    ends = None if logit_length is None else _o.cast(logit_length, "int32") - 1  # [batch]: each one's last step
    final = alpha
    for t in range(1, steps):
        a1 = _o.concat([neg_col, alpha[:, :-1]], 1)
        a2 = _o.where(skip, _o.concat([neg_col, neg_col, alpha[:, :-2]], 1), neg)
        top = _o.maximum(_o.maximum(alpha, a1), a2)
        total = _o.exp(alpha - top) + _o.exp(a1 - top) + _o.exp(a2 - top)
        alpha = top + _o.log(total) + emit[:, t, :]
        if ends is not None:  # rows whose sequence ends at t keep this step's alpha
            at_end = _o.reshape(_o.equal(ends, _o.zeros_like(ends) + t), [-1, 1])
            final = _o.where(_o.logical_and(at_end, _o.ones_like(neg) > 0), alpha, final)
    alpha = alpha if ends is None else final
    if label_length is None:
        length = _o.reduce_sum(_o.cast(_o.not_equal(labels, _o.zeros_like(labels)), "int32"), axis=1)
    else:
        length = _o.cast(label_length, "int32")
    last = _o.reduce_sum(alpha * _o.one_hot(2 * length, ext_len, dtype=alpha.dtype), axis=1)
    has_label = _o.greater(length, _o.zeros_like(length))
    before = _o.reduce_sum(alpha * _o.one_hot(_o.maximum(2 * length - 1, _o.zeros_like(length)), ext_len,
                                              dtype=alpha.dtype), axis=1)
    before = _o.where(has_label, before, _o.zeros_like(before) + _NEG)
    top = _o.maximum(last, before)
    return -(top + _o.log(_o.exp(last - top) + _o.exp(before - top)))


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
