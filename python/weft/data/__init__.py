"""weft.data: tf.data's input pipelines over weft's C++ Dataset (data/dataset.h).

    import weft as tf
    ds = (tf.data.Dataset.from_tensor_slices((x, y))
            .shuffle(10000).map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y))
            .batch(64).prefetch(tf.data.AUTOTUNE))
    model.fit(ds, epochs=3)

See docs/python.md ("weft.data").
"""
import types as _types

from .dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, EagerValue,  # noqa: F401
                      TensorSpec)
from ._structure import DatasetSpec, TensorShape  # noqa: F401
from ._host import TextLineDataset  # noqa: F401
from .options import AutoShardPolicy, Options  # noqa: F401
from ._graph_iterator import Iterator, make_initializable_iterator, make_one_shot_iterator  # noqa: F401
from . import _csv, _sources, _transform
from ._csv import CsvDataset, make_csv_dataset  # noqa: F401
from ..io._tfrecord import DatasetWriter as _DatasetWriter, TFRecordDataset  # noqa: F401

# More Dataset methods (data/_transform.py, data/_sources.py): Python streams that hand numbers
# over to the C++ pipeline; padded_batch of numbers is a C++ stage.
for _name in ("padded_batch", "window", "flat_map", "interleave", "scan", "take_while", "unique", "group_by_window",
              "bucket_by_sequence_length", "ignore_errors", "rejection_resample"):
    setattr(Dataset, _name, getattr(_transform, _name))
Dataset.get_single_element = _sources.get_single_element
Dataset.save = _sources.save
for _name in ("random", "counter", "sample_from_datasets", "choose_from_datasets", "list_files", "load"):
    setattr(Dataset, _name, staticmethod(getattr(_sources, _name)))


def _transformation(fn):
    """tf.data.experimental's form of a method: ``f(args)`` gives a function for ``ds.apply``."""
    return lambda *args, **kwargs: (lambda ds: fn(ds, *args, **kwargs))


# tf.data.experimental's names that programs still use.
experimental = _types.SimpleNamespace(
    AUTOTUNE=AUTOTUNE, AutoShardPolicy=AutoShardPolicy, INFINITE_CARDINALITY=INFINITE_CARDINALITY,
    UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY, cardinality=lambda ds: ds.cardinality(),
    assert_cardinality=_transformation(_transform.assert_cardinality),
    scan=_transformation(_transform.scan), take_while=_transformation(_transform.take_while),
    unique=_transformation(_transform.unique), group_by_window=_transformation(_transform.group_by_window),
    bucket_by_sequence_length=_transformation(_transform.bucket_by_sequence_length),
    ignore_errors=_transformation(_transform.ignore_errors),
    rejection_resample=_transformation(_transform.rejection_resample),
    get_single_element=_sources.get_single_element, sample_from_datasets=_sources.sample_from_datasets,
    choose_from_datasets=_sources.choose_from_datasets, save=_sources.save, load=_sources.load,
    Counter=_sources.counter, CsvDataset=CsvDataset, make_csv_dataset=make_csv_dataset,
    TFRecordWriter=_DatasetWriter)

__all__ = ["Dataset", "TextLineDataset", "TFRecordDataset", "DatasetSpec",
           "Options", "AutoShardPolicy", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "experimental", "Iterator", "make_one_shot_iterator", "make_initializable_iterator"]

# TF1's Dataset methods for graph-mode iterators.
Dataset.make_one_shot_iterator = make_one_shot_iterator
Dataset.make_initializable_iterator = make_initializable_iterator
