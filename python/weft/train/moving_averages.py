"""``tf.train.ExponentialMovingAverage``: shadow copies of variables that follow them,
shadow -= (1 - decay) * (shadow - var), with ``num_updates`` capping the decay at
(1 + n) / (10 + n) as TF does."""
from .. import framework as _fw
from .. import ops as _ops


class ExponentialMovingAverage:
    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        if zero_debias:
            raise NotImplementedError("ExponentialMovingAverage(zero_debias=True) is not supported by weft")
        self._decay, self._num_updates, self._name = decay, num_updates, name
        self._averages = {}  # variable name -> shadow Variable

    @property
    def name(self):
        return self._name

    def _decay_tensor(self):
        d = _ops.cast(_fw.convert_to_tensor(self._decay), _fw.float32)
        if self._num_updates is not None:
            n = _ops.cast(_fw.convert_to_tensor(self._num_updates), _fw.float32)
            d = _ops.minimum(d, (1.0 + n) / (10.0 + n))
        return d

    def apply(self, var_list=None):
        """Creates a shadow (initialized to the variable's value) for each variable the first time,
        and returns the op that moves every shadow toward its variable (TF2 at top level: done at once)."""
        if var_list is None:
            var_list = _fw.trainable_variables()
        updates = []
        decay = self._decay_tensor()
        for v in var_list:
            if not isinstance(v, _fw.Variable):
                raise TypeError("ExponentialMovingAverage.apply: %r is not a weft Variable" % (v,))
            if not v.dtype.is_floating:
                raise TypeError("ExponentialMovingAverage.apply: %s is %s; averages need a float variable"
                                % (v.name, v.dtype))
            shadow = self._averages.get(v.name)
            if shadow is None:
                base = v.name.split(":")[0]
                shadow = _fw.Variable(getattr(v, "initial_value", v),  # the value v starts from (TF1: initialized_value)
                                      trainable=False, name="%s/%s" % (base, self._name))
                self._averages[v.name] = shadow
            updates.append(shadow.assign_sub((1.0 - _ops.cast(decay, v.dtype)) * (shadow - v)))
        return _fw.group(*updates, name=self._name) if updates else _ops.no_op()

    def average(self, var):
        """The shadow variable of ``var`` (None if apply never saw it)."""
        return self._averages.get(var.name)

    def average_name(self, var):
        return "%s/%s" % (var.name.split(":")[0], self._name)

    def variables_to_restore(self, moving_avg_variables=None):
        """{name to restore from: variable}: each averaged variable read from its shadow's name."""
        out = {}
        for v in _fw.global_variables():
            out[self.average_name(v) if v.name in self._averages else v.name.split(":")[0]] = v
        return out
