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
