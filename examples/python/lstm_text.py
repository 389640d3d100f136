"""lstm_text from Python: which fortunes file a quote came from, with an Embedding + LSTM
classifier, as a TensorFlow program (only the import line names weft). The same model and data
as `weft-zoo train lstm_text` (zoo/models.cc, data/fortunes.h): the first 128 characters of
each quote as ids (newline 0, ' '..'~' 1..95, other bytes 96, 97 after the quote's end), every
fifth quote held out for testing.

    .venv/bin/python examples/python/lstm_text.py [--epochs 3] [--steps 40]

Data: Debian's `fortunes` package (/usr/share/games/fortunes; build.sh installs it).
"""
import argparse
import os

import numpy as np
import weft as tf  # was: import tensorflow as tf

DIR = "/usr/share/games/fortunes"
FILES = ["people", "definitions", "cookie", "computers", "songs-poems", "politics", "work", "science",
         "men-women", "zippy"]
LENGTH, PAD = 128, 97


def ids(quote):
    out = []
    for c in quote.encode("utf-8", "replace")[:LENGTH]:
        c = 32 if c == 9 else c
        out.append(0 if c == 10 else c - 31 if 32 <= c <= 126 else 96)
    return out + [PAD] * (LENGTH - len(out))


def load():
    split = {True: ([], []), False: ([], [])}
    for label, name in enumerate(FILES):
        with open(os.path.join(DIR, name), encoding="utf-8", errors="replace") as f:
            quotes = [q.strip("\n") for q in f.read().split("\n%\n")]
        for i, q in enumerate(q for q in quotes if q.strip("\n%")):
            xs, ys = split[(i + 1) % 5 != 0]
            xs.append(ids(q))
            ys.append(label)
    return [(np.array(x, np.float32), np.array(y, np.int32)) for x, y in (split[True], split[False])]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=40, help="steps per epoch (0: the whole training split)")
    args = p.parse_args()
    (x_train, y_train), (x_test, y_test) = load()
    print("%d training and %d test quotes from %d files" % (len(x_train), len(x_test), len(FILES)))
    model = tf.keras.Sequential([
        tf.keras.Input(shape=(LENGTH,)),
        tf.keras.layers.Embedding(PAD + 1, 32),
        tf.keras.layers.LSTM(64),
        tf.keras.layers.Dense(len(FILES)),
    ])
    model.summary()
    model.compile(loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(0.005), metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=64, epochs=args.epochs, steps_per_epoch=args.steps or None, shuffle=True)
    loss, acc = model.evaluate(x_test, y_test, verbose=0)
    print("test loss %.4f, test accuracy %.4f (chance %.2f)" % (loss, acc, 1 / len(FILES)))


if __name__ == "__main__":
    main()
