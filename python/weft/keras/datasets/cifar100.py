"""CIFAR-100 from Keras' cached copy (``cifar-100-python``: train and test pickles)."""
import os
import pickle

import numpy as np

from ._files import find


def load_data(label_mode="fine", path="cifar-100-python"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images [N, 32, 32, 3] and uint8 labels
    [N, 1], the 100 fine classes or (label_mode="coarse") the 20 superclasses."""
    if label_mode not in ("fine", "coarse"):
        raise ValueError("cifar100.load_data: label_mode must be 'fine' or 'coarse', got %r" % (label_mode,))
    d = find(path, "cifar100.load_data", is_dir=True)
    out = []
    for name in ("train", "test"):
        with open(os.path.join(d, name), "rb") as f:
            b = pickle.load(f, encoding="bytes")
        x = b[b"data"].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        out.append((x, np.asarray(b[(label_mode + "_labels").encode()], np.uint8).reshape(-1, 1)))
    return tuple(out)
