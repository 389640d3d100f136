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
from ._structure import TensorShape  # noqa: F401
from ._host import TextLineDataset  # noqa: F401
from .options import AutoShardPolicy, Options  # noqa: F401
from ._graph_iterator import Iterator, make_initializable_iterator, make_one_shot_iterator  # noqa: F401

# tf.data.experimental's names that programs still use.
experimental = _types.SimpleNamespace(AUTOTUNE=AUTOTUNE, AutoShardPolicy=AutoShardPolicy,
                                      INFINITE_CARDINALITY=INFINITE_CARDINALITY,
                                      UNKNOWN_CARDINALITY=UNKNOWN_CARDINALITY,
                                      cardinality=lambda ds: ds.cardinality())

__all__ = ["Dataset", "TextLineDataset", "Options", "AutoShardPolicy", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY", "experimental", "Iterator", "make_one_shot_iterator", "make_initializable_iterator"]

# TF1's Dataset methods for graph-mode iterators.
Dataset.make_one_shot_iterator = make_one_shot_iterator
Dataset.make_initializable_iterator = make_initializable_iterator
