"""Reuters newswires as word-index sequences (46 topics), from Keras' ``reuters.npz``."""
import json

import numpy as np

from ._files import drop_long, find, object_array, offset, shuffled, vocabulary


def load_data(path="reuters.npz", num_words=None, skip_top=0, maxlen=None, test_split=0.2, seed=113, start_char=1,
              oov_char=2, index_from=3):
    """``(x_train, y_train), (x_test, y_test)`` as Keras makes them: shuffled by ``seed``, then the
    last ``test_split`` of the newswires for testing."""
    with np.load(find(path, "reuters.load_data"), allow_pickle=True) as f:
        xs, labels = f["x"], f["y"]
    xs, labels = shuffled(np.random.RandomState(seed), xs, labels)
    xs = offset(xs, start_char, index_from)
    if maxlen:
        xs, labels = drop_long(maxlen, xs, labels, "reuters.load_data")
    xs = vocabulary(xs, num_words, skip_top, oov_char)
    n = int(len(xs) * (1 - test_split))
    labels = np.asarray(labels)
    return (object_array(xs[:n]), labels[:n]), (object_array(xs[n:]), labels[n:])


def get_word_index(path="reuters_word_index.json"):
    """The word -> index dict (indices before index_from's offset)."""
    with open(find(path, "reuters.get_word_index")) as f:
        return json.load(f)


def get_label_names():
    """The 46 topic names, in label order (Keras' list)."""
    return ("cocoa", "grain", "veg-oil", "earn", "acq", "wheat", "copper", "housing", "money-supply", "coffee", "sugar",
            "trade", "reserves", "ship", "cotton", "carcass", "crude", "nat-gas", "cpi", "money-fx", "interest", "gnp",
            "meal-feed", "alum", "oilseed", "gold", "tin", "strategic-metal", "livestock", "retail", "ipi",
            "iron-steel", "rubber", "heat", "jobs", "lei", "bop", "zinc", "orange", "pet-chem", "dlr", "gas",
            "silver", "wpi", "hog", "lead")
