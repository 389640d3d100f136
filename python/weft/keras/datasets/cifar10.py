"""CIFAR-10 from Keras' cached copy (``cifar-10-batches-py``: the python pickles)."""
import os
import pickle

import numpy as np

from ._files import find


def _batch(path):
    with open(path, "rb") as f:
        d = pickle.load(f, encoding="bytes")
    labels = d.get(b"labels", d.get(b"fine_labels"))
    return d[b"data"].reshape(-1, 3, 32, 32), d, labels


def load_data(path="cifar-10-batches-py"):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images [N, 32, 32, 3] (channels last, as
    Keras gives them) and uint8 labels [N, 1]. path: the extracted ``cifar-10-batches-py``
    directory (data_batch_1..5, test_batch), relative ones also under ~/.keras/datasets."""
    d = find(path, "cifar10.load_data", is_dir=True)
    xs, ys = [], []
    for i in range(1, 6):
        x, _, y = _batch(os.path.join(d, "data_batch_%d" % i))
        xs.append(x)
        ys.append(y)
    x_test, _, y_test = _batch(os.path.join(d, "test_batch"))
    x_train = np.concatenate(xs).transpose(0, 2, 3, 1)
    y_train = np.concatenate(ys).astype(np.uint8).reshape(-1, 1)
    return (x_train, y_train), (x_test.transpose(0, 2, 3, 1), np.asarray(y_test, np.uint8).reshape(-1, 1))
