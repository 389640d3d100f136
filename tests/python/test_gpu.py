"""GPU placement from Python (docs/cuda.md): weft.device("/device:GPU:0") runs there when a GPU
exists; without one, soft placement runs it on the CPU and hard placement fails saying why."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import weft


def _matmul_on_gpu():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    g = weft.Graph()
    with g.as_default():
        x = weft.constant(a)
        with weft.device("/device:GPU:0"):
            y = weft.matmul(x, weft.transpose(x))
    return g, y, a @ a.T


def test_gpu_info_names_the_devices_or_the_reason():
    info = weft.gpu_info()
    assert info["count"] == len(info["names"])
    if info["count"] == 0:
        assert info["reason"]  # CUDA's words, or "built without CUDA"
    # Each device CUDA lists but weft could not open says why ("GPU ordinal 1: ...").
    assert all(u.startswith("GPU ordinal ") for u in info["unusable"])


def test_soft_placement_runs_a_gpu_pinned_op_anyway():
    g, y, want = _matmul_on_gpu()
    with weft.Session(g) as sess:
        np.testing.assert_allclose(sess.run(y), want)
        assert ("GPU:0" in sess.devices) == (weft.gpu_info()["count"] > 0)


def test_hard_placement_without_a_gpu_says_why():
    info = weft.gpu_info()
    if info["count"] > 0:
        pytest.skip("this machine has a GPU: %s" % info["names"][0])
    g, y, _ = _matmul_on_gpu()
    with weft.Session(g, soft_placement=False) as sess:
        with pytest.raises(weft.errors.InvalidArgumentError, match=re.escape("no GPU device: " + info["reason"])):
            sess.run(y)


# In a fresh interpreter: `import weft as tf`, a graph's first step, then the CUDA libraries it mapped.
_MAPPED_AFTER_A_STEP = r"""
import json
import numpy as np
import weft as tf
g = tf.Graph()
with g.as_default():
    y = tf.matmul(tf.constant(np.float32([[1, 2], [3, 4]])), tf.constant(np.float32([[5, 6], [7, 8]])))
with tf.Session(g) as sess:
    assert sess.run(y).tolist() == [[19, 22], [43, 50]]
names = ("libcuda.so", "libcudart", "libcublas", "libcudnn", "libnccl", "libweft_cuda")
mapped = sorted({l.split()[-1] for l in open("/proc/self/maps") if any(n in l for n in names)})
print(json.dumps({"count": tf.gpu_info()["count"], "mapped": mapped}))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc/self/maps")
def test_a_process_without_a_usable_gpu_maps_no_cuda_library():
    # libweft loads the CUDA backend (libweft_cuda.so, with the CUDA runtime, cuBLAS and cuDNN) only
    # where the CUDA driver lists a device (docs/cuda.md, "Build").
    out = json.loads(subprocess.run([sys.executable, "-c", _MAPPED_AFTER_A_STEP], capture_output=True, text=True,
                                    timeout=120, check=True).stdout.splitlines()[-1])
    count, mapped = out["count"], out["mapped"]
    if count == 0 and not any("libweft_cuda" in m for m in mapped):
        assert mapped == [], mapped
    else:
        # A GPU machine (or a driver listing a device): the module is there, beside libweft.
        assert any(m.endswith("/libweft_cuda.so") for m in mapped), mapped
