"""``weft.config``: TensorFlow's ``tf.config`` -- the devices weft sees and the process-wide
defaults that Sessions and Keras models made afterwards take.

    gpus = tf.config.list_physical_devices("GPU")       # [] on a machine without a usable GPU
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    tf.config.threading.set_intra_op_parallelism_threads(2)

Devices: one CPU (``/physical_device:CPU:0``) and the GPUs weft's CUDA build found
(``weft.gpu_info()``). ``set_visible_devices`` may hide every GPU (Sessions and Keras models made
afterwards place nothing on a GPU) or keep them all; CPUs cannot be hidden, as in TensorFlow.
Settings apply to Sessions and models created after the call (TensorFlow refuses most of them once
its runtime has started; weft has no such moment).
"""
import collections

from .. import _weft
from . import experimental, optimizer, threading  # noqa: F401
from ._state import defaults as _defaults


class PhysicalDevice(collections.namedtuple("PhysicalDevice", ["name", "device_type"])):
    """A device weft found: ``PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')``."""
    __slots__ = ()


class LogicalDevice(collections.namedtuple("LogicalDevice", ["name", "device_type"])):
    """A device graphs run on: ``LogicalDevice(name='/device:CPU:0', device_type='CPU')``."""
    __slots__ = ()


def _device_type(device_type):
    if device_type is None:
        return None
    if not isinstance(device_type, str):
        raise TypeError("device_type must be a string such as 'CPU' or 'GPU', got %r" % (device_type,))
    return device_type.upper()


def list_physical_devices(device_type=None):
    """The devices of ``device_type`` ('CPU', 'GPU'; None: all) that weft found, CPU first."""
    kind = _device_type(device_type)
    found = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    found += [PhysicalDevice("/physical_device:GPU:%d" % i, "GPU") for i in range(_weft.gpu_info()["count"])]
    return [d for d in found if kind is None or d.device_type == kind]


def get_visible_devices(device_type=None):
    """The physical devices that Sessions and Keras models use (all, unless set_visible_devices hid
    the GPUs)."""
    kind = _device_type(device_type)
    return [d for d in list_physical_devices(kind) if d.device_type != "GPU" or _defaults["use_gpus"]]


def set_visible_devices(devices, device_type=None):
    """Makes ``devices`` (a PhysicalDevice or a list of them, from list_physical_devices) the ones of
    ``device_type`` (None: of every type, so unlisted GPUs are hidden) that Sessions and Keras
    models made afterwards use. weft can hide every GPU or none (to use some of them, start the process with
    CUDA_VISIBLE_DEVICES); CPUs cannot be hidden."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    known = list_physical_devices()
    for d in devices:
        if d not in known:
            raise ValueError("set_visible_devices: %r is not one of list_physical_devices(): %r" % (d, known))
    kind = _device_type(device_type)
    if kind is not None and kind not in ("CPU", "GPU"):
        raise ValueError("set_visible_devices: unknown device_type %r (weft has 'CPU' and 'GPU')" % (device_type,))
    if kind is not None and any(d.device_type != kind for d in devices):
        raise ValueError("set_visible_devices: device_type=%r but the list holds %r" % (device_type, devices))
    kinds = {kind} if kind is not None else {"CPU", "GPU"}  # None: every type, as TF (unlisted ones hidden)
    if "CPU" in kinds and not any(d.device_type == "CPU" for d in devices):
        raise ValueError("set_visible_devices: CPU devices cannot be hidden (TensorFlow refuses it too)")
    if "GPU" in kinds:
        gpus = [d for d in devices if d.device_type == "GPU"]
        all_gpus = list_physical_devices("GPU")
        if gpus and len(gpus) != len(all_gpus):
            raise NotImplementedError("set_visible_devices: weft uses every GPU or none; to use only %r, start the "
                                      "process with CUDA_VISIBLE_DEVICES set to their indices" % (gpus,))
        _defaults["use_gpus"] = bool(gpus)


class LogicalDeviceConfiguration(collections.namedtuple("LogicalDeviceConfiguration",
                                                         ["memory_limit", "experimental_priority",
                                                          "experimental_device_ordinal"])):
    """One logical device to make of a physical one (set_logical_device_configuration)."""
    __slots__ = ()

    def __new__(cls, memory_limit=None, experimental_priority=None, experimental_device_ordinal=None):
        return super().__new__(cls, memory_limit, experimental_priority, experimental_device_ordinal)


def set_logical_device_configuration(device, logical_devices):
    """Splits the CPU into ``len(logical_devices)`` logical devices (``/device:CPU:0`` ..), which
    MirroredStrategy() and list_logical_devices('CPU') then use, as TF's virtual CPUs for testing
    multi-device code on one machine. GPUs cannot be split (NotImplementedError; a memory limit per
    device is ``experimental.set_device_memory_limit``)."""
    if not isinstance(device, PhysicalDevice) or device not in list_physical_devices():
        raise ValueError("set_logical_device_configuration: %r is not one of list_physical_devices()" % (device,))
    configs = list(logical_devices) if logical_devices is not None else []
    if device.device_type != "CPU":
        raise NotImplementedError("set_logical_device_configuration: weft does not split %s into logical devices "
                                  "(a per-device memory budget: tf.config.experimental.set_device_memory_limit)"
                                  % device.name)
    if not configs:
        raise ValueError("set_logical_device_configuration: give at least one LogicalDeviceConfiguration")
    _defaults["cpu_logical_devices"] = len(configs)
    _logical_configs[device] = configs


def get_logical_device_configuration(device):
    """The list given to set_logical_device_configuration for ``device`` (None if never set)."""
    return _logical_configs.get(device)


_logical_configs = {}


def list_logical_devices(device_type=None):
    """The devices graphs are placed on: ``/device:CPU:i`` (one, or as many as
    set_logical_device_configuration made) and ``/device:GPU:i`` for each visible GPU."""
    out = []
    for d in get_visible_devices(device_type):
        if d.device_type == "CPU":
            out += [LogicalDevice("/device:CPU:%d" % i, "CPU") for i in range(_defaults["cpu_logical_devices"] or 1)]
        else:
            out.append(LogicalDevice(d.name.replace("/physical_device:", "/device:"), d.device_type))
    return out


def experimental_run_functions_eagerly(run_eagerly):
    """TF 2.0's name for run_functions_eagerly."""
    run_functions_eagerly(run_eagerly)


def experimental_functions_run_eagerly():
    return functions_run_eagerly()


def get_soft_device_placement():
    """Whether an op pinned to a device that cannot run it runs elsewhere (default True)."""
    return _defaults["soft_placement"]


def set_soft_device_placement(enabled):
    """The default of ``Session(soft_placement=)`` for Sessions made afterwards."""
    _defaults["soft_placement"] = bool(enabled)


def run_functions_eagerly(run_eagerly):
    """Remembered (``functions_run_eagerly()``): while True, ``weft.function`` runs functions as
    written at every call (Python side effects and breakpoints each time, as TF's eager run);
    Keras' compiled training steps run as graphs either way."""
    _defaults["run_functions_eagerly"] = bool(run_eagerly)


def functions_run_eagerly():
    return _defaults["run_functions_eagerly"]


__all__ = ["PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration", "set_logical_device_configuration",
           "get_logical_device_configuration", "experimental_run_functions_eagerly",
           "experimental_functions_run_eagerly", "list_physical_devices", "list_logical_devices", "get_visible_devices",
           "set_visible_devices", "get_soft_device_placement", "set_soft_device_placement", "run_functions_eagerly",
           "functions_run_eagerly", "experimental", "optimizer", "threading"]
