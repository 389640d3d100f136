"""Numbers as TF and numpy treat them (issue 17, findings 3, 4 and 5): Python ints out of range
for the target dtype are an InvalidArgumentError (a ValueError) naming the value and dtype, never a
wrapped number; shapes are int64 everywhere; NaN propagates through max-like ops; attributes that
size windows or lists are checked. Expected values come from numpy (np.max, np.argmax, ...) and
from the closed form of the shapes asked for."""
import numpy as np
import pytest

import weft
from weft import _weft


def _raises_invalid(match):
    return pytest.raises(weft.errors.InvalidArgumentError, match=match)


# ---- finding 3: Python ints out of range for the target dtype -------------------------------

def test_constant_of_an_int_beyond_int32_is_an_error_naming_value_and_dtype(graph):
    with _raises_invalid(r"1099511627776.*int32"):
        weft.constant(2**40, dtype=weft.int32)
    with _raises_invalid(r"-1.*uint8"):
        weft.constant([3, -1], dtype=weft.uint8)
    with _raises_invalid(r"1180591620717411303424.*int64"):
        weft.constant(2**70)
    assert issubclass(weft.errors.InvalidArgumentError, ValueError)


def test_constant_in_range_and_default_dtypes_are_unchanged(graph, sess):
    assert sess.run(weft.constant(2**31 - 1, dtype=weft.int32)) == 2**31 - 1
    assert sess.run(weft.constant(-2**31, dtype=weft.int32)) == -2**31
    big = weft.constant(2**40)  # no dtype: int64 when int32 cannot hold it (as TF)
    assert big.dtype == weft.int64 and sess.run(big) == 2**40
    assert weft.constant(3).dtype == weft.int32
    np.testing.assert_array_equal(sess.run(weft.constant([1.0, 2.0], dtype=weft.int32)), [1, 2])


def test_floats_that_an_integer_dtype_cannot_hold_are_errors(graph):
    with _raises_invalid(r"1\.5.*not an integer.*int32"):
        weft.constant(1.5, dtype=weft.int32)
    with _raises_invalid(r"nan.*int64"):
        weft.constant(float("nan"), dtype=weft.int64)
    with _raises_invalid(r"out of range for int32"):
        weft.constant(1e12, dtype=weft.int32)


def test_int32_tensor_plus_a_python_int_beyond_int32_is_an_error(graph, sess):
    x = weft.constant([1, 2], dtype=weft.int32)
    with _raises_invalid(r"1099511627776.*int32"):
        x + 2**40
    with _raises_invalid(r"1099511627776.*int32"):
        weft.maximum(x, -2**40)
    np.testing.assert_array_equal(sess.run(x + (2**31 - 3)), [2**31 - 2, 2**31 - 1])


def test_feeding_out_of_range_values_to_an_int32_placeholder_is_an_error(graph, sess):
    p = weft.placeholder(weft.int32, shape=[2], name="p")
    y = weft.identity(p)
    with _raises_invalid(r"feed p:0.*1099511627776.*int32"):
        sess.run(y, feed_dict={p: [2**40, 1]})
    with _raises_invalid(r"feed p:0.*-1099511627776.*int32"):
        sess.run(y, feed_dict={p: np.array([1, -2**40], np.int64)})
    # In-range values convert, from a list or an int64 array (as TF converts feeds).
    np.testing.assert_array_equal(sess.run(y, feed_dict={p: [2**31 - 1, -5]}), [2**31 - 1, -5])
    out = sess.run(y, feed_dict={p: np.array([7, -2**31], np.int64)})
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [7, -2**31])


def test_shapes_are_int64_a_dim_beyond_int32_never_wraps(graph, sess):
    assert weft.fill([2**32 + 3], 1.0).shape == (2**32 + 3,)
    assert weft.fill([2**40], 1.0).shape == (2**40,)
    assert weft.fill([2, 3], 1.0).op.inputs[0].dtype == weft.int32  # the usual case stays int32
    # Running it asks for 4 TiB: a clear error, not an empty tensor.
    with pytest.raises((weft.errors.ResourceExhaustedError, weft.errors.InvalidArgumentError)):
        sess.run(weft.fill([2**40], 1.0))
    with _raises_invalid("2\\^50"):
        weft.fill([2**60], 1.0)
    np.testing.assert_array_equal(sess.run(weft.reshape(weft.constant([1, 2, 3, 4]), [2**0, 4])), [[1, 2, 3, 4]])


def test_checked_array_is_the_one_conversion(graph):
    a = _weft._checked_array(np.array([1, 2], np.int64), weft.int32)
    assert a.dtype == np.int32
    with _raises_invalid(r"2147483648 \(flat index 1\).*int32"):
        _weft._checked_array(np.array([0, 2**31], np.int64), weft.int32)
    with _raises_invalid(r"256.*uint8"):
        _weft._checked_array([1, 256], weft.uint8)
    assert _weft._checked_array(np.array([1.5]), weft.int32)[0] == 1  # numpy arrays keep astype's rounding
    assert _weft._checked_array([True, False], weft.int32).tolist() == [1, 0]


# ---- finding 4: NaN propagates as in TF and numpy --------------------------------------------

def _with_nan_at(base, p):
    v = np.array(base, np.float32)
    v[p] = np.nan
    return v


@pytest.mark.parametrize("p", range(4))
def test_reduce_max_min_and_argmax_propagate_nan_at_every_position(graph, sess, p):
    v = _with_nan_at([1, 3, 2, 3], p)
    got = sess.run([weft.reduce_max(v), weft.reduce_min(v), weft.argmax(v), weft.argmin(v)])
    np.testing.assert_array_equal(got[0], np.max(v))  # nan
    np.testing.assert_array_equal(got[1], np.min(v))
    assert got[2] == np.argmax(v) == p
    assert got[3] == np.argmin(v) == p
    m = np.stack([v, np.arange(4, dtype=np.float32)])
    for axis in (0, 1):
        np.testing.assert_array_equal(sess.run(weft.reduce_max(m, axis=axis)), np.max(m, axis=axis))
        np.testing.assert_array_equal(sess.run(weft.argmax(m, axis=axis)), np.argmax(m, axis=axis))


def test_maximum_minimum_and_relu_propagate_nan(graph, sess):
    a = np.array([np.nan, 1, np.nan, -1], np.float32)
    b = np.array([1, np.nan, np.nan, 5], np.float32)
    np.testing.assert_array_equal(sess.run(weft.maximum(a, b)), np.maximum(a, b))
    np.testing.assert_array_equal(sess.run(weft.minimum(b, a)), np.minimum(b, a))
    np.testing.assert_array_equal(sess.run(weft.nn.relu(a)), [np.nan, 1, np.nan, 0])


@pytest.mark.parametrize("p", range(4))
def test_max_pool2d_propagates_nan_and_its_gradient_is_finite(graph, sess, p):
    x = _with_nan_at([0, 1, 2, 3], p).reshape(1, 2, 2, 1)
    xt = weft.constant(x)
    y = weft.nn.max_pool2d(xt, ksize=2, strides=2)
    np.testing.assert_array_equal(sess.run(y), np.max(x).reshape(1, 1, 1, 1))  # [nan, 1, 2, 3] -> nan
    dx = sess.run(weft.gradients(weft.reduce_sum(y), [xt])[0])
    assert np.isfinite(dx).all() and dx.sum() == 1.0


# ---- finding 5: attributes that size windows and lists ----------------------------------------

def test_conv2d_with_a_huge_dilation_is_an_error_not_a_wrong_result(graph, sess):
    x = np.full((1, 1, 1, 1), 2.0, np.float32)
    f = np.arange(1, 10, dtype=np.float32).reshape(3, 3, 1, 1)
    with _raises_invalid("dilations"):
        weft.nn.conv2d(x, f, padding="SAME", dilations=2**62)
    # SAME over a 1x1 input keeps only the centre tap in bounds: x * f[1, 1] = 10.
    y = weft.nn.conv2d(x, f, padding="SAME", dilations=2**20)
    np.testing.assert_array_equal(sess.run(y), [[[[10.0]]]])


def test_split_into_ten_million_parts_is_a_prompt_error(graph):
    x = weft.constant(np.zeros([4], np.float32))
    with _raises_invalid("num_split"):
        weft.raw_ops.Split(x, axis=0, num_split=10**7)
