"""Trains ResNet-20 in TensorFlow on 2,000 Fashion-MNIST images padded to 32x32 and writes the
per-epoch training curves that tests/train/resnet_curve_test.cc compares weft's with.

    bench/.venv/bin/python tests/train/golden/make_resnet20_curve.py > tests/train/golden/resnet20_tf_curve.json

TensorFlow 2.21 CPU from the bench-only venv (bench/setup_peers.sh); never run by the tests, which
read the JSON it printed. The model is weft-zoo's resnet20 (zoo/models.cc, as bench/peers_zoo_tf.py
builds it) on a 32x32x1 input; the data: the first 2,000 training images and the first 1,000 test
images of Debian's dataset-fashion-mnist, scaled to [0, 1] and zero-padded by 2 pixels on every
side. Training: batch 64 in file order (no shuffling), SGD learning rate 0.05, momentum 0.9, mean
sparse softmax cross-entropy on the logits plus the conv kernels' L2 1e-4, 3 epochs. Each seed
(several: the spread between them is the seed noise the test allows) gives per epoch the training
loss Keras reports (the mean over the epoch's batches, regularization included) and the accuracy
on the 1,000 test images in inference mode (batch-norm moving statistics).
"""
import gzip
import json
import os
import sys

import numpy as np

DIR = "/usr/share/datasets/fashion-mnist"
TRAIN_N, TEST_N, EPOCHS, SEEDS = 2000, 1000, 3, (1, 2, 3, 4, 5)


def idx(name, n, image):
    with gzip.open(os.path.join(DIR, name)) as f:
        data = f.read()
    if image:
        x = np.frombuffer(data, np.uint8, offset=16)[: n * 784].reshape(n, 28, 28, 1).astype(np.float32) / 255
        return np.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)))
    return np.frombuffer(data, np.uint8, offset=8)[:n].astype(np.int32)


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "bench"))
    import tensorflow as tf
    from peers_zoo_tf import SHAPES, build

    SHAPES["resnet20"] = (32, 32, 1)
    x = idx("train-images-idx3-ubyte.gz", TRAIN_N, True)
    y = idx("train-labels-idx1-ubyte.gz", TRAIN_N, False)
    tx = idx("t10k-images-idx3-ubyte.gz", TEST_N, True)
    ty = idx("t10k-labels-idx1-ubyte.gz", TEST_N, False)
    runs = []
    for seed in SEEDS:
        tf.keras.utils.set_random_seed(seed)
        model = build(tf, "resnet20")
        model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        losses, accs = [], []
        for _ in range(EPOCHS):
            h = model.fit(x, y, batch_size=64, epochs=1, shuffle=False, verbose=0)
            losses.append(float(h.history["loss"][0]))
            accs.append(float(model.evaluate(tx, ty, batch_size=250, verbose=0)[1]))
        runs.append({"seed": seed, "loss": losses, "test_accuracy": accs})
        print(f"seed {seed}: loss {losses} test accuracy {accs}", file=sys.stderr, flush=True)
    json.dump({"framework": f"tensorflow {tf.__version__}", "train_images": TRAIN_N, "test_images": TEST_N,
               "epochs": EPOCHS, "batch_size": 64, "optimizer": "SGD lr 0.05 momentum 0.9", "runs": runs},
              sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
