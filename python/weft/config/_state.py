"""The process-wide defaults weft.config sets, read by Session and Model.compile when they are
created (not per thread: TensorFlow's settings are per process too)."""

defaults = {
    "inter_op_threads": 0,  # 0: one per hardware thread
    "intra_op_threads": 0,
    "use_gpus": True,
    "soft_placement": True,
    "run_functions_eagerly": False,
    "op_determinism": False,
    "device_memory_limit": 0,  # bytes per device (0: none); set_device_memory_limit
    "cpu_logical_devices": None,  # set_logical_device_configuration's CPU count (None: the default)
    "tf32": True,
}
memory_growth = {}  # PhysicalDevice -> bool
