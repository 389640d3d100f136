"""keras.utils' sequence helpers: pad_sequences, timeseries_dataset_from_array, split_dataset.
The semantics are Keras' (keras/src/utils/sequence_utils.py, timeseries_dataset_utils.py,
dataset_utils.py), argument checks and messages included."""
import numpy as np

from ..data import dataset as _dataset


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """Pads (or truncates) each sequence to ``maxlen`` (default: the longest) into one array of
    shape [len(sequences), maxlen, *item shape]. ``padding`` / ``truncating``: 'pre' (at the start,
    the default) or 'post'; ``value`` fills the padding.

    >>> pad_sequences([[1], [2, 3], [4, 5, 6]])
    array([[0, 0, 1], [0, 2, 3], [4, 5, 6]], dtype=int32)
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    if padding not in ("pre", "post"):
        raise ValueError('Padding type "%s" not understood' % (padding,))
    if truncating not in ("pre", "post"):
        raise ValueError('Truncating type "%s" not understood' % (truncating,))
    lengths, sample_shape = [], ()
    found = False
    for x in sequences:  # the item shape from the first non-empty sequence, checked below
        try:
            lengths.append(len(x))
        except TypeError as e:
            raise ValueError("`sequences` must be a list of iterables. Found non-iterable: %s" % (x,)) from e
        if not found and len(x):
            sample_shape = np.asarray(x).shape[1:]
            found = True
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    maxlen = int(maxlen)
    if maxlen < 0:
        raise ValueError("pad_sequences: maxlen must be >= 0, got %d" % maxlen)
    is_str = np.issubdtype(np.dtype(dtype), np.str_) if dtype is not object else False
    if isinstance(value, str) and dtype is not object and not is_str:
        raise ValueError("`dtype` %s is not compatible with `value`'s type: %s\nYou should set `dtype=object` for "
                         "variable length strings." % (dtype, type(value)))
    out = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s) or maxlen == 0:
            continue
        trunc = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        trunc = np.asarray(trunc, dtype=dtype)
        if trunc.shape[1:] != sample_shape:
            raise ValueError("Shape of sample %s of sequence at position %d is different from expected shape %s" %
                             (trunc.shape[1:], i, sample_shape))
        if padding == "post":
            out[i, :len(trunc)] = trunc
        else:
            out[i, -len(trunc):] = trunc
    return out


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1, sampling_rate=1,
                                  batch_size=128, shuffle=False, seed=None, start_index=None, end_index=None):
    """A weft.data Dataset of sliding windows over ``data`` (an array, time along dim 0), as Keras':
    window i holds the rows ``data[start_index + p_i + k * sampling_rate]`` for k < sequence_length,
    with start offsets p_i = 0, sequence_stride, 2 * sequence_stride, ... while the window fits
    before ``end_index``; its target (when ``targets`` is given) is ``targets[start_index + p_i]``.
    Elements are batches of ``batch_size`` windows ((windows, targets) pairs with targets), or
    single windows when batch_size is None. ``shuffle``: the windows' order is a permutation drawn
    from ``seed`` (windows stay whole), then shuffled within a buffer of 8 batches, as Keras does.

    The windows are cut when read: the dataset keeps ``data`` and the start offsets, not copies."""
    data = np.asarray(data)
    if data.ndim == 0:
        raise ValueError("timeseries_dataset_from_array: data must be an array with time along dim 0, got a scalar")
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError("`start_index` must be 0 or greater. Received: start_index=%s" % start_index)
        if start_index >= n:
            raise ValueError("`start_index` must be lower than the length of the data. Received: start_index=%s, "
                             "for data of length %d" % (start_index, n))
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: start_index=%s, end_index=%s"
                             % (start_index, end_index))
        if end_index >= n:
            raise ValueError("`end_index` must be lower than the length of the data. Received: end_index=%s, for "
                             "data of length %d" % (end_index, n))
        if end_index <= 0:
            raise ValueError("`end_index` must be higher than 0. Received: end_index=%s" % end_index)
    if sampling_rate <= 0:
        raise ValueError("`sampling_rate` must be higher than 0. Received: sampling_rate=%s" % sampling_rate)
    if sampling_rate >= n:
        raise ValueError("`sampling_rate` must be lower than the length of the data. Received: sampling_rate=%s, for "
                         "data of length %d" % (sampling_rate, n))
    if sequence_stride <= 0:
        raise ValueError("`sequence_stride` must be higher than 0. Received: sequence_stride=%s" % sequence_stride)
    if sequence_stride >= n:
        raise ValueError("`sequence_stride` must be lower than the length of the data. Received: "
                         "sequence_stride=%s, for data of length %d" % (sequence_stride, n))
    if batch_size is not None and int(batch_size) < 1:
        raise ValueError("timeseries_dataset_from_array: batch_size must be >= 1 or None, got %r" % (batch_size,))
    start = 0 if start_index is None else int(start_index)
    end = n if end_index is None else int(end_index)
    num_seqs = end - start - (int(sequence_length) - 1) * int(sampling_rate)
    if targets is not None:
        targets = np.asarray(targets)
        num_seqs = min(num_seqs, len(targets))
    positions = np.arange(0, max(num_seqs, 0), int(sequence_stride), dtype=np.int64)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    steps = data[start:end]
    offsets = np.arange(int(sequence_length), dtype=np.int64) * int(sampling_rate)
    tail = targets[start:end] if targets is not None else None

    def windows():
        for p in positions:
            w = steps[p + offsets]
            yield w if tail is None else (w, tail[p])
    window_spec = _dataset.TensorSpec((int(sequence_length),) + data.shape[1:], data.dtype)
    spec = window_spec if tail is None else (window_spec, _dataset.TensorSpec(tail.shape[1:], tail.dtype))
    if batch_size is not None and not shuffle:
        # In order: whole batches cut at once (one Python step per batch, not per window).
        bs = int(batch_size)

        def batches():
            for b in range(0, len(positions), bs):
                p = positions[b:b + bs]
                w = steps[p[:, None] + offsets[None, :]]
                yield w if tail is None else (w, tail[p])
        batch_spec = _dataset.TensorSpec((None, int(sequence_length)) + data.shape[1:], data.dtype)
        spec = batch_spec if tail is None else (batch_spec, _dataset.TensorSpec((None,) + tail.shape[1:], tail.dtype))
        return _dataset._generated(batches, spec, -(-len(positions) // bs)).prefetch(_dataset.AUTOTUNE)
    ds = _dataset._generated(windows, spec, len(positions))
    if batch_size is not None:
        if shuffle:
            ds = ds.shuffle(int(batch_size) * 8, seed=seed)
        ds = ds.batch(int(batch_size))
    elif shuffle:
        ds = ds.shuffle(1024, seed=seed)
    return ds.prefetch(_dataset.AUTOTUNE)


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Splits ``dataset`` (an array, a tuple of arrays, or a finite weft.data Dataset) into two
    weft.data Datasets of left_size and right_size elements: each an int (a count) or a float in
    (0, 1) (a fraction); one of them may be None (the rest). Without either: left_size=0.5."""
    if isinstance(dataset, _dataset.Dataset):
        elements = list(dataset.as_numpy_iterator())
        if elements and isinstance(elements[0], tuple):
            arrays = tuple(np.stack([e[i] for e in elements]) for i in range(len(elements[0])))
        elif elements and isinstance(elements[0], dict):
            raise NotImplementedError("split_dataset: datasets of dicts are not supported; split the arrays")
        else:
            arrays = np.stack(elements) if elements else np.zeros((0,))
    elif isinstance(dataset, (tuple, list)):
        arrays = tuple(np.asarray(a) for a in dataset)
        if len({len(a) for a in arrays}) > 1:
            raise ValueError("split_dataset: the arrays differ in length: %s" % [len(a) for a in arrays])
    else:
        arrays = np.asarray(dataset)
    total = len(arrays[0]) if isinstance(arrays, tuple) else len(arrays)
    if left_size is None and right_size is None:
        left_size = 0.5

    def count(size, name):
        if size is None:
            return None
        if isinstance(size, float):
            if not 0 < size < 1:
                raise ValueError("split_dataset: %s as a float must be in (0, 1), got %r" % (name, size))
            return int(round(size * total))
        if isinstance(size, (int, np.integer)) and not isinstance(size, bool) and 0 <= size <= total:
            return int(size)
        raise ValueError("split_dataset: %s must be a float in (0, 1) or an int in [0, %d], got %r" %
                         (name, total, size))
    left, right = count(left_size, "left_size"), count(right_size, "right_size")
    if left is None:
        left = total - right
    if right is None:
        right = total - left
    if left + right > total:
        raise ValueError("split_dataset: left_size + right_size (%d + %d) is more than the %d elements" %
                         (left, right, total))
    order = np.arange(total)
    if shuffle:
        np.random.RandomState(seed if seed is not None else np.random.randint(1e6)).shuffle(order)

    def part(idx):
        return tuple(a[idx] for a in arrays) if isinstance(arrays, tuple) else arrays[idx]
    return (_dataset.Dataset.from_tensor_slices(part(order[:left])),
            _dataset.Dataset.from_tensor_slices(part(order[left:left + right])))
