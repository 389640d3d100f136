"""numpy <-> weft tensors: every dtype round-trips, zero-copy where dtype, layout and alignment allow."""
import os

import numpy as np
import pytest

import weft
from weft import _weft

from conftest import aligned_empty

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16]


def sample(dtype, shape=(3, 4)):
    rng = np.random.default_rng(0)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_roundtrip_every_dtype(dtype):
    a = aligned_empty((3, 4), dtype)
    a[...] = sample(dtype)
    assert _weft._tensor_shares_input(a)  # aligned and contiguous: the tensor uses the array's memory
    b = _weft._tensor_roundtrip(a)
    assert b.dtype == a.dtype and b.shape == a.shape
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_session_feeds_and_fetches_every_dtype(graph, dtype):
    x = weft.placeholder(weft.as_dtype(dtype), shape=(None, 4), name="x")
    y = weft.identity(x)
    a = sample(dtype)
    with weft.Session(graph) as sess:
        out = sess.run(y, feed_dict={x: a})
    assert out.dtype == a.dtype
    np.testing.assert_array_equal(out, a)
    assert not np.shares_memory(out, a)  # a fed array passed through comes back as a copy


def test_unaligned_and_strided_inputs_are_copied():
    a = aligned_empty((5,), np.float32, offset=4)
    a[...] = np.arange(5)
    assert not _weft._tensor_shares_input(a)
    np.testing.assert_array_equal(_weft._tensor_roundtrip(a), a)
    m = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2]  # not contiguous
    assert not _weft._tensor_shares_input(m)
    np.testing.assert_array_equal(_weft._tensor_roundtrip(m), m)


def test_computed_outputs_are_not_copied(graph):
    x = weft.placeholder(weft.float32, shape=(None,))
    y = x * 2.0
    with weft.Session(graph) as sess:
        out = sess.run(y, feed_dict={x: np.arange(1000, dtype=np.float32)})
    assert not out.flags.owndata and out.base is not None  # a view over the tensor's buffer
    assert out.flags.writeable
    out[0] = 42  # ours alone: writing is fine
    np.testing.assert_array_equal(out[1:4], [2, 4, 6])


def test_variable_values_are_snapshots(graph):
    v = weft.Variable(np.zeros(3, np.float32), name="v")
    inc = v.assign_add(np.ones(3, np.float32))
    with weft.Session(graph) as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(inc)
        after = sess.run(v)
    np.testing.assert_array_equal(before, [0, 0, 0])  # not changed by the later update
    np.testing.assert_array_equal(after, [1, 1, 1])


def test_python_values_follow_the_placeholder_dtype(graph, sess):
    x = weft.placeholder(weft.int64, shape=(3,))
    out = sess.run(x + 1, feed_dict={x: [1, 2, 3]})
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [2, 3, 4])


def test_dtype_objects():
    assert weft.as_dtype("float32") == weft.float32
    assert weft.as_dtype(np.float64) == weft.float64
    assert weft.as_dtype(np.dtype("uint8")) == weft.uint8
    assert weft.float32.as_numpy_dtype == np.float32
    assert str(weft.int64) == "int64"
    with pytest.raises(weft.errors.InvalidArgumentError, match="complex64"):
        _weft._tensor_roundtrip(np.zeros(3, np.complex64))


@pytest.mark.skipif(os.environ.get("WEFT_NUMPY_ALLOCATOR") == "0", reason="the aligned allocator is switched off")
def test_arrays_made_after_import_are_aligned_and_shared():
    # weft installs a 64-byte-aligned numpy allocator (NEP 49), so ordinary arrays are fed in place.
    for n in (1, 100, 100000):
        a = np.ones(n, np.float32)
        assert a.ctypes.data % 64 == 0
        assert _weft._tensor_shares_input(a)
    b = np.arange(10.0)
    b.resize(5000, refcheck=False)  # realloc keeps the alignment and the values
    assert b.ctypes.data % 64 == 0 and b[9] == 9.0


def test_feeding_an_array_does_not_copy_it(graph, sess):
    # A tensor over the fed array: the Reshape output shares the buffer, the result is a copy.
    x = weft.placeholder(weft.float32, shape=(None,))
    a = np.arange(6, dtype=np.float32)
    out = sess.run(weft.reshape(x, [2, 3]), feed_dict={x: a})
    np.testing.assert_array_equal(out, a.reshape(2, 3))
    assert not np.shares_memory(out, a)
