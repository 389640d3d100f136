"""A weft.data Dataset under MultiWorkerMirroredStrategy: two worker processes end with the same
weights as one process trained on the same global batches, for the default auto-shard policy
(AUTO: each worker takes its share of every global batch, as TF's DATA sharding of in-memory data)
and for OFF (every worker reads the whole stream in per-worker batches of global / workers);
strategy.experimental_distribute_dataset gives each worker its part."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import weft
from conftest import free_ports

pytestmark = pytest.mark.skipif(not hasattr(weft._weft.distribute, "MultiWorkerMirroredStrategy"),
                                reason="weft built without UCX")

# Runs in each worker (and, with "single", in one process without a strategy).
SCRIPT = r'''
import sys
import numpy as np
import weft as tf
from weft import keras

mode, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
x = rng.normal(size=(96, 5)).astype(np.float32)
y = (x[:, 0] - x[:, 2] > 0).astype(np.int32)
GLOBAL = 16

def make():
    m = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(5,)), keras.layers.Dense(2)])
    m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.SGD(0.1), seed=5)
    return m

ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(96, seed=3).batch(GLOBAL)
result = {}
if mode == "single":
    for name, d in (("auto", ds), ("off", ds.unbatch().batch(GLOBAL // 2, drop_remainder=True))):
        m = make()
        m.fit(d, epochs=2, verbose=0)
        result[name] = m.get_weights()
else:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    with strategy.scope():
        auto, off = make(), make()
    auto.fit(ds, epochs=2, verbose=0)
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    off.fit(ds.with_options(options), epochs=2, verbose=0)
    result = {"auto": auto.get_weights(), "off": off.get_weights()}
    dist = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices(np.arange(8)).batch(4))
    result["part"] = [[v.numpy().tolist() for v in dist]]
    result["trace"] = strategy.dump_trace(out + ".trace.json")
np.save(out, np.array(result, dtype=object), allow_pickle=True)
'''


def test_two_workers_match_one_process(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(SCRIPT)
    workers = ["127.0.0.1:%d" % p for p in free_ports(2)]
    procs = []
    for index in range(2):
        env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": {"worker": workers},
                                                     "task": {"type": "worker", "index": index}}))
        procs.append(subprocess.Popen([sys.executable, str(script), "worker", str(tmp_path / ("w%d.npy" % index))],
                                      env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    single = subprocess.run([sys.executable, str(script), "single", str(tmp_path / "single.npy")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=120)[0])
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert single.returncode == 0, single.stdout + single.stderr
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    ref = np.load(tmp_path / "single.npy", allow_pickle=True).item()
    got = [np.load(tmp_path / ("w%d.npy" % i), allow_pickle=True).item() for i in range(2)]
    assert not np.allclose(ref["auto"][0], ref["off"][0])  # the two policies train on different batches
    for policy in ("auto", "off"):
        for w in got:
            for a, b in zip(w[policy], ref[policy]):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=policy)
    # experimental_distribute_dataset: each worker's half of each global batch of 4
    assert got[0]["part"] == [[[0, 1], [4, 5]]] and got[1]["part"] == [[[2, 3], [6, 7]]]
    # strategy.dump_trace(): each worker's always-on trace as Chrome trace JSON (a JSON array),
    # with the training steps' gradient all-reduces, and the clock offset measured against worker:0.
    for index, w in enumerate(got):
        assert w["trace"] == str(tmp_path / ("w%d.npy.trace.json" % index))
        with open(w["trace"]) as f:
            events = json.load(f)
        meta = [e for e in events if e["name"] == "weft_trace"][0]["args"]
        assert meta["process"] == "worker:%d" % index and meta["clock_reference"] == "worker:0"
        assert events[-1]["name"] == "weft_trace_end"
        reduces = [e for e in events if e.get("cat") == "CollectiveReduce"]
        assert len(reduces) >= 12  # 2 fits x 2 epochs x 3 global batches, a bucket each
        assert all(e["ph"] == "X" and e["dur"] >= 0 and e["args"]["kind"] == "collective" for e in reduces)
