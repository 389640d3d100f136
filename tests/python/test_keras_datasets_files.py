"""keras.datasets loaders over Keras' own file formats (made here, small): CIFAR-10/100 pickles,
imdb.npz / reuters.npz word sequences, boston / california housing. Expected values follow Keras'
documented processing (seeded shuffles of np.random.RandomState, start_char / index_from / oov_char
/ num_words / maxlen, test_split), written out here by hand; a missing file is NotFoundError."""
import os
import pickle

import numpy as np
import pytest

import weft as tf


def test_cifar10_pickles_to_channels_last(tmp_path):
    d = tmp_path / "cifar-10-batches-py"
    d.mkdir()
    rng = np.random.RandomState(0)
    batches = {}
    for name in ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]:
        data = rng.randint(0, 256, (2, 3072)).astype(np.uint8)
        batches[name] = (data, [int(v) for v in rng.randint(0, 10, 2)])
        with open(d / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": batches[name][1]}, f)
    (x, y), (xt, yt) = tf.keras.datasets.cifar10.load_data(str(d))
    assert x.shape == (10, 32, 32, 3) and y.shape == (10, 1) and x.dtype == np.uint8
    first = batches["data_batch_1"][0][0]
    # pixel (row 0, col 1): channel c is byte c * 1024 + 1 of the row-major CHW record
    assert list(x[0, 0, 1]) == [first[1], first[1024 + 1], first[2048 + 1]]
    assert yt[:, 0].tolist() == batches["test_batch"][1]


def test_cifar100_label_modes(tmp_path):
    d = tmp_path / "cifar-100-python"
    d.mkdir()
    for name in ("train", "test"):
        with open(d / name, "wb") as f:
            pickle.dump({b"data": np.zeros((3, 3072), np.uint8), b"fine_labels": [5, 6, 7],
                         b"coarse_labels": [1, 2, 3]}, f)
    (_, y), _ = tf.keras.datasets.cifar100.load_data(path=str(d))
    (_, yc), _ = tf.keras.datasets.cifar100.load_data("coarse", path=str(d))
    assert y[:, 0].tolist() == [5, 6, 7] and yc[:, 0].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="label_mode"):
        tf.keras.datasets.cifar100.load_data("medium", path=str(d))


def test_imdb_sequences_as_keras_makes_them(tmp_path):
    x_train = np.empty(3, dtype=object)
    x_train[:] = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
    x_test = np.empty(2, dtype=object)
    x_test[:] = [[9, 1], [2]]
    path = tmp_path / "imdb.npz"
    np.savez(path, x_train=x_train, y_train=np.array([0, 1, 0]), x_test=x_test, y_test=np.array([1, 1]))
    (x, y), (xt, yt) = tf.keras.datasets.imdb.load_data(str(path), num_words=10)
    rng = np.random.RandomState(113)  # Keras: one RandomState shuffles train, then test
    idx, idx_test = np.arange(3), np.arange(2)
    rng.shuffle(idx)
    rng.shuffle(idx_test)
    want = [[1] + [w + 3 if w + 3 < 10 else 2 for w in x_train[i]] for i in idx]
    assert [list(s) for s in x] == want and y.tolist() == [[0, 1, 0][i] for i in idx]
    assert [list(s) for s in xt] == [[1] + [w + 3 if w + 3 < 10 else 2 for w in x_test[i]] for i in idx_test]
    (x, _), _ = tf.keras.datasets.imdb.load_data(str(path), maxlen=4)  # sequences shorter than 4 words
    assert all(len(s) < 4 for s in x) and len(x) == 1


def test_reuters_and_housing_splits(tmp_path):
    xs = np.empty(5, dtype=object)
    xs[:] = [[1], [2, 3], [4], [5, 6], [7]]
    np.savez(tmp_path / "reuters.npz", x=xs, y=np.arange(5))
    (x, y), (xt, yt) = tf.keras.datasets.reuters.load_data(str(tmp_path / "reuters.npz"), test_split=0.4)
    order = np.arange(5)
    np.random.RandomState(113).shuffle(order)
    assert y.tolist() == order[:3].tolist() and yt.tolist() == order[3:].tolist()
    assert [list(s) for s in x] == [[1] + [w + 3 for w in xs[i]] for i in order[:3]]
    assert len(tf.keras.datasets.reuters.get_label_names()) == 46
    np.savez(tmp_path / "boston_housing.npz", x=np.arange(50.).reshape(10, 5), y=np.arange(10.))
    (bx, by), (bxt, byt) = tf.keras.datasets.boston_housing.load_data(str(tmp_path / "boston_housing.npz"))
    order = np.arange(10)
    np.random.RandomState(113).shuffle(order)
    assert by.tolist() == order[:8].tolist() and byt.tolist() == order[8:].tolist() and bx.shape == (8, 5)
    np.savez(tmp_path / "california_housing.npz", x=np.arange(8000.).reshape(1000, 8), y=np.arange(1000.))
    (cx, _), (cxt, _) = tf.keras.datasets.california_housing.load_data("small", str(tmp_path / "california_housing.npz"))
    assert len(cx) + len(cxt) == 600 and len(cxt) == 120


def test_missing_files_name_where_they_were_looked_for(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="does not download"):
        tf.keras.datasets.cifar10.load_data(str(tmp_path / "nowhere"))
    with pytest.raises(tf.errors.NotFoundError, match="imdb.load_data"):
        tf.keras.datasets.imdb.load_data(os.path.join(str(tmp_path), "imdb.npz"))
