"""``tf.compat.v1.metrics``: TF1's streaming metrics. Each returns ``(value, update_op)``: running
``update_op`` adds a batch to local accumulator variables ("<name>/total", "<name>/count", ...) and
``value`` reads the metric over every batch so far. The accumulators are local variables, started
(and reset) by ``local_variables_initializer()`` and left out of checkpoints, as in TF.

    acc, acc_op = tf.metrics.accuracy(labels=y, predictions=tf.argmax(logits, 1))
    sess.run(tf.local_variables_initializer())
    for xb, yb in batches: sess.run(acc_op, {x: xb, y: yb})
    print(sess.run(acc))
"""
from ... import _variables
from ...framework import Tensor, convert_to_tensor, float32
from ...ops import abs as _abs, cast, equal, fill, greater, logical_and, maximum, ones_like, reduce_sum, size, square
from .variable_scope import variable_scope


def _local(name, dtype):
    from ...framework import Variable, constant
    v = Variable(fill([], constant(0, dtype=dtype)), trainable=False, name=name)
    _variables.register_local(v)
    return v


def _weights(values, weights):
    """(sum of values * weights, sum of weights) as float32 tensors; no weights: (sum, element count)."""
    values = cast(values, float32)
    if weights is None:
        return reduce_sum(values), cast(size(values), float32)
    w = convert_to_tensor(weights, None if isinstance(weights, Tensor) else float32)
    w = cast(w, float32) * ones_like(values)  # broadcast to the values, so each value's weight counts
    return reduce_sum(values * w), reduce_sum(w)


def _ratio(num, den, name):
    """(total / count, update op): accumulate num and den, divide (0 when count is 0, as div_no_nan)."""
    with variable_scope(None, default_name=name):
        total, count = _local("total", float32), _local("count", float32)
        update_total, update_count = total.assign_add(num), count.assign_add(den)
        value = total / maximum(count, 1e-30) * cast(greater(count, 0.0), float32)
        update = update_total / maximum(update_count, 1e-30) * cast(greater(update_count, 0.0), float32)
    return value, update


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every value seen."""
    num, den = _weights(convert_to_tensor(values), weights)
    return _ratio(num, den, name or "mean")


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The fraction of predictions equal to the labels (cast to the predictions' dtype)."""
    predictions = convert_to_tensor(predictions)
    labels = convert_to_tensor(labels, None if isinstance(labels, Tensor) else predictions.dtype)
    if labels.dtype != predictions.dtype:
        labels = cast(labels, predictions.dtype)
    num, den = _weights(cast(equal(labels, predictions), float32), weights)
    return _ratio(num, den, name or "accuracy")


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    num, den = _weights(square(convert_to_tensor(predictions) - labels), weights)
    return _ratio(num, den, name or "mean_squared_error")


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    num, den = _weights(_abs(convert_to_tensor(predictions) - labels), weights)
    return _ratio(num, den, name or "mean_absolute_error")


def _true_positive_ratio(labels, predictions, weights, name, of_predicted):
    """true positives / predicted positives (precision) or / actual positives (recall)."""
    if weights is not None:
        raise NotImplementedError("weft's metrics.%s takes no weights" % name)
    y, p = cast(convert_to_tensor(labels), "bool"), cast(convert_to_tensor(predictions), "bool")
    tp = reduce_sum(cast(logical_and(y, p), float32))
    return _ratio(tp, reduce_sum(cast(p if of_predicted else y, float32)), name)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true positives / predicted positives, for boolean (or 0/1) labels and predictions."""
    return _true_positive_ratio(labels, predictions, weights, name or "precision", of_predicted=True)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """true positives / actual positives, for boolean (or 0/1) labels and predictions."""
    return _true_positive_ratio(labels, predictions, weights, name or "recall", of_predicted=False)


__all__ = ["mean", "accuracy", "mean_squared_error", "mean_absolute_error", "precision", "recall"]
