"""What gen_text_data_reference.py runs with TensorFlow and test_text_data.py with weft (one
copy, so both run the same): the tf.strings calls, the conversion of their results, the tree
of text files."""
import os

import numpy as np


def make_tree(root):
    """The class tree text_dataset_from_directory reads: neg (13 files, one nested, one not .txt),
    pos (11 files), unsup (empty). Returns its path."""
    tree = os.path.join(root, "tree")
    for c, n in (("neg", 13), ("pos", 11), ("unsup", 0)):
        os.makedirs(os.path.join(tree, c))
        for i in range(n):
            with open(os.path.join(tree, c, "%s_%02d.txt" % (c, i)), "w") as f:
                f.write("%s %d" % (c, i))
    with open(os.path.join(tree, "neg", "skip.md"), "w") as f:
        f.write("not a .txt")
    os.makedirs(os.path.join(tree, "neg", "nested"))
    with open(os.path.join(tree, "neg", "nested", "deep.txt"), "w") as f:
        f.write("neg deep")
    return tree


def plain(v, ragged_type):
    """A result as JSON data: bytes as "b:" + their latin-1 text, ragged values as {"ragged": rows}."""
    if isinstance(v, ragged_type):
        return {"ragged": plain(v.to_list(), ragged_type)}
    if hasattr(v, "numpy"):
        v = v.numpy()
    if isinstance(v, np.ndarray):
        return plain(v.tolist(), ragged_type)
    if isinstance(v, (list, tuple)):
        return [plain(x, ragged_type) for x in v]
    if isinstance(v, bytes):
        return "b:" + v.decode("latin-1")
    if isinstance(v, (np.floating, float)):
        return float(v)
    if isinstance(v, (np.integer, int)) and not isinstance(v, (bool, np.bool_)):
        return int(v)
    return v


def cases(tf):
    """{name: a call of tf.strings} for ``tf`` (TensorFlow or weft)."""
    S = tf.strings
    return {
        "split_scalar": lambda: S.split("hello world"),
        "split_vector": lambda: S.split(["hello world", "a b c"]),
        "split_sep": lambda: S.split("1<>2<>3", sep="<>"),
        "split_sep_empty_fields": lambda: S.split(["1,,2", ",a,"], sep=","),
        "split_maxsplit": lambda: S.split(["a b c d", "e"], maxsplit=1),
        "split_sep_maxsplit": lambda: S.split("1,2,3,4", sep=",", maxsplit=2),
        "split_whitespace_runs": lambda: S.split("  a \t b\n  "),
        "join": lambda: S.join(["abc", "def"]),
        "join_sep_arrays": lambda: S.join([["abc", "123"], ["def", "456"], ["ghi", "789"]], separator="."),
        "join_broadcast": lambda: S.join([["a", "b"], "x"], separator="-"),
        "reduce_join_all": lambda: S.reduce_join([["abc", "123"], ["def", "456"]]),
        "reduce_join_axis": lambda: S.reduce_join([["abc", "123"], ["def", "456"]], axis=-1),
        "reduce_join_axis0_sep": lambda: S.reduce_join([["abc", "123"], ["def", "456"]], axis=0, separator="."),
        "reduce_join_keepdims": lambda: S.reduce_join([["abc", "123"], ["def", "456"]], axis=1, keepdims=True,
                                                      separator="."),
        "unicode_split": lambda: S.unicode_split("Gööd\U0001f60a", "UTF-8"),
        "unicode_split_vector": lambda: S.unicode_split(["Gö", "x"], "UTF-8"),
        "unicode_decode": lambda: S.unicode_decode([s.encode("utf8") for s in ("G\xf6\xf6dnight", "\U0001f60a")],
                                                   "UTF-8"),
        "unicode_decode_scalar": lambda: S.unicode_decode("añb", "UTF-8"),
        "unicode_decode_replace": lambda: S.unicode_decode(b"a\xffb", "UTF-8"),
        "bytes_split": lambda: S.bytes_split("hello"),
        "bytes_split_vector": lambda: S.bytes_split(["hello", "123"]),
        "bytes_split_utf8": lambda: S.bytes_split("é"),
        "as_string_ints": lambda: S.as_string([3, 2]),
        "as_string_precision": lambda: S.as_string(3.1415926, precision=3),
        "as_string_float": lambda: S.as_string(np.array([1.5, -0.25], np.float32)),
        "as_string_scientific": lambda: S.as_string(np.array([12345.678], np.float64), scientific=True, precision=2),
        "as_string_shortest": lambda: S.as_string(np.array([0.1, 100.0], np.float32), shortest=True),
        "as_string_width": lambda: S.as_string([7, 42], width=4),
        "as_string_fill": lambda: S.as_string([7, 42], width=4, fill="0"),
        "as_string_bool": lambda: S.as_string([True, False]),
        "as_string_int64": lambda: S.as_string(np.array([-5, 10**12], np.int64)),
        "to_number_float": lambda: S.to_number("1.55"),
        "to_number_int": lambda: S.to_number("3", tf.int32),
        "to_number_vector": lambda: S.to_number(["1.5", " 2", "-3e2", "inf"]),
        "to_number_int64": lambda: S.to_number(["-7", "12"], out_type=tf.int64),
        "to_number_float64": lambda: S.to_number("0.1", out_type=tf.float64),
        "substr": lambda: S.substr([b"Hello", b"World"], 1, 3),
        "substr_negative": lambda: S.substr("Hello", -3, 2),
        "substr_long": lambda: S.substr("Hello", 2, 10),
        "substr_utf8": lambda: S.substr("héllo", 1, 3, unit="UTF8_CHAR"),
        "substr_vector_pos": lambda: S.substr(["abcd", "efgh"], [0, 2], [1, 2]),
        "format_tensor": lambda: S.format("tensor: {}, suffix", tf.range(5)),
        "format_summarize": lambda: S.format("{}", tf.range(10), summarize=2),
        "format_two": lambda: S.format("{} and {}", (tf.constant(1.5), tf.constant([[1, 2], [3, 4]]))),
        "format_string": lambda: S.format("{}!", tf.constant("hi")),
        "format_placeholder": lambda: S.format("x=%s", [tf.constant(3)], placeholder="%s"),
        "strip": lambda: S.strip(["  a b \n", "\tc"]),
        "length": lambda: S.length(["héllo", ""]),
        "length_utf8": lambda: S.length("héllo", unit="UTF8_CHAR"),
        "lower": lambda: S.lower("CamelCase string and ALL CAPS"),
        "upper": lambda: S.upper(["ab", "Cd"]),
        "regex_replace": lambda: S.regex_replace("Text with tags.<br /><b>contains html</b>", "<[^>]+>", " "),
    }
