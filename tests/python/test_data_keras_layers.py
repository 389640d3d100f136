"""Keras layers called inside tf.data functions (Dataset.map / filter), as keras.io's "Image
classification from scratch" augments its data: the layer builds into the traced graph. Expected
values are Keras' documented behaviour and closed forms: Rescaling is x * scale + offset, a
Normalization adapted on data is (x - mean) / sqrt(var), RandomFlip's output is the image or its
mirror (each image drawn anew per element and per pass), Dropout and BatchNormalization pass as
at inference (Keras' default `training` outside fit), the random layers augment."""
import numpy as np
import pytest

import weft as tf
from weft import keras
from weft.keras import layers as L

RNG = np.random.default_rng(0)


def _collect(ds):
    return [tuple(np.asarray(c) for c in e) if isinstance(e, tuple) else np.asarray(e) for e in ds]


def test_rescaling_in_map_exact_and_labels_kept():
    x = RNG.integers(0, 256, (10, 4, 4, 3)).astype(np.float32)
    y = np.arange(10)
    rescale = L.Rescaling(1.0 / 255, offset=-0.5)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4).map(lambda img, lab: (rescale(img), lab))
    out = _collect(ds)
    assert [o[0].shape for o in out] == [(4, 4, 4, 3), (4, 4, 4, 3), (2, 4, 4, 3)]
    np.testing.assert_allclose(np.concatenate([o[0] for o in out]), x * np.float32(1 / 255) - 0.5, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(np.concatenate([o[1] for o in out]), y)


def test_random_flip_gives_image_or_mirror_fresh_per_element_and_pass():
    x = RNG.uniform(0, 1, (32, 5, 6, 2)).astype(np.float32)
    flip = L.RandomFlip("horizontal")
    ds = tf.data.Dataset.from_tensor_slices(x).batch(8).map(lambda img: flip(img),
                                                            num_parallel_calls=tf.data.AUTOTUNE)
    seen = []
    for _ in range(2):
        got = np.concatenate(_collect(ds))
        flipped = []
        for a, b in zip(got, x):
            same, mirror = np.array_equal(a, b), np.array_equal(a, b[:, ::-1])
            assert same or mirror
            flipped.append(mirror)
        seen.append(flipped)
    # 64 fair draws: all equal (or the two passes identical) has probability ~2^-32.
    assert 0 < sum(seen[0]) < 32 and seen[0] != seen[1]


def test_unbatched_image_and_augmentation_chain():
    x = RNG.uniform(0, 255, (6, 8, 8, 3)).astype(np.float32)
    aug = [L.RandomFlip("horizontal"), L.RandomRotation(0.1)]

    def augment(img):
        for layer in aug:
            img = layer(img)
        return img

    per_image = _collect(tf.data.Dataset.from_tensor_slices(x).map(augment))
    assert [p.shape for p in per_image] == [(8, 8, 3)] * 6
    batched = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(3).map(augment)))
    assert batched.shape == (6, 8, 8, 3) and np.isfinite(batched).all()
    assert not np.array_equal(batched, x)  # rotations in +-36 degrees move pixels of random images


def test_resizing_and_center_crop_shapes_in_map():
    x = RNG.uniform(0, 1, (4, 10, 12, 3)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(x).map(lambda im: L.CenterCrop(6, 8)(L.Resizing(10, 12)(im)))
    out = _collect(ds)
    # Resizing to the same size is the identity; CenterCrop takes the central window (Keras).
    np.testing.assert_array_equal(np.stack(out), x[:, 2:8, 2:10])


def test_adapted_normalization_in_map_is_closed_form():
    data = RNG.normal(3.0, 2.0, (50, 3)).astype(np.float32)
    norm = L.Normalization()
    norm.adapt(data)
    ds = tf.data.Dataset.from_tensor_slices(data).batch(25).map(norm)
    got = np.concatenate(_collect(ds))
    want = (data - data.mean(0)) / np.sqrt(data.var(0))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    per_example = np.stack(_collect(tf.data.Dataset.from_tensor_slices(data).map(norm)))  # unbatched, as Keras
    np.testing.assert_allclose(per_example, want, rtol=1e-4, atol=1e-4)


def test_dropout_passes_and_filter_uses_a_layer():
    x = RNG.uniform(1, 2, (12, 4)).astype(np.float32)
    drop = L.Dropout(0.5)
    np.testing.assert_array_equal(np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(5).map(drop))), x)
    scale = L.Rescaling(-1.0)
    kept = _collect(tf.data.Dataset.from_tensor_slices(x).filter(lambda v: tf.reduce_sum(scale(v[None])) < -6.0))
    np.testing.assert_array_equal(np.stack(kept), x[x.sum(1) > 6.0])


def test_custom_layer_in_map():
    class Double(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2.0 + 1.0

    x = RNG.uniform(0, 1, (6, 3)).astype(np.float32)
    got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(4).map(Double())))
    np.testing.assert_allclose(got, x * 2 + 1, rtol=1e-6)


def test_layer_on_scalar_element_is_a_clear_error():
    with pytest.raises(ValueError, match="Keras layers take a batch"):
        tf.data.Dataset.from_tensor_slices(np.arange(3, dtype=np.float32)).map(L.Rescaling(2.0))


def test_fit_on_augmented_dataset():
    x = RNG.uniform(0, 255, (32, 8, 8, 3)).astype(np.float32)
    y = RNG.integers(0, 2, (32,))
    flip = L.RandomFlip("horizontal")
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).map(lambda a, b: (flip(a), b)).prefetch(2)
    model = keras.Sequential([keras.Input((8, 8, 3)), L.Rescaling(1 / 255), L.Flatten(), L.Dense(1)])
    model.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=True))
    hist = model.fit(ds, epochs=2, verbose=0)
    assert len(hist.history["loss"]) == 2 and np.isfinite(hist.history["loss"]).all()


def test_random_crop_is_a_window_and_brightness_a_shift_per_image():
    x = RNG.uniform(0.3, 0.7, (6, 8, 8, 1)).astype(np.float32)
    crop = L.RandomCrop(4, 5)
    got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(3).map(crop)))
    assert got.shape == (6, 4, 5, 1)
    for a, b in zip(got, x):  # a contiguous 4x5 window of its image (Keras' training crop)
        assert any(np.array_equal(a, b[i:i + 4, j:j + 5]) for i in range(5) for j in range(4))
    bright = L.RandomBrightness(0.2, value_range=(0.0, 1.0))
    got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(3).map(bright)))
    shift = (got - x).reshape(6, -1)
    # x + delta, delta in [-0.2, 0.2] of the value range, one per image; no clipping from [0.3, 0.7].
    np.testing.assert_allclose(shift, shift[:, :1] * np.ones_like(shift), atol=1e-6)
    assert (np.abs(shift[:, 0]) <= 0.2 + 1e-6).all() and len(np.unique(shift[:, 0].round(6))) > 1


def test_zoom_translation_contrast_keep_shape_and_augment():
    x = RNG.uniform(0, 1, (4, 8, 8, 3)).astype(np.float32)
    for layer in (L.RandomZoom(0.3), L.RandomTranslation(0.3, 0.3), L.RandomContrast(0.5)):
        got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(2).map(layer)))
        assert got.shape == x.shape and np.isfinite(got).all()
        assert not np.allclose(got, x), layer.type


def test_integer_lookup_in_map_matches_keras_doc_examples():
    # Keras' IntegerLookup documentation: vocabulary [12, 36, 1138, 42], OOV -> 1 (0 with no mask).
    data = np.array([[12, 1138, 42], [42, 1000, 36]])
    lookup = L.IntegerLookup(vocabulary=[12, 36, 1138, 42])
    got = np.stack(_collect(tf.data.Dataset.from_tensor_slices(data).map(lookup)))
    np.testing.assert_array_equal(got, [[1, 3, 4], [4, 0, 2]])
    masked = L.IntegerLookup(vocabulary=[12, 36, 1138, 42], mask_token=0)
    got = np.stack(_collect(tf.data.Dataset.from_tensor_slices(np.array([[12, 1138, 42], [42, 0, 36]])).map(masked)))
    np.testing.assert_array_equal(got, [[2, 4, 5], [5, 0, 3]])
    with pytest.raises(NotImplementedError, match="output_mode='int'"):
        tf.data.Dataset.from_tensor_slices(data).map(L.IntegerLookup(vocabulary=[1, 2], output_mode="multi_hot"))
    with pytest.raises(TypeError, match="graphs carry no strings"):
        tf.data.Dataset.from_tensor_slices(data).map(lambda v: L.StringLookup(vocabulary=["a"])(v))


def test_explicit_training_argument_is_honoured():
    x = RNG.uniform(1, 2, (64, 4, 4, 1)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(16)
    flip = L.RandomFlip("horizontal")
    np.testing.assert_array_equal(np.concatenate(_collect(ds.map(lambda v: flip(v, training=False)))), x)
    dropped = np.concatenate(_collect(ds.map(lambda v: L.Dropout(0.5)(v, training=True))))
    # Inverted dropout: each value is 0 or 2x (Keras scales the kept ones by 1 / (1 - rate)).
    kept = dropped != 0
    np.testing.assert_allclose(dropped[kept], 2 * x[kept], rtol=1e-6)
    assert 0.3 < kept.mean() < 0.7


def test_models_in_map_augmentation_sequential_and_weights_as_traced():
    x = RNG.uniform(0, 1, (16, 4, 5, 1)).astype(np.float32)
    augmentation = keras.Sequential([L.RandomFlip("vertical")])
    got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(8).map(augmentation)))
    flips = [np.array_equal(a, b[::-1]) for a, b in zip(got, x)]
    assert all(f or np.array_equal(a, b) for f, a, b in zip(flips, got, x)) and 0 < sum(flips) < 16
    dense = keras.Sequential([keras.Input((3,)), L.Dense(2)])
    dense.set_weights([np.arange(6, dtype=np.float32).reshape(3, 2), np.array([1.0, -1.0], np.float32)])
    v = RNG.uniform(0, 1, (5, 3)).astype(np.float32)
    got = np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(v).batch(2).map(lambda b: dense(b))))
    np.testing.assert_allclose(got, v @ np.arange(6).reshape(3, 2) + [1, -1], rtol=1e-5)
    mixed = keras.Sequential([keras.Input((4, 5, 1)), L.RandomFlip(), L.Dropout(0.5)])
    with pytest.raises(ValueError, match="pass training=True or False"):
        tf.data.Dataset.from_tensor_slices(x).batch(8).map(mixed)
    np.testing.assert_array_equal(
        np.concatenate(_collect(tf.data.Dataset.from_tensor_slices(x).batch(8).map(lambda b: mixed(b, training=False)))), x)
