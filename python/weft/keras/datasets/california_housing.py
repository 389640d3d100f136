"""California housing prices from Keras' ``california_housing.npz``."""
import numpy as np

from ._files import find, shuffled


def load_data(version="large", path="california_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)``: 8 features and the median value; version "small"
    keeps the first 600 districts (Keras'), then shuffled by ``seed`` and split."""
    if version not in ("small", "large"):
        raise ValueError("california_housing.load_data: version must be 'small' or 'large', got %r" % (version,))
    if not 0 <= test_split < 1:
        raise ValueError("california_housing.load_data: test_split must be in [0, 1), got %r" % (test_split,))
    with np.load(find(path, "california_housing.load_data"), allow_pickle=True) as f:
        x, y = f["x"], f["y"]
    if version == "small":
        x, y = x[:600], y[:600]
    x, y = shuffled(np.random.RandomState(seed), x, y)
    n = int(len(x) * (1 - test_split))
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))
