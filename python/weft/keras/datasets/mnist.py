"""MNIST from files you have: the four IDX files (gzip-compressed or not) or Keras' mnist.npz."""
import os

import numpy as np

from ... import _weft
from ...errors import NotFoundError


def load_data(path="mnist.npz"):
    """``(x_train, y_train), (x_test, y_test)`` as uint8 numpy arrays, like Keras.

    path: a directory holding {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz], or an .npz file
    with x_train, y_train, x_test, y_test (Keras' mnist.npz; a relative name is looked up in
    ~/.keras/datasets as Keras does). weft downloads nothing: a missing file is a NotFoundError.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        return _weft.keras._load_mnist_dir(path, True), _weft.keras._load_mnist_dir(path, False)
    candidates = [path]
    if not os.path.isabs(path):
        candidates.append(os.path.join(os.path.expanduser("~"), ".keras", "datasets", path))
    for p in candidates:
        if os.path.isfile(p):
            with np.load(p) as f:
                return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
    raise NotFoundError("mnist.load_data: no MNIST data at %s (give a directory of MNIST IDX files or an .npz file; "
                        "weft does not download data)" % " or ".join(repr(c) for c in candidates), "NotFound")
