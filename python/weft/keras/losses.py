"""Keras losses over weft's C++ losses (train/losses.h).

Objects (``SparseCategoricalCrossentropy(from_logits=True)``), names (``'mse'``) and the loss
functions (``keras.losses.binary_crossentropy``) all work in ``compile(loss=...)``. Called on
arrays, an object returns the batch's loss as Keras reports it (the mean over the batch,
Keras' "sum_over_batch_size"), a function the per-example values::

    bce = keras.losses.BinaryCrossentropy()
    bce([[0., 1.], [0., 0.]], [[0.6, 0.4], [0.4, 0.6]]).numpy()   # 0.815 (Keras' docstring)
"""
import numpy as np

from .. import _weft
from . import _config, _python_losses as _pl

_cpp = _weft.keras.losses
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", "auto", None)  # Keras 2's "auto": sum_over_batch_size


class Reduction:
    """Keras 2's ``tf.keras.losses.Reduction`` constants (Keras 3 takes the strings themselves)."""
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError("Invalid Reduction Key: %s. Expected keys are %s" % (key, cls.all()))


class Value(np.ndarray):
    """A computed scalar or array, as a numpy array with TensorFlow's ``.numpy()``."""

    def numpy(self):
        return np.asarray(self)


def value(x, dtype=np.float32):
    return np.asarray(x, dtype=dtype).view(Value)


def _arrays(y_true, y_pred):
    return np.asarray(y_true), np.asarray(y_pred, dtype=np.float32)


class Loss:
    """A Keras loss: ``loss(y_true, y_pred, sample_weight=None)`` on arrays, or ``compile(loss=...)``.

    The model always averages the per-example loss over the batch ("sum_over_batch_size");
    ``reduction`` applies to direct calls."""

    def __init__(self, cpp=None, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError("reduction must be one of %s, got %r" % (", ".join(map(repr, _REDUCTIONS)), reduction))
        if cpp is None and type(self).call is Loss.call:
            raise TypeError("keras.losses.Loss is a base class: subclass it and define call(self, y_true, y_pred)")
        self._cpp = cpp
        self.name = name or (cpp.name if cpp is not None else _snake(type(self).__name__))
        self.reduction = reduction

    @property
    def custom(self):
        """Written in Python (a Loss subclass' call, or a function): computed by weft ops, so a model
        compiled with it trains through traced steps (keras/_custom_step.py)."""
        return self._cpp is None

    def call(self, y_true, y_pred):
        """A Loss subclass' per-example loss of graph tensors (Keras' Loss.call)."""
        raise NotImplementedError("%s.call" % type(self).__name__)

    def __call__(self, y_true, y_pred, sample_weight=None):
        from . import _custom_step
        if self._cpp is None:  # Python: weft ops on tensors (values when the inputs are arrays)
            return _custom_step.python_loss(self, y_true, y_pred, sample_weight)
        graph_loss = _custom_step.loss(self, y_true, y_pred, sample_weight)  # graph tensors: ops
        if graph_loss is not None:
            return graph_loss
        yt, yp = _arrays(y_true, y_pred)
        if yp.ndim >= 3:
            # Sequence outputs [B, T, ..., C]: one loss per position, shape y_pred.shape[:-1] (Keras').
            sparse = yt.ndim == yp.ndim - 1
            flat = self._cpp.per_example(yt.reshape(-1) if sparse else yt.reshape(-1, yt.shape[-1]),
                                         yp.reshape(-1, yp.shape[-1]))
            values = np.asarray(flat, np.float64).reshape(yp.shape[:-1])
        else:
            values = self._cpp.per_example(yt, yp).astype(np.float64)
        if sample_weight is not None:  # per example ([B]), per position ([B, T]) or one for all
            sw = np.asarray(sample_weight, dtype=np.float64)
            if values.ndim > 1 and 0 < sw.ndim < values.ndim:
                sw = sw.reshape(sw.shape + (1,) * (values.ndim - sw.ndim))
            values = values * (sw.reshape(values.shape) if sw.size == values.size else sw)
        if self.reduction in ("none", None):
            return value(values)
        total = values.sum()
        return value(total if self.reduction == "sum" else total / max(values.size, 1))

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return "<weft.keras.losses.%s %r>" % (type(self).__name__, self._cpp)


class SparseCategoricalCrossentropy(Loss):
    """Cross-entropy of integer class labels (batch,) or (batch, 1) against (batch, classes) predictions.
    from_logits: True when the last layer has no softmax."""

    def __init__(self, from_logits=False, reduction="sum_over_batch_size", name="sparse_categorical_crossentropy"):
        super().__init__(_cpp.SparseCategoricalCrossentropy(bool(from_logits)), name, reduction)
        self.from_logits = bool(from_logits)

    def get_config(self):
        return dict(super().get_config(), from_logits=self.from_logits)


class CategoricalCrossentropy(Loss):
    """Cross-entropy of one-hot labels (batch, classes); label_smoothing mixes in the uniform distribution."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="categorical_crossentropy"):
        if axis != -1:
            raise ValueError("CategoricalCrossentropy: weft reduces over the last axis only (axis=-1), got axis=%r" % (axis,))
        super().__init__(_cpp.CategoricalCrossentropy(bool(from_logits), float(label_smoothing)), name, reduction)
        self.from_logits, self.label_smoothing = bool(from_logits), float(label_smoothing)

    def get_config(self):
        return dict(super().get_config(), from_logits=self.from_logits, label_smoothing=self.label_smoothing)


class BinaryCrossentropy(Loss):
    """Cross-entropy of 0/1 labels against probabilities (or logits with from_logits=True), mean over the last axis."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1, reduction="sum_over_batch_size",
                 name="binary_crossentropy"):
        if axis != -1:
            raise ValueError("BinaryCrossentropy: weft reduces over the last axis only (axis=-1), got axis=%r" % (axis,))
        super().__init__(_cpp.BinaryCrossentropy(bool(from_logits), float(label_smoothing)), name, reduction)
        self.from_logits, self.label_smoothing = bool(from_logits), float(label_smoothing)

    def get_config(self):
        return dict(super().get_config(), from_logits=self.from_logits, label_smoothing=self.label_smoothing)


class MeanSquaredError(Loss):
    """Mean of (y_true - y_pred)**2 over the last axis."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(_cpp.MeanSquaredError(), name, reduction)


class MeanAbsoluteError(Loss):
    """Mean of |y_true - y_pred| over the last axis."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_absolute_error"):
        super().__init__(_cpp.MeanAbsoluteError(), name, reduction)


class Huber(Loss):
    """0.5 * e**2 where |e| <= delta, delta * |e| - 0.5 * delta**2 beyond; mean over the last axis."""

    def __init__(self, delta=1.0, reduction="sum_over_batch_size", name="huber_loss"):
        super().__init__(_cpp.Huber(float(delta)), name, reduction)
        self.delta = float(delta)

    def get_config(self):
        return dict(super().get_config(), delta=self.delta)


def _simple(cls_name, key, default_name, doc):
    """A Keras loss class without arguments of its own beyond reduction and name."""

    def __init__(self, reduction="sum_over_batch_size", name=default_name):
        Loss.__init__(self, _cpp.get(key), name, reduction)

    return type(cls_name, (Loss,), {"__init__": __init__, "__doc__": doc})


MeanAbsolutePercentageError = _simple("MeanAbsolutePercentageError", "mape", "mean_absolute_percentage_error",
                                      "100 * mean(|y_true - y_pred| / max(|y_true|, 1e-7)) over the last axis.")
MeanSquaredLogarithmicError = _simple("MeanSquaredLogarithmicError", "msle", "mean_squared_logarithmic_error",
                                      "mean((log(1 + y_pred) - log(1 + y_true))**2) over the last axis.")
LogCosh = _simple("LogCosh", "log_cosh", "log_cosh", "mean(log(cosh(y_pred - y_true))) over the last axis.")
Hinge = _simple("Hinge", "hinge", "hinge", "mean(max(1 - y_true * y_pred, 0)); 0/1 labels are taken as -1/1.")
SquaredHinge = _simple("SquaredHinge", "squared_hinge", "squared_hinge",
                       "mean(max(1 - y_true * y_pred, 0)**2); 0/1 labels are taken as -1/1.")
CategoricalHinge = _simple("CategoricalHinge", "categorical_hinge", "categorical_hinge",
                           "max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) over the last axis "
                           "(one-hot labels).")
KLDivergence = _simple("KLDivergence", "kl_divergence", "kl_divergence",
                       "sum(y_true * log(y_true / y_pred)) over the last axis, both clipped to [1e-7, 1].")
Poisson = _simple("Poisson", "poisson", "poisson", "mean(y_pred - y_true * log(y_pred + 1e-7)) over the last axis.")


class CosineSimilarity(Loss):
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred)) over the last axis (-1: same direction)."""

    def __init__(self, axis=-1, reduction="sum_over_batch_size", name="cosine_similarity"):
        if axis != -1:
            raise ValueError("CosineSimilarity: weft reduces over the last axis only (axis=-1), got axis=%r" % (axis,))
        super().__init__(_cpp.get("cosine_similarity"), name, reduction)


def _function(cls, name, doc, **defaults):
    """Keras' loss function `name`: the per-example values of `cls(**kwargs)` (and, passed to
    compile, that loss)."""

    def fn(y_true, y_pred, **kwargs):
        loss = cls(**dict(defaults, **kwargs))
        from . import _custom_step
        values = _custom_step.loss_values(loss, y_true, y_pred)  # graph tensors: ops over the last axis
        if values is not None:
            return values
        return value(loss._cpp.per_example(*_arrays(y_true, y_pred)))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    fn._weft_loss = cls
    return fn


sparse_categorical_crossentropy = _function(SparseCategoricalCrossentropy, "sparse_categorical_crossentropy",
                                            "Per-example sparse categorical cross-entropy (from_logits=False).")
categorical_crossentropy = _function(CategoricalCrossentropy, "categorical_crossentropy",
                                     "Per-example categorical cross-entropy (from_logits, label_smoothing).")
binary_crossentropy = _function(BinaryCrossentropy, "binary_crossentropy",
                                "Per-example binary cross-entropy (from_logits, label_smoothing).")
mean_squared_error = mse = MSE = _function(MeanSquaredError, "mean_squared_error", "Per-example mean squared error.")
mean_absolute_error = mae = MAE = _function(MeanAbsoluteError, "mean_absolute_error", "Per-example mean absolute error.")
huber = _function(Huber, "huber", "Per-example Huber loss (delta=1.0).")
mean_absolute_percentage_error = mape = MAPE = _function(MeanAbsolutePercentageError, "mean_absolute_percentage_error",
                                                         "Per-example mean absolute percentage error.")
mean_squared_logarithmic_error = msle = MSLE = _function(MeanSquaredLogarithmicError, "mean_squared_logarithmic_error",
                                                         "Per-example mean squared logarithmic error.")
log_cosh = logcosh = _function(LogCosh, "log_cosh", "Per-example log-cosh error.")
hinge = _function(Hinge, "hinge", "Per-example hinge loss.")
squared_hinge = _function(SquaredHinge, "squared_hinge", "Per-example squared hinge loss.")
categorical_hinge = _function(CategoricalHinge, "categorical_hinge", "Per-example categorical hinge loss.")
kl_divergence = kld = KLD = _function(KLDivergence, "kl_divergence", "Per-example Kullback-Leibler divergence.")
poisson = _function(Poisson, "poisson", "Per-example Poisson loss.")
cosine_similarity = _function(CosineSimilarity, "cosine_similarity", "Per-example negative cosine similarity.")


class _PythonLoss(Loss):
    """A Keras 3 loss computed by weft ops (_python_losses.py): ``_impl`` of (y_true, y_pred) and
    the keyword arguments named in ``_args``, per example; a model compiled with one trains
    through traced steps."""
    _impl = None
    _args = ()

    def __init__(self, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(None, name, reduction)
        self._kwargs = kwargs
        for k, v in kwargs.items():
            setattr(self, k, v)

    def call(self, y_true, y_pred):
        return type(self)._impl(y_true, y_pred, **self._kwargs)

    def get_config(self):
        return dict(super().get_config(), **self._kwargs)


class BinaryFocalCrossentropy(_PythonLoss):
    """Binary cross-entropy scaled by (1 - p_t)**gamma, so confident right answers weigh less
    (Lin et al. 2017); with apply_class_balancing, positives weigh alpha and negatives 1 - alpha."""
    _impl = staticmethod(_pl.binary_focal)

    def __init__(self, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
                 axis=-1, reduction="sum_over_batch_size", name="binary_focal_crossentropy", dtype=None):
        super().__init__(reduction, name, apply_class_balancing=bool(apply_class_balancing), alpha=float(alpha),
                         gamma=float(gamma), from_logits=bool(from_logits), label_smoothing=float(label_smoothing),
                         axis=int(axis))


class CategoricalFocalCrossentropy(_PythonLoss):
    """Categorical cross-entropy of one-hot labels scaled by alpha * (1 - p)**gamma per class."""
    _impl = staticmethod(_pl.categorical_focal)

    def __init__(self, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_focal_crossentropy", dtype=None):
        super().__init__(reduction, name, alpha=float(alpha), gamma=float(gamma), from_logits=bool(from_logits),
                         label_smoothing=float(label_smoothing), axis=int(axis))


class Dice(_PythonLoss):
    """1 - the Dice coefficient 2|A.B| / (|A| + |B|) of labels and predictions, summed over ``axis``
    (None, Keras' default: over the whole batch)."""
    _impl = staticmethod(_pl.dice)

    def __init__(self, reduction="sum_over_batch_size", name="dice", axis=None, dtype=None):
        super().__init__(reduction, name, axis=axis)


class Tversky(_PythonLoss):
    """1 - tp / (tp + alpha fp + beta fn), soft counts over ``axis`` (None: the whole batch);
    alpha = beta = 0.5 is Dice."""
    _impl = staticmethod(_pl.tversky)

    def __init__(self, alpha=0.5, beta=0.5, reduction="sum_over_batch_size", name="tversky", axis=None, dtype=None):
        super().__init__(reduction, name, alpha=float(alpha), beta=float(beta), axis=axis)


class CategoricalGeneralizedCrossEntropy(_PythonLoss):
    """(1 - p_label**q) / q for integer labels: between cross-entropy (q -> 0) and MAE (q = 1),
    robust to noisy labels (Zhang & Sabuncu 2018); q in (0, 1)."""
    _impl = staticmethod(_pl.generalized_ce)

    def __init__(self, q=0.5, reduction="sum_over_batch_size", name="categorical_generalized_cross_entropy",
                 dtype=None):
        if not 0 < float(q) < 1:
            raise ValueError("CategoricalGeneralizedCrossEntropy: q must be in the interval (0, 1), got %r" % (q,))
        super().__init__(reduction, name, q=float(q))


class CTC(_PythonLoss):
    """Connectionist temporal classification: y_true (batch, max_length) labels padded with 0 (the
    blank), y_pred (batch, time, classes) logits; every example uses all time steps (Keras')."""
    _impl = staticmethod(_pl.ctc)

    def __init__(self, reduction="sum_over_batch_size", name="ctc", dtype=None):
        super().__init__(reduction, name)

    def call(self, y_true, y_pred):
        return _pl.ctc(_ops_cast(y_true, "int32"), y_pred)


def _ops_cast(x, dtype):
    from .. import ops
    return ops.cast(x, dtype)


def _python_function(impl, cls, name, doc):
    """Keras' function form of a Python loss: the per-example values of arrays or tensors."""
    def fn(y_true, y_pred, **kwargs):
        return _pl.per_example(impl, y_true, y_pred, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


binary_focal_crossentropy = _python_function(_pl.binary_focal, BinaryFocalCrossentropy, "binary_focal_crossentropy",
                                             "Per-example binary focal cross-entropy (apply_class_balancing, alpha, "
                                             "gamma, from_logits, label_smoothing, axis).")
categorical_focal_crossentropy = _python_function(_pl.categorical_focal, CategoricalFocalCrossentropy,
                                                  "categorical_focal_crossentropy",
                                                  "Per-example categorical focal cross-entropy (alpha, gamma, "
                                                  "from_logits, label_smoothing, axis).")
dice = _python_function(_pl.dice, Dice, "dice", "Dice loss; axis=None: one value for everything given.")
tversky = _python_function(_pl.tversky, Tversky, "tversky", "Tversky loss (alpha, beta); axis=None: one value.")
categorical_generalized_cross_entropy = _python_function(
    _pl.generalized_ce, CategoricalGeneralizedCrossEntropy, "categorical_generalized_cross_entropy",
    "Per-example generalized cross-entropy of integer labels (q).")
kullback_leibler_divergence = kl_divergence


def ctc(y_true, y_pred):
    """Per-example CTC loss of (batch, max_length) labels padded with 0 and (batch, time, classes) logits."""
    return _pl.per_example(lambda t, p: _pl.ctc(_ops_cast(t, "int32"), p), y_true, y_pred)


def get(identifier):
    """A Loss from a Loss, a Loss class, a loss function of this module, or a Keras name
    ('sparse_categorical_crossentropy', 'categorical_crossentropy', 'binary_crossentropy',
    'mse', 'mae', 'huber', ...)."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier) and hasattr(identifier, "_weft_loss"):
        return identifier._weft_loss()
    if isinstance(identifier, str) and identifier in _PYTHON_NAMES:
        return globals()[_PYTHON_NAMES[identifier]]()
    if isinstance(identifier, str):
        return Loss(_cpp.get(identifier))  # named as Keras' function: 'mse' -> 'mean_squared_error'
    if callable(identifier):  # a Python function of (y_true, y_pred): Keras' LossFunctionWrapper
        return _FunctionLoss(identifier)
    raise TypeError("loss must be a weft.keras.losses object, a function of (y_true, y_pred) or a name, got %r"
                    % (identifier,))


# Keras names of the Python losses for compile(loss="...") and get().
_PYTHON_NAMES = {"binary_focal_crossentropy": "BinaryFocalCrossentropy",
                 "categorical_focal_crossentropy": "CategoricalFocalCrossentropy", "dice": "Dice",
                 "tversky": "Tversky", "categorical_generalized_cross_entropy": "CategoricalGeneralizedCrossEntropy",
                 "ctc": "CTC"}


def serialize(loss):
    """A loss object as Keras config data ({"module", "class_name", "config"}); a loss function by name."""
    return _config.serialize(loss, "loss")


def deserialize(config, custom_objects=None):
    """The loss of serialize's data, or of a Keras name ('mse', 'dice')."""
    if isinstance(config, str):
        fn = globals().get(config)
        return fn if callable(fn) and not isinstance(fn, type) else get(config)
    return _config.deserialize_in(__name__, config, custom_objects)


class _FunctionLoss(Loss):
    """A loss function written in Python, ``fn(y_true, y_pred)`` of weft tensors, reduced as Keras
    reduces it (the mean over every value it returns, for sum_over_batch_size)."""

    def __init__(self, fn, name=None, reduction="sum_over_batch_size"):
        self._fn = fn
        super().__init__(None, name or getattr(fn, "__name__", "loss"), reduction)

    def call(self, y_true, y_pred):
        return self._fn(y_true, y_pred)


def _snake(name):
    import re
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


__all__ = ["Loss", "SparseCategoricalCrossentropy", "CategoricalCrossentropy", "BinaryCrossentropy",
           "MeanSquaredError", "MeanAbsoluteError", "Huber", "sparse_categorical_crossentropy",
           "categorical_crossentropy", "binary_crossentropy", "mean_squared_error", "mse", "mean_absolute_error",
           "mae", "huber", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "LogCosh", "Hinge",
           "SquaredHinge", "KLDivergence", "Poisson", "CosineSimilarity", "mean_absolute_percentage_error", "mape",
           "mean_squared_logarithmic_error", "msle", "log_cosh", "logcosh", "hinge", "squared_hinge", "kl_divergence",
           "kld", "poisson", "cosine_similarity", "CategoricalHinge", "categorical_hinge", "get",
           "BinaryFocalCrossentropy", "CategoricalFocalCrossentropy", "Dice", "Tversky",
           "CategoricalGeneralizedCrossEntropy", "binary_focal_crossentropy", "categorical_focal_crossentropy",
           "dice", "tversky", "categorical_generalized_cross_entropy", "kullback_leibler_divergence", "CTC", "ctc",
           "serialize", "deserialize"]

# Every factory above records its arguments (get_config / from_config / model files).
_config.record_module(globals(), __all__)
__all__.append("Reduction")
