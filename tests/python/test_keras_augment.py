"""Keras' image preprocessing and augmentation layers (Resizing, RandomFlip, RandomContrast,
RandomBrightness, RandomCrop, RandomRotation, RandomZoom, RandomTranslation): identity at
inference, training-pass properties (seen through train_on_batch's mse loss of one image against
an expected output), TF2's half-pixel resize transcribed in numpy, fit, save / load."""
import numpy as np
import pytest

import weft
from weft import keras
from weft.keras import layers as L

RNG = np.random.default_rng(0)


def _images(n=3, h=8, w=8, c=3, lo=0.0, hi=255.0):
    return RNG.uniform(lo, hi, (n, h, w, c)).astype(np.float32)


def _trainer(layer, shape):
    """layer -> Flatten under SGD(0) and mse: train_on_batch(x, y) is mean((layer(x) - y)^2) of the training pass."""
    model = keras.Sequential([keras.Input(shape=shape), layer, L.Flatten()])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    return model


def _train_loss(model, x, want):
    return float(model.train_on_batch(x, want.reshape(len(x), -1)))


def _tf_resize_bilinear(img, oh, ow):
    """TF2's resize_bilinear with half_pixel_centers (compute_interpolation_weights), in numpy."""
    def weights(out, size):
        x = (np.arange(out) + 0.5) * (size / out) - 0.5
        lo = np.floor(x)
        return np.maximum(lo, 0).astype(int), np.minimum(np.ceil(x), size - 1).astype(int), x - lo
    yl, yu, yf = weights(oh, img.shape[1])
    xl, xu, xf = weights(ow, img.shape[2])
    xf, yf = xf[None, None, :, None], yf[None, :, None, None]
    top = img[:, yl][:, :, xl] + (img[:, yl][:, :, xu] - img[:, yl][:, :, xl]) * xf
    bottom = img[:, yu][:, :, xl] + (img[:, yu][:, :, xu] - img[:, yu][:, :, xl]) * xf
    return top + (bottom - top) * yf


ALL_RANDOM = [lambda: L.RandomFlip(), lambda: L.RandomFlip("vertical"), lambda: L.RandomContrast(0.5),
              lambda: L.RandomBrightness(0.3), lambda: L.RandomRotation(0.2), lambda: L.RandomZoom(0.3, 0.2),
              lambda: L.RandomTranslation(0.2, 0.3, fill_mode="constant"), lambda: L.RandomCrop(8, 8)]


@pytest.mark.parametrize("make", ALL_RANDOM)
def test_identity_at_inference(make):
    x = _images()
    model = keras.Sequential([keras.Input(shape=(8, 8, 3)), make()])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)


def test_flip_gives_the_image_or_its_mirror():
    x = _images(1)
    model = _trainer(L.RandomFlip("horizontal", seed=3), (8, 8, 3))
    mirrored = np.mean((x - x[:, :, ::-1]) ** 2)
    losses = [_train_loss(model, x, x) for _ in range(24)]
    assert all(l == pytest.approx(0.0, abs=1e-6) or l == pytest.approx(mirrored, rel=1e-5) for l in losses), losses
    assert 0 < sum(l < 1e-6 for l in losses) < len(losses)  # both outcomes occur
    both = _trainer(L.RandomFlip(seed=4), (8, 8, 3))  # Keras 3: one draw flips both axes
    turned = np.mean((x - x[:, ::-1, ::-1]) ** 2)
    assert all(l == pytest.approx(0.0, abs=1e-6) or l == pytest.approx(turned, rel=1e-5)
               for l in (_train_loss(both, x, x) for _ in range(12)))
    vertical = _trainer(L.RandomFlip("vertical", seed=5), (8, 8, 3))
    flipped = np.mean((x - x[:, ::-1]) ** 2)
    assert all(l == pytest.approx(0.0, abs=1e-6) or l == pytest.approx(flipped, rel=1e-5)
               for l in (_train_loss(vertical, x, x) for _ in range(12)))


def test_contrast_keeps_the_per_image_mean_and_brightness_adds():
    x = _images(2, lo=100.0, hi=150.0)  # no clipping at factor 0.5: |x - mean| <= 50
    means = _trainer(L.RandomContrast(0.5, seed=1), (8, 8, 3))
    pooled = keras.Sequential([keras.Input(shape=(8, 8, 3)), L.RandomContrast(0.5, seed=1), L.GlobalAveragePooling2D()])
    pooled.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")
    assert _train_loss(pooled, x, x.mean(axis=(1, 2))) == pytest.approx(0.0, abs=1e-8)
    assert _train_loss(means, x, x) > 1.0  # the contrast did change
    bright = _trainer(L.RandomBrightness((0.1, 0.1), value_range=(0, 1)), (8, 8, 3))
    y = _images(2, lo=0.0, hi=1.0)
    assert _train_loss(bright, y, np.minimum(y + 0.1, 1.0)) == pytest.approx(0.0, abs=1e-12)


def test_zero_factors_are_the_identity_and_a_quarter_turn_is_rot90():
    x = _images(2)
    for layer in (L.RandomRotation((0.0, 0.0)), L.RandomZoom(0.0), L.RandomTranslation(0.0, 0.0),
                  L.RandomRotation(0.0, interpolation="nearest")):
        assert _train_loss(_trainer(layer, (8, 8, 3)), x, x) == 0.0
    turn = _trainer(L.RandomRotation((0.25, 0.25), interpolation="nearest"), (8, 8, 3))
    assert _train_loss(turn, x, np.rot90(x, axes=(1, 2))) == 0.0
    # Translation by (0.25, 0.25) of 8: two pixels down and right, constant fill 0.
    shift = _trainer(L.RandomTranslation((0.25, 0.25), (0.25, 0.25), fill_mode="constant"), (8, 8, 3))
    want = np.zeros_like(x)
    want[:, 2:, 2:] = x[:, :-2, :-2]
    assert _train_loss(shift, x, want) == pytest.approx(0.0, abs=1e-8)
    # Zoom out by 1.5 (factor (0.5, 0.5)) about the center, nearest fill: output i reads 1.5 i - 1.75.
    zoom = _trainer(L.RandomZoom((0.5, 0.5), interpolation="nearest", fill_mode="nearest"), (8, 8, 3))
    idx = np.clip(np.round(1.5 * np.arange(8) - 1.75), 0, 7).astype(int)
    assert _train_loss(zoom, x, x[:, idx][:, :, idx]) == pytest.approx(0.0, abs=1e-8)


def test_resizing_matches_tf2_half_pixel_bilinear():
    x = _images(2, h=5, w=7)
    for oh, ow in ((3, 4), (10, 9), (5, 7)):
        model = keras.Sequential([keras.Input(shape=(5, 7, 3)), L.Resizing(oh, ow)])
        np.testing.assert_allclose(model.predict(x, verbose=0), _tf_resize_bilinear(x, oh, ow), rtol=1e-5, atol=1e-3)
    # crop_to_aspect_ratio: the central 5 x 5 window (columns 1..5), then 5 -> 3.
    model = keras.Sequential([keras.Input(shape=(5, 7, 3)), L.Resizing(3, 3, crop_to_aspect_ratio=True)])
    np.testing.assert_allclose(model.predict(x, verbose=0), _tf_resize_bilinear(x[:, :, 1:6], 3, 3), rtol=1e-5, atol=1e-3)
    nearest = keras.Sequential([keras.Input(shape=(5, 7, 3)), L.Resizing(10, 14, interpolation="nearest")])
    np.testing.assert_array_equal(nearest.predict(x, verbose=0), x.repeat(2, axis=1).repeat(2, axis=2))


def test_center_crop_resizes_smaller_images_as_keras_3():
    x = _images(2, h=3, w=6)
    model = keras.Sequential([keras.Input(shape=(3, 6, 3)), L.CenterCrop(4, 4)])
    # The central 3 x 3 window (columns 1..3), resized to 4 x 4.
    np.testing.assert_allclose(model.predict(x, verbose=0), _tf_resize_bilinear(x[:, :, 1:4], 4, 4), rtol=1e-5, atol=1e-3)


def test_random_crop_windows_in_training_and_resizes_at_inference():
    x = _images(1, h=8, w=8, c=1)
    crop = _trainer(L.RandomCrop(4, 4, seed=7), (8, 8, 1))
    windows = [np.mean((x[:, i:i + 4, j:j + 4] - x[:, :4, :4]) ** 2) for i in range(5) for j in range(5)]
    for _ in range(6):
        loss = _train_loss(crop, x, x[:, :4, :4])
        assert min(abs(loss - w) for w in windows) < 1e-3 * max(1.0, loss)
    model = keras.Sequential([keras.Input(shape=(8, 8, 1)), L.RandomCrop(4, 4)])
    np.testing.assert_allclose(model.predict(x, verbose=0), _tf_resize_bilinear(x, 4, 4), rtol=1e-5, atol=1e-3)


def test_tutorial_model_fits_and_saves(tmp_path):
    augment = keras.Sequential([L.RandomFlip("horizontal", input_shape=(16, 16, 3)), L.RandomRotation(0.1),
                                L.RandomZoom(0.1), L.RandomContrast(0.1), L.RandomTranslation(0.1, 0.1)])
    model = keras.Sequential([augment, L.Rescaling(1. / 255), L.Conv2D(4, 3, padding="same", activation="relu"),
                              L.MaxPooling2D(), L.Flatten(), L.Dense(3)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    x = _images(16, h=16, w=16)
    y = RNG.integers(0, 3, 16)
    before = [w.copy() for w in model.get_weights()]
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert all(np.any(a != b) for a, b in zip(before, model.get_weights()))  # the conv and dense learned
    path = str(tmp_path / "augment.keras")
    model.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)


def test_bad_arguments_name_what_was_wrong():
    with pytest.raises(weft.errors.InvalidArgumentError, match="mode must be"):
        L.RandomFlip("diagonal")
    with pytest.raises(weft.errors.InvalidArgumentError, match="fill_mode must be"):
        L.RandomRotation(0.1, fill_mode="mirror")
    with pytest.raises(weft.errors.InvalidArgumentError, match="interpolation"):
        L.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(weft.errors.InvalidArgumentError, match="height_factor must lie in"):
        L.RandomTranslation(1.5, 0.1)
    with pytest.raises(weft.errors.InvalidArgumentError, match="pad_to_aspect_ratio"):
        L.Resizing(4, 4, pad_to_aspect_ratio=True)
    with pytest.raises(weft.errors.InvalidArgumentError, match="lower <= upper"):
        L.RandomRotation((0.2, 0.1))
    with pytest.raises(weft.errors.InvalidArgumentError, match="known height and width"):
        L.RandomFlip()(keras.Input(shape=(8, 3)))


def test_tf2_experimental_preprocessing_names_are_the_same_layers():
    pre = weft.keras.layers.experimental.preprocessing
    assert pre.RandomFlip is L.RandomFlip and pre.Resizing is L.Resizing and pre.Rescaling is L.Rescaling
    layer = pre.RandomZoom(0.2, seed=1)
    assert layer.get_config()["height_factor"] == 0.2
    with pytest.raises(AttributeError, match="RandomGrayscale"):
        pre.RandomGrayscale


def test_gradients_flow_through_augmentation_after_a_trainable_layer():
    # Keras differentiates through the sampling: a Conv2D before RandomRotation still learns.
    model = keras.Sequential([keras.Input(shape=(8, 8, 3)), L.Conv2D(2, 3, padding="same"), L.RandomRotation(0.2),
                              L.RandomFlip(), L.Resizing(4, 4), L.Flatten(), L.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    before = model.get_weights()[0].copy()
    model.fit(_images(8, lo=0, hi=1), np.ones((8, 1), np.float32), epochs=1, batch_size=8, verbose=0)
    assert np.all(np.isfinite(model.get_weights()[0])) and np.any(model.get_weights()[0] != before)
