"""weft.keras: Keras' API over weft's C++ training library (train/).

The talks' script runs with ``import weft as tf`` in place of ``import tensorflow as tf``::

    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(10)])
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.SGD(), metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=3)

Layers, losses, optimizers, schedules and callbacks are the C++ objects; fit / evaluate / predict
run the C++ loop (same progress output) with the GIL released.
"""
from . import activations, layers, losses, metrics, optimizers, callbacks  # noqa: F401
from . import datasets, initializers, regularizers, constraints, utils, saving  # noqa: F401
from . import applications, backend, mixed_precision, preprocessing, ops  # noqa: F401
from .models import Model, Sequential, Input  # noqa: F401
from .layers import Layer  # noqa: F401
from . import models  # noqa: F401
from . import _op_layers  # noqa: E402
_op_layers.install()  # TF ops and Python operators on KerasTensors make layers (_op_layers.py)

__all__ = ["Model", "Sequential", "Input", "Layer", "activations", "layers", "losses", "optimizers", "callbacks",
           "datasets", "initializers", "regularizers", "constraints", "metrics", "utils", "saving", "backend",
           "mixed_precision", "preprocessing", "ops"]
