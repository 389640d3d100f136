"""The talks' CNN trained for one full epoch on Fashion-MNIST with momentum SGD, then evaluated on
the test split (about 87%, as PyTorch reaches with the same model and settings).

    .venv/bin/python examples/python/fashion_mnist_full.py [--epochs N] [--threads T]
"""
import argparse
import time

import numpy as np
from weft import keras
from weft.keras import layers

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--threads", type=int, default=0, help="0: one per hardware thread")
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

(x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
x_train = (x_train.reshape(-1, 28, 28, 1) / np.float32(255))
x_test = (x_test.reshape(-1, 28, 28, 1) / np.float32(255))

model = keras.Sequential([
    layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
    layers.MaxPooling2D(),
    layers.Flatten(),
    layers.Dense(64, activation="relu"),
    layers.Dense(10),
])
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
              metrics=["accuracy"], seed=args.seed, inter_op_threads=args.threads, intra_op_threads=args.threads)
start = time.time()
model.fit(x_train, y_train, batch_size=64, epochs=args.epochs, shuffle_seed=args.seed)
train_seconds = time.time() - start
loss, accuracy = model.evaluate(x_test, y_test, batch_size=256)
print("test accuracy %.4f, test loss %.4f, training %.1fs" % (accuracy, loss, train_seconds))
if accuracy < 0.86:
    raise SystemExit("test accuracy %.4f is below the 86%% this example promises" % accuracy)
