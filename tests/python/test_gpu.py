"""GPU placement from Python (docs/cuda.md): weft.device("/device:GPU:0") runs there when a GPU
exists; without one, soft placement runs it on the CPU and hard placement fails saying why."""
import re

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
