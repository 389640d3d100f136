"""tf.data's transformations that run in Python over a stream of elements: padded_batch, window,
flat_map, interleave, scan, take_while, unique, group_by_window, bucket_by_sequence_length,
ignore_errors, assert_cardinality.

    ds = tf.data.Dataset.range(1, 6).interleave(lambda x: tf.data.Dataset.from_tensors(x).repeat(6),
                                                cycle_length=2, block_length=4)
    ds = tf.data.Dataset.range(7).window(3, shift=2, drop_remainder=True).flat_map(lambda w: w.batch(3))
    ds = sequences.padded_batch(32, padded_shapes=[None])       # pads every batch to its longest

``padded_batch`` of numbers is a C++ stage (Dataset::PaddedBatch, data/dataset_stages.cc). The
rest (and ``padded_batch`` of strings) take any weft.data Dataset (a C++ one is read through its
iterator, data/_host.as_host) and give a host dataset (data/_host.py): its elements are made in
Python, and once they hold numbers only every later stage, ``model.fit`` and the graph iterators
read them through the C++ pipeline (``from_iterators``). User functions run per element from
Python: traced once and run in a Session for numbers (data/_fn.py), eagerly for strings;
``flat_map`` / ``interleave`` call theirs with values (numpy arrays with ``.numpy()``, datasets for
``window``'s components) and iterate the dataset it returns. Contract: elements are flat lists of
numpy arrays in ``_st.flatten`` order.
"""
import os

import numpy as np

from .. import _text_values as _tv
from .. import framework as _fw
from . import _structure as _st
from . import dataset as _dataset
from . import _host
from ._fn import element_fn
from ._trace import _call

INFINITE, UNKNOWN = _host.INFINITE, _host.UNKNOWN


def _invalid(message):
    return _fw._weft_error("InvalidArgument", message)


def _values(spec, flat):
    """An element as a user function receives it: values with ``.numpy()`` (datasets as they are)."""
    return _st.pack(spec, [c if isinstance(c, _dataset.Dataset) else _tv.wrap(c) for c in flat], _st.is_spec)


def _scalar(array, what, kinds="iu"):
    a = np.asarray(array)
    if a.shape != () or a.dtype.kind not in kinds:
        raise _invalid("%s must return a scalar %s, got %s of shape %s" %
                       (what, "integer" if kinds == "iu" else "bool", a.dtype, a.shape))
    return a.item()


# ---- padded_batch ----------------------------------------------------------------------------------
def _padded_specs(spec, padded_shapes, what):
    flat = _st.flatten(spec, _st.is_spec)
    if padded_shapes is None:
        for s in flat:
            if s.shape is None:
                raise ValueError("%s: padded_shapes is needed when a component's rank is unknown (%r)" % (what, s))
        return [tuple(s.shape) for s in flat]
    if len(flat) == 1 and not isinstance(spec, (tuple, dict)):
        shapes = [padded_shapes]
    else:
        shapes = _st.flatten_as(spec, padded_shapes, what + " padded_shapes")
    out = []
    for s, shape in zip(flat, shapes):
        shape = tuple(None if d is None or int(d) == -1 else int(d) for d in
                      (shape.as_list() if hasattr(shape, "as_list") else np.asarray(shape).reshape(-1).tolist()
                       if not isinstance(shape, (tuple, list)) else shape))
        if s.shape is not None and (len(shape) != len(s.shape) or any(
                d is not None and e is not None and e > d for d, e in zip(shape, s.shape))):
            raise ValueError("%s: the padded shape %s does not fit the component %r" % (what, list(shape), s))
        out.append(shape)
    return out


def _padding(spec, padding_values, what):
    flat = _st.flatten(spec, _st.is_spec)
    if padding_values is None:
        values = [None] * len(flat)
    elif len(flat) == 1 or not isinstance(padding_values, (tuple, list, dict)):
        values = [padding_values] * len(flat)
    else:
        values = _st.flatten_as(spec, padding_values, what + " padding_values")
    out = []
    for s, v in zip(flat, values):
        if s.dtype == _tv.string:
            out.append(b"" if v is None else _tv.as_bytes_array(v).item())
            continue
        v = np.asarray(0 if v is None else getattr(v, "numpy", lambda: v)())
        if v.shape != ():
            raise ValueError("%s: a padding value must be a scalar, got shape %s" % (what, v.shape))
        out.append(v.astype(s.dtype.as_numpy_dtype))
    return out


def padded_batch(ds, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
    what = "Dataset.padded_batch"
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError("%s: batch_size must be >= 1, got %d" % (what, batch_size))
    shapes = _padded_specs(ds.element_spec, padded_shapes, what)
    pads = _padding(ds.element_spec, padding_values, what)
    flat = _st.flatten(ds.element_spec, _st.is_spec)
    dim = batch_size if drop_remainder else None
    spec = _st.pack(ds.element_spec, [_st.TensorSpec((dim,) + sh, s.dtype) for s, sh in zip(flat, shapes)],
                    _st.is_spec)
    if _dataset._is_cpp(ds):  # numbers: the C++ stage (data/dataset_stages.cc)
        cpp = ds._ds.padded_batch(batch_size, [[-1 if d is None else d for d in sh] for sh in shapes],
                                  [np.asarray(p) for p in pads], bool(drop_remainder))
        return ds._derive(cpp, spec, batch_size)
    make = _host.as_host(ds)._make

    def pad(parts, k):
        rank = len(shapes[k])
        for p in parts:
            if p.ndim != rank:
                raise _invalid("%s: component %d has rank %d where its padded shape %s has rank %d" %
                               (what, k, p.ndim, list(shapes[k]), rank))
        target = [d if d is not None else max(p.shape[i] for p in parts) for i, d in enumerate(shapes[k])]
        out = np.full([len(parts)] + target, pads[k], dtype=parts[0].dtype)
        for i, p in enumerate(parts):
            if any(n > t for n, t in zip(p.shape, target)):
                raise _invalid("%s: Attempted to pad to a smaller size than the input element: component %d has "
                               "shape %s, padded shape %s" % (what, k, list(p.shape), target))
            out[(i,) + tuple(slice(0, n) for n in p.shape)] = p
        return out

    def batches():
        pending = []
        for element in make():
            pending.append(element)
            if len(pending) == batch_size:
                yield [pad(list(parts), k) for k, parts in enumerate(zip(*pending))]
                pending = []
        if pending and not drop_remainder:
            yield [pad(list(parts), k) for k, parts in enumerate(zip(*pending))]
    n = _card(ds)
    card = n if n < 0 else (n // batch_size if drop_remainder else -(-n // batch_size))
    return _host.HostDataset(batches, spec, card, ds._opts, batch_size)


def _card(ds):
    return int(ds.cardinality())


# ---- window, flat_map, interleave ---------------------------------------------------------------------
def _component_dataset(rows, spec):
    """A dataset of one component's values (a window's part)."""
    return _host.HostDataset(lambda: ([r] for r in rows), spec, len(rows))


def window(ds, size, shift=None, stride=1, drop_remainder=False, name=None):
    what = "Dataset.window"
    size = int(size)
    shift = size if shift is None else int(shift)
    stride = int(stride)
    if size < 1 or shift < 1 or stride < 1:
        raise ValueError("%s: size, shift and stride must be >= 1, got %d, %d, %d" % (what, size, shift, stride))
    flat = _st.flatten(ds.element_spec, _st.is_spec)
    spec = _st.pack(ds.element_spec, [_st.DatasetSpec(s) for s in flat], _st.is_spec)
    make = _host.as_host(ds)._make
    span = (size - 1) * stride + 1

    def windows():
        buffer, first = [], 0  # buffer[i] is element first + i
        it = make()
        start, done = 0, False
        while True:
            while not done and first + len(buffer) < start + span:
                e = next(it, None)
                if e is None:
                    done = True
                else:
                    buffer.append(e)
            rows = buffer[start - first:start - first + span:stride]
            if not rows or (drop_remainder and len(rows) < size):
                return
            yield [_component_dataset([r[k] for r in rows], s) for k, s in enumerate(flat)]
            start += shift
            del buffer[:max(0, start - first)]
            first = max(first, start)
    n = _card(ds)
    if n < 0:
        card = n
    elif drop_remainder:
        card = max(0, (n - span) // shift + 1) if n >= span else 0
    else:
        card = -(-n // shift)
    return _host.HostDataset(windows, spec, card, ds._opts)


def _dataset_of(fn, spec, element, what):
    out = _call(fn, _values(spec, element))
    if not isinstance(out, _dataset.Dataset):
        raise TypeError("%s: the function must return a Dataset, got %r" % (what, out))
    return out


def _interleaved(ds, fn, cycle_length, block_length, what):
    """TF's InterleaveDataset order: a cycle of ``cycle_length`` open datasets, ``block_length``
    elements from each in turn; an exhausted one is replaced by the next input's in its slot."""
    probe = None
    make = _host.as_host(ds)._make
    in_spec = ds.element_spec

    def first_spec():
        nonlocal probe
        if probe is None:
            e = next(iter(make()), None)
            probe = None if e is None else _dataset_of(fn, in_spec, e, what).element_spec
        return probe

    def elements(out_spec):
        inputs = make()
        slots = [None] * cycle_length
        index = block = n_open = 0
        end = False
        while not end or n_open:
            it = slots[index]
            if it is not None:
                e = next(it, None)
                if e is not None:
                    yield e
                    block += 1
                    if block == block_length:
                        block, index = 0, (index + 1) % cycle_length
                    continue
                slots[index] = None
                n_open -= 1
                block, index = 0, (index + 1) % cycle_length
            elif not end:
                e = next(inputs, None)
                if e is None:
                    end = True
                else:
                    inner = _dataset_of(fn, in_spec, e, what)
                    if _st.flatten(inner.element_spec, _st.is_spec) and out_spec is not None and [
                            s.dtype for s in _st.flatten(inner.element_spec, _st.is_spec)] != [
                            s.dtype for s in _st.flatten(out_spec, _st.is_spec)]:
                        raise TypeError("%s: the function returned datasets of different element types: %r and %r" %
                                        (what, out_spec, inner.element_spec))
                    slots[index] = _host.as_host(inner)._make()
                    n_open += 1
            else:
                block, index = 0, (index + 1) % cycle_length
    spec = first_spec()
    if spec is None:
        return _host.HostDataset(lambda: iter(()), in_spec, 0, ds._opts)
    return _host.HostDataset(lambda: elements(spec), spec, UNKNOWN, ds._opts)  # (TF's too, even when infinite)


def flat_map(ds, map_func, name=None):
    return _interleaved(ds, map_func, 1, 1, "Dataset.flat_map")


def interleave(ds, map_func, cycle_length=None, block_length=None, num_parallel_calls=None, deterministic=None,
               name=None):
    what = "Dataset.interleave"
    if cycle_length is None or int(cycle_length) == _dataset.AUTOTUNE:
        cycle_length = os.cpu_count() or 1  # TF: the runtime picks; its default is the number of cores
    block_length = 1 if block_length is None else int(block_length)
    if int(cycle_length) < 1 or block_length < 1:
        raise ValueError("%s: cycle_length and block_length must be >= 1, got %s, %d" %
                         (what, cycle_length, block_length))
    return _interleaved(ds, map_func, int(cycle_length), block_length, what)


# ---- scan, take_while, unique ------------------------------------------------------------------------
def scan(ds, initial_state, scan_func, name=None):
    what = "Dataset.scan"
    init = [_host.component(v, what) for v in _st.flatten(initial_state, _st.is_value_leaf)]
    state_spec = _st.pack(initial_state, [_host.spec_of(a) for a in init], _st.is_value_leaf)
    step = element_fn(scan_func, (state_spec, ds.element_spec), what)
    make = _host.as_host(ds)._make
    n_state = len(init)

    def check(spec):
        if not isinstance(spec, tuple) or len(spec) != 2:
            raise TypeError("%s: scan_func must return (new_state, output_element), got %r" % (what, spec))
        got = _st.flatten(spec[0], _st.is_spec)
        if [s.dtype for s in got] != [_host.spec_of(a).dtype for a in init]:
            raise TypeError("%s: scan_func's new state %r does not match initial_state %r" %
                            (what, spec[0], state_spec))
        return spec[1]

    def elements():
        state = list(init)
        for element in make():
            out = step(state + list(element))
            state = [np.asarray(a) for a in out[:n_state]]
            yield out[n_state:]
    if step.spec is None:  # strings: the spec from the first step
        e = next(iter(make()), None)
        if e is None:
            return _host.HostDataset(lambda: iter(()), ds.element_spec, 0, ds._opts)
        step(list(init) + list(e))
    out_spec = check(step.spec)
    return _host.HostDataset(elements, out_spec, _card(ds), ds._opts)


def take_while(ds, predicate, name=None):
    what = "Dataset.take_while"
    pred = element_fn(predicate, ds.element_spec, what)
    make = _host.as_host(ds)._make

    def elements():
        for element in make():
            if not _scalar(pred(list(element))[0], what + "'s predicate", "b"):
                return
            yield element
    return _host.HostDataset(elements, ds.element_spec, UNKNOWN, ds._opts)


def unique(ds, name=None):
    flat = ds._flat_spec()
    if len(flat) != 1 or flat[0].shape != () or flat[0].dtype not in (_fw.int32, _fw.int64, _tv.string):
        raise TypeError("Dataset.unique: elements must be scalars of int32, int64 or string, got %r" %
                        (ds.element_spec,))
    make = _host.as_host(ds)._make

    def elements():
        seen = set()
        for element in make():
            key = element[0].item()
            if key not in seen:
                seen.add(key)
                yield element
    return _host.HostDataset(elements, ds.element_spec, UNKNOWN, ds._opts)


# ---- group_by_window, bucket_by_sequence_length ----------------------------------------------------
def group_by_window(ds, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
    what = "Dataset.group_by_window"
    if (window_size is None) == (window_size_func is None):
        raise ValueError("%s: give exactly one of window_size and window_size_func" % what)
    key = element_fn(key_func, ds.element_spec, what + " key_func")
    if window_size is not None:
        size_of = lambda k: int(window_size)  # noqa: E731
    else:
        def size_of(k):
            n = window_size_func(_tv.wrap(np.int64(k)))
            return _scalar(getattr(n, "numpy", lambda: n)(), what + " window_size_func")
    return _grouped(ds, lambda flat: _scalar(key(flat)[0], what + " key_func"),
                    lambda k, w: reduce_func(_tv.wrap(np.int64(k)), w), size_of, what)


def _grouped(ds, key_of, reduce_func, size_of, what):
    """group_by_window over ``key_of(flat element) -> int``, ``size_of(key) -> int`` and
    ``reduce_func(key, window dataset) -> dataset``."""
    make = _host.as_host(ds)._make
    in_spec = ds.element_spec

    def reduced(k, rows):
        out = reduce_func(k, _host.HostDataset(lambda: iter(rows), in_spec, len(rows)))
        if not isinstance(out, _dataset.Dataset):
            raise TypeError("%s: reduce_func must return a Dataset, got %r" % (what, out))
        return out

    def elements():
        groups = {}
        for element in make():
            k = key_of(list(element))
            rows = groups.setdefault(k, [])
            rows.append(element)
            n = size_of(k)
            if n < 1:
                raise _invalid("%s: the window size of key %d must be >= 1, got %d" % (what, k, n))
            if len(rows) >= n:
                del groups[k]
                yield from _host.as_host(reduced(k, rows))._make()
        for k in sorted(groups):  # what is left, by key (TF keeps its groups in a std::map)
            yield from _host.as_host(reduced(k, groups[k]))._make()
    first = next(iter(make()), None)
    if first is None:
        return _host.HostDataset(lambda: iter(()), in_spec, 0, ds._opts)
    spec = reduced(key_of(list(first)), [first]).element_spec
    return _host.HostDataset(elements, spec, UNKNOWN if _card(ds) != INFINITE else INFINITE, ds._opts)


def bucket_by_sequence_length(ds, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False, name=None):
    what = "Dataset.bucket_by_sequence_length"
    bounds = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(bounds) + 1:
        raise ValueError("%s: len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1, got %d and %d" %
                         (what, len(sizes), len(bounds)))
    if bounds != sorted(set(bounds)):
        raise ValueError("%s: bucket_boundaries must be sorted and distinct, got %s" % (what, bounds))
    length = element_fn(element_length_func, ds.element_spec, what + " element_length_func")
    lows, highs = [np.iinfo(np.int32).min] + bounds, bounds + [np.iinfo(np.int32).max]

    def bucket(flat):
        n = _scalar(length(flat)[0], what + " element_length_func")
        b = next(i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo <= n < hi)
        if pad_to_bucket_boundary and b == len(bounds):
            raise _invalid("%s: with pad_to_bucket_boundary=True every length must be < the last boundary (%d), "
                           "got %d" % (what, bounds[-1] if bounds else 0, n))
        return b

    def batch(k, window):
        if no_padding:
            return window.batch(sizes[k], drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            shapes = [tuple(highs[k] - 1 if d is None else d for d in s) for s in
                      _padded_specs(window.element_spec, padded_shapes, what)]
            shapes = _st.pack(window.element_spec, shapes, _st.is_spec)
        return padded_batch(window, sizes[k], shapes, padding_values, drop_remainder)

    return _grouped(ds, bucket, batch, lambda k: sizes[k], what)


# ---- errors and cardinality -----------------------------------------------------------------------------
def ignore_errors(ds, log_warning=False, name=None):
    """Drops elements whose making raised a weft error (a failed check, a bad value, a malformed
    CSV record). A C++ pipeline goes on after an element's error; a host map or a CsvDataset is
    re-run element by element (``_per_element``); another Python stage ends at its error."""
    from .. import errors

    def dropped(err):
        if log_warning:
            import logging
            logging.warning("Dataset.ignore_errors: dropped an element: %s", err)

    def per_element(inputs, convert):
        for x in inputs():
            try:
                yield convert(x)
            except errors.Error as err:
                dropped(err)

    def stream(make):
        it = make()
        while True:
            try:
                e = next(it)
            except StopIteration:
                return
            except errors.Error as err:
                dropped(err)
                if getattr(it, "gi_frame", True) is None:  # a Python generator ends at its error
                    return
                continue
            yield e
    parts = getattr(ds, "_per_element", None)
    make = (lambda: per_element(*parts)) if parts else (lambda: stream(_host.as_host(ds)._make))
    return _host.HostDataset(make, ds.element_spec, UNKNOWN, ds._opts)


def assert_cardinality(ds, expected):
    n = int(expected)
    make = _host.as_host(ds)._make

    def elements():
        k = 0
        for e in make():
            k += 1
            if n != INFINITE and k > n:
                raise _fw._weft_error("FailedPrecondition", "Input dataset was expected to contain %d elements but "
                                      "contained at least %d elements." % (n, k))
            yield e
        if n == INFINITE or k < n:
            raise _fw._weft_error("FailedPrecondition", "Input dataset was expected to contain %s elements but "
                                  "contained only %d elements." % ("an infinite number of" if n == INFINITE else n, k))
    return _host.HostDataset(elements, ds.element_spec, n, ds._opts)


def rejection_resample(ds, class_func, target_dist, initial_dist=None, seed=None, name=None):
    """Dataset.rejection_resample: ``(class, element)`` pairs whose classes follow ``target_dist``,
    by rejection: an element of class c is kept with probability r_c / max(r), r = target /
    initial. ``initial_dist`` None: estimated from the classes seen so far (TF estimates it too).
    TF also mixes in unfiltered elements early on; weft does not, so its early elements already
    follow the target."""
    what = "Dataset.rejection_resample"
    target = np.asarray(getattr(target_dist, "numpy", lambda: target_dist)(), np.float64).reshape(-1)
    if (target < 0).any() or not np.isclose(target.sum(), 1.0):
        raise ValueError("%s: target_dist must be probabilities summing to 1, got %s" % (what, target))
    initial = None if initial_dist is None else np.asarray(
        getattr(initial_dist, "numpy", lambda: initial_dist)(), np.float64).reshape(-1)
    if initial is not None and initial.shape != target.shape:
        raise ValueError("%s: initial_dist %s and target_dist %s differ in length" % (what, initial, target))
    cls = element_fn(class_func, ds.element_spec, what + " class_func")
    make = _host.as_host(ds)._make
    base = _dataset._unseeded_shuffle_seed() if seed is None else int(seed) & (2 ** 64 - 1)
    passes = [0]

    def elements():
        rng = np.random.default_rng([base, passes[0]])
        passes[0] += 1
        counts = np.zeros(len(target))
        for element in make():
            c = _scalar(cls(list(element))[0], what + " class_func")
            if not 0 <= c < len(target):
                raise _invalid("%s: class_func returned %d, outside [0, %d)" % (what, c, len(target)))
            counts[c] += 1
            dist = initial if initial is not None else counts / counts.sum()
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(dist > 0, target / dist, 0.0)
            if rng.random() < ratio[c] / ratio.max():
                yield [np.asarray(c, np.int32)] + list(element)
    spec = (_st.TensorSpec((), _fw.int32), ds.element_spec)
    return _host.HostDataset(elements, spec, UNKNOWN, ds._opts)
