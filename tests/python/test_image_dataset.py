"""keras.utils.image_dataset_from_directory and the PIL-image helpers (python/weft/keras/
_image_dataset.py). Expected values: TF 2.21's datasets over the same tree of PNG files
(data/image_dataset_reference.json, gen_image_dataset_reference.py; the tree: data/image_tree.py)
and closed forms (a same-size bilinear resize is the identity). The tests never import TensorFlow."""
import json
import os
import sys

import numpy as np
import pytest

import weft as tf

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from image_tree import image, image_tree  # noqa: E402

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "image_dataset_reference.json")))


@pytest.fixture
def tree(tmp_path):
    made = image_tree(str(tmp_path), lambda path, a: tf.io.write_file(path, tf.io.encode_png(a)))
    return str(tmp_path), made


@pytest.mark.parametrize("seed", [7, 1337])
def test_subsets_and_order_as_keras(tree, seed):
    root, _ = tree
    ref = REF["seed%d" % seed]
    train, val = tf.keras.utils.image_dataset_from_directory(root, seed=seed, validation_split=0.25, subset="both",
                                                             image_size=(6, 8), batch_size=4)
    assert train.class_names == val.class_names == ref["class_names"] == ["ants", "bees", "cats"]
    assert [os.path.relpath(p, root) for p in train.file_paths] == ref["train_files"]
    assert [os.path.relpath(p, root) for p in val.file_paths] == ref["val_files"]
    labels, firsts = zip(*[(y.numpy().tolist(), x.numpy()[:, 0, 0, :]) for x, y in val])
    assert list(labels) == ref["val_labels"]
    np.testing.assert_allclose(np.concatenate(firsts), np.concatenate(ref["val_first_pixels"]), atol=1e-4)
    assert train.element_spec[0].shape.as_list() == [None, 6, 8, 3]
    assert sum(int(x.shape[0]) for x, _ in train) == 9


def test_crop_grayscale_and_nearest_rgba_as_keras(tree):
    root, _ = tree
    ds = tf.keras.utils.image_dataset_from_directory(root, shuffle=False, image_size=(4, 4), batch_size=None,
                                                     crop_to_aspect_ratio=True, label_mode="categorical",
                                                     color_mode="grayscale")
    x, y = next(iter(ds))
    ref = REF["crop_gray_first"]
    assert x.shape == (4, 4, 1) and y.numpy().tolist() == ref["label"]
    np.testing.assert_allclose(x.numpy(), ref["image"], atol=1.0)  # grayscale luma rounding (see the codec doc)
    ds = tf.keras.utils.image_dataset_from_directory(root, shuffle=False, image_size=(3, 5), batch_size=2,
                                                     interpolation="nearest", color_mode="rgba")
    x, y = next(iter(ds))
    ref = REF["nearest_rgba_first"]
    assert x.numpy().dtype == np.dtype(ref["dtype"]) == np.uint8
    np.testing.assert_array_equal(x.numpy(), ref["image"])
    assert y.numpy().tolist() == ref["label"]


def test_values_label_modes_and_fit(tree):
    root, made = tree
    ds = tf.keras.preprocessing.image_dataset_from_directory(root, shuffle=False, image_size=(6, 8), batch_size=5,
                                                             label_mode="int")
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
    x, y = np.concatenate(xs), np.concatenate(ys)
    assert x.dtype == np.float32 and y.dtype == np.int32 and y.tolist() == [0] * 5 + [1] * 4 + [2] * 3
    # Images 0, 3, 6, 9 are 6x8: the same-size resize is the identity.
    for rel, k in made.items():
        if image(k).shape[:2] == (6, 8):
            np.testing.assert_array_equal(x[sorted(made).index(rel)], image(k).astype(np.float32))
    binary = tf.keras.utils.image_dataset_from_directory(root, labels=[0, 1] * 6, label_mode="binary",
                                                         shuffle=False, image_size=(6, 8), batch_size=12)
    _, yb = next(iter(binary))
    assert yb.shape == (12, 1) and yb.numpy().dtype == np.float32 and yb.numpy()[:, 0].tolist() == [0.0, 1.0] * 6
    only = tf.keras.utils.image_dataset_from_directory(root, labels=None, image_size=(6, 8), batch_size=4, seed=1)
    assert only.element_spec.shape.as_list() == [None, 6, 8, 3]
    train = tf.keras.utils.image_dataset_from_directory(root, label_mode="categorical", image_size=(6, 8),
                                                        batch_size=4, seed=2)
    model = tf.keras.Sequential([tf.keras.layers.Rescaling(1.0 / 255), tf.keras.layers.Flatten(),
                                 tf.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    history = model.fit(train, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()


def test_errors_name_the_argument_or_file(tree):
    root, _ = tree
    f = tf.keras.utils.image_dataset_from_directory
    with pytest.raises(ValueError, match="color_mode"):
        f(root, color_mode="cmyk")
    with pytest.raises(ValueError, match="image_size"):
        f(root, image_size=(1, 2, 3))
    with pytest.raises(ValueError, match="interpolation"):
        f(root, interpolation="cubic-ish")
    with pytest.raises(ValueError, match="label_mode"):
        f(root, label_mode="sparse")
    with pytest.raises(ValueError, match="seed"):
        f(root, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="exactly 2 class_names"):
        f(root, label_mode="binary")
    with pytest.raises(ValueError, match="No images found"):
        f(os.path.join(root, ".hidden"))
    with pytest.raises(tf.errors.NotFoundError, match="Could not find directory"):
        f(os.path.join(root, "nowhere"))
    with open(os.path.join(root, "bees", "broken.png"), "wb") as fh:
        fh.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)
    ds = f(root, shuffle=False, image_size=(6, 8), batch_size=None)
    with pytest.raises(tf.errors.InvalidArgumentError, match="broken.png"):
        for _ in ds:
            pass


def test_load_img_img_to_array_save_img(tmp_path):
    a = image(5)  # 8 x 10 RGB
    path = str(tmp_path / "a.png")
    tf.keras.utils.save_img(path, a, scale=False)
    img = tf.keras.utils.load_img(path)
    assert img.size == (a.shape[1], a.shape[0])
    np.testing.assert_array_equal(tf.keras.utils.img_to_array(img), a.astype(np.float32))
    gray = tf.keras.preprocessing.image.load_img(path, color_mode="grayscale", target_size=(4, 5))
    assert tf.keras.utils.img_to_array(gray).shape == (4, 5, 1)
    pil = tf.keras.utils.array_to_img(np.array([[[0.0], [2.0]]]))
    assert pil.mode == "L" and list(np.asarray(pil).reshape(-1)) == [0, 255]  # scaled to 0..255
    cropped = tf.keras.utils.load_img(path, target_size=(4, 4), keep_aspect_ratio=True)
    assert cropped.size == (4, 4)
    with open(str(tmp_path / "bad.png"), "wb") as fh:
        fh.write(b"not a png")
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad.png"):
        tf.keras.utils.load_img(str(tmp_path / "bad.png"))
    out = tf.keras.preprocessing.image.smart_resize(a.astype(np.float32), (4, 4))
    assert isinstance(out, np.ndarray) and out.shape == (4, 4, 3)
