"""``weft.test``: TensorFlow's ``tf.test`` questions about the build and its GPUs."""
from . import _weft


def is_built_with_cuda():
    """Whether this weft was compiled with CUDA kernels (whether or not a GPU is present)."""
    return bool(_weft.gpu_info()["built_with_cuda"])


def is_built_with_gpu_support():
    return is_built_with_cuda()


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """Whether weft found a usable GPU (``weft.gpu_info()`` says why not). TF's deprecated form of
    ``bool(weft.config.list_physical_devices('GPU'))``."""
    if min_cuda_compute_capability is not None:
        raise NotImplementedError("is_gpu_available(min_cuda_compute_capability=...): weft does not report compute "
                                  "capabilities; use weft.gpu_info()['names']")
    return _weft.gpu_info()["count"] > 0


def gpu_device_name():
    """'/device:GPU:0' when weft found a GPU, else '' (as TensorFlow)."""
    return "/device:GPU:0" if _weft.gpu_info()["count"] > 0 else ""


from .test_case import TestCase, main, compute_gradient  # noqa: E402


def is_built_with_rocm():
    return False


def is_built_with_xla():
    return False


def is_cpu_target_available(target):
    """Whether weft's build can target the CPU architecture ``target`` ('x86' on this build)."""
    import platform
    return str(target).lower() in ("x86", "x86_64", platform.machine().lower())


__all__ = ["is_built_with_cuda", "is_built_with_gpu_support", "is_gpu_available", "gpu_device_name", "TestCase",
           "main", "compute_gradient", "is_built_with_rocm", "is_built_with_xla", "is_cpu_target_available"]
