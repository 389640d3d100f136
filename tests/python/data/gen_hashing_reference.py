"""Writes hashing_tf.json: tf.strings.to_hash_bucket_fast bins (FarmHash Fingerprint64) and
keras.layers.Hashing outputs computed by TensorFlow 2.21 (run with a TensorFlow venv:
python gen_hashing_reference.py, from this folder). test_keras_hashing.py checks weft against the
file; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import random
import tensorflow as tf

rng = random.Random(1)
strs = ["", "A", "B", "C", "D", "E", "ab", "hello world!", "x" * 16, "y" * 17, "z" * 32, "q" * 33, "w" * 64,
        "e" * 65, "r" * 128, "u" * 129, "naïve ☃"]
strs += ["".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(0, 200))) for _ in range(40)]
H = tf.keras.layers.Hashing
out = {"generator": "TensorFlow %s: tf.strings.to_hash_bucket_fast and keras.layers.Hashing" % tf.__version__,
       "strings": strs,
       "bins_1000003": tf.strings.to_hash_bucket_fast(strs, 1000003).numpy().tolist(),
       "bins_2_62": tf.strings.to_hash_bucket_fast(strs, 2 ** 62).numpy().tolist(),
       "keras_3": H(num_bins=3)([["A"], ["B"], ["C"], ["D"], ["E"]]).numpy().tolist(),
       "keras_3_mask": H(num_bins=3, mask_value="")([["A"], ["B"], [""], ["C"], ["D"]]).numpy().tolist(),
       "keras_ints_7": H(num_bins=7)([[1], [2], [3], [40], [-5], [123456789]]).numpy().tolist()}
with open("hashing_tf.json", "w") as f:
    json.dump(out, f, ensure_ascii=False, indent=0)
