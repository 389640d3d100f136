"""TF1 top-level names in weft.compat.v1: aliases of functions weft keeps under tf.math / tf.linalg
/ tf.io / tf.strings (``tf.cumprod``, ``tf.arg_max``, ``tf.segment_sum``, ``tf.read_file``), the
variable scatter ops (``tf.scatter_update`` / ``scatter_add`` / ``scatter_max`` / ``scatter_nd_*``),
``tf.py_func`` and TF1's switches. Expected values: TF1's documented semantics, by hand."""
import numpy as np
import pytest

import weft as weft_pkg
import weft.compat.v1 as tf


@pytest.fixture
def v1(monkeypatch):
    monkeypatch.setattr(weft_pkg._values, "graph_mode", [True])
    with tf.Graph().as_default() as g:
        yield g


def test_aliases_are_the_functions_weft_has(v1):
    assert tf.cumprod is weft_pkg.math.cumprod and tf.arg_max is tf.argmax
    assert tf.matrix_band_part is weft_pkg.linalg.band_part and tf.div_no_nan is weft_pkg.math.divide_no_nan
    assert tf.unsorted_segment_sum is weft_pkg.math.unsorted_segment_sum
    assert "cumprod" in dir(tf)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        tf.no_such_name  # noqa: B018


def test_scatter_ops_on_variables(v1):
    v = tf.Variable(np.zeros((4, 2), np.float32))
    upd = tf.scatter_update(v, [1, 3], [[1., 2.], [3., 4.]])
    add = tf.scatter_add(v, [0, 0], [[1., 1.], [2., 2.]])  # repeated indices add up
    sub = tf.scatter_sub(v, [3], [[1., 1.]])
    mx = tf.scatter_max(v, [2], [[5., -1.]])
    nd = tf.scatter_nd_update(v, [[0, 1]], [9.])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for op in (upd, add, sub, mx):
            sess.run(op)
        np.testing.assert_array_equal(sess.run(v), [[3, 3], [1, 2], [5, 0], [2, 3]])
        np.testing.assert_array_equal(sess.run(nd), [[3, 9], [1, 2], [5, 0], [2, 3]])
        sess.run(tf.scatter_mul(v, [1], [[2., 2.]]))
        np.testing.assert_array_equal(sess.run(tf.scatter_div(v, [1], [[4., 1.]])), [[3, 9], [0.5, 4], [5, 0], [2, 3]])


def test_switches_and_small_names(v1):
    tf.enable_resource_variables()
    tf.disable_control_flow_v2()
    assert tf.resource_variables_enabled() and tf.dimension_value(tf.Dimension(3)) == 3
    assert tf.dimension_value(None) is None
    x = tf.constant([1, 2])
    with tf.Session() as sess:
        assert sess.run(tf.to_double(x)).dtype == np.float64
        np.testing.assert_array_equal(sess.run(tf.cumprod([2., 3., 4.])), [2., 6., 24.])
