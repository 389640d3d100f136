"""A tf.data input pipeline feeding Keras, run on weft: the only change is the import line.

    .venv/bin/python examples/python/tf_data_pipeline.py [--epochs 2] [--steps-per-epoch 100]

The pipeline is TensorFlow's usual one: slices of the uint8 images and labels, shuffled, mapped
by a Python function (traced once into a weft graph, then run in C++ on the pipeline's threads,
several elements at once), batched and prefetched. fit reads the dataset again every epoch;
validation_data is a dataset too. Fashion-MNIST comes from Debian's dataset-fashion-mnist.
"""
import argparse

import numpy as np
import weft as tf  # was: import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--steps-per-epoch", type=int, default=None, help="default: the whole training set")
args = parser.parse_args()

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
BATCH = 64


def normalize(image, label):
    image = tf.cast(image, tf.float32) / 255.0
    return tf.expand_dims(image, -1), label  # [28, 28] -> [28, 28, 1]


train = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
         .shuffle(10000, seed=1)
         .map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
         .batch(BATCH)
         .prefetch(tf.data.AUTOTUNE))
test = (tf.data.Dataset.from_tensor_slices((x_test, y_test))
        .map(normalize, num_parallel_calls=tf.data.AUTOTUNE)
        .batch(256)
        .cache()
        .prefetch(tf.data.AUTOTUNE))
print("element_spec:", train.element_spec)
print("batches per epoch:", train.cardinality().numpy())

model = tf.keras.Sequential([
    tf.keras.layers.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(10),
])
model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
              metrics=["accuracy"])

steps = args.steps_per_epoch
model.fit(train.repeat() if steps else train, epochs=args.epochs, steps_per_epoch=steps,
          validation_data=test.take(4) if steps else test)
loss, accuracy = model.evaluate(test, verbose=0)
print("test loss %.4f, test accuracy %.4f" % (loss, accuracy))
for images, labels in test.take(1):
    print("predictions for 3 test images:", np.argmax(model.predict(images.numpy()[:3]), axis=1),
          "labels:", labels.numpy()[:3])
