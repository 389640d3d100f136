"""The same Fashion-MNIST classifier written the two other Keras ways: with the functional API
(keras.Input, layers called on tensors, a residual Add) and as a subclassed keras.Model (layers
built in __init__, composed in call). Both train with validation_split, class weights and
callbacks (EarlyStopping, ReduceLROnPlateau, ModelCheckpoint, CSVLogger), and the functional one
goes through model.save / keras.models.load_model and carries on training.

    .venv/bin/python examples/python/keras_functional_and_subclassed.py [--train N] [--epochs E]

Only the import line differs from a TensorFlow program (`import tensorflow as tf`).
"""
import argparse
import os
import shutil
import tempfile

import numpy as np
import weft as tf

parser = argparse.ArgumentParser()
parser.add_argument("--train", type=int, default=12000, help="training examples used (60000: all)")
parser.add_argument("--epochs", type=int, default=3)
args = parser.parse_args()

tf.keras.utils.set_random_seed(7)  # same weights, same shuffles, same results on every run
(x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
x_train = x_train[:args.train].reshape(-1, 784).astype("float32") / 255.0
y_train = y_train[:args.train]
x_test = x_test.reshape(-1, 784).astype("float32") / 255.0
work = tempfile.mkdtemp(prefix="weft-keras-")

# ---- functional ---------------------------------------------------------------------------
inputs = tf.keras.Input(shape=(784,))
h = tf.keras.layers.Dense(128, activation="relu")(inputs)
r = tf.keras.layers.Dense(128, activation="relu")(h)
h = tf.keras.layers.Add()([h, r])  # a residual connection
h = tf.keras.layers.Dropout(0.2)(h)
outputs = tf.keras.layers.Dense(10)(h)
functional = tf.keras.Model(inputs=inputs, outputs=outputs, name="functional_mlp")
functional.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                   loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
functional.summary()
callbacks = [
    tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=2, restore_best_weights=True),
    tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1),
    tf.keras.callbacks.ModelCheckpoint(os.path.join(work, "best-{epoch:02d}.keras"), monitor="val_accuracy",
                                       save_best_only=True),
    tf.keras.callbacks.CSVLogger(os.path.join(work, "functional.csv")),
]
# shirts (class 6) are the class the model confuses most: weigh them up a little
history = functional.fit(x_train, y_train, batch_size=64, epochs=args.epochs, validation_split=0.1,
                         class_weight={c: (1.5 if c == 6 else 1.0) for c in range(10)}, callbacks=callbacks,
                         verbose=2)
print("functional history keys:", sorted(history.history))
loss, accuracy = functional.evaluate(x_test, y_test, batch_size=256, verbose=0)
print("functional: test accuracy %.4f" % accuracy)

path = os.path.join(work, "functional.keras")
functional.save(path)
restored = tf.keras.models.load_model(path)
same = np.array_equal(restored.predict(x_test[:256]), functional.predict(x_test[:256]))
print("saved to %s and loaded back: same predictions: %s" % (path, same))
restored.fit(x_train, y_train, batch_size=64, epochs=1, verbose=0)  # training continues (optimizer state kept)


# ---- subclassed -------------------------------------------------------------------------
class ConvClassifier(tf.keras.Model):
    def __init__(self, num_classes=10, **kwargs):
        super().__init__(**kwargs)
        self.conv = tf.keras.layers.Conv2D(16, 3, activation="relu")
        self.pool = tf.keras.layers.MaxPooling2D()
        self.flatten = tf.keras.layers.Flatten()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.dropout = tf.keras.layers.Dropout(0.2)
        self.classifier = tf.keras.layers.Dense(num_classes)

    def call(self, inputs, training=None):
        x = self.pool(self.conv(inputs))
        return self.classifier(self.dropout(self.hidden(self.flatten(x)), training=training))


subclassed = ConvClassifier(num_classes=10, name="conv_classifier")
subclassed.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                   metrics=["accuracy"])
x_train_img, x_test_img = x_train.reshape(-1, 28, 28, 1), x_test.reshape(-1, 28, 28, 1)
subclassed.fit(x_train_img, y_train, batch_size=64, epochs=args.epochs, validation_data=(x_test_img[:1000],
                                                                                           y_test[:1000]),
               callbacks=[tf.keras.callbacks.TerminateOnNaN()], verbose=2)
subclassed.summary()
results = subclassed.evaluate(x_test_img, y_test, batch_size=256, verbose=0, return_dict=True)
print("subclassed: test accuracy %.4f" % results["accuracy"])
shutil.rmtree(work)
if min(accuracy, results["accuracy"]) < 0.75:
    raise SystemExit("test accuracy below the 75% this example promises")
