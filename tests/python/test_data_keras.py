"""model.fit / evaluate / predict on weft.data datasets, with Keras' rules: the batch size comes
from the dataset, a finite dataset is read again every epoch, an infinite one needs
steps_per_epoch (and one iterator then runs on across epochs), validation_data may be a dataset."""
import numpy as np
import pytest

import weft as tf
from weft import keras

Dataset = tf.data.Dataset


def data(n=192, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 6)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
    return x, y


def model(seed=2):
    m = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(6,)), keras.layers.Dense(2)])
    m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.SGD(0.1, momentum=0.9), metrics=["accuracy"], seed=seed)
    return m


def test_fit_on_a_dataset_equals_fit_on_the_same_batches_as_arrays():
    x, y = data()
    a = model()
    ha = a.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    b = model()
    hb = b.fit(Dataset.from_tensor_slices((x, y)).batch(32).prefetch(tf.data.AUTOTUNE), epochs=2, verbose=0)
    assert a.step == b.step == 12
    np.testing.assert_allclose(ha.history["loss"], hb.history["loss"], rtol=1e-6)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_array_equal(wa, wb)
    # evaluate and predict agree with the array paths too
    ev = Dataset.from_tensor_slices((x, y)).batch(50)
    np.testing.assert_allclose(b.evaluate(ev, verbose=0), a.evaluate(x, y, batch_size=50, verbose=0), rtol=1e-6)
    np.testing.assert_array_equal(b.predict(Dataset.from_tensor_slices(x).batch(40)), a.predict(x))
    # (x, y) elements: y is ignored (batches of 50, not 32: sums may round differently)
    np.testing.assert_allclose(b.predict(ev), a.predict(x), rtol=1e-5, atol=1e-6)
    assert b.predict(ev, steps=2).shape == (100, 2)
    d = b.evaluate(ev, verbose=0, return_dict=True, steps=1)
    assert set(d) == {"loss", "accuracy"}


def test_map_pipeline_feeds_fit_and_validation_data():
    x, y = data()
    raw = (x * 40 + 128).clip(0, 255).astype(np.uint8)
    ds = (Dataset.from_tensor_slices((raw, y)).shuffle(192, seed=1)
          .map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, b), num_parallel_calls=tf.data.AUTOTUNE)
          .batch(32).prefetch(tf.data.AUTOTUNE))
    val = Dataset.from_tensor_slices((raw[:64], y[:64])).map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, b)).batch(16)
    m = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])  # shape from the data
    m.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd", metrics=["accuracy"])
    h = m.fit(ds, epochs=2, validation_data=val, verbose=0)
    assert m.input_shape == (None, 6)
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"} and len(h.history["val_loss"]) == 2
    h = m.fit(ds, epochs=1, validation_data=val.repeat(), validation_steps=2, verbose=0)
    assert len(h.history["val_loss"]) == 1
    h = m.fit(ds, epochs=1, validation_data=(x[:64], y[:64]), verbose=0)  # arrays beside a dataset, as Keras
    assert len(h.history["val_accuracy"]) == 1
    h = m.fit(x[:64] / 255.0, y[:64], batch_size=16, epochs=1, validation_data=val, verbose=0)  # and the reverse
    assert len(h.history["val_accuracy"]) == 1


def test_steps_per_epoch_runs_one_iterator_across_epochs():
    x, y = data(128)
    m = model()
    ds = Dataset.from_tensor_slices((x, y)).batch(32)  # 4 batches
    m.fit(ds.repeat(), epochs=3, steps_per_epoch=3, verbose=0)
    assert m.step == 9
    m2 = model()
    # Keras: the iterator carries on; epoch 2 gets batch 4, runs out and ends; epoch 3 starts a new pass.
    h = m2.fit(ds, epochs=3, steps_per_epoch=3, verbose=0)
    assert m2.step == 3 + 1 + 3 and len(h.history["loss"]) == 3


def test_dataset_errors():
    x, y = data(64)
    m = model()
    ds = Dataset.from_tensor_slices((x, y)).batch(16)
    with pytest.raises(tf.errors.InvalidArgumentError, match="infinite.*steps_per_epoch"):
        m.fit(ds.repeat(), epochs=1, verbose=0)
    with pytest.raises(ValueError, match="batch_size"):
        m.fit(ds, batch_size=16, verbose=0)
    with pytest.raises(ValueError, match=r"\(x, y\) pairs.*element_spec"):
        m.fit(ds.map(lambda a, b: a), verbose=0)
    with pytest.raises(ValueError, match=r"\(x, y\) pairs"):
        m.fit(Dataset.from_tensor_slices({"x": x, "y": y}).batch(8), verbose=0)
    wrong = Dataset.from_tensor_slices((np.zeros((8, 5), np.float32), y[:8])).batch(4)
    with pytest.raises(ValueError, match=r"x is float32 \(None, 5\) but the model's input is \(None, 6\)"):
        m.fit(wrong, verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\(None, 5\).*\(None, 6\)"):
        m.predict(wrong)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"x is bool"):
        m.fit(Dataset.from_tensor_slices((x > 0, y)).batch(8), verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels are bool"):
        m.evaluate(Dataset.from_tensor_slices((x, y > 0)).batch(8), verbose=0)
    # a spec that cannot tell (unknown dims) still fails at the first batch, naming both shapes
    gen = Dataset.from_generator(lambda: iter([(np.zeros(5, np.float32), 1)]),
                                 output_types=(tf.float32, tf.int32), output_shapes=((None,), ())).batch(1)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"x has shape \[1,5\] but the model's input is \[\?,6\]"):
        m.fit(gen, verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="labels"):
        m.evaluate(Dataset.from_tensor_slices((x[:8], np.zeros((8, 3), np.int32))).batch(4), verbose=0)


def test_tf_data_pipeline_example_runs(tmp_path):
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python", "tf_data_pipeline.py")
    out = subprocess.run([sys.executable, script, "--epochs", "2", "--steps-per-epoch", "20"], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Epoch 2/2" in out.stdout and "val_accuracy" in out.stdout and "test accuracy" in out.stdout, out.stdout
