"""Fashion-MNIST, from Debian's ``dataset-fashion-mnist`` (/usr/share/datasets/fashion-mnist)."""
from ... import _weft


def load_data(path=None):
    """``(x_train, y_train), (x_test, y_test)``: uint8 images [N, 28, 28] (0..255) and uint8 labels
    [N] (0..9): 60,000 training and 10,000 test examples. ``path``: a directory of the IDX files
    (default: Debian's copy). Errors name the missing or damaged file (NotFoundError, DataLossError)."""
    d = str(path) if path is not None else _weft.keras.FASHION_MNIST_DIR
    return _weft.keras._load_mnist_dir(d, True), _weft.keras._load_mnist_dir(d, False)
