"""Keras metrics whose state is a small numpy total on the host: the IoU family (a confusion
matrix) and the metrics read off confusion counts at many thresholds (PrecisionAtRecall,
RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity), with Keras 3's formulas
(keras/src/metrics/iou_metrics.py, confusion_metrics.py).

Standalone they take arrays. In ``compile(metrics=[...])`` they are Python metrics: fit and
evaluate run traced steps (_custom_step.py) and each batch's fetched labels and predictions are
added to the totals after the run, as weft's metrics always accumulate on the host::

    m = keras.metrics.MeanIoU(num_classes=2)
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    m.result().numpy()     # 0.33333334 (Keras' docstring)
"""
import re

import numpy as np

from . import _custom_step, losses as _losses


def _snake(name):
    # Keras' auto_name: MeanIoU -> mean_io_u, PrecisionAtRecall -> precision_at_recall
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class HostMetric:
    """Base of these metrics: ``_update(y_true, y_pred, weights)`` adds numpy arrays to the state,
    ``_result()`` reads it. ``custom``: compile runs a model with one through traced steps."""

    custom = True
    _config = ()  # constructor arguments get_config reports (attributes of the same names)

    def __init__(self, name=None, dtype=None):
        self.name = name or _snake(type(self).__name__)
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        if _custom_step.defer_metric(self.update_state, (y_true, y_pred),
                                     {} if sample_weight is None else {"sample_weight": sample_weight}):
            return  # graph tensors in a traced step: updated with their values after each run
        y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
        self._update(y_true, y_pred, None if sample_weight is None else np.asarray(sample_weight, np.float64))

    def result(self):
        if _custom_step.deferred_result(self) is not None:  # asked inside a traced step
            return _custom_step.deferred_result(self)
        return _losses.value(self._result())

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()

    reset_states = property(lambda self: self.reset_state)  # Keras 2's name

    def get_config(self):
        return dict({"name": self.name}, **{k: getattr(self, k) for k in self._config})

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return "<weft.keras.metrics.%s name=%r>" % (type(self).__name__, self.name)


def _weights(sample_weight, shape):
    """Per-value weights of the flattened labels: 1, or sample_weight broadcast to ``shape``."""
    if sample_weight is None:
        return np.ones(int(np.prod(shape)), np.float64)
    w = sample_weight
    if w.ndim > len(shape) or (w.ndim and w.size != 1 and w.shape != tuple(shape)[:w.ndim]
                               and w.shape != tuple(shape)):
        raise ValueError("sample_weight of shape %s does not match labels of shape %s" % (w.shape, tuple(shape)))
    w = w.reshape(w.shape + (1,) * (len(shape) - w.ndim)) if w.ndim else w
    return np.broadcast_to(w, shape).reshape(-1)


class IoU(HostMetric):
    """Intersection over union per class, tp / (tp + fp + fn), from a confusion matrix accumulated
    over everything seen, averaged over ``target_class_ids`` (classes never seen nor predicted do
    not count). Labels and predictions are class ids (``sparse_y_true`` / ``sparse_y_pred``) or
    scores whose arg-max along ``axis`` is taken; ``ignore_class`` labels and ids outside
    [0, num_classes) are left out."""
    _config = ("num_classes", "target_class_ids", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis")

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_true=True,
                 sparse_y_pred=True, axis=-1):
        self.num_classes = int(num_classes)
        self.target_class_ids = [int(c) for c in target_class_ids]
        if not self.target_class_ids or max(self.target_class_ids) >= self.num_classes or min(self.target_class_ids) < 0:
            raise ValueError("%s: target class ids %r must lie in [0, %d)" % (type(self).__name__, target_class_ids,
                                                                               self.num_classes))
        self.ignore_class, self.sparse_y_true, self.sparse_y_pred, self.axis = \
            ignore_class, bool(sparse_y_true), bool(sparse_y_pred), int(axis)
        super().__init__(name, dtype)

    def reset_state(self):
        self.total_cm = np.zeros((self.num_classes, self.num_classes), np.float64)

    def _update(self, y_true, y_pred, sample_weight):
        if not self.sparse_y_true:
            y_true = np.argmax(y_true, axis=self.axis)
        if not self.sparse_y_pred:
            y_pred = np.argmax(y_pred, axis=self.axis)
        y_true, y_pred = y_true.reshape(-1), y_pred.reshape(-1)
        if y_true.size != y_pred.size:
            raise ValueError("%s '%s': %d labels and %d predictions" % (type(self).__name__, self.name, y_true.size,
                                                                       y_pred.size))
        if sample_weight is not None and sample_weight.ndim > 1:  # Keras flattens weights with the labels
            sample_weight = sample_weight.reshape(-1)
        w = _weights(sample_weight, y_true.shape)
        t, p = y_true.astype(np.int64), y_pred.astype(np.int64)  # Keras casts (truncates) to the class id
        keep = (t >= 0) & (t < self.num_classes) & (p >= 0) & (p < self.num_classes)
        if self.ignore_class is not None:
            keep &= t != int(self.ignore_class)
        np.add.at(self.total_cm, (t[keep], p[keep]), w[keep])

    def _result(self):
        cm = self.total_cm
        tp = np.diag(cm)
        denominator = (cm.sum(axis=0) + cm.sum(axis=1) - tp)[self.target_class_ids]
        tp = tp[self.target_class_ids]
        valid = np.count_nonzero(denominator > 1e-9)
        iou = np.divide(tp, denominator, out=np.zeros_like(tp), where=denominator != 0)
        return iou.sum() / valid if valid else 0.0


class MeanIoU(IoU):
    """IoU averaged over every class (the semantic-segmentation metric)."""
    _config = ("num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred", "axis")

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_true=True, sparse_y_pred=True,
                 axis=-1):
        super().__init__(num_classes, range(int(num_classes)), name, dtype, ignore_class, sparse_y_true, sparse_y_pred,
                         axis)


class BinaryIoU(IoU):
    """IoU of 0/1 labels against scores: class 1 where the score is >= ``threshold``."""
    _config = ("target_class_ids", "threshold")

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        self.threshold = float(threshold)
        super().__init__(2, target_class_ids, name, dtype)

    def _update(self, y_true, y_pred, sample_weight):
        super()._update(y_true, (y_pred.astype(np.float32) >= self.threshold).astype(np.int64), sample_weight)


class OneHotIoU(IoU):
    """IoU of one-hot labels against class scores (arg-max along ``axis``)."""
    _config = ("num_classes", "target_class_ids", "ignore_class", "sparse_y_pred", "axis")

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None, sparse_y_pred=False,
                 axis=-1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class, False, sparse_y_pred, axis)


class OneHotMeanIoU(IoU):
    """MeanIoU of one-hot labels against class scores (arg-max along ``axis``)."""
    _config = ("num_classes", "ignore_class", "sparse_y_pred", "axis")

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None, sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, range(int(num_classes)), name, dtype, ignore_class, False, sparse_y_pred, axis)


class _AtThresholds(HostMetric):
    """Confusion counts of binary labels (nonzero: positive) against scores clipped to [0, 1], at
    Keras' thresholds 0, 1/(n-1), ..., 1 (a score counts as positive above a threshold); then the
    best ``dependent`` rate over the thresholds whose ``constrained`` rate reaches ``value``."""
    _value_arg = None  # the constructor's name for `value` ("recall", "precision", ...)

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if not 0 <= float(value) <= 1:
            raise ValueError("%s: %s must be in [0, 1], got %r" % (type(self).__name__, self._value_arg, value))
        if int(num_thresholds) <= 0:
            raise ValueError("%s: num_thresholds must be an integer > 0, got %r" % (type(self).__name__, num_thresholds))
        self.value, self.num_thresholds = float(value), int(num_thresholds)
        self.class_id = None if class_id is None else int(class_id)
        n = self.num_thresholds
        self.thresholds = np.array([0.5] if n == 1 else [0.0] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1.0])
        super().__init__(name, dtype)

    def reset_state(self):
        self.tp, self.fp, self.tn, self.fn = (np.zeros(len(self.thresholds)) for _ in range(4))

    def _update(self, y_true, y_pred, sample_weight):
        if self.class_id is not None:  # one column of (batch, classes) labels and scores
            y_true, y_pred = y_true[..., self.class_id], y_pred[..., self.class_id]
        if y_true.size != y_pred.size:
            raise ValueError("%s '%s': labels of shape %s and predictions of shape %s" % (
                type(self).__name__, self.name, y_true.shape, y_pred.shape))
        w = _weights(sample_weight, y_pred.shape)
        t = (y_true.reshape(-1) != 0)
        p = np.clip(y_pred.reshape(-1).astype(np.float64), 0.0, 1.0)
        above = p[None, :] > self.thresholds[:, None]  # [thresholds, values]
        self.tp += (above & t) @ w
        self.fp += (above & ~t) @ w
        self.fn += (~above & t) @ w
        self.tn += (~above & ~t) @ w

    @staticmethod
    def _rate(a, b):
        return np.divide(a, a + b, out=np.zeros_like(a), where=(a + b) != 0)

    def _best(self, constrained, dependent):
        feasible = constrained >= self.value
        return dependent[feasible].max(initial=0.0) if feasible.any() else 0.0

    def get_config(self):
        return {"name": self.name, self._value_arg: self.value, "num_thresholds": self.num_thresholds,
                "class_id": self.class_id}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class PrecisionAtRecall(_AtThresholds):
    """The best precision where recall >= ``recall``."""
    _value_arg = "recall"

    def __init__(self, recall, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def _result(self):
        return self._best(self._rate(self.tp, self.fn), self._rate(self.tp, self.fp))


class RecallAtPrecision(_AtThresholds):
    """The best recall where precision >= ``precision``."""
    _value_arg = "precision"

    def __init__(self, precision, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def _result(self):
        return self._best(self._rate(self.tp, self.fp), self._rate(self.tp, self.fn))


class SensitivityAtSpecificity(_AtThresholds):
    """The best sensitivity (recall) where specificity tn / (tn + fp) >= ``specificity``."""
    _value_arg = "specificity"

    def __init__(self, specificity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def _result(self):
        return self._best(self._rate(self.tn, self.fp), self._rate(self.tp, self.fn))


class SpecificityAtSensitivity(_AtThresholds):
    """The best specificity where sensitivity (recall) >= ``sensitivity``."""
    _value_arg = "sensitivity"

    def __init__(self, sensitivity, num_thresholds=200, class_id=None, name=None, dtype=None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def _result(self):
        return self._best(self._rate(self.tp, self.fn), self._rate(self.tn, self.fp))


__all__ = ["IoU", "MeanIoU", "BinaryIoU", "OneHotIoU", "OneHotMeanIoU", "PrecisionAtRecall", "RecallAtPrecision",
           "SensitivityAtSpecificity", "SpecificityAtSensitivity"]
