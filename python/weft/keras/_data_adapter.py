"""Keras' fit / evaluate / predict over weft.data datasets (Keras semantics): the batch size comes
from the dataset (``batch_size=`` must not be given), a finite dataset is re-read every epoch, an
infinite one needs ``steps_per_epoch``; elements are ``(x, y)`` pairs (``x`` alone, or pairs, for
predict). Under MultiWorkerMirroredStrategy the dataset's auto-shard policy applies: AUTO and DATA
give each worker its share of every global batch (TF's DATA sharding of in-memory data), OFF gives
every worker the whole stream in per-worker batches.

Python generators and keras.utils.PyDataset / Sequence objects become weft.data datasets here
(``from_python``), so they take the same C++ path: a generator is one stream read on across epochs
(a finite one is used up by the first epoch unless ``steps_per_epoch`` rations it, as in Keras), a
PyDataset gives ``len()`` batches per epoch.
"""
import inspect

import numpy as np

from .. import framework as _fw
from ..data import dataset as _dataset
from ..data.options import AutoShardPolicy
from ._arrays import numeric
from ._pydataset import PyDataset
from .callbacks import Callback


def _name(model):
    return model._cpp.name if model._cpp is not None else getattr(model, "_name", "model")


def is_dataset(x):
    return isinstance(x, (_dataset.Dataset, DistributedDataset))


def _global(x):
    return x._dataset if isinstance(x, DistributedDataset) else x


# The dtypes the C++ model converts its inputs and labels from (train/fit.cc CastOnHost).
_NUMBER_DTYPES = ("float32", "float64", "int32", "int64", "uint8")


def _check_x(model, x, spec, what):
    """x's spec against the built model's input: dtype and shape, naming both (InvalidArgumentError,
    a ValueError, as Keras' ValueError)."""
    want = model._cpp.input_shape if model._cpp is not None else None
    bad = str(x.dtype) not in _NUMBER_DTYPES
    if want is not None and x.shape is not None and not bad:
        bad = len(x.shape) != len(want) or any(a is not None and b is not None and a != b
                                               for a, b in zip(x.shape[1:], want[1:]))
    if bad:
        raise _fw._weft_error("InvalidArgument", "Model '%s'.%s: the dataset's x is %s %s but the model's input is "
                              "%s with dtype float32 (or %s, converted) (element_spec %r)" %
                              (_name(model), what, x.dtype, x.shape and tuple(x.shape), want, ", ".join(_NUMBER_DTYPES[1:]),
                               spec))


def _pair_spec(ds, model, what, weights=True):
    """Checks that elements are (x, y) pairs (or (x, y, sample_weight) triples when ``weights``)."""
    spec = ds.element_spec
    sizes = (2, 3) if weights else (2,)
    n_in, n_out = model._io_counts() if hasattr(model, "_io_counts") else (1, 1)
    if n_in > 1 or n_out > 1:
        return _multi_spec(spec, model, what, sizes, n_in, n_out)
    if not (isinstance(spec, tuple) and len(spec) in sizes and all(isinstance(s, _dataset.TensorSpec) for s in spec)):
        raise ValueError("Model '%s'.%s: dataset elements must be (x, y) pairs%s of tensors for this model's one "
                         "input, got element_spec %r" % (_name(model), what,
                                                         " (or (x, y, sample_weight) triples)" if weights else "", spec))
    _check_x(model, spec[0], spec, what)
    if str(spec[1].dtype) not in _NUMBER_DTYPES:
        raise _fw._weft_error("InvalidArgument", "Model '%s'.%s: the dataset's labels are %s; labels must be numbers "
                              "(%s) (element_spec %r)" % (_name(model), what, spec[1].dtype,
                                                         ", ".join(_NUMBER_DTYPES), spec))
    return spec


def _multi_spec(spec, model, what, sizes, n_in, n_out):
    """Elements ((x_1, ..., x_k), (y_1, ..., y_m)[, sample_weight]) of a model with several inputs or
    outputs (the C++ loop reads the flattened components in that order)."""
    def count(part):
        if isinstance(part, _dataset.TensorSpec):
            return 1
        if isinstance(part, (tuple, list)) and all(isinstance(p, _dataset.TensorSpec) for p in part):
            return len(part)
        return -1
    if not (isinstance(spec, tuple) and len(spec) in sizes and count(spec[0]) == n_in and count(spec[1]) == n_out):
        raise ValueError("Model '%s'.%s: this model has %d input(s) and %d output(s): dataset elements must be "
                         "((x_1, ..., x_%d), (y_1, ...)) tuples (a dict is not supported), got element_spec %r"
                         % (_name(model), what, n_in, n_out, n_in, spec))
    return spec


def shape_hint(x):
    """An empty array with the per-example shape of the dataset's x, for a Sequential that takes its
    input shape from the data."""
    spec = _global(x).element_spec
    s = spec[0] if isinstance(spec, tuple) else spec
    if isinstance(s, _dataset.TensorSpec) and str(s.dtype) == "string":
        _global(x)._ds  # a host dataset of strings: the TypeError that says to map the text to numbers
    if not isinstance(s, _dataset.TensorSpec) or not s.shape:
        return None
    return np.zeros((0,) + tuple(1 if d is None else d for d in s.shape[1:]), np.float32)


def _for_workers(model, ds):
    """The C++ dataset this worker trains on, after the auto-shard policy."""
    strategy = model._strategy
    workers = getattr(strategy, "num_workers", 1) if strategy is not None else 1
    policy = ds.options().experimental_distribute.auto_shard_policy
    if workers <= 1 or policy in (AutoShardPolicy.AUTO, AutoShardPolicy.DATA, AutoShardPolicy.HINT):
        # Every worker reads the global batches and trains on its slice (C++ Strategy::SplitBatch).
        return ds._ds
    if policy == AutoShardPolicy.FILE:
        raise ValueError("AutoShardPolicy.FILE shards by input files, and weft.data datasets are in memory "
                         "(TensorFlow fails the same way); use AUTO, DATA or OFF")
    # OFF: every worker reads the whole stream in per-worker batches (global / workers); the C++
    # step takes this worker's slice of a global batch, so hand it the batch `workers` times over.
    spec = ds.element_spec
    if not spec[0].shape:
        raise ValueError("AutoShardPolicy.OFF: the dataset's elements are not batches (element_spec %r)" % (spec,))
    dim = spec[0].shape[0] or ds._batch_size  # batched without drop_remainder: batch(n)'s n
    if dim is None:
        raise ValueError("AutoShardPolicy.OFF needs the global batch size: end the dataset with batch(n) (then "
                         "map, prefetch, repeat and the like), element_spec %r" % (spec,))
    if dim % workers:
        raise ValueError("AutoShardPolicy.OFF: the global batch %d does not split over %d workers" % (dim, workers))
    from .. import ops
    local = ds.unbatch().batch(dim // workers, drop_remainder=True)
    return local.map(lambda *c: tuple(ops.concat([t] * workers, axis=0) for t in c))._ds


def fit_dataset(model, x, y, batch_size, validation_data, validation_steps):
    """The C++ datasets for fit: (train, validation or None)."""
    if y is not None:
        raise ValueError("`y` argument is not supported when using a dataset as input (its elements hold the labels)")
    if batch_size is not None:
        raise ValueError("The `batch_size` argument must not be specified when using a dataset as input: the dataset "
                         "is batched (Dataset.batch)")
    ds = _global(x)
    _pair_spec(ds, model, "fit")
    val = None
    if validation_data is not None:
        if isinstance(validation_data, (tuple, list)) and len(validation_data) == 2:
            # Arrays beside a dataset: batched by 32, as Keras batches validation arrays by default.
            validation_data = _dataset.Dataset.from_tensor_slices(tuple(validation_data)).batch(32)
        if not is_dataset(validation_data):
            raise TypeError("fit(x=a dataset): validation_data must be a dataset or (x_val, y_val) arrays, got %r" %
                            (validation_data,))
        val = validation_dataset(model, validation_data, validation_steps)
    return _for_workers(model, ds), val


def validation_dataset(model, validation_data, validation_steps):
    """The C++ dataset fit evaluates after each epoch (validation_steps batches of it, when given)."""
    v = _global(validation_data)
    _pair_spec(v, model, "fit (validation_data)")
    if v.cardinality() == _dataset.INFINITE_CARDINALITY and not validation_steps:
        raise ValueError("validation_data is an infinite dataset: give validation_steps")
    return v._ds


def evaluate_dataset(model, x, y, batch_size, steps):
    if y is not None:
        raise ValueError("`y` argument is not supported when using a dataset as input (its elements hold the labels)")
    if batch_size is not None:
        raise ValueError("The `batch_size` argument must not be specified when using a dataset as input")
    ds = _global(x)
    _pair_spec(ds, model, "evaluate")
    if steps is not None:
        ds = ds.take(int(steps))
    return ds._ds


def predict_dataset(model, x, batch_size, steps):
    if batch_size is not None:
        raise ValueError("The `batch_size` argument must not be specified when using a dataset as input")
    ds = _global(x)
    spec = ds.element_spec
    if isinstance(spec, tuple):
        if not spec or not isinstance(spec[0], _dataset.TensorSpec):
            raise ValueError("Model.predict: dataset elements must be x or (x, ...) tensors, got element_spec %r" %
                             (spec,))
        ds = ds.map(lambda x, *rest: x)
    elif not isinstance(spec, _dataset.TensorSpec):
        raise ValueError("Model.predict: dataset elements must be x or (x, ...) tensors, got element_spec %r" % (spec,))
    _check_x(model, ds.element_spec, spec, "predict")
    if steps is not None:
        ds = ds.take(int(steps))
    return ds._ds


def is_python_data(x):
    """A Python generator (or another one-pass iterator) or a keras.utils.PyDataset / Sequence."""
    if isinstance(x, PyDataset):
        return True
    if x is None or is_dataset(x) or isinstance(x, (np.ndarray, list, tuple, dict, str, bytes)):
        return False
    return inspect.isgenerator(x) or (hasattr(x, "__next__") and hasattr(x, "__iter__"))


def _components(value, what):
    """A batch as Keras reads it: x, (x,), (x, y) or (x, y, sample_weight); trailing Nones dropped."""
    parts = list(value) if isinstance(value, (tuple, list)) else [value]
    while parts and parts[-1] is None:
        parts.pop()
    if not 1 <= len(parts) <= 3 or any(p is None for p in parts):
        raise ValueError("%s: a batch must be x, (x, y) or (x, y, sample_weight), got %d parts (%s)" %
                         (what, len(parts), ", ".join(type(p).__name__ for p in parts)))
    return tuple(parts)


def _batch(value, what):
    """The batch as the dataset's element: x alone, or the tuple."""
    parts = _components(value, what)
    return parts[0] if len(parts) == 1 else parts


def _signature(first, what):
    """TensorSpecs from the first batch: its dtypes, dim 0 (the batch) left open."""
    specs = []
    for part in first:
        a = np.asarray(part)
        if a.ndim == 0 or a.dtype == object:
            raise ValueError("%s: batch components must be arrays with a batch dim, got %s %r" %
                             (what, a.dtype, a.shape))
        specs.append(_dataset.TensorSpec((None,) + a.shape[1:], _fw.as_dtype(a.dtype)))
    return specs[0] if len(specs) == 1 else tuple(specs)


def from_python(model, data, what, shuffle=False, seed=0, first_pass=0):
    """(weft.data Dataset, PyDataset or None) for a generator or PyDataset ``data``. A PyDataset
    yields ``data[i]`` for i in range(len) each pass (permuted by (seed, pass) when ``shuffle``) and
    is returned second, for the caller to call its on_epoch_begin / on_epoch_end."""
    where = "Model '%s'.%s" % (_name(model), what)
    if isinstance(data, PyDataset):
        n = data.num_batches
        if n is not None and n <= 0:
            raise ValueError("%s: the %s has no batches (len %d)" % (where, type(data).__name__, n))
        first = _components(data[0], where)
        passes = [first_pass]

        def make():
            k = passes[0]
            passes[0] += 1
            if n is None:  # endless: steps_per_epoch rations it
                i = 0
                while True:
                    yield _batch(data[i], where)
                    i += 1
            order = (np.random.RandomState((seed * 1000003 + k) % 2 ** 32).permutation(n) if shuffle else range(n))
            for i in order:
                yield _batch(data[int(i)], where)
        card = _dataset.INFINITE_CARDINALITY if n is None else n
        return _dataset._generated(make, _signature(first, where), card), data
    it = iter(data)
    try:
        first = _components(next(it), where)
    except StopIteration:
        raise ValueError("%s: the generator yielded no batches" % where) from None
    pending = [first]

    def make():
        # Every pass reads on from where the last stopped: a generator is one stream. (A loop, not
        # `yield from`: closing an abandoned pass must not close the user's generator.)
        while pending:
            yield _batch(pending.pop(), where)
        for value in it:
            yield _batch(value, where)
    return _dataset._generated(make, _signature(first, where), _dataset.UNKNOWN_CARDINALITY), None


def validation_epochs(freq, epochs):
    """Keras' validation_freq as the 1-based epochs to validate after ([] = every epoch)."""
    if isinstance(freq, bool) or not isinstance(freq, (int, list, tuple, range, set)):
        raise ValueError("fit: validation_freq must be an int or a list of epochs, got %r" % (freq,))
    if isinstance(freq, int):
        if freq < 1:
            raise ValueError("fit: validation_freq must be >= 1, got %d" % freq)
        return [] if freq == 1 else [e for e in range(1, int(epochs) + 1) if e % freq == 0] or [0]
    epochs_list = sorted(int(e) for e in freq)
    return epochs_list or [0]  # [0]: no epoch is validated


def batch_size_of(batch_size, where):
    """``batch_size`` as an int, 32 when None (Keras' default); anything but a positive int is an
    error naming it (as tf.data's batch(0) is), never a silent default."""
    if batch_size is None:
        return 32
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise TypeError("%s: batch_size must be a positive int or None, got %r" % (where, batch_size))
    if batch_size <= 0:
        raise ValueError("%s: batch_size must be a positive int or None (32), got %d" % (where, batch_size))
    return int(batch_size)


def weighted_batches(x, y, sample_weight, batch_size):
    """evaluate's arrays with per-example weights, as a dataset of (x, y, sample_weight) batches."""
    if y is None:
        raise ValueError("evaluate needs y with sample_weight")
    x, y = numeric(x, "x"), numeric(y, "y")
    sw = np.asarray(sample_weight, np.float32)
    if sw.ndim == 2 and sw.shape[1] == 1:
        sw = sw[:, 0]
    if sw.shape != (len(x),):
        raise ValueError("evaluate: sample_weight must have one weight per example: shape (%d,), got %s" %
                         (len(x), sw.shape))
    return _dataset.Dataset.from_tensor_slices((x, y, sw)).batch(batch_size_of(batch_size, "evaluate"))


class _EpochHooks(Callback):
    """Calls a PyDataset's on_epoch_begin / on_epoch_end around each training epoch (Keras)."""

    def __init__(self, source):
        super().__init__()
        self._source = source

    def on_epoch_begin(self, epoch, logs=None):
        self._source.on_epoch_begin()

    def on_epoch_end(self, epoch, logs=None):
        self._source.on_epoch_end()


def python_fit_inputs(model, x, validation_data, validation_batch_size, shuffle, seed, initial_epoch):
    """fit's x and validation_data with generators and PyDatasets made datasets, and validation
    arrays batched by ``validation_batch_size``; plus the callbacks that give a PyDataset its
    epoch hooks."""
    hooks = []
    if is_python_data(x):
        x, source = from_python(model, x, "fit", shuffle=shuffle, seed=seed, first_pass=initial_epoch)
        if source is not None:
            hooks.append(_EpochHooks(source))
    if is_python_data(validation_data):
        validation_data, _ = from_python(model, validation_data, "fit (validation_data)")
    elif validation_batch_size is not None and isinstance(validation_data, (tuple, list)) and len(validation_data) == 2:
        if int(validation_batch_size) < 1:
            raise ValueError("fit: validation_batch_size must be >= 1, got %r" % (validation_batch_size,))
        validation_data = _dataset.Dataset.from_tensor_slices(tuple(validation_data)).batch(int(validation_batch_size))
    return x, validation_data, hooks


class DistributedDataset:
    """``strategy.experimental_distribute_dataset(ds)``: iterating it gives this worker's part of
    every global batch (one replica: the element itself; several: a tuple with one per local
    replica); ``model.fit`` takes it as it takes ``ds``."""

    def __init__(self, strategy, dataset):
        if not isinstance(dataset, _dataset.Dataset):
            raise TypeError("experimental_distribute_dataset needs a weft.data.Dataset, got %r" % (dataset,))
        self._strategy = strategy
        self._dataset = dataset

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        from ..data import _structure as st
        ds = self._dataset
        spec = ds.element_spec
        n = len(st.flatten(spec, st.is_spec))
        local = len(self._strategy.devices)
        for comps in ds._ds.distribute(self._strategy._cpp).make_iterator():
            parts = [st.pack(spec, [c.view(_dataset.EagerValue) for c in comps[r * n:(r + 1) * n]], st.is_spec)
                     for r in range(local)]
            yield parts[0] if local == 1 else tuple(parts)
