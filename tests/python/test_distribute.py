"""weft.distribute: the talks' script inside MirroredStrategy.scope(), equivalence with one device,
and the error for a model created outside the scope."""
import numpy as np
import pytest

import weft
from weft import keras


def data(n=512, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(10, 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, size=n).astype(np.int32)
    x = centers[y] + 0.5 * rng.normal(size=(n, 28, 28, 1)).astype(np.float32)
    return x, y


def cnn():
    return keras.Sequential([
        keras.layers.Conv2D(8, 3, activation="relu", input_shape=(28, 28, 1)),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(10),
    ])


def train(strategy, steps=6):
    x, y = data()
    if strategy is None:
        model = cnn()
        model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      optimizer=keras.optimizers.SGD(0.05, momentum=0.9), metrics=["accuracy"], seed=3)
    else:
        with strategy.scope():  # as the talks do: create and compile in the scope
            model = cnn()
            model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          optimizer=keras.optimizers.SGD(0.05, momentum=0.9), metrics=["accuracy"], seed=3)
    model.fit(x, y, batch_size=64, epochs=1, steps_per_epoch=steps, verbose=0, shuffle=False)
    return model


def test_mirrored_scope_runs_the_talks_script_and_matches_one_device():
    strategy = weft.distribute.MirroredStrategy(["/device:CPU:0", "/device:CPU:1"])
    assert strategy.num_replicas_in_sync == 2
    mirrored = train(strategy)
    single = train(None)
    assert mirrored.distribute_strategy is strategy
    assert mirrored.step == single.step == 6
    for a, b in zip(mirrored.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_central_storage_and_default_mirrored():
    central = train(weft.distribute.CentralStorageStrategy(["/device:CPU:0", "/device:CPU:1"]))
    single = train(None)
    for a, b in zip(central.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert weft.distribute.MirroredStrategy().num_replicas_in_sync >= 1
    assert weft.distribute.get_strategy() is None


def test_model_created_outside_the_scope_is_an_error():
    strategy = weft.distribute.MirroredStrategy(["/device:CPU:0", "/device:CPU:1"])
    model = keras.Sequential([keras.layers.Dense(4, input_shape=(3,))])
    model._build()  # the C++ model now exists, outside any scope
    with strategy.scope():
        assert weft.distribute.get_strategy() is strategy
        with pytest.raises(weft.errors.InvalidArgumentError, match="created outside MirroredStrategy.scope"):
            model.compile(loss="mse", optimizer="sgd")


def test_partitioned_graph_from_python(tmp_path):
    model = train(weft.distribute.MirroredStrategy(["/device:CPU:0", "/device:CPU:1"]), steps=1)
    dot = model.plot_graph(tmp_path / "step.dot")
    assert "cluster_1" in dot and "_Send" in dot and "CollectiveReduce" in dot
    assert (tmp_path / "step.dot").read_text() == dot


def test_cluster_resolver_from_tf_config_and_launcher_ranks(monkeypatch, tmp_path):
    for var in ("TF_CONFIG", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "WEFT_HOSTS", "WEFT_HOSTFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}, '
                                    '"task": {"type": "worker", "index": 1}}')
    r = weft.distribute.cluster_resolver.TFConfigClusterResolver()
    assert (r.task_type, r.task_id) == ("worker", 1)
    assert r.cluster_spec() == {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}
    monkeypatch.delenv("TF_CONFIG")
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "1")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2")
    r = weft.distribute.cluster_resolver.TFConfigClusterResolver(base_port=31000)
    assert r.task_id == 1 and r.cluster_spec() == {"worker": ["127.0.0.1:31000", "127.0.0.1:31001"]}
    hostfile = tmp_path / "hosts"
    hostfile.write_text("node-a slots=2\n")
    r = weft.distribute.cluster_resolver.TFConfigClusterResolver(hostfile=str(hostfile))
    assert r.cluster_spec() == {"worker": ["node-a:23456", "node-a:23457"]}
    with pytest.raises(weft.errors.InvalidArgumentError, match="--hosts names 1 address"):
        weft.distribute.cluster_resolver.TFConfigClusterResolver(hosts="node-a")
    monkeypatch.delenv("OMPI_COMM_WORLD_RANK")
    with pytest.raises(weft.errors.NotFoundError, match="set TF_CONFIG"):
        weft.distribute.cluster_resolver.TFConfigClusterResolver()


def test_status_counts_training_steps_and_collective_time():
    strategy = weft.distribute.MirroredStrategy(["/device:CPU:0", "/device:CPU:1"])
    assert strategy.status() == {"step": 0, "images_per_second": 0.0, "collective_fraction": 0.0,
                                 "collective_seconds": 0.0}
    model = train(strategy, steps=6)
    status = strategy.status()
    assert status["step"] == 6
    assert status["images_per_second"] > 0
    assert status["collective_seconds"] > 0  # the replicas' gradients are all-reduced every step
    assert 0 < status["collective_fraction"] <= 1
    model.evaluate(*data(128), verbose=0)  # evaluation is not a training step
    assert strategy.status()["step"] == 6
