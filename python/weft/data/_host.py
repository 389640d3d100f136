"""Host datasets: tf.data pipelines whose elements hold strings, run in Python.

    ds = weft.data.TextLineDataset(["a.csv"]).skip(1).map(
        lambda line: weft.strings.to_number(weft.strings.split(line, ",")))
    raw = weft.data.Dataset.from_tensor_slices((["good film", "bad film"], [1, 0])).batch(2)
    train = raw.map(lambda text, label: (vectorize_layer(weft.expand_dims(text, -1)), label)).cache()

weft's C++ pipeline carries numbers and bools, so a dataset with a string component (from
``from_tensor_slices`` / ``from_tensors`` / ``zip`` of text, ``TextLineDataset``,
``keras.utils.text_dataset_from_directory``) is a ``HostDataset``: a ``Dataset`` whose elements
are lists of numpy arrays made in Python (strings: object arrays of bytes, _text_values.py), and
whose ``map`` / ``filter`` functions run eagerly, once per element (or batch), on values with
``.numpy()`` (tf.strings functions, Keras text layers and weft ops on values work there).

Once the element spec holds numbers only (a ``map`` turned the text into ids), the dataset hands
over to the C++ pipeline: every further transformation (``cache``, ``prefetch``, ``map``, ...),
``model.fit`` and the graph iterators read a C++ Dataset fed from this Python stream
(``Dataset.from_iterators``), so the numeric path stays as it is.

Contracts: ``make()`` returns a fresh iterator over one pass; elements are flat lists of numpy
arrays in the order of ``_st.flatten(spec)``; ``card`` follows TF's cardinality rules.
"""
import os

import numpy as np

from .. import _text_values as _tv
from .. import framework as _fw
from . import _structure as _st
from . import dataset as _dataset
from ._trace import _call

INFINITE = _dataset.INFINITE_CARDINALITY
UNKNOWN = _dataset.UNKNOWN_CARDINALITY


def spec_of(array):
    """The TensorSpec of one component value."""
    return _st.TensorSpec(array.shape, _tv.string if array.dtype == object else _fw.as_dtype(array.dtype))


def is_string_spec(spec):
    return any(s.dtype == _tv.string for s in _st.flatten(spec, _st.is_spec))


def component(value, what):
    """A user's value (a function's result, a slice source) as a numpy component: strings as an
    object array of bytes, tensors computed from constants as their values, numbers as
    TensorFlow converts them (Python floats float32, ints int32)."""
    if _tv.is_text(value):
        return _tv.as_bytes_array(value, what)
    if isinstance(value, np.ndarray) and value.dtype == object and value.size == 0:
        return value
    if hasattr(value, "to_list") and hasattr(value, "row_splits"):
        raise NotImplementedError("%s: a RaggedTensor component is not supported by weft's datasets; pad it with "
                                  "rt.to_tensor() (or keras.utils.pad_sequences) first" % what)
    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        raise NotImplementedError("%s: a SparseTensor component (a VarLenFeature's result) is not supported by weft's "
                                  "datasets; densify it with tf.sparse.to_dense(...) first" % what)
    if isinstance(value, _dataset.EagerValue):
        return value.view(np.ndarray)
    return np.asarray(_st.to_array(value, what))


class HostDataset(_dataset.Dataset):
    """A Dataset computed in Python (see the module doc). Made by the helpers below, never by users."""

    def __init__(self, make, spec, card, options=None, batch_size=None):
        self._make = make
        self._spec = spec
        self._card = int(card)
        self._opts = options or _dataset.Options()
        self._pending_map = None
        self._batch_size = batch_size
        self._cpp = None
        # (make inputs, convert one) when each element is made from one input on its own (a map, a
        # CSV record): ignore_errors then drops a failing element and goes on, as TF's does.
        self._per_element = None

    def _host(self, make, spec=None, card=None, batch_size=-1):
        return HostDataset(make, self._spec if spec is None else spec, self._card if card is None else card,
                           self._opts, self._batch_size if batch_size == -1 else batch_size)

    # ---- the hand-over to C++ ------------------------------------------------------------------
    def _numeric(self):
        return not is_string_spec(self._spec) and not _st.has_datasets(self._spec)

    @property
    def _ds(self):
        """The C++ dataset of these elements (numbers only): what fit, the graph iterators and
        the C++ transformations read."""
        if _st.has_datasets(self._spec):
            raise TypeError("this dataset's elements are datasets (element_spec %r, from window()); flatten them "
                            "first: ds.flat_map(lambda w: w.batch(n))" % (self._spec,))
        if not self._numeric():
            raise TypeError("this dataset's elements hold strings (element_spec %r); weft's C++ pipeline and models "
                            "take numbers: map the text to numbers first (a TextVectorization layer, "
                            "tf.strings.to_number)" % (self._spec,))
        if self._cpp is None:
            self._cpp = _dataset._cpp.Dataset.from_iterators(
                lambda: ([a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in e] for e in self._make()),
                self._card)
        return self._cpp

    def _cpp_dataset(self):
        out = _dataset.Dataset(self._ds, self._spec, self._opts)
        out._batch_size = self._batch_size
        return out

    # ---- transformations ---------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Numbers only: traced into the C++ pipeline as Dataset.map. With strings: ``map_func``
        runs in Python on every element (its values have ``.numpy()``). The output spec comes from
        its result on the first element, computed now (as TF traces once): string results get
        unknown dims, numeric ones that result's dims with the input's open first dim kept open; a
        later numeric result of another shape is InvalidArgumentError naming both."""
        if self._numeric():
            return self._cpp_dataset().map(map_func, num_parallel_calls, deterministic, name)
        return self._map_in_python(map_func)

    def _map_in_python(self, map_func):
        """``map_func`` on every element's values, in Python (strings, or tf.numpy_function)."""
        if not callable(map_func):
            raise TypeError("Dataset.map needs a function, got %r" % (map_func,))
        spec_in = self._spec

        def apply(element):
            out = _call(map_func, _st.pack(spec_in, [_tv.wrap(c) for c in element], _st.is_spec))
            if out is None:
                raise TypeError("Dataset.map: %r returned None; it must return the new element" % (map_func,))
            if isinstance(out, list):
                out = tuple(out)  # tf.data reads a returned list as a tuple
            leaves = _st.flatten(out, lambda x: not isinstance(x, (tuple, dict)))
            return out, [component(v, "Dataset.map") for v in leaves]

        first = next(iter(self._make()), None)
        if first is None:
            return self._host(lambda: iter(()), card=0)
        structure, arrays = apply(first)
        open_dim = any(s.shape and s.shape[0] is None for s in self._flat_spec())
        specs = []
        for a in arrays:
            s = spec_of(a)
            if s.dtype == _tv.string:  # text of any length: split, join, ... (TF's static shapes say None)
                s = _st.TensorSpec((None,) * a.ndim, s.dtype)
            elif open_dim and a.ndim:
                s = _st.TensorSpec((None,) + tuple(a.shape[1:]), s.dtype)
            specs.append(s)
        spec = _st.pack(structure, specs, lambda x: not isinstance(x, (tuple, dict)))
        make = self._make

        def convert(element):
            arrays = apply(element)[1]
            for a, s in zip(arrays, specs):
                if not s.is_compatible_with(spec_of(a)):
                    raise _fw._weft_error(
                        "InvalidArgument", "Dataset.map: %r returned a %s of shape %s where its first result was "
                        "%r: a host map takes its numeric output shapes from its first result (give "
                        "TextVectorization an output_sequence_length, or pad to one length)" %
                        (map_func, spec_of(a).dtype, a.shape, s))
            return arrays
        out = self._host(lambda: (convert(e) for e in make()), spec)
        out._per_element = (make, convert)
        return out

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` (run in Python on each) is True."""
        if self._numeric():
            return self._cpp_dataset().filter(predicate, name)
        spec, make = self._spec, self._make

        def kept():
            for element in make():
                keep = component(_call(predicate, _st.pack(spec, [_tv.wrap(c) for c in element], _st.is_spec)),
                                 "Dataset.filter")
                if keep.shape != () or keep.dtype != np.bool_:
                    raise TypeError("Dataset.filter: the predicate must return one scalar bool, got %s of shape %s"
                                    % (keep.dtype, keep.shape))
                if keep:
                    yield element
        return self._host(kept, card=UNKNOWN)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stacks ``batch_size`` consecutive elements (their components must have one shape)."""
        if self._numeric():
            return self._cpp_dataset().batch(batch_size, drop_remainder)
        batch_size = int(batch_size)
        spec = _st.batched(self._spec, batch_size, drop_remainder)
        make = self._make

        def batches():
            pending = []
            for element in make():
                pending.append(element)
                if len(pending) == batch_size:
                    yield _stack(pending)
                    pending = []
            if pending and not drop_remainder:
                yield _stack(pending)
        n = self._card
        card = n if n < 0 else (n // batch_size if drop_remainder else -(-n // batch_size))
        return self._host(batches, spec, card, batch_size)

    def unbatch(self, name=None):
        if self._numeric():
            return self._cpp_dataset().unbatch()
        flat = self._flat_spec()
        for s in flat:
            if s.shape is not None and len(s.shape) == 0:
                raise ValueError("Dataset.unbatch: a component is a scalar (%r); unbatch needs rank >= 1" % (s,))
        spec = _st.pack(self._spec, [_st.TensorSpec(None if s.shape is None else s.shape[1:], s.dtype) for s in flat],
                        _st.is_spec)
        make = self._make

        def rows():
            for element in make():
                n = {a.shape[0] for a in element}
                if len(n) != 1:
                    raise _fw._weft_error("InvalidArgument", "Dataset.unbatch: the components' first dims differ: %s"
                                          % [a.shape for a in element])
                for i in range(n.pop()):
                    yield [a[i, ...] for a in element]
        dims = {None if s.shape is None else s.shape[0] for s in flat}
        known = dims.pop() if len(dims) == 1 and None not in dims else None
        card = self._card * known if known is not None and self._card >= 0 else UNKNOWN
        return self._host(rows, spec, card if self._card != INFINITE else INFINITE, None)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """TF's buffer shuffle: a buffer of ``buffer_size`` elements, each output drawn at random
        from it and replaced by the next input. ``seed`` fixes the orders; every pass draws a new
        one unless ``reshuffle_each_iteration=False``."""
        if self._numeric():
            return self._cpp_dataset().shuffle(buffer_size, seed, reshuffle_each_iteration)
        buffer_size = int(buffer_size)
        if buffer_size < 1 and buffer_size != -1:
            raise ValueError("Dataset.shuffle: buffer_size must be >= 1, got %d" % buffer_size)
        base = _dataset._unseeded_shuffle_seed() if seed is None else int(seed) & (2 ** 64 - 1)
        passes = [0]
        make = self._make

        def shuffled():
            rng = np.random.default_rng([base, passes[0]])
            if reshuffle_each_iteration:
                passes[0] += 1
            buffer = []
            for element in make():
                buffer.append(element)
                if buffer_size != -1 and len(buffer) >= buffer_size:
                    i = int(rng.integers(len(buffer)))
                    buffer[i], buffer[-1] = buffer[-1], buffer[i]
                    yield buffer.pop()
            while buffer:
                i = int(rng.integers(len(buffer)))
                buffer[i], buffer[-1] = buffer[-1], buffer[i]
                yield buffer.pop()
        return self._host(shuffled)

    def repeat(self, count=None, name=None):
        if self._numeric():
            return self._cpp_dataset().repeat(count)
        count = _dataset._count(count, "Dataset.repeat")
        make = self._make

        def repeated():
            k = 0
            while count == -1 or k < count:
                k += 1
                empty = True
                for element in make():
                    empty = False
                    yield element
                if empty:
                    return  # an empty dataset repeated forever is empty, as TF's
        n = self._card
        card = 0 if n == 0 or count == 0 else INFINITE if count == -1 or n == INFINITE else \
            UNKNOWN if n == UNKNOWN else n * count
        return self._host(repeated, card=card)

    def take(self, count, name=None):
        if self._numeric():
            return self._cpp_dataset().take(count)
        count = _dataset._count(count, "Dataset.take")
        make = self._make

        def taken():
            if count == 0:
                return
            for k, element in enumerate(make(), 1):
                yield element
                if k == count:
                    return
        n = self._card
        card = n if count == -1 else count if n == INFINITE else UNKNOWN if n == UNKNOWN else min(n, count)
        return self._host(taken, card=card)

    def skip(self, count, name=None):
        if self._numeric():
            return self._cpp_dataset().skip(count)
        count = _dataset._count(count, "Dataset.skip")
        make = self._make

        def skipped():
            for k, element in enumerate(make()):
                if count != -1 and k >= count:
                    yield element
        n = self._card
        card = 0 if count == -1 else n if n in (INFINITE, UNKNOWN) else max(0, n - count)
        return self._host(skipped, card=card)

    def shard(self, num_shards, index, name=None):
        if self._numeric():
            return self._cpp_dataset().shard(num_shards, index)
        num_shards, index = int(num_shards), int(index)
        if num_shards < 1 or not 0 <= index < num_shards:
            raise ValueError("Dataset.shard: needs num_shards >= 1 and 0 <= index < num_shards, got %d, %d" %
                             (num_shards, index))
        make = self._make
        n = self._card
        card = n if n < 0 else n // num_shards + (1 if index < n % num_shards else 0)
        return self._host(lambda: (e for k, e in enumerate(make()) if k % num_shards == index), card=card)

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass in memory; later passes replay them."""
        if self._numeric():
            return self._cpp_dataset().cache(filename)
        if filename:
            raise NotImplementedError("Dataset.cache(filename=%r): weft caches in memory only; call cache()" %
                                      (filename,))
        store = {"done": None}
        make = self._make

        def cached():
            if store["done"] is not None:
                yield from store["done"]
                return
            seen = []
            for element in make():
                seen.append(element)
                yield element
            store["done"] = seen  # only a complete pass is kept, as TF's
        return self._host(cached)

    def prefetch(self, buffer_size, name=None):
        """Numbers: the C++ prefetch. Strings: elements are made when read (the same values)."""
        if self._numeric():
            return self._cpp_dataset().prefetch(buffer_size)
        buffer_size = int(buffer_size)
        if buffer_size < 1 and buffer_size != _dataset.AUTOTUNE:
            raise ValueError("Dataset.prefetch: buffer_size must be >= 1 or AUTOTUNE, got %d" % buffer_size)
        return self._host(self._make)

    def concatenate(self, dataset, name=None):
        return concatenate(self, dataset)

    def enumerate(self, start=0, name=None):
        return _dataset.Dataset.zip((_dataset.Dataset.range(start, 2 ** 62), self))

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the elements in Python: ``state = reduce_func(state, element)``."""
        if self._numeric():
            return self._cpp_dataset().reduce(initial_state, reduce_func)
        state = initial_state
        for element in self:
            state = reduce_func(state, element)
        return state

    def with_options(self, options, name=None):
        if not isinstance(options, _dataset.Options):
            raise TypeError("Dataset.with_options needs a weft.data.Options, got %r" % (options,))
        out = self._host(self._make)
        out._opts = self._opts.merge(options)
        return out

    # ---- reading -------------------------------------------------------------------------------
    def cardinality(self):
        return np.asarray(self._card, np.int64).view(_dataset.EagerValue)

    def __len__(self):
        if self._card == INFINITE:
            raise TypeError("The dataset is infinite.")
        if self._card == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return self._card

    def _elements(self, wrap):
        for element in self._make():  # (a window's components are datasets: they stay as they are)
            yield _st.pack(self._spec, [c if isinstance(c, _dataset.Dataset) else wrap(c) for c in element],
                           _st.is_spec)


def _stack(elements):
    out = []
    for k, parts in enumerate(zip(*elements)):
        shapes = {p.shape for p in parts}
        if len(shapes) > 1:
            first = parts[0].shape
            j = next(i for i, p in enumerate(parts) if p.shape != first)
            raise _fw._weft_error("InvalidArgument", "Cannot batch tensors with different shapes in component %d. "
                                  "First element had shape %s and element %d had shape %s." %
                                  (k, list(first), j, list(parts[j].shape)))
        out.append(np.stack(parts) if parts[0].dtype != object else _object_stack(parts))
    return out


def _object_stack(parts):
    out = np.empty((len(parts),) + parts[0].shape, dtype=object)
    for i, p in enumerate(parts):
        out[i] = p[()] if p.ndim == 0 else p  # (a 0-d array would be stored as the object itself)
    return out


# ---- sources ---------------------------------------------------------------------------------------
def from_tensor_slices(tensors):
    leaves = _st.flatten(tensors, _st.is_value_leaf)
    arrays = _st.check_slices([component(v, "Dataset.from_tensor_slices") for v in leaves])
    specs = [_st.TensorSpec(a.shape[1:], spec_of(a).dtype) for a in arrays]
    n = arrays[0].shape[0]
    return HostDataset(lambda: ([a[i, ...] for a in arrays] for i in range(n)),
                       _st.pack(tensors, specs, _st.is_value_leaf), n)


def from_tensors(tensors):
    leaves = _st.flatten(tensors, _st.is_value_leaf)
    arrays = [component(v, "Dataset.from_tensors") for v in leaves]
    return HostDataset(lambda: iter([list(arrays)]), _st.pack(tensors, [spec_of(a) for a in arrays],
                                                               _st.is_value_leaf), 1)


def list_files(file_pattern, shuffle, seed):
    """tf.data.Dataset.list_files: the names matching each glob pattern (each pattern's sorted, as
    tf.io.matching_files), shuffled with a buffer of all of them unless shuffle is False; no match
    at all is InvalidArgumentError naming the patterns."""
    import glob
    patterns = _tv.as_bytes_array(file_pattern, "Dataset.list_files").reshape(-1).tolist()
    names = []
    for p in patterns:
        names.extend(sorted(glob.glob(_tv.decode(p))))
    if not names:
        raise _fw._weft_error("InvalidArgument", "Dataset.list_files: No files matched pattern: %s"
                              % ", ".join(_tv.decode(p) for p in patterns))
    ds = from_tensor_slices(names)
    return ds if shuffle is False else ds.shuffle(len(names), seed=seed)


def as_host(ds):
    """Any weft.data Dataset as a HostDataset (a C++ one is read through its iterator)."""
    if isinstance(ds, HostDataset):
        return ds
    return HostDataset(lambda: iter(ds._ds.make_iterator()), ds._spec, int(ds._ds.cardinality()), ds._opts,
                       ds._batch_size)


def zip_datasets(datasets, flat):
    hosts = [as_host(d) for d in flat]

    def zipped():
        iters = [h._make() for h in hosts]
        while True:
            element = []
            for it in iters:
                part = next(it, None)
                if part is None:
                    return
                element.extend(part)
            yield element
    cards = [h._card for h in hosts]
    finite = [c for c in cards if c >= 0]
    card = UNKNOWN if UNKNOWN in cards else min(finite) if finite else INFINITE
    is_ds = lambda x: isinstance(x, _dataset.Dataset)  # noqa: E731
    return HostDataset(zipped, _st.pack(datasets, [d._spec for d in flat], is_ds), card, flat[0]._opts)


def concatenate(first, second):
    spec = _dataset._concatenated_spec(first, second)
    h1, h2 = as_host(first), as_host(second)
    c1, c2 = h1._card, h2._card
    card = INFINITE if INFINITE in (c1, c2) else UNKNOWN if UNKNOWN in (c1, c2) else c1 + c2

    def both():
        yield from h1._make()
        yield from h2._make()
    return HostDataset(both, spec, card, first._opts)


class TextLineDataset(HostDataset):
    """tf.data.TextLineDataset: the lines of text files, one string element each (bytes, the line
    terminator "\\n" or "\\r\\n" removed; a last line without one is read), file after file.
    ``filenames``: a path or a list of them (str, bytes or a string dataset/array).
    ``compression_type``: None, "" or "GZIP"."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None, name=None):
        if isinstance(filenames, _dataset.Dataset):
            filenames = [e for e in filenames.as_numpy_iterator()]
        paths = [_tv.decode(b) for b in _tv.as_bytes_array(filenames, "TextLineDataset: filenames").reshape(-1)]
        if not paths:
            raise ValueError("TextLineDataset: filenames is empty")
        if compression_type not in (None, "", "GZIP", "ZLIB"):
            raise ValueError("TextLineDataset: compression_type must be None, '', 'GZIP' or 'ZLIB', got %r"
                             % (compression_type,))
        if compression_type == "ZLIB":
            raise NotImplementedError("TextLineDataset: compression_type='ZLIB' is not supported by weft ('GZIP' is)")
        for p in paths:
            if not os.path.isfile(p):
                raise _fw._weft_error("NotFound", "TextLineDataset: %s: No such file or directory" % p)

        def lines():
            import gzip
            for p in paths:
                opener = gzip.open if compression_type == "GZIP" else open
                with opener(p, "rb") as f:
                    for line in f:
                        if line.endswith(b"\n"):
                            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
                        yield [_tv.as_bytes_array(line)]
        super().__init__(lines, _st.TensorSpec((), _tv.string), UNKNOWN)
