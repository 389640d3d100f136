# Generates image_dataset_reference.json with TF 2.21 (bench/.venv): which files Keras'
# image_dataset_from_directory puts in each subset, in which order, for the tree image_tree() makes
# (tests/python/test_image_dataset.py makes the same tree), and the label batches it yields.
# Run: bench/.venv/bin/python tests/python/data/gen_image_dataset_reference.py
import json
import os
import sys
import tempfile

os.environ["CUDA_VISIBLE_DEVICES"] = ""
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image_tree import image_tree  # noqa: E402

root = tempfile.mkdtemp()
image_tree(root, lambda path, a: tf.io.write_file(path, tf.io.encode_png(a)))
out = {}
for seed in (7, 1337):
    train, val = tf.keras.utils.image_dataset_from_directory(root, seed=seed, validation_split=0.25, subset="both",
                                                             image_size=(6, 8), batch_size=4)
    rel = lambda paths: [os.path.relpath(p, root) for p in paths]  # noqa: E731
    out["seed%d" % seed] = {"class_names": train.class_names, "train_files": rel(train.file_paths),
                            "val_files": rel(val.file_paths),
                            "val_labels": [y.numpy().tolist() for _, y in val],
                            "val_first_pixels": [x.numpy()[:, 0, 0, :].tolist() for x, _ in val]}
ds = tf.keras.utils.image_dataset_from_directory(root, shuffle=False, image_size=(4, 4), batch_size=None,
                                                 crop_to_aspect_ratio=True, label_mode="categorical",
                                                 color_mode="grayscale")
x, y = next(iter(ds))
out["crop_gray_first"] = {"image": x.numpy().tolist(), "label": y.numpy().tolist()}
ds = tf.keras.utils.image_dataset_from_directory(root, shuffle=False, image_size=(3, 5), batch_size=2,
                                                 interpolation="nearest", color_mode="rgba")
x, y = next(iter(ds))
out["nearest_rgba_first"] = {"image": x.numpy().tolist(), "dtype": str(x.dtype.name), "label": y.numpy().tolist()}
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_dataset_reference.json"), "w"))
print(out["seed7"]["train_files"][:4], out["nearest_rgba_first"]["dtype"])
