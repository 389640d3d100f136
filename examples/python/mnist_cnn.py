"""The talks' Keras CNN script, run on weft: the only change is the import line.

    .venv/bin/python examples/python/mnist_cnn.py

(The talks load MNIST; weft's default data set is Fashion-MNIST, which has the same format and
is installed by Debian's dataset-fashion-mnist. Use tf.keras.datasets.mnist.load_data(path=DIR)
for MNIST files you have.)
"""
import numpy as np
import weft as tf  # was: import tensorflow as tf

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
x_train = x_train.reshape(x_train.shape[0], 28, 28, 1) / 255
x_test = x_test.reshape(x_test.shape[0], 28, 28, 1) / 255

model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.summary()

model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.SGD(),
              metrics=["accuracy"])

model.fit(x_train, y_train, batch_size=64, epochs=3, steps_per_epoch=5)
print("predictions for 3 test images:", np.argmax(model.predict(x_test[:3]), axis=1), "labels:", y_test[:3])
