"""tf.data's sources and combinators made in Python: ``Dataset.random``, ``Dataset.counter``,
``sample_from_datasets``, ``choose_from_datasets``, ``list_files``, ``save`` / ``load``.

    mixed = tf.data.Dataset.sample_from_datasets([cats, dogs], weights=[0.7, 0.3], seed=1)
    ds.save("/tmp/ds");  tf.data.Dataset.load("/tmp/ds")         # same elements, same element_spec

All give host datasets (data/_host.py): numeric ones hand over to the C++ pipeline for any later
stage and for ``model.fit``. Random draws use numpy's generator seeded from ``seed``: seeded runs
repeat, but the values are not TensorFlow's.

``save`` writes weft's own format, not TF's snapshot format: a directory with
``dataset_spec.json`` (the element structure, dtypes and shapes, the cardinality) and
``shard_<k>.tfrecord`` files (data/_tfrecord framing), one record per element holding its
components as serialized TensorProtos (tf.io.serialize_tensor), each length-prefixed.
"""
import glob
import json
import os

import numpy as np

from .. import _events
from .. import _text_values as _tv
from .. import framework as _fw
from . import _host
from . import _structure as _st
from . import dataset as _dataset

INFINITE, UNKNOWN = _host.INFINITE, _host.UNKNOWN


def _seed(seed):
    return _dataset._unseeded_shuffle_seed() if seed is None else int(seed) & (2 ** 64 - 1)


def random(seed=None, rerandomize_each_iteration=None, name=None):
    """Dataset.random: an infinite stream of int64 scalars, uniform over [0, 2**63)."""
    base, passes = _seed(seed), [0]

    def elements():
        rng = np.random.default_rng([base, passes[0]])
        if rerandomize_each_iteration:
            passes[0] += 1
        while True:
            for v in rng.integers(0, 2 ** 63, size=256, dtype=np.int64):
                yield [np.asarray(v)]
    return _host.HostDataset(elements, _st.TensorSpec((), _fw.int64), INFINITE)


def counter(start=0, step=1, dtype=_fw.int64, name=None):
    """Dataset.counter / tf.data.experimental.Counter: start, start + step, ... forever."""
    dtype = _fw.as_dtype(dtype)
    np_dtype = dtype.as_numpy_dtype

    def elements():
        v = int(start)
        while True:
            yield [np.asarray(v, np_dtype)]
            v += int(step)
    return _host.HostDataset(elements, _st.TensorSpec((), dtype), INFINITE)


def _common_spec(datasets, what):
    """The element spec of all ``datasets`` (one structure and dtypes; differing dims None)."""
    out = datasets[0]
    for d in datasets[1:]:
        try:
            spec = _dataset._concatenated_spec(out, d)
        except TypeError:
            raise TypeError("%s: all datasets must have one element structure and dtypes, got %r and %r" %
                            (what, datasets[0].element_spec, d.element_spec)) from None
        out = _host.HostDataset(None, spec, 0)
    return out.element_spec


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """Each element from ``datasets[i]`` with i drawn with probability ``weights[i]`` (uniform
    when None); an exhausted dataset leaves the draw (the rest renormalized) unless
    ``stop_on_empty_dataset``, which ends the stream there."""
    what = "sample_from_datasets"
    datasets = list(datasets)
    if not datasets:
        raise ValueError("%s: datasets must be a non-empty list" % what)
    n = len(datasets)
    w = np.full(n, 1.0 / n) if weights is None else np.asarray(
        weights.numpy() if hasattr(weights, "numpy") else weights, np.float64).reshape(-1)
    if w.shape != (n,) or (w < 0).any() or not w.sum() > 0:
        raise ValueError("%s: weights must be %d non-negative numbers with a positive sum, got %s" % (what, n, w))
    spec = _common_spec(datasets, what)
    makes = [_host.as_host(d)._make for d in datasets]
    base, passes = _seed(seed), [0]

    def elements():
        rng = np.random.default_rng([base, passes[0]])
        if rerandomize_each_iteration:  # TF: the same draws every pass unless asked
            passes[0] += 1
        its = [m() for m in makes]
        live = w.copy()
        while live.sum() > 0:
            i = int(rng.choice(n, p=live / live.sum()))
            e = next(its[i], None)
            if e is not None:
                yield e
            elif stop_on_empty_dataset:
                return
            else:
                live[i] = 0
    cards = [int(d.cardinality()) for d in datasets]
    card = INFINITE if INFINITE in cards else UNKNOWN  # TF's rule (the infinite one may be drawn forever)
    return _host.HostDataset(elements, spec, card, datasets[0]._opts)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """Element k from ``datasets[choice_k]`` (``choice_dataset``: int64 scalars). An exhausted
    chosen dataset ends the stream when ``stop_on_empty_dataset``, else is skipped; a choice
    outside [0, len(datasets)) is InvalidArgumentError."""
    what = "choose_from_datasets"
    datasets = list(datasets)
    if not datasets:
        raise ValueError("%s: datasets must be a non-empty list" % what)
    cs = choice_dataset.element_spec
    if not isinstance(cs, _st.TensorSpec) or cs.dtype != _fw.int64 or cs.shape != ():
        raise TypeError("%s: choice_dataset must hold int64 scalars, got %r" % (what, cs))
    spec = _common_spec(datasets, what)
    makes = [_host.as_host(d)._make for d in datasets]
    choices = _host.as_host(choice_dataset)._make

    def elements():
        its = [m() for m in makes]
        done = [False] * len(its)
        for c in choices():
            i = int(c[0])
            if not 0 <= i < len(its):
                raise _fw._weft_error("InvalidArgument", "%s: Selector index out of range: %d (there are %d "
                                      "datasets)" % (what, i, len(its)))
            e = None if done[i] else next(its[i], None)
            if e is None:
                done[i] = True
                if stop_on_empty_dataset:
                    return
                continue
            yield e
    return _host.HostDataset(elements, spec, UNKNOWN, datasets[0]._opts)


def list_files(file_pattern, shuffle=None, seed=None, name=None):
    """Dataset.list_files: the paths matching ``file_pattern`` (a glob, or a list of them) as
    strings, sorted, shuffled unless ``shuffle=False``; no match is InvalidArgumentError."""
    patterns = _tv.as_bytes_array(file_pattern, "list_files").reshape(-1)
    paths = sorted({p for pat in patterns for p in glob.glob(_tv.decode(pat))})
    if not paths:
        raise _fw._weft_error("InvalidArgument", "Expected 'tf.Tensor(False, shape=(), dtype=bool)' to be true. "
                              "Summarized data: b'No files matched pattern: %s'" %
                              ", ".join(_tv.decode(p) for p in patterns))
    ds = _host.from_tensor_slices(np.array([p.encode("utf-8") for p in paths], dtype=object))
    return ds.shuffle(len(paths), seed=seed) if shuffle is None or shuffle else ds


def get_single_element(ds):
    """The one element of ``ds`` (InvalidArgumentError when it has none or more)."""
    it = iter(ds)
    first = next(it, None)
    if first is None:
        raise _fw._weft_error("InvalidArgument", "Dataset was empty.")
    if next(it, None) is not None:
        raise _fw._weft_error("InvalidArgument", "Dataset had more than one element.")
    return first


# ---- save / load -------------------------------------------------------------------------------------
def _spec_json(spec):
    if isinstance(spec, _st.DatasetSpec):
        raise TypeError("Dataset.save: elements that are datasets (from window) cannot be saved")
    if isinstance(spec, _st.TensorSpec):
        return {"shape": None if spec.shape is None else list(spec.shape), "dtype": str(spec.dtype)}
    if isinstance(spec, dict):
        return {"dict": [[k, _spec_json(spec[k])] for k in spec]}
    return {"tuple": [_spec_json(s) for s in spec]}


def _spec_from_json(j):
    if "dict" in j:
        return {k: _spec_from_json(v) for k, v in j["dict"]}
    if "tuple" in j:
        return tuple(_spec_from_json(v) for v in j["tuple"])
    return _st.TensorSpec(j["shape"], j["dtype"])


def save(ds, path, compression=None, shard_func=None, checkpoint_args=None):
    """Writes ``ds``'s elements under the directory ``path`` (see the module doc)."""
    from ..io import _tfrecord, _wire
    if shard_func is not None or checkpoint_args is not None:
        raise NotImplementedError("Dataset.save: shard_func and checkpoint_args are not supported by weft")
    os.makedirs(path, exist_ok=True)
    count = 0
    with _tfrecord.TFRecordWriter(os.path.join(path, "shard_0.tfrecord"), options=compression) as w:
        for element in _host.as_host(ds)._make():
            w.write(b"".join(_events.field_bytes(1, _wire.serialize_tensor(c).item()) for c in element))
            count += 1
    meta = {"format": "weft-dataset-1", "element_spec": _spec_json(ds.element_spec), "cardinality": count,
            "compression": compression or ""}
    with open(os.path.join(path, "dataset_spec.json"), "w") as f:
        json.dump(meta, f)


def load(path, element_spec=None, compression=None, reader_func=None):
    """The dataset ``save`` wrote under ``path``; ``element_spec``, when given, must match."""
    from ..io import _tfrecord, _wire
    meta_path = os.path.join(path, "dataset_spec.json")
    if not os.path.isfile(meta_path):
        raise _fw._weft_error("NotFound", "Dataset.load: %s has no dataset_spec.json: not a dataset saved by "
                              "weft's Dataset.save" % path)
    with open(meta_path) as f:
        meta = json.load(f)
    spec = _spec_from_json(meta["element_spec"])
    if element_spec is not None and _st.flatten(element_spec, _st.is_spec) != _st.flatten(spec, _st.is_spec):
        raise ValueError("Dataset.load: element_spec %r does not match the saved %r" % (element_spec, spec))
    flat = _st.flatten(spec, _st.is_spec)
    kind = compression if compression is not None else meta.get("compression", "")
    files = sorted(glob.glob(os.path.join(path, "shard_*.tfrecord")))

    def elements():
        for p in files:
            for record in _tfrecord.records(p, kind):
                parts = [v for _, _, v in _wire.fields(record, "Dataset.load element")]
                if len(parts) != len(flat):
                    raise _fw._weft_error("DataLoss", "Dataset.load: %s: an element has %d components, the spec %d" %
                                          (p, len(parts), len(flat)))
                yield [_wire.parse_tensor(b, s.dtype).view(np.ndarray) for b, s in zip(parts, flat)]
    return _host.HostDataset(elements, spec, int(meta["cardinality"]))
