"""Sharded optimizer state (ZeRO, weft's MirroredStrategy(shard_optimizer_state=1|2)) from Python:
training equals the unsharded strategy, save_weights holds the full slots under the unsharded names
and load_weights continues identically; a stage outside 0..2 is a clear error."""
import numpy as np
import pytest

import weft
from weft import keras

DEVICES = ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]


def data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 10)).astype(np.float32)
    y = (x[:, :3].sum(axis=1) > 0).astype(np.int32) + (x[:, 3] > 1).astype(np.int32)
    return x, y


def build(strategy):
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(13, activation="tanh", input_shape=(10,)),  # 143 + 42 weights
                                  keras.layers.Dense(3)])
        model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      optimizer=keras.optimizers.Adam(0.01), seed=3)
    return model


def fit(model, steps, initial_epoch=0):
    x, y = data()
    model.fit(x, y, batch_size=30, epochs=initial_epoch + 1, initial_epoch=initial_epoch, steps_per_epoch=steps,
              verbose=0, shuffle=False)


@pytest.mark.parametrize("stage", [1, 2])
def test_sharded_training_equals_unsharded_and_checkpoints_restore(stage, tmp_path):
    plain = build(weft.distribute.MirroredStrategy(DEVICES))
    fit(plain, 5)
    strategy = weft.distribute.MirroredStrategy(DEVICES, shard_optimizer_state=stage)
    assert strategy.shard_optimizer_state == stage
    sharded = build(strategy)
    fit(sharded, 5)
    for a, b in zip(sharded.get_weights(), plain.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    # The file holds every variable's whole slots, as the unsharded model's does.
    plain.save_weights(str(tmp_path / "plain.weights.h5"))
    sharded.save_weights(str(tmp_path / "sharded.weights.h5"))
    restored = build(weft.distribute.MirroredStrategy(DEVICES, shard_optimizer_state=stage))
    restored.load_weights(str(tmp_path / "plain.weights.h5"))  # an unsharded run's checkpoint
    fit(restored, 5, initial_epoch=1)
    fit(sharded, 5, initial_epoch=1)
    for a, b in zip(restored.get_weights(), sharded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bad_stage_is_a_clear_error():
    with pytest.raises(weft.errors.InvalidArgumentError, match="shard_optimizer_state must be 0 .off., 1"):
        weft.distribute.MirroredStrategy(DEVICES, shard_optimizer_state=3)
    with pytest.raises(TypeError, match="shard_optimizer_state must be the int 0, 1 or 2, got '2'"):
        weft.distribute.MirroredStrategy(DEVICES, shard_optimizer_state="2")
