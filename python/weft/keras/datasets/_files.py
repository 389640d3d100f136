"""Where Keras' dataset files are found: a path as given, else (relative) under ~/.keras/datasets,
where Keras caches its downloads. weft downloads nothing: a missing file is a NotFoundError
naming every place looked at."""
import os

from ...errors import NotFoundError


def find(path, what, is_dir=False):
    path = os.fspath(path)
    candidates = [path]
    if not os.path.isabs(path):
        candidates.append(os.path.join(os.path.expanduser("~"), ".keras", "datasets", path))
    for p in candidates:
        if (os.path.isdir(p) if is_dir else os.path.isfile(p)):
            return p
    raise NotFoundError("%s: no data at %s (put Keras' file there; weft does not download data)"
                        % (what, " or ".join(repr(c) for c in candidates)), "NotFound")


def shuffled(rng, *arrays):
    """The arrays in one random order (Keras' np.random.RandomState(seed).shuffle of indices)."""
    import numpy as np
    indices = np.arange(len(arrays[0]))
    rng.shuffle(indices)
    return [a[indices] for a in arrays]


def offset(xs, start_char, index_from):
    """Keras' word sequences: start_char first, then each index plus index_from."""
    if start_char is not None:
        return [[start_char] + [w + index_from for w in x] for x in xs]
    return [[w + index_from for w in x] for x in xs]


def drop_long(maxlen, xs, labels, what):
    """The sequences shorter than maxlen words, and their labels (Keras' remove_long_seq)."""
    import numpy as np
    kept = [i for i, x in enumerate(xs) if len(x) < maxlen]
    if not kept:
        raise ValueError("%s: maxlen=%d leaves no sequence" % (what, maxlen))
    return [xs[i] for i in kept], np.asarray(labels)[kept]


def vocabulary(xs, num_words, skip_top, oov_char):
    """Words outside [skip_top, num_words) replaced by oov_char (dropped when it is None);
    num_words None: the largest index seen."""
    if not num_words:
        num_words = max(max(x) for x in xs if len(x))
    if oov_char is not None:
        return [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    return [[w for w in x if skip_top <= w < num_words] for x in xs]


def object_array(rows):
    import numpy as np
    out = np.empty(len(rows), dtype=object)
    out[:] = [list(r) for r in rows]
    return out
