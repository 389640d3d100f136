"""Keras metric objects, for ``compile(metrics=[...])``; each stands for the C++ metric of its name
(train/losses.h): strings such as 'accuracy' work as well."""


class Metric:
    """A metric by name (computed per batch in the C++ graph, averaged over the epoch)."""
    name = None

    def __init__(self, name=None):
        if name is not None:
            self.name = name

    def __repr__(self):
        return "<weft.keras.metrics %s>" % self.name


class Accuracy(Metric):
    """'accuracy': resolved against the loss (sparse or categorical), as Keras resolves the string."""
    name = "accuracy"


class SparseCategoricalAccuracy(Metric):
    """Integer labels against the arg-max of the predictions."""
    name = "sparse_categorical_accuracy"


class CategoricalAccuracy(Metric):
    """One-hot labels against the arg-max of the predictions."""
    name = "categorical_accuracy"


class MeanSquaredError(Metric):
    """Mean of (y - pred)**2."""
    name = "mse"


__all__ = ["Metric", "Accuracy", "SparseCategoricalAccuracy", "CategoricalAccuracy", "MeanSquaredError"]
