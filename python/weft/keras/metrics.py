"""Keras metrics over weft's C++ metrics (train/metrics.h), for ``compile(metrics=[...])`` and
standalone use.

Names ('accuracy', 'acc', 'mse', 'top_k_categorical_accuracy', ...) and objects both work; the
log key is the name given ('acc' logs as 'acc', AUC() as 'auc', AUC(name='roc') as 'roc').
'accuracy' becomes binary, categorical or sparse categorical accuracy from the loss and the
output shape, as Keras resolves it. Like Keras' stateful metrics, each batch adds sufficient
statistics (correct/seen counts, confusion counts at thresholds) to running totals, so an
epoch's AUC, Precision and Recall come from the whole epoch's counts. Standalone::

    m = keras.metrics.AUC(num_thresholds=3)
    m.update_state([0, 0, 1, 1], [0, 0.5, 0.3, 0.9])
    m.result().numpy()    # 0.75 (Keras' docstring)
"""
import functools

import numpy as np

from .. import _weft
from .. import math as _math
from . import _custom_step, losses as _losses

_cpp = _weft.keras.metrics


class Metric:
    """A Keras metric: ``update_state(y_true, y_pred)``, ``result()``, ``reset_state()``, or
    ``compile(metrics=[...])``."""

    def __init__(self, cpp):
        self._cpp = cpp
        self._totals = None

    @property
    def name(self):
        return self._cpp.name

    def update_state(self, y_true, y_pred, sample_weight=None):
        if _custom_step.defer_metric(self.update_state, (y_true, y_pred),
                                     {} if sample_weight is None else {"sample_weight": sample_weight}):
            return  # graph tensors in a traced step: updated with their values after each run
        if sample_weight is not None:
            raise NotImplementedError("weft metrics take no sample_weight (metric '%s')" % self.name)
        stats = np.asarray(self._cpp.stats(np.asarray(y_true), np.asarray(y_pred, dtype=np.float32)), dtype=np.float64)
        self._totals = stats if self._totals is None else self._totals + stats

    def result(self):
        if _custom_step.deferred_result(self) is not None:  # asked inside a traced step: its value after each run
            return _custom_step.deferred_result(self)
        return _losses.value(0.0 if self._totals is None else self._cpp.result(list(self._totals)))

    def reset_state(self):
        self._totals = None

    reset_states = reset_state  # Keras 2's name

    def __call__(self, y_true, y_pred, sample_weight=None):
        """Adds the batch to the state and returns the result so far (as Keras)."""
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()

    _config = ()  # (argument, C++ field) pairs beside the name, for get_config

    def get_config(self):
        c = {"name": self.name}
        for arg, field in self._config:
            c[arg] = getattr(self._cpp, field)
        return c

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return "<weft.keras.metrics.%s name=%r>" % (type(self).__name__, self.name)


def _no(what, value, metric):
    if value:
        raise NotImplementedError("weft.keras.metrics.%s: %s is not supported (got %r)" % (metric, what, value))


class Accuracy(Metric):
    """How often y_pred equals y_true exactly (Keras' Accuracy object; the string 'accuracy' in
    compile resolves to binary / categorical / sparse accuracy instead)."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(_cpp.Accuracy(name))


class BinaryAccuracy(Metric):
    """How often (y_pred > threshold) equals the 0/1 label."""
    _config = (("threshold", "threshold"),)

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(_cpp.BinaryAccuracy(float(threshold), name))


class CategoricalAccuracy(Metric):
    """How often the arg-max of the prediction is the one-hot label's class."""

    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(_cpp.CategoricalAccuracy(name))


class SparseCategoricalAccuracy(Metric):
    """How often the arg-max of the prediction is the integer label."""

    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(_cpp.SparseCategoricalAccuracy(name))


class TopKCategoricalAccuracy(Metric):
    """How often the one-hot label's class is among the k highest predictions."""
    _config = (("k", "k"),)

    def __init__(self, k=5, name="top_k_categorical_accuracy", dtype=None):
        super().__init__(_cpp.TopKCategoricalAccuracy(int(k), name))


class SparseTopKCategoricalAccuracy(Metric):
    """How often the integer label is among the k highest predictions."""
    _config = (("k", "k"),)

    def __init__(self, k=5, name="sparse_top_k_categorical_accuracy", dtype=None):
        super().__init__(_cpp.SparseTopKCategoricalAccuracy(int(k), name))


class _LossMetric(Metric):
    _loss = None

    def __init__(self, name, **kwargs):
        super().__init__(_cpp.LossMetric(self._loss(**kwargs)._cpp, name))


class MeanSquaredError(_LossMetric):
    """Mean of (y_true - y_pred)**2."""
    _loss = _losses.MeanSquaredError

    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(name)


class MeanAbsoluteError(_LossMetric):
    """Mean of |y_true - y_pred|."""
    _loss = _losses.MeanAbsoluteError

    def __init__(self, name="mean_absolute_error", dtype=None):
        super().__init__(name)


class BinaryCrossentropy(_LossMetric):
    """Mean binary cross-entropy."""
    _loss = _losses.BinaryCrossentropy

    def __init__(self, name="binary_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(name, from_logits=from_logits, label_smoothing=label_smoothing)


class CategoricalCrossentropy(_LossMetric):
    """Mean categorical cross-entropy."""
    _loss = _losses.CategoricalCrossentropy

    def __init__(self, name="categorical_crossentropy", dtype=None, from_logits=False, label_smoothing=0.0):
        super().__init__(name, from_logits=from_logits, label_smoothing=label_smoothing)


class SparseCategoricalCrossentropy(_LossMetric):
    """Mean sparse categorical cross-entropy."""
    _loss = _losses.SparseCategoricalCrossentropy

    def __init__(self, name="sparse_categorical_crossentropy", dtype=None, from_logits=False):
        super().__init__(name, from_logits=from_logits)


class MeanSquaredLogarithmicError(_LossMetric):
    """Mean of (log(1 + y_pred) - log(1 + y_true))**2."""
    _loss = _losses.MeanSquaredLogarithmicError

    def __init__(self, name="mean_squared_logarithmic_error", dtype=None):
        super().__init__(name)


class LogCoshError(_LossMetric):
    """Mean of log(cosh(y_pred - y_true))."""
    _loss = _losses.LogCosh

    def __init__(self, name="logcosh", dtype=None):
        super().__init__(name)


class CategoricalHinge(_LossMetric):
    """Mean categorical hinge loss."""
    _loss = _losses.CategoricalHinge

    def __init__(self, name="categorical_hinge", dtype=None):
        super().__init__(name)


def _loss_metric(cls_name, loss, default_name, doc):
    def __init__(self, name=default_name, dtype=None):
        _LossMetric.__init__(self, name)
    return type(cls_name, (_LossMetric,), {"_loss": loss, "__init__": __init__, "__doc__": doc})


MeanAbsolutePercentageError = _loss_metric("MeanAbsolutePercentageError", _losses.MeanAbsolutePercentageError,
                                           "mean_absolute_percentage_error", "Mean of 100 |y_true - y_pred| / |y_true|.")
Poisson = _loss_metric("Poisson", _losses.Poisson, "poisson", "Mean of y_pred - y_true log(y_pred + 1e-7).")
Hinge = _loss_metric("Hinge", _losses.Hinge, "hinge", "Mean hinge loss (0/1 labels taken as -1/1).")
SquaredHinge = _loss_metric("SquaredHinge", _losses.SquaredHinge, "squared_hinge", "Mean squared hinge loss.")
KLDivergence = _loss_metric("KLDivergence", _losses.KLDivergence, "kl_divergence",
                            "Mean Kullback-Leibler divergence of y_pred from y_true.")


class RootMeanSquaredError(Metric):
    """sqrt of the mean squared error over everything seen (not a mean of per-batch roots)."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(_cpp.RootMeanSquaredError(name))


class R2Score(Metric):
    """The coefficient of determination per output of (batch, outputs) predictions, averaged over
    the outputs (Keras' class_aggregation='uniform_average'), from totals over everything seen."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score", dtype=None):
        if class_aggregation != "uniform_average" or num_regressors != 0:
            raise NotImplementedError("weft.keras.metrics.R2Score: class_aggregation='uniform_average' and "
                                      "num_regressors=0 only, got %r and %r" % (class_aggregation, num_regressors))
        super().__init__(_cpp.R2Score(name))


class FBetaScore(Metric):
    """F-beta per class of (batch, classes) one-hot or multi-label targets: predictions positive
    above ``threshold``, or (None) where they are their row's maximum. ``average`` None gives one
    score per class (standalone only: compile's metrics are numbers), 'micro' pools the counts,
    'macro' averages the classes, 'weighted' weights them by their true count."""
    _config = (("average", "average"), ("beta", "beta"), ("threshold", "threshold"))

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        super().__init__(_cpp.FBetaScore(average, float(beta), None if threshold is None else float(threshold), name))

    def result(self):
        if _custom_step.deferred_result(self) is not None:  # asked inside a traced step: its value after each run
            return _custom_step.deferred_result(self)
        if self._cpp.average != "" or self._totals is None:
            return super().result()
        return _losses.value(_cpp.fbeta_per_class(self._cpp, list(self._totals)))

    def get_config(self):
        c = super().get_config()
        c["average"] = c["average"] or None
        c["threshold"] = c["threshold"] if c["threshold"] >= 0 else None
        return c


class F1Score(FBetaScore):
    """FBetaScore with beta = 1."""
    _config = (("average", "average"), ("threshold", "threshold"))

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average, 1.0, threshold, name)


class _Reduce:
    """Keras' Mean and Sum: standalone reductions of the values given to ``update_state`` (they
    have no (y_true, y_pred) form, so compile does not take them, as in Keras)."""

    def __init__(self, name, dtype=None):
        self.name = name
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        if _custom_step.defer_metric(functools.partial(_Reduce.update_state, self), (values,),
                                     {} if sample_weight is None else {"sample_weight": sample_weight}):
            return
        v = np.asarray(values, np.float64)
        w = np.ones_like(v) if sample_weight is None else np.broadcast_to(np.asarray(sample_weight, np.float64), v.shape)
        self._total += float((v * w).sum())
        self._count += float(w.sum())

    def reset_state(self):
        self._total, self._count = 0.0, 0.0

    reset_states = reset_state

    def __call__(self, values, sample_weight=None):
        self.update_state(values, sample_weight)
        return self.result()

    def get_config(self):
        return {"name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return "<weft.keras.metrics.%s name=%r>" % (type(self).__name__, self.name)


class Mean(_Reduce):
    """The (weighted) mean of every value given to update_state: ``m.update_state([1, 3, 5, 7])``."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name)

    def result(self):
        if _custom_step.deferred_result(self) is not None:  # asked inside a traced step: its value after each run
            return _custom_step.deferred_result(self)
        return _losses.value(self._total / self._count if self._count else 0.0)


class Sum(_Reduce):
    """The (weighted) sum of every value given to update_state."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name)

    def result(self):
        if _custom_step.deferred_result(self) is not None:  # asked inside a traced step: its value after each run
            return _custom_step.deferred_result(self)
        return _losses.value(self._total)


class AUC(Metric):
    """Area under the ROC curve (or with curve='PR' the precision-recall curve) from confusion
    counts at num_thresholds thresholds spread over [0, 1], with Keras' 'interpolation' sum;
    labels are positive when nonzero."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation", name=None, dtype=None,
                 thresholds=None, multi_label=False, num_labels=None, label_weights=None, from_logits=False):
        if str(curve).upper() not in ("ROC", "PR") or str(summation_method).lower() != "interpolation":
            raise NotImplementedError("weft.keras.metrics.AUC: curve='ROC' or 'PR' with summation_method="
                                      "'interpolation' (Keras' default), got curve=%r, summation_method=%r"
                                      % (curve, summation_method))
        _no("thresholds", thresholds is not None, "AUC")
        _no("multi_label", multi_label, "AUC")
        _no("label_weights", label_weights is not None, "AUC")
        _no("from_logits", from_logits, "AUC")
        super().__init__(_cpp.AUC(int(num_thresholds), name or "auc", str(curve).upper() == "PR"))

    def get_config(self):
        return {"name": self.name, "num_thresholds": self._cpp.num_thresholds,
                "curve": "PR" if self._cpp.pr_curve else "ROC"}


def _threshold(thresholds, metric):
    if thresholds is None:
        return 0.5
    if np.ndim(thresholds) == 0:
        return float(thresholds)
    raise NotImplementedError("weft.keras.metrics.%s: one threshold only, got %r" % (metric, thresholds))


class Precision(Metric):
    """tp / (tp + fp) with predictions positive above the threshold (0.5)."""
    _config = (("thresholds", "threshold"),)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        _no("top_k", top_k, "Precision")
        _no("class_id", class_id is not None, "Precision")
        super().__init__(_cpp.Precision(_threshold(thresholds, "Precision"), name or "precision"))


class Recall(Metric):
    """tp / (tp + fn) with predictions positive above the threshold (0.5)."""
    _config = (("thresholds", "threshold"),)

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        _no("top_k", top_k, "Recall")
        _no("class_id", class_id is not None, "Recall")
        super().__init__(_cpp.Recall(_threshold(thresholds, "Recall"), name or "recall"))


def _values(cpp, y_true, y_pred):
    return _losses.value(cpp.values(np.asarray(y_true), np.asarray(y_pred, dtype=np.float32)))


def _metric_function(fn):
    """Marks Keras' metric function `fn`: compile(metrics=[fn]) logs it under its name."""
    fn._weft_metric = fn.__name__
    return fn


@_metric_function
def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Per-example binary accuracy: mean over the last axis of (y_pred > threshold) == y_true."""
    return _values(_cpp.BinaryAccuracy(float(threshold)), y_true, y_pred)


@_metric_function
def categorical_accuracy(y_true, y_pred):
    """Per-example: 1 where the arg-max of y_pred is the one-hot label's class."""
    return _values(_cpp.CategoricalAccuracy(), y_true, y_pred)


@_metric_function
def sparse_categorical_accuracy(y_true, y_pred):
    """Per-example: 1 where the arg-max of y_pred is the integer label."""
    return _values(_cpp.SparseCategoricalAccuracy(), y_true, y_pred)


@_metric_function
def top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Per-example: 1 where the one-hot label's class is among the k highest predictions."""
    return _values(_cpp.TopKCategoricalAccuracy(int(k)), y_true, y_pred)


@_metric_function
def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5):
    """Per-example: 1 where the integer label is among the k highest predictions."""
    return _values(_cpp.SparseTopKCategoricalAccuracy(int(k)), y_true, y_pred)


mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error


def _count_class(cls_name, doc):
    def __init__(self, thresholds=None, name=None, dtype=None):
        Metric.__init__(self, getattr(_cpp, cls_name)(_threshold(thresholds, cls_name), name or ""))

    return type(cls_name, (Metric,), {"__init__": __init__, "__doc__": doc, "_config": (("thresholds", "threshold"),)})


TruePositives = _count_class("TruePositives", "Labels > 0 predicted above the threshold (0.5), over the epoch.")
FalsePositives = _count_class("FalsePositives", "Labels == 0 predicted above the threshold (0.5), over the epoch.")
TrueNegatives = _count_class("TrueNegatives", "Labels == 0 predicted at or below the threshold, over the epoch.")
FalseNegatives = _count_class("FalseNegatives", "Labels > 0 predicted at or below the threshold, over the epoch.")


def get(identifier):
    """A Metric from a Metric, a Metric class, or a Keras name ('accuracy', 'acc',
    'binary_accuracy', 'categorical_accuracy', 'sparse_categorical_accuracy',
    'top_k_categorical_accuracy', 'sparse_top_k_categorical_accuracy', 'mse', 'mae', 'auc', ...)."""
    if isinstance(identifier, (Metric, MeanMetricWrapper, HostMetric)):
        return identifier
    if isinstance(identifier, _Reduce) or (isinstance(identifier, type) and issubclass(identifier, _Reduce)):
        raise TypeError("keras.metrics.%s reduces the values given to update_state; compile's metrics take "
                        "(y_true, y_pred): use it standalone" % getattr(identifier, "__name__", type(identifier).__name__))
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        return Metric(_cpp.get(identifier))
    if callable(identifier) and hasattr(identifier, "_weft_metric"):  # a metric function: logged by its name
        return Metric(_cpp.get(identifier._weft_metric))
    if callable(identifier) and hasattr(identifier, "_weft_loss"):  # a loss function as a metric
        return Metric(_cpp.get(identifier.__name__))
    if callable(identifier) and not isinstance(identifier, type):  # Keras' MeanMetricWrapper
        return MeanMetricWrapper(identifier)
    raise TypeError("metrics must be weft.keras.metrics objects, names or functions of (y_true, y_pred), got %r"
                    % (identifier,))


class MeanMetricWrapper(Mean):
    """A metric function written in Python, ``fn(y_true, y_pred)`` of weft tensors: the mean of
    its values over the batches given (Keras' MeanMetricWrapper). A model compiled with one
    trains and evaluates through traced steps (keras/_custom_step.py)."""

    custom = True

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or getattr(fn, "__name__", "metric"))
        self._fn, self._kwargs = fn, kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        from .. import framework as _fw
        if not any(isinstance(t, _fw.Tensor) for t in (y_true, y_pred)):
            y_true, y_pred = _fw.constant(np.asarray(y_true)), _fw.constant(np.asarray(y_pred, np.float32))
        values = self._fn(y_true, y_pred, **self._kwargs)
        if _custom_step.current() is None:  # arrays in: the values now (tensors of constants)
            values = np.asarray(values)
        super().update_state(values, sample_weight)


__all__ = ["Metric", "Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "SparseCategoricalAccuracy",
           "TopKCategoricalAccuracy", "SparseTopKCategoricalAccuracy", "MeanSquaredError", "MeanAbsoluteError",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "AUC", "Precision",
           "Recall", "MeanSquaredLogarithmicError", "LogCoshError", "CategoricalHinge", "RootMeanSquaredError",
           "R2Score", "FBetaScore", "F1Score", "Mean", "Sum", "MeanMetricWrapper", "TruePositives", "FalsePositives", "TrueNegatives", "FalseNegatives", "binary_accuracy", "categorical_accuracy", "sparse_categorical_accuracy",
           "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", "mean_squared_error", "mse",
           "mean_absolute_error", "mae", "get"]


class CosineSimilarity(MeanMetricWrapper):
    """The mean over samples of the cosine similarity of y_true and y_pred along ``axis`` (Keras':
    positive, unlike the loss of that name)."""

    def __init__(self, name="cosine_similarity", dtype=None, axis=-1):
        def cosine_similarity(y_true, y_pred):
            from .. import nn, ops
            y_true = ops.cast(y_true, "float32")
            return ops.reduce_sum(nn.l2_normalize(y_true, axis=axis) * nn.l2_normalize(y_pred, axis=axis), axis=axis)
        super().__init__(cosine_similarity, name=name)


__all__ += ["MeanAbsolutePercentageError", "Poisson", "Hinge", "SquaredHinge", "KLDivergence", "CosineSimilarity"]


def _pearson(y_true, y_pred, axis=-1):
    from .. import ops
    t = y_true - ops.reduce_mean(y_true, axis=axis, keepdims=True)
    p = y_pred - ops.reduce_mean(y_pred, axis=axis, keepdims=True)
    t = t / _math.reduce_std(t, axis=axis, keepdims=True)
    p = p / _math.reduce_std(p, axis=axis, keepdims=True)
    return ops.reduce_mean(t * p, axis=axis)


def _concordance(y_true, y_pred, axis=-1):
    # Keras 3's formula as written (keras/src/metrics/correlation_metrics.py), its covariance
    # centring y_true on y_pred's mean included: the values match Keras'.
    from .. import ops
    t_mean = ops.reduce_mean(y_true, axis=axis, keepdims=True)
    p_mean = ops.reduce_mean(y_pred, axis=axis, keepdims=True)
    t_var = _math.reduce_variance(y_true - t_mean, axis=axis, keepdims=True)
    p_var = _math.reduce_variance(y_pred - p_mean, axis=axis, keepdims=True)
    covar = (y_true - p_mean) * (y_pred - p_mean)
    norm = t_var + p_var + ops.square(t_mean - p_mean)
    return ops.reduce_mean(2.0 * covar / (norm + _losses._pl._EPSILON), axis=axis)


def pearson_correlation(y_true, y_pred, axis=-1):
    """Per-sample Pearson correlation of y_true and y_pred along ``axis``."""
    return _losses._pl.per_example(_pearson, y_true, y_pred, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Per-sample concordance correlation (Lin's) of y_true and y_pred along ``axis``."""
    return _losses._pl.per_example(_concordance, y_true, y_pred, axis=axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The mean over samples of pearson_correlation along ``axis``."""

    def __init__(self, name="pearson_correlation", dtype=None, axis=-1):
        super().__init__(lambda t, p: _pearson(_cast_like(t, p), p, axis), name=name)
        self.axis = axis

    def get_config(self):
        return {"name": self.name, "axis": self.axis}


class ConcordanceCorrelation(MeanMetricWrapper):
    """The mean over samples of concordance_correlation along ``axis``."""

    def __init__(self, name="concordance_correlation", dtype=None, axis=-1):
        super().__init__(lambda t, p: _concordance(_cast_like(t, p), p, axis), name=name)
        self.axis = axis

    def get_config(self):
        return {"name": self.name, "axis": self.axis}


def _cast_like(y_true, y_pred):
    from .. import ops
    return ops.cast(y_true, y_pred.dtype)


# Keras' metric functions that are its loss functions, and its upper-case aliases.
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
huber = _losses.huber
kld = KLD = kullback_leibler_divergence = _losses.kl_divergence
logcosh = _losses.log_cosh
mape = MAPE = _losses.mean_absolute_percentage_error
msle = MSLE = _losses.mean_squared_logarithmic_error
poisson = _losses.poisson
MSE, MAE = mse, mae

from ._host_metrics import (IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU, PrecisionAtRecall,  # noqa: E402
                            RecallAtPrecision, SensitivityAtSpecificity, SpecificityAtSensitivity, HostMetric)


def serialize(metric):
    """A metric object as Keras config data ({"module", "class_name", "config"}); a function by name."""
    from . import _config
    if isinstance(metric, (Metric, _Reduce, HostMetric)) and not isinstance(metric, MeanMetricWrapper) \
            or type(metric) in (PearsonCorrelation, ConcordanceCorrelation, CosineSimilarity):
        cls = type(metric)
        return {"module": __name__, "class_name": cls.__name__, "config": _config.serialize(metric.get_config())}
    return _config.serialize(metric, "metric")


def deserialize(config, custom_objects=None):
    """The metric of serialize's data, or of a Keras name ('accuracy', 'mse', ...)."""
    from . import _config
    if isinstance(config, str):
        fn = globals().get(config)
        return fn if callable(fn) and not isinstance(fn, type) else get(config)
    return _config.deserialize_in(__name__, config, custom_objects)


__all__ += ["PearsonCorrelation", "ConcordanceCorrelation", "pearson_correlation", "concordance_correlation",
            "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
            "binary_focal_crossentropy", "categorical_focal_crossentropy", "hinge", "squared_hinge",
            "categorical_hinge", "huber", "kld", "KLD", "kullback_leibler_divergence", "logcosh", "mape", "MAPE",
            "msle", "MSLE", "poisson", "MSE", "MAE", "IoU", "MeanIoU", "BinaryIoU", "OneHotIoU", "OneHotMeanIoU",
            "PrecisionAtRecall", "RecallAtPrecision", "SensitivityAtSpecificity", "SpecificityAtSensitivity",
            "serialize", "deserialize"]
