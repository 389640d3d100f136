"""IMDB reviews as word-index sequences, from Keras' ``imdb.npz`` (and ``imdb_word_index.json``)."""
import json

import numpy as np

from ._files import drop_long, find, object_array, offset, shuffled, vocabulary


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1, oov_char=2,
              index_from=3, **kwargs):
    """``(x_train, y_train), (x_test, y_test)`` as Keras makes them: each split shuffled by ``seed``,
    sequences as object arrays of int lists (start_char, words offset by index_from, maxlen,
    num_words / skip_top with oov_char), labels int64."""
    if kwargs:
        raise TypeError("imdb.load_data got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
    with np.load(find(path, "imdb.load_data"), allow_pickle=True) as f:
        x_train, y_train, x_test, y_test = f["x_train"], f["y_train"], f["x_test"], f["y_test"]
    rng = np.random.RandomState(seed)
    x_train, y_train = shuffled(rng, x_train, y_train)
    x_test, y_test = shuffled(rng, x_test, y_test)
    x_train, x_test = offset(x_train, start_char, index_from), offset(x_test, start_char, index_from)
    if maxlen:
        x_train, y_train = drop_long(maxlen, x_train, y_train, "imdb.load_data")
        x_test, y_test = drop_long(maxlen, x_test, y_test, "imdb.load_data")
    xs = vocabulary(x_train + x_test, num_words, skip_top, oov_char)
    n = len(x_train)
    return (object_array(xs[:n]), np.asarray(y_train)), (object_array(xs[n:]), np.asarray(y_test))


def get_word_index(path="imdb_word_index.json"):
    """The word -> index dict (indices before index_from's offset)."""
    with open(find(path, "imdb.get_word_index")) as f:
        return json.load(f)
