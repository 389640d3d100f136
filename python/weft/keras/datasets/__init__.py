"""Data sets as numpy arrays, as Keras returns them: ``(x_train, y_train), (x_test, y_test)``."""
from . import fashion_mnist, mnist  # noqa: F401
