"""Distribution strategies, as tf.distribute names them.

    strategy = weft.distribute.MirroredStrategy()        # the CPU devices of this process
    with strategy.scope():
        model = weft.keras.Sequential([...])             # variables mirrored on every replica
        model.compile(...)
    model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync)   # the global batch

MirroredStrategy: one copy of every variable per device, gradients all-reduced, identical updates.
CentralStorageStrategy: variables on one device, computation replicated, gradients summed there.
OneDeviceStrategy: everything on one device. A model remembers the strategy whose scope it was
created in (compile and fit may then run outside the scope); a model created outside a scope and
compiled inside one is an error, as in TensorFlow. See docs/distributed.md.
"""
import contextlib
import os
import threading

from . import _weft

_local = threading.local()


def _default_cpu_devices():
    """CPU devices a MirroredStrategy() without arguments uses: $WEFT_NUM_CPU_DEVICES, else one per
    core up to 2 (each device needs a core of its own to be a real replica)."""
    env = os.environ.get("WEFT_NUM_CPU_DEVICES")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


class Strategy:
    """Base of the strategies: ``scope()``, ``num_replicas_in_sync``, ``extended devices``."""

    def __init__(self, cpp):
        self._cpp = cpp

    @property
    def num_replicas_in_sync(self):
        return self._cpp.num_replicas_in_sync

    @property
    def devices(self):
        """The replicas' devices (full names)."""
        return tuple(self._cpp.devices)

    @contextlib.contextmanager
    def scope(self):
        """Models (and their variables) created inside are distributed by this strategy."""
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        self._cpp._enter()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()
            self._cpp._exit()

    def __repr__(self):
        return "<weft.distribute.%s over %s>" % (type(self).__name__, ", ".join(self.devices))


class OneDeviceStrategy(Strategy):
    def __init__(self, device="/device:CPU:0"):
        super().__init__(_weft.distribute.OneDeviceStrategy(device))


class MirroredStrategy(Strategy):
    """Mirrors variables over ``devices`` (names like "/device:CPU:1"; default: the CPU devices of
    this process, see _default_cpu_devices)."""

    def __init__(self, devices=None, cross_device_ops=None):
        if devices is None:
            cpp = _weft.distribute.MirroredStrategy(_default_cpu_devices())
        else:
            cpp = _weft.distribute.MirroredStrategy([str(d) for d in devices])
        super().__init__(cpp)


class CentralStorageStrategy(Strategy):
    """Variables on ``parameter_device`` (CPU:0), computation replicated over ``compute_devices``."""

    def __init__(self, compute_devices=None, parameter_device="/job:localhost/replica:0/task:0/device:CPU:0"):
        if compute_devices is None:
            cpp = _weft.distribute.CentralStorageStrategy(_default_cpu_devices())
        else:
            cpp = _weft.distribute.CentralStorageStrategy([str(d) for d in compute_devices], parameter_device)
        super().__init__(cpp)


def get_strategy():
    """The strategy whose scope is active on this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def has_strategy():
    return get_strategy() is not None


__all__ = ["Strategy", "OneDeviceStrategy", "MirroredStrategy", "CentralStorageStrategy", "get_strategy",
           "has_strategy"]
