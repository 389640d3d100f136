"""``tf.compat.v1.losses``: the TF1 loss functions, each reduced as TF1's default
``SUM_BY_NONZERO_WEIGHTS`` does: sum(weights * losses) / (number of nonzero weights), which for a
scalar weight w is w * mean(losses)."""
from ...framework import Tensor, convert_to_tensor
from ...ops import abs as _abs, cast, log, maximum, minimum, not_equal, ones_like, reduce_mean, reduce_sum, square
from ...nn import sparse_softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits
from .nn import sigmoid_cross_entropy_with_logits


class Reduction:
    NONE = "none"
    SUM = "weighted_sum"
    MEAN = "weighted_mean"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"


def _reduce(losses, weights, reduction):
    if reduction == Reduction.NONE:
        return losses * weights
    if not isinstance(weights, Tensor):
        w = float(weights)
        if reduction == Reduction.SUM:
            return reduce_sum(losses) * w
        if w == 0.0 and reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
            return reduce_sum(losses) * 0.0
        return reduce_mean(losses) * w
    weighted = losses * weights
    if reduction == Reduction.SUM:
        return reduce_sum(weighted)
    full = weights * ones_like(losses)
    if reduction == Reduction.MEAN:
        return reduce_sum(weighted) / reduce_sum(full)
    if reduction == Reduction.SUM_OVER_BATCH_SIZE:
        return reduce_mean(weighted)
    nonzero = reduce_sum(cast(not_equal(full, 0.0), losses.dtype))
    return reduce_sum(weighted) / maximum(nonzero, 1.0)


def _pair(labels, predictions):
    predictions = convert_to_tensor(predictions)
    labels = convert_to_tensor(labels, None if isinstance(labels, Tensor) else predictions.dtype)
    if labels.dtype != predictions.dtype:
        labels = cast(labels, predictions.dtype)
    return labels, predictions


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=None,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    labels, predictions = _pair(labels, predictions)
    return _reduce(square(predictions - labels), weights, reduction)


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=None,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    labels, predictions = _pair(labels, predictions)
    return _reduce(_abs(predictions - labels), weights, reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=None,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta), e = predictions - labels."""
    labels, predictions = _pair(labels, predictions)
    err = _abs(predictions - labels)
    quad = minimum(err, delta)
    return _reduce(0.5 * square(quad) + delta * (err - quad), weights, reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=None,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    labels, predictions = _pair(labels, predictions)
    return _reduce(-labels * log(predictions + epsilon) - (1.0 - labels) * log(1.0 - predictions + epsilon),
                   weights, reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=None,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of integer class ``labels`` [batch] and ``logits`` [batch, classes]."""
    return _reduce(sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits), weights, reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None, loss_collection=None,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Cross-entropy of one-hot labels and logits; ``label_smoothing`` s moves the labels to
    labels * (1 - s) + s / classes."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(onehot_labels, None if isinstance(onehot_labels, Tensor) else logits.dtype)
    if labels.dtype != logits.dtype:
        labels = cast(labels, logits.dtype)
    if label_smoothing:
        classes = logits.shape[-1]
        if classes is None:
            raise ValueError("softmax_cross_entropy: label_smoothing needs a known number of classes")
        labels = labels * (1.0 - label_smoothing) + label_smoothing / classes
    return _reduce(softmax_cross_entropy_with_logits(labels=labels, logits=logits), weights, reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=None, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Elementwise sigmoid cross-entropy; ``label_smoothing`` s moves labels to labels * (1 - s) + s / 2."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(multi_class_labels, None if isinstance(multi_class_labels, Tensor) else logits.dtype)
    if labels.dtype != logits.dtype:
        labels = cast(labels, logits.dtype)
    if label_smoothing:
        labels = labels * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return _reduce(sigmoid_cross_entropy_with_logits(labels=labels, logits=logits), weights, reduction)


__all__ = ["Reduction", "mean_squared_error", "absolute_difference", "huber_loss", "log_loss",
           "sparse_softmax_cross_entropy", "softmax_cross_entropy", "sigmoid_cross_entropy"]
