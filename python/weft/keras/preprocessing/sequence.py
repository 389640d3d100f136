"""``keras.preprocessing.sequence``: Keras 2's home of pad_sequences and TimeseriesGenerator-era
helpers (the same functions as keras.utils)."""
from .._sequences import pad_sequences, timeseries_dataset_from_array  # noqa: F401

__all__ = ["pad_sequences", "timeseries_dataset_from_array"]
