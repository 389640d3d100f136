"""Writes keras_text_reference.json: TextVectorization, StringLookup and IntegerLookup vocabularies
and outputs computed by TensorFlow 2.21 / Keras 3 (run with a TensorFlow venv:
python gen_keras_text_reference.py > keras_text_reference.json). test_keras_text.py checks weft
against the file; the tests never import TensorFlow."""
import os; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import json
import numpy as np, tensorflow as tf, keras

L = keras.layers
corpus = ["The cat sat on the mat.", "The dog ate my homework!", "A cat, a dog; a bird?",
          "Dogs and cats: living TOGETHER.", "the end", "zebra yak xylophone", "Mat mat MAT ... cat"]
queries = ["the cat and the unicorn", "", "MAT, mat? dog!!", "a b c d e f g h i j", "yak"]
out = {"corpus": corpus, "queries": queries, "text_vectorization": {}, "string_lookup": {}, "integer_lookup": {}}
tv_cases = {
    "default": {},
    "max_tokens": {"max_tokens": 6},
    "seq_len": {"output_sequence_length": 4},
    "seq_len_long": {"output_sequence_length": 9},
    "multi_hot": {"output_mode": "multi_hot"},
    "count": {"output_mode": "count", "max_tokens": 8},
    "tf_idf": {"output_mode": "tf_idf"},
    "bigrams": {"ngrams": 2},
    "ngrams_count": {"ngrams": (1, 3), "output_mode": "count", "max_tokens": 12},
    "lower": {"standardize": "lower"},
    "no_standardize": {"standardize": None},
    "strip_punct": {"standardize": "strip_punctuation"},
    "multi_hot_pad": {"output_mode": "multi_hot", "pad_to_max_tokens": True, "max_tokens": 12},
}
for name, kw in tv_cases.items():
    layer = L.TextVectorization(**kw)
    layer.adapt(corpus)
    y = layer(tf.constant(queries)).numpy()
    out["text_vectorization"][name] = {"kwargs": {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()},
                                       "vocabulary": layer.get_vocabulary(), "size": layer.vocabulary_size(),
                                       "output": y.tolist(), "dtype": str(y.dtype)}
# A given vocabulary (no adapt).
layer = L.TextVectorization(vocabulary=["cat", "dog", "the"], output_sequence_length=5)
out["text_vectorization"]["given_vocabulary"] = {"kwargs": {"vocabulary": ["cat", "dog", "the"], "output_sequence_length": 5},
                                                 "vocabulary": layer.get_vocabulary(), "size": layer.vocabulary_size(),
                                                 "output": layer(tf.constant(queries)).numpy().tolist()}

words = ["b", "a", "c", "a", "b", "d", "a", "e", "e", "f", "b"]
lookups = ["a", "z", "e", "b", "", "f"]
sl_cases = {"default": {}, "mask": {"mask_token": ""}, "two_oov": {"num_oov_indices": 2}, "max_tokens": {"max_tokens": 4},
            "multi_hot": {"output_mode": "multi_hot"}, "count": {"output_mode": "count"},
            "one_hot": {"output_mode": "one_hot"}}
for name, kw in sl_cases.items():
    layer = L.StringLookup(**kw)
    layer.adapt(words)
    q = tf.constant([lookups]) if kw.get("output_mode") in ("multi_hot", "count") else tf.constant(lookups)
    out["string_lookup"][name] = {"kwargs": kw, "vocabulary": layer.get_vocabulary(), "size": layer.vocabulary_size(),
                                  "output": layer(q).numpy().tolist(), "dtype": layer(q).dtype.name}
inv = L.StringLookup(vocabulary=["a", "b", "c"], invert=True)
out["string_lookup"]["invert"] = {"kwargs": {"vocabulary": ["a", "b", "c"], "invert": True},
                                  "ids": [0, 1, 2, 3, 3, 1], "output": [s.decode() for s in inv(tf.constant([0, 1, 2, 3, 3, 1])).numpy()]}
ints = [7, 3, 3, 9, 7, 7, 12, 3, 0, 5]
int_q = [3, 7, 100, 0, 12, -1]
il_cases = {"default": {}, "mask": {"mask_token": 0}, "max_tokens": {"max_tokens": 3},
            "multi_hot": {"output_mode": "multi_hot"}}
for name, kw in il_cases.items():
    layer = L.IntegerLookup(**kw)
    layer.adapt(np.array(ints))
    q = tf.constant([int_q]) if kw.get("output_mode") == "multi_hot" else tf.constant(int_q)
    out["integer_lookup"][name] = {"kwargs": kw, "vocabulary": [int(v) for v in layer.get_vocabulary()],
                                   "size": layer.vocabulary_size(), "output": layer(q).numpy().tolist(), "dtype": layer(q).dtype.name}
inv = L.IntegerLookup(vocabulary=[10, 20, 30], invert=True)
out["integer_lookup"]["invert"] = {"kwargs": {"vocabulary": [10, 20, 30], "invert": True}, "ids": [0, 1, 2, 3, 4],
                                   "output": inv(tf.constant([0, 1, 2, 3, 4])).numpy().tolist()}
out["string_inputs"] = {"ints": ints, "int_queries": int_q, "words": words, "lookups": lookups}
print(json.dumps(out, indent=None, separators=(",", ":")))
