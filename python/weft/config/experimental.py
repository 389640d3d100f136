"""``tf.config.experimental``: memory growth (accepted: weft's CUDA allocator grows as needed),
op determinism, and the older names of weft.config's device functions."""
from ._state import defaults as _defaults, memory_growth as _memory_growth


def _gpu(device, what):
    from . import PhysicalDevice, list_physical_devices
    if not isinstance(device, PhysicalDevice) or device not in list_physical_devices():
        raise ValueError("%s: %r is not a device of list_physical_devices()" % (what, device))
    if device.device_type != "GPU":
        raise ValueError("%s: cannot set memory growth on non-GPU device %s" % (what, device.name))
    return device


def set_memory_growth(device, enable):
    """Accepted for a GPU of list_physical_devices('GPU'): weft's CUDA allocator already takes GPU
    memory as it is needed rather than all of it up front."""
    _memory_growth[_gpu(device, "set_memory_growth")] = bool(enable)


def get_memory_growth(device):
    return _memory_growth.get(_gpu(device, "get_memory_growth"), False)


def set_device_memory_limit(limit_bytes):
    """weft's memory budget per device, in bytes, for Sessions and Keras models made afterwards
    (None or 0: none): a step that would take a device's live tensors above it fails with
    ``weft.errors.ResourceExhaustedError`` naming the device, the limit, the step's peak and the
    largest live tensors. CPU devices included (TensorFlow's LogicalDeviceConfiguration(memory_limit)
    is for GPUs only); the CLI's ``--device-memory-limit``."""
    limit = 0 if limit_bytes is None else limit_bytes
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValueError("set_device_memory_limit: the limit must be a number of bytes >= 0 or None, got %r"
                         % (limit_bytes,))
    _defaults["device_memory_limit"] = limit


def get_device_memory_limit():
    """The budget set_device_memory_limit set (None: none)."""
    return _defaults["device_memory_limit"] or None


def enable_op_determinism():
    """Accepted and remembered (``is_op_determinism_enabled()``). weft has no nondeterministic-op
    check; for reproducible runs seed with keras.utils.set_random_seed (initial weights, dropout
    and shuffles then repeat)."""
    _defaults["op_determinism"] = True


def disable_op_determinism():
    _defaults["op_determinism"] = False


def is_op_determinism_enabled():
    return _defaults["op_determinism"]


def enable_tensor_float_32_execution(enabled):
    """Whether float32 matrix products on GPUs may use TF32 tensor cores (remembered; weft's CPU
    kernels are exact float32 either way)."""
    from ._state import defaults
    defaults["tf32"] = bool(enabled)


def tensor_float_32_execution_enabled():
    from ._state import defaults
    return defaults["tf32"]


def get_memory_info(device):
    """TF's GPU memory statistics; weft keeps none per device: ValueError for a CPU (as TF) and
    NotImplementedError for a GPU."""
    if "GPU" not in str(device).upper():
        raise ValueError("get_memory_info: %r is not a GPU (TF reports memory for GPUs only)" % (device,))
    raise NotImplementedError("get_memory_info: weft does not track GPU memory per device; see the memory budget "
                              "(set_device_memory_limit) and weft-zoo train --trace")


def get_device_details(device):
    """Details TF knows of a physical device: weft reports none for a CPU ({}), and a GPU's name."""
    from .. import _weft
    if getattr(device, "device_type", None) == "GPU":
        i = int(device.name.rsplit(":", 1)[1])
        names = _weft.gpu_info().get("names", [])
        return {"device_name": names[i]} if i < len(names) else {}
    return {}


def __getattr__(name):
    # TF 2.0's names, kept by TF: tf.config.experimental.list_physical_devices, ...
    if name in ("list_physical_devices", "list_logical_devices", "get_visible_devices", "set_visible_devices"):
        from .. import config
        return getattr(config, name)
    if name in ("VirtualDeviceConfiguration", "set_virtual_device_configuration",
                "get_virtual_device_configuration"):
        from .. import config
        return getattr(config, {"VirtualDeviceConfiguration": "LogicalDeviceConfiguration",
                                "set_virtual_device_configuration": "set_logical_device_configuration",
                                "get_virtual_device_configuration": "get_logical_device_configuration"}[name])
    raise AttributeError("module 'weft.config.experimental' has no attribute %r" % name)


__all__ = ["set_memory_growth", "get_memory_growth", "set_device_memory_limit", "get_device_memory_limit", "enable_op_determinism", "disable_op_determinism",
           "is_op_determinism_enabled", "list_physical_devices", "list_logical_devices", "get_visible_devices",
           "set_visible_devices", "enable_tensor_float_32_execution", "tensor_float_32_execution_enabled",
           "get_memory_info", "get_device_details"]
