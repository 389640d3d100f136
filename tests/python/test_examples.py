"""The Python examples run as written (the quick ones; fashion_mnist_full.py trains a full epoch)."""
import os
import subprocess
import sys

import pytest
from conftest import free_ports

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


@pytest.mark.parametrize("script,expect", [
    ("mnist_cnn.py", "Epoch 3/3"),
    ("mnist_cnn_mirrored.py", "Epoch 3/3"),
    ("graph_api.py", "epoch 3: test loss"),
    ("keras_functional_and_subclassed.py", "subclassed: test accuracy"),
    ("tf1_graph_mode.py", "restored model.ckpt-240 at step 240"),
    ("lstm_text.py", "test accuracy"),
    ("custom_training_loop.py", "evaluate: test accuracy"),
    ("eager_training_loop.py", "basic training loop: W = "),
    ("keras_transformer_text.py", "test accuracy"),
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


@pytest.mark.skipif(not hasattr(__import__("weft")._weft.distribute, "MultiWorkerMirroredStrategy"),
                    reason="weft built without UCX")
def test_distributed_example_on_two_workers(tmp_path):
    """The talks' distributed script on 2 worker processes (TF_CONFIG each, as weft-zoo launch sets
    it): both train the same global steps and log the same (global) loss; the chief predicts."""
    import json
    import re
    workers = ["127.0.0.1:%d" % p for p in free_ports(2)]
    procs = []
    for index in range(2):
        env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": {"worker": workers},
                                                     "task": {"type": "worker", "index": index}}))
        procs.append(subprocess.Popen([sys.executable, os.path.join(EXAMPLES, "mnist_cnn_distributed.py"),
                                       "--epochs", "1", "--steps-per-epoch", "3"], env=env, cwd=tmp_path,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=300)[0])
    finally:
        for p in procs:
            p.kill()
            p.wait()
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
        assert "worker %d of 2, replicas in sync: 2" % procs.index(p) in out, out
    losses = [re.findall(r"3/3 \[=+\] .* loss: ([0-9.]+)", out) for out in outs]
    assert losses[0] and losses[0] == losses[1], outs
    assert "predictions for 3 test images" in outs[0] and "predictions" not in outs[1]
