"""Keras optimizers over weft's C++ optimizers (train/optimizers.h), and learning-rate schedules
(``optimizers.schedules``, train/schedules.h).

Every optimizer takes Keras' arguments and defaults, plus ``clipnorm``, ``clipvalue``,
``global_clipnorm`` and ``weight_decay``; ``learning_rate`` is a number or a schedule. After
``model.compile(optimizer=opt)``, ``opt.learning_rate`` reads the rate the next step uses and
setting it (a number) changes the rate from the next step on — what ReduceLROnPlateau and
LearningRateScheduler do between epochs::

    opt = keras.optimizers.Adam(1e-3, clipnorm=1.0)
    model.compile(optimizer=opt, loss="mse")
    opt.learning_rate = 1e-4          # or model.optimizer.learning_rate = 1e-4
"""
import types
import warnings

import numpy as np
import weakref

from .. import _weft
from . import _custom_step
from .losses import value as _value

_cpp = _weft.keras.optimizers


class Optimizer:
    """A Keras optimizer: pass it to ``Model.compile(optimizer=...)``."""

    def __init__(self, cpp, name=None, learning_rate=None, gradient_accumulation_steps=None):
        if gradient_accumulation_steps is not None:
            cpp = cpp.with_gradient_accumulation_steps(gradient_accumulation_steps)
        self._cpp = cpp
        self._learning_rate_arg = learning_rate  # as given (a schedule object stays one), for get_config
        self.name = name or cpp.name
        self._model = None  # weakref to the weft.keras Model compiled with it

    def _attach(self, model):
        """Called by Model.compile: learning_rate then reads and sets the compiled model's rate."""
        self._model = weakref.ref(model)

    def _compiled(self):
        model = self._model() if self._model is not None else None
        cpp = getattr(model, "_cpp", None)
        return cpp if cpp is not None and cpp.compiled else None

    @property
    def learning_rate(self):
        """The rate the next training step uses (a schedule's value at the current step), as a
        scalar with TensorFlow's variable methods: ``.numpy()``, ``float()``, ``.assign(rate)``."""
        cpp = self._compiled()
        rate = _value(cpp.learning_rate if cpp is not None else self._cpp.learning_rate_at(0)).view(_LearningRate)
        rate._optimizer = weakref.ref(self)
        return rate

    @learning_rate.setter
    def learning_rate(self, lr):
        if self._cpp.learning_rate_is_schedule:
            raise TypeError("This optimizer was created with a LearningRateSchedule as its learning_rate, hence its "
                            "learning rate is not settable (%r)" % (self._cpp,))
        cpp = self._compiled()
        schedule = hasattr(lr, "_schedule")
        if cpp is not None:
            if schedule:
                raise TypeError("a compiled model's learning rate can be set to a number, not a schedule (%r); "
                                "pass the schedule to the optimizer before compile" % (lr,))
            cpp.set_learning_rate(float(lr))
        self._cpp = self._cpp.with_learning_rate(lr._schedule if schedule else float(lr))
        self._learning_rate_arg = lr

    def learning_rate_at(self, step):
        """The rate the optimizer's schedule (or constant) gives at `step`."""
        return self._cpp.learning_rate_at(int(step))

    lr = learning_rate  # Keras 2's name, still used by many scripts

    @property
    def iterations(self):
        """Training steps taken by the compiled model (0 before), or by custom training steps."""
        steps = _custom_step.optimizer_iterations(self)
        if steps is not None:
            return _value(steps, dtype=np.int64)
        cpp = self._compiled()
        return _value(cpp.iterations if cpp is not None else 0, dtype=np.int64)

    def apply_gradients(self, grads_and_vars, name=None, skip_gradients_aggregation=False, **kwargs):
        """Keras' custom-training-loop update of ``(gradient, variable)`` pairs of graph variables (a
        model's ``trainable_variables`` inside a ``tf.function`` step): this optimizer's update ops
        with its slots and iteration counter in their graph (_custom_step.py); returns the op."""
        if self.gradient_accumulation_steps not in (None, 1):
            raise NotImplementedError("%s.apply_gradients: gradient_accumulation_steps=%d is applied by model.fit and "
                                      "train_on_batch; a custom training step accumulates gradients itself"
                                      % (self.name, self.gradient_accumulation_steps))
        op = _custom_step.apply_gradients(self, grads_and_vars)
        if op is None:
            raise NotImplementedError(
                "%s.apply_gradients takes (gradient, variable) pairs of weft graph variables, as a "
                "tf.function (weft.function) step sees model.trainable_variables; with numpy weights (a model "
                "outside such a step) train with model.fit or model.train_on_batch" % self.name)
        return op

    def minimize(self, loss, var_list, tape=None):
        """``apply_gradients`` of the gradients of ``loss`` with respect to ``var_list`` (graph tensors)."""
        from .. import ops as _ops
        var_list = list(var_list() if callable(var_list) else var_list)
        return self.apply_gradients(zip(_ops.gradients(loss, var_list), var_list))

    _params = ()  # the subclass's own hyper-parameters (constructor arguments)

    def get_config(self):
        """The constructor arguments: ``type(opt).from_config(opt.get_config())`` is the same optimizer
        (a schedule stays the schedule object; a constant rate is the current rate)."""
        schedule = getattr(self, "_learning_rate_arg", None)
        c = {"name": self.name,
             "learning_rate": schedule if self._cpp.learning_rate_is_schedule else self._cpp.learning_rate_at(0)}
        for k in self._params:
            c[k] = getattr(self._cpp, k)
        for k in ("clipnorm", "clipvalue", "global_clipnorm"):
            v = getattr(self._cpp, k)
            c[k] = v if v > 0 else None
        if "weight_decay" not in c:
            c["weight_decay"] = self._cpp.weight_decay or None
        c["gradient_accumulation_steps"] = self.gradient_accumulation_steps
        return c

    @property
    def gradient_accumulation_steps(self):
        """Keras 3's: the variables are updated every this many steps with the mean of their
        gradients (None: every step)."""
        k = self._cpp.gradient_accumulation_steps
        return k if k > 0 else None

    @classmethod
    def from_config(cls, config):
        if cls is Optimizer:
            raise TypeError("from_config: use the optimizer's class (SGD, Adam, ...), not the Optimizer base")
        return cls(**config)

    def __repr__(self):
        return "<weft.keras.optimizers.%r>" % (self._cpp,)


_UNSUPPORTED = ("use_ema", "ema_momentum", "ema_overwrite_frequency", "loss_scale_factor")


def _check_kwargs(kwargs):
    """Keras' handling of the remaining keyword arguments: `decay` is ignored with a warning, the
    rest is an error (weft lacks EMA and loss scaling). Returns Keras 3's
    ``gradient_accumulation_steps`` (None: off)."""
    steps = kwargs.pop("gradient_accumulation_steps", None)
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1):
        raise ValueError("`gradient_accumulation_steps` must be an integer >= 1 or None, received: %r" % (steps,))
    if kwargs.pop("decay", None) is not None:
        warnings.warn("Argument `decay` is no longer supported and will be ignored.")
    kwargs.pop("jit_compile", None)  # a tf.function option: nothing to compile here
    used = {k: v for k, v in kwargs.items() if k in _UNSUPPORTED and v not in (None, False)}
    if used:
        raise NotImplementedError("weft optimizers do not support %s" % ", ".join(sorted(used)))
    unknown = {k: v for k, v in kwargs.items() if k not in _UNSUPPORTED}
    if unknown:
        raise ValueError("Argument(s) not recognized: %r" % (unknown,))
    return None if steps is None else int(steps)


class _LearningRate(type(_value(0.0))):
    """optimizer.learning_rate's value; ``assign`` sets the optimizer's rate (tf.Variable's API)."""

    def assign(self, rate):
        optimizer = self._optimizer() if getattr(self, "_optimizer", None) is not None else None
        if optimizer is None:
            raise ValueError("this learning-rate value no longer belongs to an optimizer")
        optimizer.learning_rate = rate
        self[...] = float(rate)
        return self


def _attrs(*names):
    """Read-only views of the C++ optimizer's hyper-parameters (Keras' attribute names)."""
    return {n: property(lambda self, n=n: getattr(self._cpp, n)) for n in names}


class SGD(Optimizer):
    """Gradient descent with optional momentum / Nesterov momentum."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="SGD", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.SGD(_rate(learning_rate), float(momentum), bool(nesterov), clipnorm=clipnorm,
                                  clipvalue=clipvalue, global_clipnorm=global_clipnorm, weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Adam(Optimizer):
    """Adam (Keras' bias correction; amsgrad keeps the running maximum of v)."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="adam", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Adam(_rate(learning_rate), float(beta_1), float(beta_2), float(epsilon), bool(amsgrad),
                                   clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                   weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class AdamW(Optimizer):
    """Adam with decoupled weight decay: w -= lr * weight_decay * w before each update."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None, name="adamw", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.AdamW(_rate(learning_rate), float(weight_decay), float(beta_1), float(beta_2),
                                    float(epsilon), bool(amsgrad), clipnorm=clipnorm, clipvalue=clipvalue,
                                    global_clipnorm=global_clipnorm), name, learning_rate,
                         accumulate)


class RMSprop(Optimizer):
    """RMSprop: divides by the root of a running mean of g**2 (centered: minus the squared mean of g)."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="rmsprop", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.RMSprop(_rate(learning_rate), float(rho), float(momentum), float(epsilon),
                                      bool(centered), clipnorm=clipnorm, clipvalue=clipvalue,
                                      global_clipnorm=global_clipnorm, weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Adagrad(Optimizer):
    """Adagrad: divides by the root of the sum of g**2 (starting at initial_accumulator_value)."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, name="adagrad", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Adagrad(_rate(learning_rate), float(initial_accumulator_value), float(epsilon),
                                      clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                      weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat's schedule of momentum: beta_1 * (1 - 0.5 * 0.96**t))."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="nadam", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Nadam(_rate(learning_rate), float(beta_1), float(beta_2), float(epsilon),
                                    clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                    weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Adamax(Optimizer):
    """Adam with the infinity norm: u = max(beta_2 * u, |g|) in place of the second moment."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="adamax", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Adamax(_rate(learning_rate), float(beta_1), float(beta_2), float(epsilon),
                                     clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                     weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Adadelta(Optimizer):
    """Adadelta: steps scaled by running RMS of past updates over running RMS of gradients."""

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="adadelta", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Adadelta(_rate(learning_rate), float(rho), float(epsilon), clipnorm=clipnorm,
                                       clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                       weight_decay=weight_decay), name, learning_rate,
                         accumulate)


class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al.) with Keras' arguments: L1 / L2 / L2-shrinkage strengths and beta."""

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="ftrl", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Ftrl(_rate(learning_rate), float(learning_rate_power), float(initial_accumulator_value),
                                   float(l1_regularization_strength), float(l2_regularization_strength),
                                   float(l2_shrinkage_regularization_strength), float(beta), clipnorm=clipnorm,
                                   clipvalue=clipvalue, global_clipnorm=global_clipnorm, weight_decay=weight_decay),
                         name, learning_rate,
                         accumulate)


class Lion(Optimizer):
    """Lion (Chen et al.): w -= lr * sign(beta_1 * m + (1 - beta_1) * g); m = beta_2 * m + (1 - beta_2) * g."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, name="lion", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Lion(_rate(learning_rate), float(beta_1), float(beta_2), clipnorm=clipnorm,
                                   clipvalue=clipvalue, global_clipnorm=global_clipnorm, weight_decay=weight_decay),
                         name, learning_rate,
                         accumulate)


class Lamb(Optimizer):
    """LAMB (You et al. 2019): Adam's step scaled per variable by the trust ratio |w| / |step|,
    for large-batch training."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, weight_decay=None, clipnorm=None,
                 clipvalue=None, global_clipnorm=None, name="lamb", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Lamb(_rate(learning_rate), float(beta_1), float(beta_2), float(epsilon),
                                   clipnorm=clipnorm, clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                   weight_decay=weight_decay), name, learning_rate, accumulate)


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern 2018) with Keras 3's formulas: the second moment of a matrix
    factored into row and column averages, updates clipped to rms <= clip_threshold and scaled
    by the weight's rms, the rate capped at 1/sqrt(step) (Keras caps it whatever
    ``relative_step`` says; train/optimizers.h)."""

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3, clip_threshold=1.0,
                 relative_step=True, weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 name="adafactor", **kwargs):
        accumulate = _check_kwargs(kwargs)
        super().__init__(_cpp.Adafactor(_rate(learning_rate), float(beta_2_decay), float(epsilon_1), float(epsilon_2),
                                        float(clip_threshold), bool(relative_step), clipnorm=clipnorm,
                                        clipvalue=clipvalue, global_clipnorm=global_clipnorm,
                                        weight_decay=weight_decay), name, learning_rate, accumulate)


class LossScaleOptimizer(Optimizer):
    """Keras 3's loss-scaling wrapper, as a pass-through: weft's Keras models train in float32
    (mixed precision is not supported), where gradients do not underflow, so the wrapped
    optimizer's updates are exactly those of ``inner_optimizer``; ``scale_loss`` and
    ``get_scaled_loss`` / ``get_unscaled_gradients`` (TF 2's names) return their argument (a loss
    scale of 1). ``initial_scale`` and ``dynamic_growth_steps`` are kept for get_config."""

    def __init__(self, inner_optimizer, initial_scale=2.0 ** 15, dynamic_growth_steps=2000, name=None, **kwargs):
        inner = get(inner_optimizer)
        _check_kwargs(kwargs)
        self.inner_optimizer = inner
        self.initial_scale, self.dynamic_growth_steps = float(initial_scale), int(dynamic_growth_steps)
        super().__init__(inner._cpp, name or "loss_scale_optimizer", None)
        self._learning_rate_arg = inner._learning_rate_arg

    dynamic = property(lambda self: True)
    dynamic_scale = property(lambda self: _value(1.0))  # the pass-through's scale (float32: none needed)

    def _attach(self, model):
        super()._attach(model)
        self.inner_optimizer._attach(model)

    def scale_loss(self, loss):
        return loss

    def get_scaled_loss(self, loss):
        return loss

    def get_unscaled_gradients(self, grads):
        return list(grads)

    def get_config(self):
        from . import _config
        return {"name": self.name, "inner_optimizer": _config.serialize(self.inner_optimizer, "inner_optimizer"),
                "initial_scale": self.initial_scale, "dynamic_growth_steps": self.dynamic_growth_steps}

    @classmethod
    def from_config(cls, config):
        from . import _config
        config = dict(config)
        config["inner_optimizer"] = _config.deserialize_in(__name__, config["inner_optimizer"])
        return cls(**config)


def serialize(optimizer):
    """An optimizer as Keras config data ({"module", "class_name", "config"})."""
    from . import _config
    return _config.serialize(optimizer, "optimizer")


def deserialize(config, custom_objects=None):
    """The optimizer of serialize's data, or of a Keras name ('adam')."""
    from . import _config
    if isinstance(config, str):
        return get(config)
    return _config.deserialize_in(__name__, config, custom_objects)


for _cls, _names in ((SGD, ("momentum", "nesterov")), (Lamb, ("beta_1", "beta_2", "epsilon")),
                     (Adafactor, ("beta_2_decay", "epsilon_1", "epsilon_2", "clip_threshold", "relative_step")), (Adam, ("beta_1", "beta_2", "epsilon", "amsgrad")),
                     (AdamW, ("beta_1", "beta_2", "epsilon", "amsgrad", "weight_decay")),
                     (RMSprop, ("rho", "momentum", "epsilon", "centered")),
                     (Adagrad, ("initial_accumulator_value", "epsilon")),
                     (Nadam, ("beta_1", "beta_2", "epsilon")), (Adamax, ("beta_1", "beta_2", "epsilon")),
                     (Adadelta, ("rho", "epsilon")), (Lion, ("beta_1", "beta_2")),
                     (Ftrl, ("learning_rate_power", "initial_accumulator_value", "l1_regularization_strength",
                             "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta"))):
    _cls._params = _names
    for _k, _p in _attrs(*_names, "clipnorm", "clipvalue", "global_clipnorm").items():
        setattr(_cls, _k, _p)


class LearningRateSchedule:
    """Base of the schedules: ``schedule(step)`` is the rate at that step (counted from 0).

    Subclass it as in Keras (``__call__(self, step)`` returning a number, computed with Python
    or numpy): weft calls it on the host before each training step."""

    def __init__(self, schedule=None):
        self._cpp_schedule = schedule

    @property
    def _schedule(self):
        # A Python subclass: C++ calls back into __call__ (not cached: no reference cycle through C++).
        return self._cpp_schedule if self._cpp_schedule is not None else _s.FromPython(self)

    def __call__(self, step):
        if self._cpp_schedule is None:
            raise NotImplementedError("a LearningRateSchedule subclass must define __call__(self, step)")
        return _value(self._cpp_schedule(int(step)))

    def get_config(self):
        return {}

    def __repr__(self):
        if self._cpp_schedule is None:
            return "<%s (a Python LearningRateSchedule)>" % type(self).__name__
        return "<weft.keras.optimizers.schedules %r>" % (self._cpp_schedule,)


def _schedule_class(name, factory, doc):
    def __init__(self, *args, **kwargs):
        kwargs.pop("name", None)
        LearningRateSchedule.__init__(self, factory(*args, **kwargs))

    return type(name, (LearningRateSchedule,), {"__init__": __init__, "__doc__": doc})


_s = _weft.keras.schedules
schedules = types.ModuleType("weft.keras.optimizers.schedules", "Learning rate as a function of the step.")
schedules.LearningRateSchedule = LearningRateSchedule
schedules.ExponentialDecay = _schedule_class(
    "ExponentialDecay", _s.ExponentialDecay,
    "ExponentialDecay(initial_learning_rate, decay_steps, decay_rate, staircase=False):\n"
    "initial_learning_rate * decay_rate ** (step / decay_steps), the exponent floored when staircase.")
schedules.PiecewiseConstantDecay = _schedule_class(
    "PiecewiseConstantDecay", _s.PiecewiseConstantDecay,
    "PiecewiseConstantDecay(boundaries, values): values[0] while step <= boundaries[0], values[i] while\n"
    "boundaries[i-1] < step <= boundaries[i], values[-1] after the last boundary.")
schedules.CosineDecay = _schedule_class(
    "CosineDecay", _s.CosineDecay,
    "CosineDecay(initial_learning_rate, decay_steps, alpha=0.0, warmup_target=None, warmup_steps=0):\n"
    "cosine decay to alpha * rate over decay_steps, after an optional linear warm-up to warmup_target.")
schedules.InverseTimeDecay = _schedule_class(
    "InverseTimeDecay", _s.InverseTimeDecay,
    "InverseTimeDecay(initial_learning_rate, decay_steps, decay_rate, staircase=False):\n"
    "initial_learning_rate / (1 + decay_rate * step / decay_steps), the ratio floored when staircase.")
schedules.PolynomialDecay = _schedule_class(
    "PolynomialDecay", _s.PolynomialDecay,
    "PolynomialDecay(initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False):\n"
    "(initial - end) * (1 - step / decay_steps) ** power + end, step capped at decay_steps (cycle: decay_steps\n"
    "grows to the next multiple of itself above step).")
schedules.CosineDecayRestarts = _schedule_class(
    "CosineDecayRestarts", _s.CosineDecayRestarts,
    "CosineDecayRestarts(initial_learning_rate, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0): SGDR's\n"
    "cosine decay restarted after first_decay_steps, each period t_mul times longer and m_mul times lower.")
schedules.StepDecay = _schedule_class("StepDecay", _s.StepDecay,
                                      "StepDecay(initial_learning_rate, step_size, gamma=0.1): rate * gamma ** (step // step_size).")
schedules.LinearWarmup = _schedule_class("LinearWarmup", _s.LinearWarmup,
                                         "LinearWarmup(after, warmup_steps): a linear rise, then the schedule `after`.")
schedules.Constant = _schedule_class("Constant", _s.Constant, "Constant(learning_rate).")


def _rate(lr):
    """A number or a schedule, as the C++ factories take it."""
    if hasattr(lr, "_schedule"):
        return lr._schedule
    if callable(lr) and not isinstance(lr, (int, float)):
        raise TypeError("learning_rate must be a number or a weft.keras.optimizers.schedules object, got %r (Python "
                        "schedules are not supported: weft evaluates the schedule in C++)" % (lr,))
    return float(lr)


def get(identifier):
    """An Optimizer from an Optimizer, an Optimizer class, or a name ('sgd', 'adam', 'adamw',
    'rmsprop', 'adagrad', 'nadam', 'adamax', 'adadelta', 'ftrl', 'lion', 'lamb', 'adafactor'; weft's 'momentum' is SGD
    with momentum 0.9) with Keras' defaults."""
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Optimizer):
        return identifier()
    if isinstance(identifier, str):  # unknown names raise InvalidArgument listing the known ones
        return Optimizer(_cpp.get(identifier))
    raise TypeError("optimizer must be a weft.keras.optimizers object or a name, got %r" % (identifier,))


# TF 2.11-2.15 scripts name the same optimizers under these namespaces; here they are the Keras 3
# classes above (the legacy ones' formulas agree up to where Adagrad's epsilon sits).
legacy = types.ModuleType("weft.keras.optimizers.legacy", "Aliases of weft.keras.optimizers' classes.")
experimental = types.ModuleType("weft.keras.optimizers.experimental", "Aliases of weft.keras.optimizers' classes.")
for _ns in (legacy, experimental):
    for _cls in (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad, Nadam, Adamax, Adadelta, Ftrl):
        setattr(_ns, _cls.__name__, _cls)
experimental.Adafactor = Adafactor  # TF 2.11-2.15's tf.keras.optimizers.experimental.Adafactor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam", "Adamax", "Adadelta", "Ftrl", "Lion",
           "Lamb", "Adafactor", "LossScaleOptimizer", "schedules", "legacy", "experimental", "get", "serialize",
           "deserialize"]

# Every factory above records its arguments (get_config / from_config / model files).
from . import _config  # noqa: E402
_config.record_module(globals(), __all__)
_config.record_module(vars(schedules), [n for n in vars(schedules) if not n.startswith("_")],
                      module="weft.keras.optimizers", prefix="schedules.")
