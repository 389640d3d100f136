"""weft.data.Dataset: tf.data's Dataset over weft's C++ input pipeline (data/dataset.h).

    ds = weft.data.Dataset.from_tensor_slices((images, labels))      # uint8[N,28,28], uint8[N]
    ds = (ds.shuffle(10000, seed=1)
            .map(lambda x, y: (weft.cast(x, weft.float32) / 255.0, y),  # traced once into a graph
                 num_parallel_calls=weft.data.AUTOTUNE)
            .batch(64)
            .prefetch(weft.data.AUTOTUNE))
    model.fit(ds, epochs=3)
    for x, y in ds.take(1):
        print(x.numpy().shape, y.numpy())

Python holds the element structure (tuples, namedtuples, dicts; ``element_spec``); the C++
pipeline holds flat lists of components. Every stage, including traced map and filter
functions, runs in C++ on the pipeline's threads without the GIL.
"""
import os

import numpy as np

from .. import _weft
from .. import _text_values as _tv
from .. import framework as _fw
from . import _structure as _st
from . import _trace, _vectorize
from .options import Options

_cpp = _weft.data

AUTOTUNE = -1
INFINITE_CARDINALITY = _cpp.INFINITE_CARDINALITY
UNKNOWN_CARDINALITY = _cpp.UNKNOWN_CARDINALITY


class EagerValue(np.ndarray):
    """A component of an element read in Python: a numpy array that also answers TensorFlow's
    eager-tensor calls (``.numpy()``)."""

    def numpy(self):
        a = self.view(np.ndarray)
        return a[()] if a.ndim == 0 else a

    def __repr__(self):
        # A scalar shows as TensorFlow shows it (numpy=7), not as numpy 2's repr (np.int64(7)).
        a = self.view(np.ndarray)
        value = a.item() if a.ndim == 0 else a
        dtype = "string" if a.dtype == object else a.dtype.name if a.dtype == np.uint16 else _fw.as_dtype(self.dtype)
        return "<weft.Tensor: shape=%s, dtype=%s, numpy=%r>" % (self.shape, dtype, value)

    def __str__(self):
        return str(self.view(np.ndarray))

    # A string value compares with str as TensorFlow's string tensors do: the str is its UTF-8 bytes.
    def __eq__(self, other):
        return np.ndarray.__eq__(self, _text_operand(self, other))

    def __ne__(self, other):
        return np.ndarray.__ne__(self, _text_operand(self, other))

    __hash__ = None

    def __getitem__(self, key):
        # One string of a string value is a scalar string value (TF's text_batch[0].numpy()), not bare bytes.
        out = np.ndarray.__getitem__(self, key)
        if self.dtype == object and not isinstance(out, np.ndarray):
            item = np.empty((), dtype=object)
            item[()] = out
            return item.view(EagerValue)
        return out


def _text_operand(value, other):
    if value.dtype != object or not _tv.is_text(other):
        return other
    return _tv.as_bytes_array(other)


def _threads(n):
    """num_parallel_calls -> threads: None is sequential; AUTOTUNE one per core."""
    if n is None:
        return 1
    n = int(n)
    if n == AUTOTUNE:
        return max(1, os.cpu_count() or 1)
    if n < 1:
        raise ValueError("num_parallel_calls must be >= 1 or weft.data.AUTOTUNE, got %d" % n)
    return n


def _count(n, what):
    n = -1 if n is None else int(n.numpy() if hasattr(n, "numpy") else n)
    if n < -1:
        raise ValueError("%s: count must be >= 0 or -1, got %d" % (what, n))
    return n


def _unseeded_shuffle_seed():
    """A shuffle without a seed: random, unless the default graph has a seed (weft's global seed,
    TF1's graph seed), from which the k-th such shuffle derives its own, as TF derives op seeds."""
    g = _fw.get_default_graph()
    if not g.seed:
        return int.from_bytes(os.urandom(8), "little")
    if getattr(g, "_data_seed_base", None) != g.seed:
        g._data_seed_base, g._data_shuffles = g.seed, 0
    g._data_shuffles += 1
    return (g.seed * 1000003 + g._data_shuffles) & (2 ** 64 - 1)


def _generated(make, spec, cardinality):
    """The Dataset of the values that ``make()`` (called once per pass) yields, each converted to
    ``spec``'s dtypes and checked against its shapes. ``cardinality``: the values each pass yields,
    when the caller knows it (keras' Sequence: its len), else UNKNOWN_CARDINALITY."""
    flat = _st.flatten(spec, _st.is_spec)
    if not flat:
        raise TypeError("Dataset.from_generator: output_signature has no TensorSpec: %r" % (spec,))

    def elements():
        for value in make():
            leaves = _st.flatten_as(spec, value, "Dataset.from_generator")
            arrays = []
            for v, s in zip(leaves, flat):
                a = _tv.as_bytes_array(v, "Dataset.from_generator") if s.dtype == _tv.string else \
                    np.asarray(v, dtype=s.dtype.as_numpy_dtype)
                if not s.is_compatible_with(a):
                    raise TypeError("the generator yielded a %s of shape %s where the output signature has %r" %
                                    (a.dtype, a.shape, s))
                arrays.append(a if a.flags.c_contiguous else a.copy())  # (ascontiguousarray makes 0-d 1-d)
            yield arrays
    if any(s.dtype == _tv.string for s in flat):  # text: a host dataset (data/_host.py)
        from . import _host
        return _host.HostDataset(elements, spec, int(cardinality))
    return Dataset(_cpp.Dataset.from_iterators(elements, int(cardinality)), spec)


def _concatenated_spec(first, second):
    """The spec of ``first`` followed by ``second``: the same structure and dtypes (else a
    TypeError naming both), each shape the most specific one both fit."""
    a, b = first._flat_spec(), second._flat_spec() if isinstance(second, Dataset) else None
    skeleton = lambda d: _st.pack(d._spec, [0] * len(d._flat_spec()), _st.is_spec)  # noqa: E731
    if b is None or skeleton(first) != skeleton(second) or any(x.dtype != y.dtype for x, y in zip(a, b)):
        raise TypeError("Dataset.concatenate: the datasets' elements differ: %r and %r" %
                        (first._spec, getattr(second, "_spec", second)))

    def common(x, y):
        if x is None or y is None or len(x) != len(y):
            return None
        return [d if d == e else None for d, e in zip(x, y)]
    return _st.pack(first._spec, [_st.TensorSpec(common(x.shape, y.shape), x.dtype) for x, y in zip(a, b)],
                    _st.is_spec)


def _is_cpp(ds):
    """Whether ``ds`` runs in the C++ pipeline (not a host dataset of strings, data/_host.py)."""
    from . import _host
    return isinstance(ds, Dataset) and not (isinstance(ds, _host.HostDataset) and not ds._numeric())


class Dataset:
    """A stream of elements (tf.data.Dataset). Made by the static constructors
    (``from_tensor_slices``, ``from_tensors``, ``range``, ``zip``) and transformed by methods that
    return new datasets; iterate it in Python or pass it to ``model.fit``."""

    def __init__(self, cpp, spec, options=None):
        self._ds = cpp
        self._spec = spec
        self._opts = options or Options()
        self._pending_map = None  # (fn, upstream, element graph, threads) when this is map's result
        self._batch_size = None  # the last batch(n)'s n while elements are its batches (for AutoShardPolicy.OFF)

    def _derive(self, cpp, spec=None, batch_size=-1):
        out = Dataset(cpp, self._spec if spec is None else spec, self._opts)
        out._batch_size = self._batch_size if batch_size == -1 else batch_size
        return out

    # ---- sources ---------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Element i is row i (along dim 0) of every component of ``tensors`` (an array, or a
        tuple/dict of arrays with the same first dim). With a string component it is a host
        dataset (data/_host.py)."""
        leaves = _st.flatten(tensors, _st.is_value_leaf)
        if any(_tv.is_text(v) for v in leaves):
            from . import _host
            return _host.from_tensor_slices(tensors)
        arrays = _st.check_slices([_st.to_array(v, "Dataset.from_tensor_slices") for v in leaves])
        specs = [_st.TensorSpec(a.shape[1:], _fw.as_dtype(a.dtype)) for a in arrays]
        return Dataset(_cpp.Dataset.from_tensors(arrays), _st.pack(tensors, specs, _st.is_value_leaf))

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The file names matching ``file_pattern`` (a glob, or a list of them) as a host dataset
        of strings, sorted, and shuffled every pass unless ``shuffle=False`` (data/_host.py)."""
        from . import _host
        return _host.list_files(file_pattern, shuffle, seed)

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element: ``tensors`` (an array, or a tuple/dict of them)."""
        leaves = _st.flatten(tensors, _st.is_value_leaf)
        if any(_tv.is_text(v) for v in leaves):
            from . import _host
            return _host.from_tensors(tensors)
        arrays = [_st.to_array(v, "Dataset.from_tensors") for v in leaves]
        specs = [_st.TensorSpec(a.shape, _fw.as_dtype(a.dtype)) for a in arrays]
        cpp = _cpp.Dataset.from_tensors([a[np.newaxis] for a in arrays])
        return Dataset(cpp, _st.pack(tensors, specs, _st.is_value_leaf))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """Elements from ``generator(*args)``, a Python generator function called once per pass,
        described by ``output_signature`` (a structure of TensorSpec) or by ``output_types`` and
        ``output_shapes``. Each value is converted to the spec's dtypes and checked against its
        shapes (InvalidArgumentError naming both). The generator runs with the GIL, one element at
        a time; the stages after it run in C++."""
        if output_signature is None:  # without output_shapes the shapes are unknown, as in TF
            if output_types is None:
                raise TypeError("Dataset.from_generator needs output_signature (or output_types)")
            is_type = lambda t: not isinstance(t, (tuple, list, dict))  # noqa: E731
            is_shape = lambda x: x is None or (isinstance(x, (tuple, list)) and  # noqa: E731
                                               all(d is None or isinstance(d, int) for d in x))
            types = _st.flatten(output_types, is_type)
            shapes = [None] * len(types) if output_shapes is None else _st.flatten(output_shapes, is_shape)
            output_signature = _st.pack(output_types, [_st.TensorSpec(sh, t) for t, sh in zip(types, shapes)],
                                        is_type)
        if not callable(generator):
            raise TypeError("Dataset.from_generator needs a generator function (called once per pass), got %r" %
                            (generator,))
        call_args = tuple(args or ())
        return _generated(lambda: generator(*call_args), output_signature, UNKNOWN_CARDINALITY)

    @staticmethod
    def range(*args, output_type=_fw.int64, name=None):
        """Like Python's range (``range(stop)``, ``range(start, stop[, step])``), as int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise TypeError("Dataset.range takes 1 to 3 arguments (start, stop, step), got %d" % len(args))
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
        if step == 0:
            raise ValueError("Dataset.range: step must not be 0")
        dtype = _fw.as_dtype(output_type)
        return Dataset(_cpp.Dataset.range(int(start), int(stop), int(step), dtype), _st.TensorSpec((), dtype))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements that combine the i-th elements of ``datasets`` (a tuple or dict of datasets,
        or several datasets as arguments), ending with the shortest."""
        if len(datasets) == 1 and not isinstance(datasets[0], Dataset):
            datasets = datasets[0]
        is_ds = lambda x: isinstance(x, Dataset)  # noqa: E731
        flat = _st.flatten(datasets, is_ds)
        if not flat:
            raise ValueError("Dataset.zip needs at least one dataset")
        if not all(_is_cpp(d) for d in flat):
            from . import _host
            return _host.zip_datasets(datasets, flat)
        spec = _st.pack(datasets, [d._spec for d in flat], is_ds)
        return Dataset(_cpp.Dataset.zip([d._ds for d in flat]), spec, flat[0]._opts)

    # ---- transformations -------------------------------------------------------------------
    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Random order from a buffer of ``buffer_size`` elements (a uniform permutation when it holds
        the whole dataset). ``seed`` fixes the orders; each pass (epoch) draws a new order unless
        ``reshuffle_each_iteration=False``. Without a seed the orders differ from run to run."""
        buffer_size = int(buffer_size)
        if buffer_size < 1 and buffer_size != -1:
            raise ValueError("Dataset.shuffle: buffer_size must be >= 1, got %d" % buffer_size)
        if seed is None:
            seed = _unseeded_shuffle_seed()
        return self._derive(self._ds.shuffle(int(seed) & (2 ** 64 - 1), buffer_size, bool(reshuffle_each_iteration)))

    def repeat(self, count=None, name=None):
        """The dataset ``count`` times over (None or -1: forever)."""
        return self._derive(self._ds.repeat(_count(count, "Dataset.repeat")))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Stacks ``batch_size`` consecutive elements along a new first dim (each component must have
        the same shape in every element of a batch). The last, smaller batch is kept unless
        ``drop_remainder``; the spec's batch dim is None then, else ``batch_size``."""
        batch_size = int(batch_size)
        spec = _st.batched(self._spec, batch_size, drop_remainder)
        if self._pending_map is not None:  # map(f).batch(n) as batch(n).map(f over batches) when f allows
            fn, upstream, graph, threads = self._pending_map
            vec = _vectorize.batched_map(fn, upstream._spec, graph)
            if vec is not None:
                g, inputs, out = vec
                flat = _st.flatten(out, lambda x: isinstance(x, _fw.Tensor))
                batches = upstream._ds.batch(batch_size, bool(drop_remainder))
                return self._derive(batches.map_graph(g, inputs, flat, threads), spec, batch_size)
        return self._derive(self._ds.batch(batch_size, bool(drop_remainder)), spec, batch_size)

    def unbatch(self, name=None):
        """Splits every element along its first dim into separate elements."""
        flat = self._flat_spec()
        for s in flat:
            if s.shape is not None and len(s.shape) == 0:
                raise ValueError("Dataset.unbatch: a component is a scalar (%r); unbatch needs rank >= 1" % (s,))
        dims = {None if s.shape is None else s.shape[0] for s in flat}
        known = dims.pop() if len(dims) == 1 and None not in dims else -1
        spec = _st.pack(self._spec, [_st.TensorSpec(None if s.shape is None else s.shape[1:], s.dtype) for s in flat],
                        _st.is_spec)
        return self._derive(self._ds.unbatch(known), spec, None)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to every element. The function is traced once into a weft graph over
        symbolic tensors (a tuple element's components are its arguments) and runs in C++ for each
        element; ``num_parallel_calls`` threads (AUTOTUNE: one per core) run it at once, keeping the
        order. Python that needs values while tracing (``.numpy()``, ``if`` on a tensor) is a
        TypeError naming the construct. A function that calls tf.numpy_function (or a
        tf.py_function that reads values) runs in Python on each element instead, one at a time."""
        from .._py_function import NeedsValues
        try:
            g, inputs, out = _trace.trace(map_func, self._spec, "Dataset.map")
        except NeedsValues:
            from . import _host
            return _host.as_host(self)._map_in_python(map_func)
        flat_out = _st.flatten(out, lambda x: isinstance(x, _fw.Tensor))
        spec = _st.pack(out, [_st.TensorSpec(t.shape, t.dtype) for t in flat_out],
                        lambda x: isinstance(x, _fw.Tensor))
        threads = _threads(num_parallel_calls)
        result = self._derive(self._ds.map_graph(g, inputs, flat_out, threads), spec)
        result._pending_map = (map_func, self, g, threads)
        return result

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` (traced like map's function) returns True."""
        g, inputs, out = _trace.trace(predicate, self._spec, "Dataset.filter")
        if not isinstance(out, _fw.Tensor):
            raise TypeError("Dataset.filter: the predicate must return one scalar bool tensor, got %r" % (out,))
        return self._derive(self._ds.filter_graph(g, inputs, out))

    def take(self, count, name=None):
        """The first ``count`` elements (-1: all)."""
        return self._derive(self._ds.take(_count(count, "Dataset.take")))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (-1: skips all)."""
        return self._derive(self._ds.skip(_count(count, "Dataset.skip")))

    def shard(self, num_shards, index, name=None):
        """Elements index, index + num_shards, ... (each worker's share of the data)."""
        num_shards, index = int(num_shards), int(index)
        if num_shards < 1 or not 0 <= index < num_shards:
            raise ValueError("Dataset.shard: needs num_shards >= 1 and 0 <= index < num_shards, got %d, %d" %
                             (num_shards, index))
        return self._derive(self._ds.shard(num_shards, index))

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass in memory; later passes replay them."""
        if filename:
            raise NotImplementedError("Dataset.cache(filename=%r): weft caches in memory only; call cache()" %
                                      (filename,))
        return self._derive(self._ds.cache())

    def prefetch(self, buffer_size, name=None):
        """Runs the stages before it on a background thread, ``buffer_size`` elements ahead
        (AUTOTUNE: 2)."""
        buffer_size = int(buffer_size)
        if buffer_size == AUTOTUNE:
            buffer_size = 2
        if buffer_size < 1:
            raise ValueError("Dataset.prefetch: buffer_size must be >= 1 or AUTOTUNE, got %d" % buffer_size)
        return self._derive(self._ds.prefetch(buffer_size))

    def concatenate(self, dataset, name=None):
        """This dataset's elements followed by ``dataset``'s (same structure and dtypes; a dim
        where the two specs differ becomes None)."""
        if not _is_cpp(dataset):
            from . import _host
            return _host.concatenate(self, dataset)
        spec = _concatenated_spec(self, dataset)
        return self._derive(self._ds.concatenate(dataset._ds), spec)

    def enumerate(self, start=0, name=None):
        """Elements ``(i, element)`` with i counting from ``start`` (int64)."""
        return Dataset.zip((Dataset.range(start, 2 ** 62), self))

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the dataset into one value: ``state = reduce_func(state, element)`` from
        ``initial_state`` (a value or structure of values), traced once like map's function; the
        state keeps its structure and dtypes. Returns the final state (values with ``.numpy()``)."""
        init = [_st.to_array(v, "Dataset.reduce") for v in _st.flatten(initial_state, _st.is_value_leaf)]
        state_spec = _st.pack(initial_state, [_st.TensorSpec(a.shape, _fw.as_dtype(a.dtype)) for a in init],
                              _st.is_value_leaf)
        g, inputs, out = _trace.trace(reduce_func, (state_spec, self._spec), "Dataset.reduce")
        flat_out = _st.flatten(out, lambda x: isinstance(x, _fw.Tensor))
        if [t.dtype for t in flat_out] != [_fw.as_dtype(a.dtype) for a in init]:
            raise TypeError("Dataset.reduce: reduce_func must return a state like initial_state (%r), got %r" %
                            (state_spec, out))
        from ..session import Session
        state = init
        with Session(g, inter_op_threads=1, intra_op_threads=1) as sess:
            for comps in self._ds.make_iterator():
                state = sess.run(flat_out, feed_dict=dict(zip(inputs, list(state) + list(comps))))
        return _st.pack(state_spec, [np.asarray(a).view(EagerValue) for a in state], _st.is_spec)

    def apply(self, transformation_func):
        """``transformation_func(self)``: a function from dataset to dataset."""
        return transformation_func(self)

    def with_options(self, options, name=None):
        """The same dataset with ``options`` (weft.data.Options) merged over its own."""
        if not isinstance(options, Options):
            raise TypeError("Dataset.with_options needs a weft.data.Options, got %r" % (options,))
        out = Dataset(self._ds, self._spec, self._opts.merge(options))
        out._batch_size = self._batch_size
        return out

    def options(self):
        return self._opts

    # ---- reading -----------------------------------------------------------------------------
    @property
    def element_spec(self):
        """The structure of an element with a TensorSpec (shape, dtype) per component."""
        return self._spec

    def _flat_spec(self):
        return _st.flatten(self._spec, _st.is_spec)

    def cardinality(self):
        """The number of elements, INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2), as a
        scalar int64 (``.numpy()`` works, as on TensorFlow's)."""
        return np.asarray(self._ds.cardinality(), np.int64).view(EagerValue)

    def __len__(self):
        n = self._ds.cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return int(n)

    def __bool__(self):
        return True  # as TF's: truthiness must not go through __len__ (an infinite dataset has none)

    def _elements(self, wrap):
        it = self._ds.make_iterator()
        for comps in it:
            yield _st.pack(self._spec, [wrap(c) for c in comps], _st.is_spec)

    def __iter__(self):
        """Elements as numpy arrays that also have ``.numpy()`` (EagerValue), in the element's structure."""
        return self._elements(lambda c: c.view(EagerValue))

    def as_numpy_iterator(self):
        """Elements as numpy arrays (scalars as numpy scalars), in the element's structure."""
        return self._elements(lambda c: c[()] if c.ndim == 0 else c)

    def __repr__(self):
        return "<weft.data.Dataset element_spec=%r>" % (self._spec,)


TensorSpec = _st.TensorSpec
