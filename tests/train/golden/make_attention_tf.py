"""Writes attention_tf.json: keras.layers.MultiHeadAttention outputs computed by TensorFlow 2.21
(Keras 3) for the weft tests (tests/train/layers_seq_test.cc, tests/python/test_keras_seq.py).

    bench/.venv/bin/python tests/train/golden/make_attention_tf.py   # from the repo root

Every list is flat (row-major); the shapes are in the test that reads it. Cases:
  cross:  num_heads=2, key_dim=3, value_dim=2, output_shape=4; query (2,4,5), value (2,3,5),
          key = value, attention_mask (2,4,3) of 0/1 (one query row fully masked)
  causal: num_heads=2, key_dim=4; self-attention on x (2,5,6) with use_causal_mask=True
Weights are uniform in [-0.5, 0.5) from a fixed seed, in Keras' get_weights order.
"""
import json
import os

import numpy as np
import tensorflow as tf  # noqa: F401  (Keras' TensorFlow backend)
import keras


def case(prefix, layer, inputs, call_kwargs, out):
    query = inputs["query"]
    layer(**{k: v for k, v in inputs.items() if k != "attention_mask"}, **call_kwargs)  # builds it
    rng = np.random.default_rng(len(prefix))
    weights = [rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in layer.get_weights()]
    layer.set_weights(weights)
    y = layer(**inputs, **call_kwargs)
    for name, value in inputs.items():
        out[prefix + "_" + name] = np.asarray(value, np.float64).ravel().tolist()
    for i, w in enumerate(weights):
        out["%s_w%d" % (prefix, i)] = w.astype(np.float64).ravel().tolist()
    out[prefix + "_output"] = np.asarray(y, np.float64).ravel().tolist()
    print(prefix, "output", np.asarray(y).shape, "weights", [w.shape for w in weights], "query", query.shape)


def main():
    rng = np.random.default_rng(19)
    out = {"generator": "tests/train/golden/make_attention_tf.py", "tensorflow": tf.__version__,
           "keras": keras.__version__}
    mask = (rng.uniform(size=(2, 4, 3)) > 0.4).astype(np.float32)
    mask[1, 2, :] = 0  # a query step that sees nothing: Keras' masked softmax gives it zero weights
    case("cross", keras.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, output_shape=4),
         {"query": rng.normal(size=(2, 4, 5)).astype(np.float32),
          "value": rng.normal(size=(2, 3, 5)).astype(np.float32), "attention_mask": mask}, {}, out)
    x = rng.normal(size=(2, 5, 6)).astype(np.float32)
    case("causal", keras.layers.MultiHeadAttention(num_heads=2, key_dim=4), {"query": x, "value": x},
         {"use_causal_mask": True}, out)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_tf.json")
    with open(path, "w") as f:
        f.write("{\n" + ",\n".join('  "%s": %s' % (k, json.dumps(v)) for k, v in out.items()) + "\n}\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
