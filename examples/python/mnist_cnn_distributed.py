"""The talks' distributed Keras script, run on weft: every worker runs this same file; TF_CONFIG
(or the rank of mpirun / srun) says which worker it is. Only `import weft as tf` changed, plus
the small --steps-per-epoch / --epochs options to keep a run on a laptop short.

    weft-zoo launch -n 4 -- .venv/bin/python examples/python/mnist_cnn_distributed.py
    mpirun --allow-run-as-root -np 2 .venv/bin/python examples/python/mnist_cnn_distributed.py
    TF_CONFIG='{"cluster": {"worker": ["host1:10090", "host2:10090"]}, "task": {"type": "worker", "index": 0}}' \\
        python examples/python/mnist_cnn_distributed.py        # on host1, index 1 on host2

Each worker loads the data, creates and compiles the model inside strategy.scope() (the chief's
initial weights are broadcast to the others) and trains with the global batch 64 * workers: each
worker computes its slice, the gradients are all-reduced over UCX, and every worker applies the
same update. The talks used MNIST; this machine ships Fashion-MNIST in the same format.
"""
import argparse

import numpy as np
import weft as tf  # was: import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--steps-per-epoch", type=int, default=5)
args = parser.parse_args()

strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()

num_workers = strategy.num_workers
batch_size = 64 * num_workers
print("worker %d of %d, replicas in sync: %d" % (strategy.worker_index, num_workers, strategy.num_replicas_in_sync))

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
                  optimizer=tf.keras.optimizers.SGD(learning_rate=0.001),
                  metrics=["accuracy"])

model.fit(x_train, y_train, batch_size=batch_size, epochs=args.epochs, steps_per_epoch=args.steps_per_epoch)
if strategy.is_chief:
    print("predictions for 3 test images:", np.argmax(model.predict(x_test[:3]), axis=1), "labels:", y_test[:3])
