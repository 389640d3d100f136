"""TF1's optimizers (``tf.compat.v1.train.*Optimizer``) over weft graphs, with TF1's update rules.

    opt = weft.train.AdamOptimizer(learning_rate=0.01)
    train_op = opt.minimize(loss, global_step=weft.train.get_or_create_global_step())
    # or: grads_and_vars = opt.compute_gradients(loss); train_op = opt.apply_gradients(grads_and_vars)

Each variable's update (and its slots: Momentum's accumulator, Adam's m and v, ...) is placed on
the variable's own device, whatever device block ``minimize`` is called in, so a graph whose
variables live on ``/job:ps/task:0`` updates them there (through ``Session(server.target)``).
Gradient descent, momentum and Adam use the training ops ApplyGradientDescent / ApplyMomentum /
ApplyAdam (ops/optimizer.cc); RMSProp and Adagrad are built from Assign ops with the same rules.
"""
from .. import _variables
from ..framework import Tensor, Variable, constant, control_dependencies, convert_to_tensor, group
from ..ops import gradients, raw_ops, cast, sqrt, square, rsqrt, fill as fill_op
from .training_util import _increment


class Optimizer:
    """Base class: ``compute_gradients``, ``apply_gradients``, ``minimize``, slots. Subclasses
    define ``_create_slots(var_list)``, ``_apply_dense(grad, var)`` and optionally ``_finish``."""

    GATE_NONE, GATE_OP, GATE_GRAPH = 0, 1, 2

    def __init__(self, use_locking, name):
        if not name:
            raise ValueError("an optimizer needs a name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}      # slot name -> {variable node name: slot Variable}
        self._non_slots = []  # Adam's beta powers

    def get_name(self):
        return self._name

    # ---- gradients ---------------------------------------------------------------------------

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """A list of (gradient, variable) for ``var_list`` (default: the graph's trainable
        variables); the gradient is None for a variable the loss does not depend on.
        ``gate_gradients``, ``aggregation_method`` and ``colocate_gradients_with_ops`` are accepted
        for TF's signature: weft's gradient ops are always placed with their forward ops."""
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        loss = convert_to_tensor(loss)
        if var_list is None:
            var_list = _variables.trainable(loss.graph)
        var_list = list(var_list.values() if isinstance(var_list, dict) else var_list)
        if not var_list:
            raise ValueError("No variables to optimize: the graph of %s has no trainable variables and var_list "
                             "is empty" % loss.name)
        for v in var_list:
            if not isinstance(v, Variable):
                raise TypeError("var_list must hold weft Variables, got %r" % (v,))
        grads = gradients(loss, var_list, grad_ys=grad_loss)
        return list(zip(grads, var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """An operation that applies the gradients (pairs with a None gradient are skipped) and then,
        when ``global_step`` is given, adds one to it."""
        pairs = [(g, v) for g, v in grads_and_vars]
        if not pairs:
            raise ValueError("No variables provided.")
        for g, v in pairs:
            if not isinstance(v, Variable):
                raise TypeError("apply_gradients: %r is not a weft Variable" % (v,))
        applied = [(g, v) for g, v in pairs if g is not None]
        if not applied:
            raise ValueError("No gradients provided for any variable: %s." % [v.op.name for _, v in pairs])
        graph = applied[0][1].graph
        with graph.as_default(), graph.name_scope(name or self._name):  # the variables' graph, default or not
            self._create_slots([v for _, v in applied])
            self._prepare()
            updates = []
            for g, v in applied:
                if g.dtype != v.dtype:
                    raise TypeError("apply_gradients: gradient %s is %s but variable %s is %s" %
                                    (g.name, g.dtype, v.op.name, v.dtype))
                with _on_device_of(v), graph.name_scope("update_" + v.op.name):
                    updates.append(self._apply_dense(g, v))
            finish = self._finish(updates)
            if global_step is None:
                return finish
            with control_dependencies([finish]), _on_device_of(global_step):
                return _increment(global_step).op

    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """``apply_gradients(compute_gradients(loss, var_list), global_step)``."""
        grads_and_vars = self.compute_gradients(loss, var_list=var_list, grad_loss=grad_loss)
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError("No gradients provided for any variable, check your graph for ops that do not support "
                             "gradients, between variables %s and loss %s." %
                             ([v.op.name for _, v in grads_and_vars], convert_to_tensor(loss).name))
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    # ---- slots -------------------------------------------------------------------------------

    def get_slot_names(self):
        return sorted(self._slots)

    def get_slot(self, var, name):
        """The slot ``name`` ("m", "v", "momentum", ...) of ``var``, or None."""
        return self._slots.get(name, {}).get(var.op.name)

    def variables(self):
        """The optimizer's variables: its slots and non-slot variables."""
        out = list(self._non_slots)
        for name in sorted(self._slots):
            out.extend(self._slots[name].values())
        return out

    def _make_variable(self, value, name, colocate_with):
        with _on_device_of(colocate_with), colocate_with.graph.name_scope(None):
            var = Variable(value, trainable=False, name=name)
        _variables.register(var, trainable=False)
        return var

    def _slot(self, var, slot_name, fill=0.0, suffix=None):
        """A slot of ``var``'s shape and dtype filled with ``fill``, named "<var>/<suffix>" as TF1 does."""
        table = self._slots.setdefault(slot_name, {})
        if var.op.name not in table:
            if any(d is None for d in var.shape):
                raise ValueError("optimizer %s: variable %s has a partly unknown shape %s" %
                                 (self._name, var.op.name, var.shape))
            value = fill_op(list(var.shape), constant(fill, dtype=var.dtype))
            table[var.op.name] = self._make_variable(value, "%s/%s" % (var.op.name, suffix or self._name), var)
        return table[var.op.name]

    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _finish(self, update_ops):
        return group(*update_ops, name="update")

    def _hyper(self, value, var, name):
        """A hyperparameter (number, tensor or zero-argument callable) as a tensor of var's dtype."""
        if callable(value) and not isinstance(value, Tensor):
            value = value()
        if isinstance(value, Tensor):
            return value if value.dtype == var.dtype else cast(value, var.dtype)
        return constant(value, dtype=var.dtype, name=name)


class _on_device_of:  # noqa: N801 - used as a context manager like weft.device
    """Places new operations on ``var``'s device alone (outer device blocks are cleared)."""

    def __init__(self, var):
        self.graph = var.graph
        self.spec = var.op.device

    def __enter__(self):
        self._outer = self.graph.device(None)
        self._outer.__enter__()
        self._inner = self.graph.device(self.spec) if self.spec else None
        if self._inner is not None:
            self._inner.__enter__()

    def __exit__(self, *exc):
        if self._inner is not None:
            self._inner.__exit__(*exc)
        self._outer.__exit__(*exc)
        return False


class GradientDescentOptimizer(Optimizer):
    """var -= learning_rate * grad."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad, var):
        return raw_ops.ApplyGradientDescent(var, self._hyper(self._learning_rate, var, "learning_rate"), grad).op


class MomentumOptimizer(Optimizer):
    """accum = momentum * accum + grad; var -= learning_rate * accum (use_nesterov:
    var -= learning_rate * (grad + momentum * accum)). The slot is "momentum" ("<var>/Momentum")."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate, self._momentum, self._use_nesterov = learning_rate, momentum, use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "momentum")

    def _apply_dense(self, grad, var):
        return raw_ops.ApplyMomentum(var, self.get_slot(var, "momentum"),
                                     self._hyper(self._learning_rate, var, "learning_rate"), grad,
                                     self._hyper(self._momentum, var, "momentum"),
                                     use_nesterov=bool(self._use_nesterov)).op


class AdamOptimizer(Optimizer):
    """TF1's Adam, with its "epsilon hat": at step t,
    lr_t = learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t); m = beta1 * m + (1 - beta1) * grad;
    v = beta2 * v + (1 - beta2) * grad^2; var -= lr_t * m / (sqrt(v) + epsilon).
    Slots "m" and "v" ("<var>/Adam", "<var>/Adam_1"); beta1^t and beta2^t are the variables
    "beta1_power" and "beta2_power", on the first variable's device, advanced after each update."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-08, use_locking=False, name="Adam"):
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon
        self._beta1_power = self._beta2_power = None

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda v: v.op.name)  # TF1 colocates the powers with the first by name
        if self._beta1_power is None:
            self._beta1_power = self._make_variable(constant(self._beta1, dtype=first.dtype), "beta1_power", first)
            self._beta2_power = self._make_variable(constant(self._beta2, dtype=first.dtype), "beta2_power", first)
            self._non_slots = [self._beta1_power, self._beta2_power]
        for v in var_list:
            self._slot(v, "m", suffix=self._name)
            self._slot(v, "v", suffix=self._name + "_1")

    def _apply_dense(self, grad, var):
        return raw_ops.ApplyAdam(var, self.get_slot(var, "m"), self.get_slot(var, "v"),
                                 cast(self._beta1_power, var.dtype), cast(self._beta2_power, var.dtype),
                                 self._hyper(self._lr, var, "learning_rate"), self._hyper(self._beta1, var, "beta1"),
                                 self._hyper(self._beta2, var, "beta2"), self._hyper(self._epsilon, var, "epsilon"),
                                 grad).op

    def _finish(self, update_ops):
        with control_dependencies(update_ops), _on_device_of(self._beta1_power):
            b1 = self._beta1_power.assign(self._beta1_power * self._hyper(self._beta1, self._beta1_power, "beta1"))
            b2 = self._beta2_power.assign(self._beta2_power * self._hyper(self._beta2, self._beta2_power, "beta2"))
        return group(*update_ops, b1, b2, name="update")


class RMSPropOptimizer(Optimizer):
    """TF1's RMSProp: ms = decay * ms + (1 - decay) * grad^2 (ms starts at ones, as in TF1);
    mom = momentum * mom + learning_rate * grad / sqrt(ms + epsilon); var -= mom. ``centered``
    also tracks mg = decay * mg + (1 - decay) * grad and divides by sqrt(ms - mg^2 + epsilon).
    Slots "rms", "momentum" (and "mg"): "<var>/RMSProp", "<var>/RMSProp_1" ("<var>/RMSProp_2")."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "rms", fill=1.0, suffix=self._name)
            self._slot(v, "momentum", suffix=self._name + "_1")
            if self._centered:
                self._slot(v, "mg", suffix=self._name + "_2")

    def _apply_dense(self, grad, var):
        # Each Assign consumes values computed from the slot's old value, so the data edges order
        # every read of a slot before its write.
        decay = self._hyper(self._decay, var, "decay")
        one_minus = 1.0 - decay
        ms = self.get_slot(var, "rms")
        mom = self.get_slot(var, "momentum")
        ms_t = ms.assign(decay * ms + one_minus * square(grad))
        denom = ms_t
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_t = mg.assign(decay * mg + one_minus * grad)
            denom = ms_t - square(mg_t)
        step = self._hyper(self._lr, var, "learning_rate") * grad * \
            rsqrt(denom + self._hyper(self._epsilon, var, "epsilon"))
        mom_t = mom.assign(self._hyper(self._momentum, var, "momentum") * mom + step)
        return var.assign_sub(mom_t).op


class AdagradOptimizer(Optimizer):
    """TF1's Adagrad: accum += grad^2 (accum starts at initial_accumulator_value);
    var -= learning_rate * grad / sqrt(accum). Slot "accumulator" ("<var>/Adagrad")."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError("initial_accumulator_value must be positive: %s" % initial_accumulator_value)
        super().__init__(use_locking, name)
        self._lr, self._initial = learning_rate, initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            self._slot(v, "accumulator", fill=self._initial)

    def _apply_dense(self, grad, var):
        acc_t = self.get_slot(var, "accumulator").assign_add(square(grad))
        return var.assign_sub(self._hyper(self._lr, var, "learning_rate") * grad / sqrt(acc_t)).op


__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer", "RMSPropOptimizer",
           "AdagradOptimizer"]
