"""The installed package (pyproject.toml, meson-python): importable from any directory, the command
on the venv's PATH, one version. Skipped where weft runs from PYTHONPATH=python:build/python without
being installed (e.g. build.sh's numpy-1 run); ./build.sh's .venv is an editable install."""
import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

import weft


def _installed_version():
    try:
        return importlib.metadata.version("weft")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("weft is not installed in this interpreter (pip install -e . / ./build.sh)")


def test_version_is_the_installed_distributions():
    # pyproject.toml takes the version from meson.build's project(); weft.__version__ must agree.
    assert weft.__version__ == _installed_version()


def test_import_from_another_directory_without_pythonpath(tmp_path):
    _installed_version()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = "import numpy as np, weft; print(weft.reduce_sum(weft.constant(np.arange(4.0))).shape)"
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("()")


def test_weft_zoo_is_on_the_venvs_path():
    _installed_version()
    exe = shutil.which("weft-zoo", path=os.path.dirname(sys.executable))
    assert exe is not None, f"no weft-zoo beside {sys.executable}"
    out = subprocess.run([exe, "list"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert any(line.startswith("mnist_cnn ") for line in out.stdout.splitlines())
