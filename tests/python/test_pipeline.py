"""Training larger models (issue 20) from Python: gradient accumulation (Keras 3's optimizer
argument and fit's), the per-device memory budget, and weft.distribute.PipelineStrategy, each
against single-device training of the same global batches."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import weft
from weft import keras
from conftest import free_ports


# The budget that one device cannot train the wide model under and each of two stages can
# (measured peaks: bench/README.md, "Pipeline parallelism").
LIMIT_MIB, MICRO = 5, 1


def data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = rng.integers(0, 3, size=n).astype(np.int32)
    return x, y


def mlp(units=16):
    return keras.Sequential([
        keras.layers.Dense(units, activation="tanh", input_shape=(6,), name="d1"),
        keras.layers.Dense(units, activation="tanh", name="d2"),
        keras.layers.Dense(12, activation="tanh", name="d3"),
        keras.layers.Dense(3, name="out"),
    ])


def compiled(optimizer, strategy=None, units=16):
    def make():
        m = mlp(units)
        m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=optimizer, seed=5)
        return m
    if strategy is None:
        return make()
    with strategy.scope():
        return make()


def max_diff(a, b):
    return max(float(np.max(np.abs(u - v))) for u, v in zip(a.get_weights(), b.get_weights()))


def test_optimizer_gradient_accumulation_equals_one_large_batch():
    x, y = data()
    small = compiled(keras.optimizers.SGD(0.3, gradient_accumulation_steps=3))
    large = compiled(keras.optimizers.SGD(0.3))
    start = small.get_weights()
    small.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    large.fit(x, y, batch_size=48, epochs=2, shuffle=False, verbose=0)
    assert max(float(np.max(np.abs(u - v))) for u, v in zip(start, small.get_weights())) > 1e-3
    assert max_diff(small, large) < 1e-5
    assert small.optimizer.gradient_accumulation_steps == 3
    assert small.optimizer.iterations == 6  # Keras counts every step
    assert small.optimizer.get_config()["gradient_accumulation_steps"] == 3


def test_fit_gradient_accumulation_steps_keeps_weights_and_slots():
    x, y = data()
    a = compiled(keras.optimizers.SGD(0.3, momentum=0.9))
    b = compiled(keras.optimizers.SGD(0.3, momentum=0.9))
    # 4 steps without accumulation, so that the next update step of k = 4 is the 4th from here
    # (Keras updates when (iterations + 1) % k == 0).
    a.fit(x, y, batch_size=12, epochs=1, shuffle=False, verbose=0)
    b.fit(x, y, batch_size=12, epochs=1, shuffle=False, verbose=0)
    a.fit(x, y, batch_size=12, epochs=1, shuffle=False, verbose=0, gradient_accumulation_steps=4)
    b.fit(x, y, batch_size=48, epochs=1, shuffle=False, verbose=0)
    assert max_diff(a, b) < 1e-5  # the momentum from the first epoch was kept
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        a.fit(x, y, batch_size=12, verbose=0, gradient_accumulation_steps=0)
    with pytest.raises(ValueError, match="gradient_accumulation_steps"):
        keras.optimizers.Adam(gradient_accumulation_steps=-1)


@pytest.mark.parametrize("schedule,stages,micro", [("gpipe", 2, 4), ("1f1b", 3, 2)])
def test_pipeline_strategy_equals_one_device(schedule, stages, micro):
    x, y = data()
    strategy = weft.distribute.PipelineStrategy(num_stages=stages, micro_batches=micro, schedule=schedule)
    assert strategy.bubble_fraction == pytest.approx((stages - 1) / (micro + stages - 1))
    piped = compiled(keras.optimizers.SGD(0.2, momentum=0.9), strategy)
    single = compiled(keras.optimizers.SGD(0.2, momentum=0.9))
    hp = piped.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    hs = single.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert max_diff(piped, single) < 1e-5
    assert abs(hp.history["loss"][-1] - hs.history["loss"][-1]) < 1e-5
    assert np.allclose(piped.predict(x, verbose=0), single.predict(x, verbose=0), atol=1e-5)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_pipeline_stages_x_replicas_equals_one_device(schedule):
    x, y = data()
    strategy = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=2, schedule=schedule, replicas=2)
    assert strategy.replicas == 2 and strategy.num_replicas_in_sync == 4
    piped = compiled(keras.optimizers.Adam(0.01), strategy)
    single = compiled(keras.optimizers.Adam(0.01))
    piped.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    single.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
    assert max_diff(piped, single) < 1e-5
    with pytest.raises(weft.errors.InvalidArgumentError,
                       match="2 replicas x 2 micro-batches do not divide the batch of 6 examples"):
        piped.fit(x[:6], y[:6], batch_size=6, verbose=0)


# worker:1 of a two-task cluster: serves its stage until killed.
STAGE_SCRIPT = """
import weft
cluster = weft.distribute.cluster_resolver.TFConfigClusterResolver()
server = weft.distribute.Server(cluster.cluster_spec(), job_name="worker", task_index=1, threads=1)
print("ready", flush=True)
server.join()
"""


@pytest.mark.skipif(not hasattr(weft._weft.distribute, "Server"), reason="built without UCX")
def test_pipeline_across_two_processes_equals_one_device():
    x, y = data()
    spec = {"worker": ["127.0.0.1:%d" % p for p in free_ports(2)]}
    env = dict(os.environ, TF_CONFIG=json.dumps({"cluster": spec, "task": {"type": "worker", "index": 1}}),
               UCX_TLS="tcp,self")  # the cluster secret: conftest's, inherited
    stage = subprocess.Popen([sys.executable, "-c", STAGE_SCRIPT], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert stage.stdout.readline().startswith("ready")
        server = weft.distribute.Server(spec, job_name="worker", task_index=0, threads=1)
        for schedule in ("gpipe", "1f1b"):
            strategy = weft.distribute.PipelineStrategy(micro_batches=4, schedule=schedule, server=server,
                                                        step_timeout=20)
            assert strategy.num_stages == 2 and strategy.stage_tasks == ["worker:0", "worker:1"]
            piped = compiled(keras.optimizers.SGD(0.2, momentum=0.9), strategy)
            single = compiled(keras.optimizers.SGD(0.2, momentum=0.9))
            piped.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
            single.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
            assert max_diff(piped, single) < 1e-5
        with pytest.raises(weft.errors.InvalidArgumentError, match="3 stages need 3 tasks"):
            weft.distribute.PipelineStrategy(num_stages=3, server=server)
    finally:
        stage.kill()
        stage.wait(timeout=20)


def test_pipeline_strategy_boundaries_and_bad_input():
    x, y = data()
    strategy = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=2, boundaries=["d3"])
    model = compiled("sgd", strategy)
    assert strategy.stages_of(model) == [0, 0, 1, 1]
    # Balanced by given costs (+1 a layer): 11 | 2 + 3 + 4 beats 11 + 2 | 3 + 4 and 11 + 2 + 3 | 4.
    costs = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=2, layer_costs=[10, 1, 2, 3])
    assert costs.stages_of(compiled("sgd", costs)) == [0, 1, 1, 1]
    bad = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=2, boundaries=["nope"])
    model = compiled("sgd", bad)  # Keras builds the graph at its first use
    with pytest.raises(weft.errors.InvalidArgumentError, match="stage boundary 'nope' is not a layer"):
        model.fit(x, y, batch_size=16, verbose=0)
    three = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=3)
    model = compiled("sgd", three)
    with pytest.raises(weft.errors.InvalidArgumentError, match="3 micro-batches do not divide the batch of 16"):
        model.fit(x, y, batch_size=16, verbose=0)


def wide():
    # Two 512 x 512 kernels (1 MiB each, and 1 MiB of momentum each): one per stage when cut at d3.
    return keras.Sequential([
        keras.layers.Dense(512, activation="tanh", input_shape=(6,), name="d1"),
        keras.layers.Dense(512, activation="tanh", name="d2"),
        keras.layers.Dense(512, activation="tanh", name="d3"),
        keras.layers.Dense(3, name="out"),
    ])


def compiled_wide(strategy=None):
    def make():
        m = wide()
        m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.1, momentum=0.9), seed=5)
        return m
    if strategy is None:
        return make()
    with strategy.scope():
        return make()


def test_device_memory_limit_fails_one_device_and_trains_pipelined():
    x, y = data(n=32)
    limit = LIMIT_MIB << 20
    weft.config.experimental.set_device_memory_limit(limit)
    try:
        assert weft.config.experimental.get_device_memory_limit() == limit
        single = compiled_wide()
        with pytest.raises(weft.errors.ResourceExhaustedError,
                           match=r"device /job:localhost/replica:0/task:0/device:CPU:0 is over its memory limit of "
                                 r"%d bytes.*peak so far.*largest: '" % limit):
            single.fit(x, y, batch_size=16, epochs=1, verbose=0)
        strategy = weft.distribute.PipelineStrategy(num_stages=2, micro_batches=MICRO, boundaries=["d3"])
        piped = compiled_wide(strategy)
        piped.fit(x, y, batch_size=16, epochs=1, verbose=0)
    finally:
        weft.config.experimental.set_device_memory_limit(None)
    assert weft.config.experimental.get_device_memory_limit() is None


# ---- Activation recomputation (compile(recompute=...), docs/pipeline.md) ------------------------

def test_recompute_equals_plain_training_step():
    x, y = data()

    def step(recompute):
        m = mlp()
        m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=keras.optimizers.SGD(1.0),
                  seed=5, recompute=recompute)
        m.train_on_batch(x, y)
        return m.get_weights()

    plain = step(None)
    for recomputed in (step(["d1", "d2", "d3"]), step(["d2"])):
        for a, b in zip(plain, recomputed):
            np.testing.assert_allclose(a, b, atol=1e-6)
    # Layer objects stand for their names.
    m = mlp()
    m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer=keras.optimizers.SGD(1.0),
              seed=5, recompute=[m.get_layer("d1"), "d2"])
    m.train_on_batch(x, y)
    for a, b in zip(plain, m.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_recompute_unknown_layer_is_an_error_naming_it():
    x, y = data()
    m = mlp()
    m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd",
              recompute=["d1", "no_such_layer"])
    with pytest.raises(weft.errors.InvalidArgumentError, match="recompute names layer 'no_such_layer'"):
        m.train_on_batch(x, y)
