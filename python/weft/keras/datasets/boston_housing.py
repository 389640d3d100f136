"""Boston housing prices from Keras' ``boston_housing.npz``."""
import numpy as np

from ._files import find, shuffled


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)``: 13 features and the price, shuffled by ``seed``,
    the last ``test_split`` for testing (Keras')."""
    if not 0 <= test_split < 1:
        raise ValueError("boston_housing.load_data: test_split must be in [0, 1), got %r" % (test_split,))
    with np.load(find(path, "boston_housing.load_data"), allow_pickle=True) as f:
        x, y = f["x"], f["y"]
    x, y = shuffled(np.random.RandomState(seed), x, y)
    n = int(len(x) * (1 - test_split))
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))
