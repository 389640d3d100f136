"""The Python examples run as written (the quick ones; fashion_mnist_full.py trains a full epoch)."""
import os
import subprocess
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


@pytest.mark.parametrize("script,expect", [
    ("mnist_cnn.py", "Epoch 3/3"),
    ("mnist_cnn_mirrored.py", "Epoch 3/3"),
    ("graph_api.py", "epoch 3: test loss"),
])
def test_example_runs(script, expect, tmp_path):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, script)], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert expect in out.stdout, out.stdout


def test_metric_objects():
    import numpy as np
    from weft import keras
    model = keras.Sequential([keras.layers.Dense(3, input_shape=(4,))])
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd",
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    x = np.zeros((8, 4), np.float32)
    d = model.evaluate(x, np.zeros(8, np.int32), verbose=0, return_dict=True)
    assert set(d) == {"loss", "sparse_categorical_accuracy"}
