"""CSV: ``tf.io.decode_csv``, ``tf.data.experimental.CsvDataset`` and ``make_csv_dataset``.

    a, b, c = tf.io.decode_csv(["1,2.5,x"], record_defaults=[[0], [0.0], [""]])
    ds = tf.data.experimental.CsvDataset("a.csv", [tf.float32, [0]], header=True)     # (float32, int32)
    ds = tf.data.experimental.make_csv_dataset("train*.csv", batch_size=32, label_name="survived",
                                               num_epochs=1, shuffle=False)          # (OrderedDict, label)

Fields follow RFC 4180 as TF's CSV ops read them: ``field_delim`` separates fields; with
``use_quote_delim`` a field may be quoted ("a,b" and "" for a quote). An empty field or one equal
to ``na_value`` takes its column's default; a column whose default is empty (or a dtype) is
required. Column types: float32, float64, int32, int64, string. Errors use TF's words and name
the field and record.
"""
import collections
import csv
import glob
import os

import numpy as np

from .. import _text_values as _tv
from .. import framework as _fw
from . import _host
from . import _structure as _st
from . import dataset as _dataset

_TYPES = ("float32", "float64", "int32", "int64", "string")


def _invalid(message):
    return _fw._weft_error("InvalidArgument", message)


def _column(default, i, what):
    """(dtype, default value or None when required) of one record_defaults entry."""
    if isinstance(default, (_fw.DType, _tv.StringDType)) or (isinstance(default, str) and default in _TYPES):
        return _st._as_dtype(default), None
    if isinstance(default, _fw.Tensor):
        dtype = default.dtype
        default = default.numpy()
    else:
        dtype = None
    if _tv.is_text(default) or (isinstance(default, (list, tuple)) and default and _tv.is_text(default[0])):
        a, dtype = _tv.as_bytes_array(default).reshape(-1), _tv.string
    else:
        a = np.asarray(default).reshape(-1)
        if dtype is None:
            dtype = _tv.string if a.dtype == object else \
                _fw.float32 if a.dtype == np.float64 and not isinstance(default, np.ndarray) else \
                _fw.int32 if a.dtype == np.int64 and not isinstance(default, np.ndarray) else _fw.as_dtype(a.dtype)
    if str(dtype) not in _TYPES:
        raise TypeError("%s: record_defaults[%d] has dtype %s; CSV columns are %s" % (what, i, dtype,
                                                                                     ", ".join(_TYPES)))
    if a.size > 1:
        raise ValueError("%s: record_defaults[%d] must be a scalar default or empty (required), got %d values" %
                         (what, i, a.size))
    return dtype, (a[0] if a.size else None)


def _convert(text, dtype, default, field, record, na_value):
    if text == "" or (na_value and text == na_value):
        if default is None:
            raise _invalid("Field %d is required but missing in record %d!" % (field, record))
        return default
    name = str(dtype)
    try:
        if name == "string":
            return text.encode("utf-8")
        if name.startswith("int"):
            v = int(text, 10)
            bits = 32 if name == "int32" else 64
            if not -2 ** (bits - 1) <= v < 2 ** (bits - 1):
                raise ValueError
            return v
        return float(text)
    except ValueError:
        raise _invalid("Field %d in record %d is not a valid %s: %s" % (field, record, name, text)) from None


def _split(line, delim, quote, record):
    if not quote:
        return line.split(delim)
    try:
        rows = list(csv.reader([line], delimiter=delim, quotechar='"', doublequote=True, strict=True))
    except csv.Error as e:
        raise _invalid("Quoted field has to end with quote followed by delim or end in record %d (%s): %r" %
                       (record, e, line)) from None
    return rows[0] if rows else [""]


def _row(line, record, columns, delim, quote, na_value, select_cols, what, exclude_cols=None):
    """One line -> its row of converted fields (one per column of ``columns``)."""
    fields = _split(line, delim, quote, record)
    if exclude_cols:
        fields = [f for k, f in enumerate(fields) if k not in exclude_cols]
    if select_cols is not None:
        if select_cols and select_cols[-1] >= len(fields):
            raise _invalid("%s: Expect %d fields but have %d in record %d" % (what, select_cols[-1] + 1,
                                                                              len(fields), record))
        fields = [fields[c] for c in select_cols]
    elif len(fields) != len(columns):
        raise _invalid("Expect %d fields but have %d in record %d" % (len(columns), len(fields), record))
    return [_convert(t, d, v, k, record, na_value) for k, (t, (d, v)) in enumerate(zip(fields, columns))]


def _array(values, dtype):
    if dtype == _tv.string:
        return _tv.as_bytes_array(values)
    return np.asarray(values, dtype.as_numpy_dtype)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """tf.io.decode_csv: each string of ``records`` parsed into one value per column; returns a
    list of values (``.numpy()``) of ``records``' shape, one per record_defaults entry."""
    what = "decode_csv"
    columns = [_column(d, i, what) for i, d in enumerate(record_defaults)]
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if select_cols != sorted(set(select_cols)) or len(select_cols) != len(columns):
            raise ValueError("decode_csv: select_cols must be increasing and as long as record_defaults")
    a = records.view(np.ndarray) if isinstance(records, np.ndarray) else _tv.as_bytes_array(records, what)
    lines = [_tv.decode(b) for b in a.reshape(-1)]
    rows = [_row(line, k, columns, field_delim, use_quote_delim, na_value, select_cols, what)
            for k, line in enumerate(lines)]
    return [_tv.wrap(_array([r[k] for r in rows], d).reshape(a.shape)) for k, (d, _) in enumerate(columns)]


def _lines(paths, header, compression_type):
    import gzip
    for p in paths:
        opener = gzip.open if compression_type == "GZIP" else open
        with opener(p, "rt", encoding="utf-8", newline="") as f:
            for k, line in enumerate(f):
                if k == 0 and header:
                    continue
                line = line.rstrip("\r\n")
                if line:  # blank lines hold no record
                    yield line


def _paths(filenames, what):
    if isinstance(filenames, _dataset.Dataset):
        filenames = list(filenames.as_numpy_iterator())
    paths = [_tv.decode(b) for b in _tv.as_bytes_array(filenames, what + ": filenames").reshape(-1)]
    for p in paths:
        if not os.path.isfile(p):
            raise _fw._weft_error("NotFound", "%s: %s; No such file or directory" % (what, p))
    return paths


class CsvDataset(_host.HostDataset):
    """tf.data.experimental.CsvDataset: the records of CSV files, each a tuple of scalars (one per
    ``record_defaults`` entry: a dtype or an empty list for a required column, ``[default]``
    otherwise). ``header`` skips each file's first line; ``select_cols`` / ``exclude_cols`` pick
    columns by index."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None, name=None):
        what = "CsvDataset"
        paths = _paths(filenames, what)
        columns = [_column(d, i, what) for i, d in enumerate(record_defaults)]
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("CsvDataset: give select_cols or exclude_cols, not both")
        if select_cols is not None:
            select_cols = [int(c) for c in select_cols]
            if select_cols != sorted(set(select_cols)) or len(select_cols) != len(columns):
                raise ValueError("CsvDataset: select_cols must be increasing, without repeats, and as long as "
                                 "record_defaults (%d), got %s" % (len(columns), select_cols))
        kind = "" if compression_type in (None, "") else compression_type
        if kind not in ("", "GZIP"):
            raise ValueError("CsvDataset: compression_type must be None, '' or 'GZIP', got %r" % (compression_type,))

        excluded = None if exclude_cols is None else {int(c) for c in exclude_cols}

        def convert(numbered):
            record, line = numbered
            row = _row(line, record, columns, field_delim, use_quote_delim, na_value, select_cols, what, excluded)
            return [_array(v, d) for v, (d, _) in zip(row, columns)]

        def lines():
            return enumerate(_lines(paths, header, kind))
        spec = tuple(_st.TensorSpec((), d) for d, _ in columns)
        super().__init__(lambda: (convert(n) for n in lines()), spec, _host.UNKNOWN)
        self._per_element = (lines, convert)


def _infer(values):
    """The column type TF's make_csv_dataset infers: int32, int64, float32, float64, string."""
    kind = 0
    for v in values:
        if v == "":
            continue
        for k, test in enumerate((_is_int32, _is_int64, _is_float32, _is_float64)):
            if k >= kind and test(v):
                kind = max(kind, k)
                break
        else:
            return _tv.string
    return (_fw.int32, _fw.int64, _fw.float32, _fw.float64)[kind]


def _is_int32(v):
    return _is_int64(v) and -2 ** 31 <= int(v) < 2 ** 31


def _is_int64(v):
    try:
        return -2 ** 63 <= int(v, 10) < 2 ** 63
    except ValueError:
        return False


def _is_float32(v):
    try:
        return abs(float(v)) <= np.finfo(np.float32).max or not np.isfinite(float(v))
    except ValueError:
        return False


def _is_float64(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """tf.data.experimental.make_csv_dataset: batches of ``(features, label)`` (an OrderedDict by
    column name, in file order) or of ``features`` without ``label_name``; column types inferred
    from the first ``num_rows_for_inference`` rows unless ``column_defaults``; files shuffled and
    records shuffled by ``shuffle_buffer_size`` when ``shuffle``; ``num_epochs`` None repeats."""
    what = "make_csv_dataset"
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
    paths = sorted(p for pat in patterns for p in glob.glob(_tv.decode(pat) if isinstance(pat, bytes) else pat))
    if not paths:
        raise ValueError("No files match `file_pattern` %s." % (file_pattern,))
    with open(paths[0], encoding=encoding, newline="") as f:
        first = f.readline().rstrip("\r\n")
        sample = [f.readline().rstrip("\r\n") for _ in range(num_rows_for_inference)]
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header=True`; cannot infer column names otherwise.")
        column_names = _split(first, field_delim, use_quote_delim, 0)
    else:
        column_names = list(column_names)
        if header is False:
            sample = [first] + sample[:-1]
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    if select_columns is not None:
        idx = sorted({column_names.index(c) if isinstance(c, str) else int(c) for c in select_columns
                      if not isinstance(c, str) or c in column_names})
        if len(idx) != len(select_columns):
            raise ValueError("select_columns %s: a name is not a column (%s)" % (list(select_columns), column_names))
    else:
        idx = list(range(len(column_names)))
    names = [column_names[i] for i in idx]
    if label_name is not None and label_name not in names:
        raise ValueError("`label_name` provided must be one of the columns: %s. Received: %s." % (names, label_name))
    if column_defaults is None:
        rows = [_split(s, field_delim, use_quote_delim, k) for k, s in enumerate(sample) if s]
        column_defaults = [_infer([r[i] if i < len(r) else "" for r in rows]) for i in idx]
        column_defaults = [[""] if d == _tv.string else [np.zeros((), d.as_numpy_dtype)] for d in column_defaults]
        column_defaults = [[np.asarray(d[0]).view(np.ndarray)] if not isinstance(d[0], str) else d
                           for d in column_defaults]
    elif len(column_defaults) != len(names):
        raise ValueError("column_defaults has %d entries, the selected columns are %d" % (len(column_defaults),
                                                                                         len(names)))
    if shuffle and shuffle_seed is not None:
        paths = [paths[i] for i in np.random.RandomState(shuffle_seed).permutation(len(paths))]
    ds = CsvDataset(paths, [_typed_default(d) for d in column_defaults], compression_type=compression_type,
                    header=header, field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                    select_cols=idx)
    if ignore_errors:
        ds = ds.ignore_errors()
    if shuffle:
        ds = ds.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size)

    def to_dict(*columns):
        features = collections.OrderedDict(zip(names, columns))
        if label_name is None:
            return features
        label = features.pop(label_name)
        return features, label
    return _structured(ds, to_dict)


def _typed_default(d):
    """A column_defaults entry with numpy scalars kept at their dtype (an int64 column stays int64)."""
    if isinstance(d, (list, tuple)) and d and isinstance(d[0], np.ndarray):
        return d[0].reshape(1)
    return d


def _structured(ds, fn):
    """``ds`` with each element restructured by ``fn`` (no values change): a Python regrouping,
    on either pipeline."""
    flat = ds._flat_spec()
    spec = fn(*flat)
    is_leaf = lambda x: isinstance(x, _st.TensorSpec)  # noqa: E731
    out_flat = _st.flatten(spec, is_leaf)
    order = [next(i for i, s in enumerate(flat) if s is t) for t in out_flat]
    make = _host.as_host(ds)._make
    return _host.HostDataset(lambda: ([e[i] for i in order] for e in make()), spec, int(ds.cardinality()), ds._opts,
                             ds._batch_size)
