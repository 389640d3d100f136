"""Keras weight regularizers: ``Dense(..., kernel_regularizer=regularizers.l2(1e-4))``."""


class L2:
    """Adds ``l2 * sum(kernel ** 2)`` to the loss."""

    def __init__(self, l2=0.01):
        self.l2 = float(l2)

    def __repr__(self):
        return "L2(%g)" % self.l2


def l2(l2=0.01):
    return L2(l2)


__all__ = ["L2", "l2"]
