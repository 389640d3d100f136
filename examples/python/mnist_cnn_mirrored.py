"""The talks' Keras CNN script with a MirroredStrategy, run on weft: as in the talks, the model is
created and compiled inside `strategy.scope()`; the rest is unchanged.

    .venv/bin/python examples/python/mnist_cnn_mirrored.py

The strategy mirrors the variables over this process's CPU devices (2 on a 2-core machine;
WEFT_NUM_CPU_DEVICES overrides), splits each global batch of 64 * replicas between them and
all-reduces the gradients. Across processes (TF_CONFIG, MultiWorkerMirroredStrategy) is the
next step of weft (see the issues).
"""
import numpy as np
import weft as tf  # was: import tensorflow as tf

strategy = tf.distribute.MirroredStrategy()
print("replicas in sync:", strategy.num_replicas_in_sync)

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
x_train = x_train.reshape(x_train.shape[0], 28, 28, 1) / 255
x_test = x_test.reshape(x_test.shape[0], 28, 28, 1) / 255

with strategy.scope():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(10),
    ])
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.SGD(),
                  metrics=["accuracy"])
model.summary()

model.fit(x_train, y_train, batch_size=64 * strategy.num_replicas_in_sync, epochs=3, steps_per_epoch=5)
print("predictions for 3 test images:", np.argmax(model.predict(x_test[:3]), axis=1), "labels:", y_test[:3])
