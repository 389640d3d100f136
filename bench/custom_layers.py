"""keras.io's text-classification transformer (custom layers: TokenAndPositionEmbedding,
TransformerBlock; examples/python/keras_transformer_text.py) trained with model.fit in weft and in
TensorFlow, the same source in both: the child imports the example's classes with ``weft`` bound
to TensorFlow's modules for the TensorFlow run. Fresh processes, rounds interleaved (the order
alternates); prints the median steps/s of each and the ratio.

    python3 bench/custom_layers.py --rounds 3 [--steps 100] [--batch 32] [--threads 2] [--tf-python PATH]

weft runs with .venv/bin/python, TensorFlow with bench/.venv/bin/python (bench/setup_peers.sh) or
--tf-python. Data: random token ids (maxlen 64, vocabulary 98, 10 classes), the example's sizes."""
import argparse
import os
import statistics

import interleaved

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r'''
import os, sys, time
import numpy as np
fw, steps, batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if fw == "tf":
    import tensorflow
    sys.modules.update({"weft": tensorflow, "weft.keras": tensorflow.keras,
                        "weft.keras.layers": tensorflow.keras.layers})
import weft as tf
tf.config.threading.set_inter_op_parallelism_threads(threads)
tf.config.threading.set_intra_op_parallelism_threads(threads)
sys.path.insert(0, os.path.join(sys.argv[5], "examples", "python"))
from keras_transformer_text import TokenAndPositionEmbedding, TransformerBlock
from weft import keras
from weft.keras import layers
maxlen, vocab, classes = 64, 98, 10
inputs = layers.Input(shape=(maxlen,))
x = TokenAndPositionEmbedding(maxlen, vocab, 32)(inputs)
x = TransformerBlock(32, 2, 32)(x)
x = layers.GlobalAveragePooling1D()(x)
outputs = layers.Dense(classes, activation="softmax")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
rng = np.random.default_rng(0)
xs = rng.integers(0, vocab, (steps * batch, maxlen)).astype(np.float32)
ys = rng.integers(0, classes, steps * batch).astype(np.int32)
model.fit(xs[:10 * batch], ys[:10 * batch], batch_size=batch, epochs=1, verbose=0)  # build, trace, warm up
t = time.perf_counter()
model.fit(xs, ys, batch_size=batch, epochs=1, verbose=0, shuffle=False)
print("STEPS_PER_S %.3f" % (steps / (time.perf_counter() - t)))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--tf-python", default=os.path.join(HERE, ".venv", "bin", "python"))
    a = ap.parse_args()
    pythons = {"weft": os.path.join(ROOT, ".venv", "bin", "python"), "tf": a.tf_python}
    got = interleaved.rounds(pythons, lambda fw: ["-c", CHILD, fw, str(a.steps), str(a.batch), str(a.threads), ROOT],
                             a.rounds)
    w, t = statistics.median(got["weft"]), statistics.median(got["tf"])
    print("keras.io transformer (custom layers), fit, batch %d, %d threads: weft %.1f steps/s, TF %.1f steps/s, "
          "weft/TF %.2f" % (a.batch, a.threads, w, t, w / t))


if __name__ == "__main__":
    main()
