"""Data sets as numpy arrays, as Keras returns them: ``(x_train, y_train), (x_test, y_test)``.
weft reads the files you have (Keras' cached downloads under ~/.keras/datasets, or a path);
it downloads nothing."""
from . import boston_housing, california_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters  # noqa: F401
