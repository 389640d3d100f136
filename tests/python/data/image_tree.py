"""The image tree of tests/python/test_image_dataset.py and gen_image_dataset_reference.py:
three classes of small RGB images with varied sizes (and one .jpg-suffixed file skipped by nothing:
all are PNG bytes), written by the caller's PNG encoder ``write(path, uint8 array)``."""
import os

import numpy as np


def image(k):
    """Image k: height 6 + k % 3, width 8 + k % 4, values a closed form of (y, x, channel, k)."""
    h, w = 6 + k % 3, 8 + k % 4
    y, x, c = np.mgrid[0:h, 0:w, 0:3]
    return ((y * 31 + x * 17 + c * 50 + k * 13) % 256).astype(np.uint8)


def image_tree(root, write):
    """root/<class>/<name>.png for classes ants, bees, cats (5, 4, 3 files) plus files the
    loader must skip (notes.txt, .hidden/ dir); returns {relative path: image index}."""
    made, k = {}, 0
    for cls, n in (("ants", 5), ("bees", 4), ("cats", 3)):
        os.makedirs(os.path.join(root, cls), exist_ok=True)
        for i in range(n):
            rel = os.path.join(cls, "img_%d.png" % i)
            write(os.path.join(root, rel), image(k))
            made[rel] = k
            k += 1
    with open(os.path.join(root, "ants", "notes.txt"), "w") as f:
        f.write("not an image")
    os.makedirs(os.path.join(root, ".hidden"), exist_ok=True)
    return made
