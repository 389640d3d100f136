"""Text in weft.data as TensorFlow programs use it: tf.strings on host values, host datasets of
strings (from_tensor_slices, TextLineDataset, keras.utils.text_dataset_from_directory) and TF's
"Basic text classification" tutorial end to end on generated reviews. Expected values are TF
2.21's output kept in data/text_data_reference.json (gen_text_data_reference.py) and TF's
documented examples; the tests never import TensorFlow."""
import json
import os
import random
import re
import string
import sys

import numpy as np
import pytest

import weft as tf
from weft.keras import layers, losses

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from text_data_cases import cases, make_tree, plain as _plain  # noqa: E402

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "text_data_reference.json")))


def plain(v):
    return _plain(v, tf.RaggedTensor)


S = tf.strings
CASES = cases(tf)


@pytest.mark.parametrize("name", sorted(CASES))
def test_strings_as_tensorflow(name):
    got, want = plain(CASES[name]()), REF["strings"][name]
    if name.startswith("to_number") and "int" not in name:
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32))
    else:
        assert got == want


def test_string_values_print_and_compare_as_tensorflow():
    t = tf.constant("hi")
    assert repr(t) == "<weft.Tensor: shape=(), dtype=string, numpy=b'hi'>"
    assert t.numpy() == b"hi" and t == "hi" and t != "ho"
    v = tf.strings.split("a b")
    assert v.dtype == object and (v == ["a", "b"]).tolist() == [True, True]
    assert tf.strings.to_number("1.5").dtype == np.float32 and tf.strings.length(["ab"]).dtype == np.int32
    assert tf.string == "string" and repr(tf.TensorSpec((), tf.string)).startswith("TensorSpec(shape=(), dtype=weft.string")


def test_strings_bad_input_is_tensorflows_error():
    for name, f in {"to_number_bad": lambda: S.to_number("1.5x"),
                    "substr_out_of_range": lambda: S.substr("abc", 5, 1)}.items():
        kind, message = REF["errors"][name]
        with pytest.raises(tf.errors.InvalidArgumentError) as e:
            f()
        assert type(e.value).__name__ == kind
        core = re.search(r"\}\} (.*) \[Op:", message).group(1)  # TF's text without its op prefix and suffix
        assert core in str(e.value)
    with pytest.raises(NotImplementedError, match="rank-2 input"):
        S.split([["a b"]])
    with pytest.raises(NotImplementedError, match="tf.strings.split of a graph tensor"):
        S.split(tf.zeros([2]))
    with pytest.raises(NotImplementedError, match="a string tensor"):
        tf.add(tf.constant("a"), 1)


def test_from_tensor_slices_of_text_zipped_with_labels():
    texts = ["good film", "bad plot", "great"]
    ds = tf.data.Dataset.from_tensor_slices((np.array(texts), [1, 0, 1]))
    assert [str(s.dtype) for s in ds.element_spec] == ["string", "int32"] and len(ds) == 3
    assert list(ds.as_numpy_iterator()) == [(b"good film", 1), (b"bad plot", 0), (b"great", 1)]
    x, y = next(iter(ds))
    assert x.numpy() == b"good film" and y.numpy() == 1
    z = tf.data.Dataset.zip((tf.data.Dataset.from_tensor_slices([b"a", b"b", b"c"]), tf.data.Dataset.range(10)))
    assert z.cardinality() == 3 and [e[1] for e in z.as_numpy_iterator()] == [0, 1, 2]
    b = ds.batch(2)
    first = next(b.as_numpy_iterator())
    assert first[0].dtype == object and first[0].tolist() == [b"good film", b"bad plot"]
    assert b.element_spec[0].shape == (None,) and b.cardinality() == 2
    assert [e[0] for e in b.unbatch().as_numpy_iterator()] == [s.encode() for s in texts]
    e = ds.enumerate(5).map(lambda i, xy: (i, tf.strings.upper(xy[0])))
    assert list(e.as_numpy_iterator()) == [(5, b"GOOD FILM"), (6, b"BAD PLOT"), (7, b"GREAT")]
    kept = ds.filter(lambda x, y: tf.strings.length(x) > 5)
    assert [t for t, _ in kept.as_numpy_iterator()] == [b"good film", b"bad plot"] and kept.cardinality() == -2
    both = ds.take(1).concatenate(ds.skip(2)).repeat(2)
    assert [t for t, _ in both.as_numpy_iterator()] == [b"good film", b"great"] * 2 and both.cardinality() == 4


def test_shuffle_is_seeded_and_a_permutation():
    ds = tf.data.Dataset.from_tensor_slices(["w%d" % i for i in range(20)])
    a = list(ds.shuffle(8, seed=3).as_numpy_iterator())
    assert a == list(ds.shuffle(8, seed=3).as_numpy_iterator())
    assert sorted(a) == sorted(ds.as_numpy_iterator()) and a != list(ds.as_numpy_iterator())
    s = ds.shuffle(20, seed=3)
    assert list(s.as_numpy_iterator()) != list(s.as_numpy_iterator())  # a new order every pass
    fixed = ds.shuffle(20, seed=3, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())


def test_text_line_dataset_as_tensorflow(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.csv"
    a.write_bytes(b"first line\nsecond\r\n\nlast without newline")
    b.write_bytes(b"x,y\n1,2.5\n3,-4\n")
    ds = tf.data.TextLineDataset([str(a), str(b)])
    ref = REF["text_line"]
    assert plain(list(ds.as_numpy_iterator())) == ref["lines"] and int(ds.cardinality()) == ref["cardinality"]
    csv = tf.data.TextLineDataset(str(b)).skip(1).map(lambda line: tf.strings.to_number(tf.strings.split(line, ",")))
    assert csv.element_spec.dtype == tf.float32  # numbers: the rest runs in the C++ pipeline
    np.testing.assert_array_equal(list(csv.as_numpy_iterator()), ref["csv"])
    np.testing.assert_array_equal(next(iter(csv.batch(2))).numpy(), ref["csv"])
    with pytest.raises(tf.errors.NotFoundError, match="nope.txt"):
        tf.data.TextLineDataset(str(tmp_path / "nope.txt"))


def _read(ds):
    texts, labels = [], []
    for x, y in ds:
        texts += [t.decode() for t in x.numpy().tolist()]
        labels += y.numpy().tolist()
    return texts, labels


def test_text_dataset_from_directory_subsets_as_keras(tmp_path):
    tree = make_tree(str(tmp_path))
    ref = REF["text_dataset_from_directory"]
    for seed in (42, 7):
        seen = []
        for subset in ("training", "validation"):
            want = ref["%s_%d" % (subset, seed)]
            ds = tf.keras.utils.text_dataset_from_directory(tree, batch_size=5, validation_split=0.2, subset=subset,
                                                            seed=seed)
            texts, labels = _read(ds)
            assert ds.class_names == want["class_names"] and int(ds.cardinality()) == want["cardinality"]
            # The same files in each subset as Keras (its order within a subset is TF's own buffer shuffle).
            assert sorted(zip(texts, labels)) == sorted(zip(want["texts"], want["labels"]))
            assert _read(ds) != (texts, labels) or subset == "validation"  # reshuffled each epoch
            seen += texts
        assert sorted(seen) == sorted(["neg %d" % i for i in range(13)] + ["neg deep"] +
                                      ["pos %d" % i for i in range(11)])  # disjoint, covering every file
    a = tf.keras.utils.text_dataset_from_directory(tree, batch_size=5, validation_split=0.2, subset="training",
                                                   seed=42, verbose=False)
    b = tf.keras.utils.text_dataset_from_directory(tree, batch_size=5, validation_split=0.2, subset="training",
                                                   seed=42, verbose=False)
    assert _read(a) == _read(b)  # deterministic with a seed
    want = ref["unshuffled_categorical"]
    ds = tf.keras.preprocessing.text_dataset_from_directory(tree, batch_size=4, shuffle=False,
                                                            label_mode="categorical", class_names=["pos", "neg"])
    x, y = next(iter(ds))
    assert [t.decode() for t in x.numpy().tolist()] == want["texts"] and y.numpy().tolist() == want["labels"]
    assert ds.class_names == want["class_names"]
    assert [s.shape for s in ds.element_spec] == [(None,), (None, 2)] and ds.element_spec[1].dtype == tf.float32


def test_text_dataset_from_directory_errors_as_keras(tmp_path):
    tree = make_tree(str(tmp_path))
    (tmp_path / "flat").mkdir()
    (tmp_path / "flat" / "a.txt").write_text("a")
    cases = {"no_class_dirs": dict(directory=str(tmp_path / "flat")),
             "subset_without_split": dict(directory=tree, subset="training", seed=1),
             "split_without_seed": dict(directory=tree, validation_split=0.2, subset="training"),
             "bad_subset": dict(directory=tree, validation_split=0.2, subset="test", seed=1),
             "binary_three_classes": dict(directory=tree, label_mode="binary")}
    for name, kw in cases.items():
        kind, message = REF["text_dataset_from_directory"]["errors"][name]
        with pytest.raises(ValueError) as e:
            tf.keras.utils.text_dataset_from_directory(**kw)
        assert type(e.value).__name__ == kind and str(e.value) == message.replace("<DIR>", str(tmp_path))


def _reviews(root, rng, n_per_class):
    """Reviews with a learnable rule: positive ones hold words of one list, negative ones the other."""
    pos, neg = ["great", "wonderful", "loved", "excellent"], ["awful", "boring", "hated", "terrible"]
    filler = ["the", "movie", "plot", "actor", "was", "a", "and", "film", "story", "scene"]
    for label, words in (("neg", neg), ("pos", pos)):
        os.makedirs(os.path.join(root, label))
        for i in range(n_per_class):
            toks = [rng.choice(filler) for _ in range(rng.randint(5, 12))]
            for _ in range(2):
                toks.insert(rng.randrange(len(toks)), rng.choice(words))
            with open(os.path.join(root, label, "%d_%d.txt" % (i, rng.randint(1, 10))), "w") as f:
                f.write(" ".join(toks).capitalize() + ".<br /><br />" + rng.choice(["Really!", "Yes."]))


def test_basic_text_classification_tutorial(tmp_path, capsys):
    """TensorFlow's "Basic text classification" program (keras.io's "Text classification from
    scratch" shares its steps) on 200 generated reviews (plus 60 for the test split)."""
    rng = random.Random(0)
    _reviews(str(tmp_path / "train"), rng, 100)
    _reviews(str(tmp_path / "test"), rng, 30)
    batch_size, seed = 32, 42
    raw_train_ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path / "train"), batch_size=batch_size,
                                                              validation_split=0.2, subset="training", seed=seed)
    raw_val_ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path / "train"), batch_size=batch_size,
                                                            validation_split=0.2, subset="validation", seed=seed)
    raw_test_ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path / "test"), batch_size=batch_size)
    out = capsys.readouterr().out
    assert "Found 200 files belonging to 2 classes." in out and "Using 160 files for training." in out
    assert "Using 40 files for validation." in out and raw_train_ds.class_names == ["neg", "pos"]

    def custom_standardization(input_data):
        lowercase = tf.strings.lower(input_data)
        stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
        return tf.strings.regex_replace(stripped_html, "[%s]" % re.escape(string.punctuation), "")

    max_features, sequence_length = 10000, 16
    vectorize_layer = layers.TextVectorization(standardize=custom_standardization, max_tokens=max_features,
                                               output_mode="int", output_sequence_length=sequence_length)
    train_text = raw_train_ds.map(lambda x, y: x)
    vectorize_layer.adapt(train_text)
    vocab = vectorize_layer.get_vocabulary()
    assert vocab[:2] == ["", "[UNK]"] and "great" in vocab and "br" not in vocab and len(vocab) == 22

    def vectorize_text(text, label):
        text = tf.expand_dims(text, -1)
        return vectorize_layer(text), label

    text_batch, label_batch = next(iter(raw_train_ds))
    ids, label = vectorize_text(text_batch[0], label_batch[0])
    assert ids.shape == (1, sequence_length) and ids.dtype == np.int64
    words = custom_standardization(text_batch[0].numpy()).numpy().decode().split()
    assert [vocab[i] for i in ids[0][:len(words)]] == words[:sequence_length]

    AUTOTUNE = tf.data.AUTOTUNE
    train_ds = raw_train_ds.map(vectorize_text).cache().prefetch(buffer_size=AUTOTUNE)
    val_ds = raw_val_ds.map(vectorize_text).cache().prefetch(buffer_size=AUTOTUNE)
    test_ds = raw_test_ds.map(vectorize_text).cache().prefetch(buffer_size=AUTOTUNE)
    assert [s.shape for s in train_ds.element_spec] == [(None, sequence_length), (None,)]

    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([
        layers.Embedding(max_features, 16),
        layers.Dropout(0.2),
        layers.GlobalAveragePooling1D(),
        layers.Dropout(0.2),
        layers.Dense(1)])
    model.compile(loss=losses.BinaryCrossentropy(from_logits=True), optimizer=tf.keras.optimizers.Adam(0.01),
                  metrics=[tf.metrics.BinaryAccuracy(threshold=0.0)])
    history = model.fit(train_ds, validation_data=val_ds, epochs=15, verbose=0)
    assert sorted(history.history) == ["binary_accuracy", "loss", "val_binary_accuracy", "val_loss"]
    loss, accuracy = model.evaluate(test_ds, verbose=0)
    assert accuracy > 0.8, (loss, accuracy)  # chance is 0.5

    export_model = tf.keras.Sequential([vectorize_layer, model, layers.Activation("sigmoid")])
    export_model.compile(loss=losses.BinaryCrossentropy(from_logits=False), optimizer="adam", metrics=["accuracy"])
    metrics = export_model.evaluate(raw_test_ds, return_dict=True, verbose=0)
    assert metrics["accuracy"] == pytest.approx(accuracy)
    examples = tf.constant(["The movie was great!", "The movie was okay.", "The movie was terrible..."])
    p = export_model.predict(examples)
    assert p.shape == (3, 1) and p[0, 0] > p[2, 0] and np.all((p > 0) & (p < 1))


def test_strings_into_a_model_or_graph_are_clear_errors():
    ds = tf.data.Dataset.from_tensor_slices((["a b", "c"], [0, 1])).batch(2)
    model = tf.keras.Sequential([layers.Dense(1)])
    model.compile(loss="mse", optimizer="sgd")
    with pytest.raises(TypeError, match="elements hold strings"):
        model.fit(ds, epochs=1, verbose=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with different shapes"):
        list(tf.data.Dataset.from_tensor_slices(["a b", "c"]).map(tf.strings.split).batch(2))
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        list(tf.data.Dataset.from_tensor_slices([["a b"], ["c"]]).map(lambda x: tf.strings.split(x)))


def test_keras_io_text_classification_end_to_end_model(tmp_path):
    """keras.io's "Text classification from scratch": a functional model over int64 ids, then
    `end_to_end_model` taking strings (keras.Input(dtype="string") + the vectorize layer), whose
    results are the model's on the vectorized texts (smaller layers than the example's)."""
    _reviews(str(tmp_path / "train"), random.Random(1), 40)
    raw_train_ds = tf.keras.utils.text_dataset_from_directory(str(tmp_path / "train"), batch_size=32,
                                                              validation_split=0.2, subset="training", seed=1337,
                                                              verbose=False)
    vectorize_layer = layers.TextVectorization(max_tokens=2000, output_mode="int", output_sequence_length=20)
    vectorize_layer.adapt(raw_train_ds.map(lambda x, y: x))
    train_ds = raw_train_ds.map(lambda text, label: (vectorize_layer(tf.expand_dims(text, -1)), label))
    train_ds = train_ds.cache().prefetch(buffer_size=10)

    inputs = tf.keras.Input(shape=(None,), dtype="int64")
    x = layers.Embedding(2000, 8)(inputs)
    x = layers.Conv1D(8, 3, padding="valid", activation="relu", strides=2)(x)
    x = layers.GlobalMaxPooling1D()(x)
    predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)
    model = tf.keras.Model(inputs, predictions)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    model.fit(train_ds, epochs=1, verbose=0)

    inputs = tf.keras.Input(shape=(1,), dtype="string")
    indices = vectorize_layer(inputs)
    outputs = model(indices)
    end_to_end_model = tf.keras.Model(inputs, outputs)
    end_to_end_model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
    np.testing.assert_allclose(end_to_end_model.evaluate(raw_train_ds, verbose=0),
                               model.evaluate(train_ds, verbose=0), rtol=1e-5)
    texts = [["a great film"], ["boring and awful"]]
    np.testing.assert_allclose(end_to_end_model.predict(np.array(texts)),
                               model.predict(vectorize_layer(np.array(texts))), rtol=1e-5)
    with pytest.raises(ValueError, match="no text layer"):
        tf.keras.Model(tf.keras.Input(shape=(1,), dtype="string"), outputs)


def test_io_read_file_and_decode_raw_on_string_values(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"Duck")
    text = tf.io.read_file(str(p))
    assert text.numpy() == b"Duck" and str(text.dtype) == "object"
    assert tf.io.decode_raw(text, tf.uint8).numpy().tolist() == [68, 117, 99, 107]  # TF's guide: "Duck"
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        tf.io.read_file(str(tmp_path / "nope"))


def test_from_generator_of_strings():
    def gen():
        yield "good", 1
        yield b"bad", 0
    ds = tf.data.Dataset.from_generator(gen, output_signature=(tf.TensorSpec((), tf.string),
                                                               tf.TensorSpec((), tf.int32)))
    assert list(ds.as_numpy_iterator()) == [(b"good", 1), (b"bad", 0)]
    assert list(ds.map(lambda x, y: tf.strings.length(x) + y).as_numpy_iterator()) == [5, 3]
