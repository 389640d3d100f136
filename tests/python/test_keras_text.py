"""TextVectorization, StringLookup and IntegerLookup against TensorFlow 2.21's vocabularies and
outputs (data/keras_text_reference.json, made by data/gen_keras_text_reference.py)."""
import json
import os

import numpy as np
import pytest

import weft as tf

layers = tf.keras.layers
REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "keras_text_reference.json")))


def _kwargs(kw):
    return {k: tuple(v) if k == "ngrams" and isinstance(v, list) else v for k, v in kw.items()}


@pytest.mark.parametrize("case", sorted(REF["text_vectorization"]))
def test_text_vectorization_matches_tensorflow(case):
    want = REF["text_vectorization"][case]
    layer = layers.TextVectorization(**_kwargs(want["kwargs"]))
    if "vocabulary" not in want["kwargs"]:
        layer.adapt(REF["corpus"])
    assert layer.get_vocabulary() == want["vocabulary"]
    assert layer.vocabulary_size() == want["size"]
    got = layer(REF["queries"])
    np.testing.assert_allclose(got, np.array(want["output"]), rtol=1e-6)
    if want.get("dtype"):
        assert got.dtype == np.dtype(want["dtype"])


def test_text_vectorization_numpy_input_and_special_tokens():
    layer = layers.TextVectorization(max_tokens=6)
    layer.adapt(np.array(REF["corpus"]))
    assert layer.get_vocabulary(include_special_tokens=False) == REF["text_vectorization"]["max_tokens"]["vocabulary"][2:]
    assert layer(np.array(["the mat"])).tolist() == [[2, 3]]


@pytest.mark.parametrize("case", sorted(k for k in REF["string_lookup"] if k not in ("invert", "two_oov")))
def test_string_lookup_matches_tensorflow(case):
    want = REF["string_lookup"][case]
    layer = layers.StringLookup(**want["kwargs"])
    layer.adapt(REF["string_inputs"]["words"])
    assert layer.get_vocabulary() == want["vocabulary"]
    assert layer.vocabulary_size() == want["size"]
    q = REF["string_inputs"]["lookups"]
    mode = want["kwargs"].get("output_mode")
    got = layer([q] if mode in ("multi_hot", "count") else q)
    assert got.tolist() == want["output"]


@pytest.mark.parametrize("case", sorted(k for k in REF["integer_lookup"] if k != "invert"))
def test_integer_lookup_matches_tensorflow(case):
    want = REF["integer_lookup"][case]
    layer = layers.IntegerLookup(**want["kwargs"])
    layer.adapt(np.array(REF["string_inputs"]["ints"]))
    assert layer.get_vocabulary() == want["vocabulary"]
    q = REF["string_inputs"]["int_queries"]
    got = layer([q] if want["kwargs"].get("output_mode") == "multi_hot" else q)
    assert got.tolist() == want["output"]


def test_invert_matches_tensorflow():
    s = REF["string_lookup"]["invert"]
    assert layers.StringLookup(**s["kwargs"])(s["ids"]).tolist() == s["output"]
    i = REF["integer_lookup"]["invert"]
    assert layers.IntegerLookup(**i["kwargs"])(i["ids"]).tolist() == i["output"]


def test_integer_lookup_adapts_a_dataset():
    ds = tf.data.Dataset.from_tensor_slices(np.array(REF["string_inputs"]["ints"])).batch(3)
    layer = layers.IntegerLookup()
    layer.adapt(ds)
    assert layer.get_vocabulary() == REF["integer_lookup"]["default"]["vocabulary"]


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="num_oov_indices=2"):
        layers.StringLookup(num_oov_indices=2)
    with pytest.raises(ValueError, match="output_mode"):
        layers.TextVectorization(output_mode="bag")
    with pytest.raises(RuntimeError, match="adapt"):
        layers.TextVectorization()(["a b"])
    with pytest.raises(ValueError, match="more than once"):
        layers.StringLookup(vocabulary=["a", "b", "a"])
    with pytest.raises(ValueError, match="'zz' is not in the vocabulary"):
        layers.StringLookup(vocabulary=["a"], num_oov_indices=0)(["a", "zz"])
    with pytest.raises(TypeError, match="TextVectorization takes strings"):
        layers.TextVectorization().adapt(tf.data.Dataset.from_tensor_slices(np.arange(3)))


def test_in_a_model_is_a_clear_error():
    x = tf.keras.Input(shape=(4,))
    with pytest.raises(TypeError, match="graphs carry no strings"):
        layers.TextVectorization(vocabulary=["a"])(x)
    text = tf.keras.Input(shape=(1,), dtype="string")  # only a host text layer takes it (test_text_data.py)
    with pytest.raises(TypeError, match="dtype=string"):
        layers.Dense(1)(text)
    with pytest.raises(ValueError, match="no strings"):
        tf.keras.Input(shape=(1,), dtype="object")
