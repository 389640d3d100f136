"""weft.strings (tf.strings on the host) and TextVectorization with a TensorFlow-style custom
standardization, as keras.io's "Text classification from scratch" writes it. Expected values are
TensorFlow's documented examples and closed forms. Results are TF's: bytes (``.numpy()`` of a
string tensor), comparing equal to the str they encode (test_text_data.py checks the other
functions against TF 2.21's output)."""
import re
import string

import numpy as np
import pytest

import weft as tf
from weft.keras import layers as L


def test_lower_upper_ascii_by_default_utf8_on_request():
    assert tf.strings.lower("CamelCase string and ALL CAPS") == "camelcase string and all caps"  # TF's doc
    assert tf.strings.lower("ÀB") == "Àb" and tf.strings.lower("ÀB", encoding="utf-8") == "àb"
    assert tf.strings.lower("CamelCase").numpy() == b"camelcase"
    assert tf.strings.upper(["ab", "Cd"]).numpy().tolist() == [b"AB", b"CD"]
    out = tf.strings.lower(np.array([["A", b"B"], ["c", "D"]], dtype=object))
    assert out.shape == (2, 2) and out.tolist() == [[b"a", b"b"], [b"c", b"d"]]
    with pytest.raises(ValueError, match="encoding"):
        tf.strings.lower("a", encoding="latin-1")


def test_regex_replace_rewrites_and_first_only():
    # TF's doc example: tags removed.
    assert tf.strings.regex_replace("Text with tags.<br /><b>contains html</b>", "<[^>]+>", " ") == \
        "Text with tags.  contains html "
    assert tf.strings.regex_replace("aaa", "a", "b", replace_global=False) == "baa"
    assert tf.strings.regex_replace("john smith", r"(\w+) (\w+)", r"\2, \1 (\0)") == "smith, john (john smith)"
    assert tf.strings.regex_replace("a.b", r"\.", r"\\") == "a\\b"
    with pytest.raises(ValueError, match="group 2"):
        tf.strings.regex_replace("ab", "(a)", r"\2")
    with pytest.raises(ValueError, match="invalid pattern"):
        tf.strings.regex_replace("ab", "(", "")


def test_length_strip_full_match_and_the_rest_unsupported():
    assert tf.strings.length("héllo") == 6 and tf.strings.length("héllo", unit="UTF8_CHAR") == 5
    assert tf.strings.length(np.array(["a", "bc"])).tolist() == [1, 2]
    assert tf.strings.length(["a"]).dtype == np.int32
    assert tf.strings.strip("  x \n") == "x"
    assert tf.strings.regex_full_match(["ab", "abc"], "a.").tolist() == [True, False]
    with pytest.raises(TypeError, match="takes strings"):
        tf.strings.lower(3)
    with pytest.raises(NotImplementedError, match="tf.strings.lower of a graph tensor"):
        tf.strings.lower(tf.constant([1.0]))
    with pytest.raises(NotImplementedError, match="tf.strings.ngrams is not supported"):
        tf.strings.ngrams(["a b"], 2)


def test_text_vectorization_with_tf_style_custom_standardization():
    def custom_standardization(input_data):
        lowercase = tf.strings.lower(input_data)
        stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
        return tf.strings.regex_replace(stripped_html, f"[{re.escape(string.punctuation)}]", "")

    layer = L.TextVectorization(standardize=custom_standardization, max_tokens=10, output_mode="int",
                                output_sequence_length=5)
    layer.adapt(["Good<br />movie!", "good PLOT", "bad, bad movie"])
    # Keras' order: "" and [UNK], then by count (bad 2, good 2, movie 2: ties by descending token), then plot.
    assert layer.get_vocabulary() == ["", "[UNK]", "movie", "good", "bad", "plot"]
    np.testing.assert_array_equal(layer(np.array([["GOOD<br />plot?"], ["awful"]])), [[3, 5, 0, 0, 0], [1, 0, 0, 0, 0]])
