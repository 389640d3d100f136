"""``tf.test.TestCase``: unittest.TestCase with TensorFlow's assertions over tensors, arrays and
nested structures of them, ``evaluate``, ``session()`` / ``cached_session()`` and a temporary
directory; ``tf.test.main`` runs unittest's main."""
import contextlib
import os
import tempfile
import unittest

import numpy as np

from . import framework as _fw


def _value(x):
    """A tensor's value (its eager value, or run in the default session), anything else as numpy."""
    if isinstance(x, _fw.Tensor):
        from .session import _session_stack
        sess = _session_stack[-1] if _session_stack and _session_stack[-1].graph is x.graph else None
        return np.asarray(sess.run(x) if sess is not None else x.numpy())
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        return np.asarray(x.numpy())
    return np.asarray(x)


class TestCase(unittest.TestCase):
    """Assertions as TF's (assertAllClose with rtol=1e-6 / atol=1e-6 by default, nested
    lists / tuples / dicts compared leaf by leaf)."""

    def evaluate(self, tensors):
        """The numpy value(s) of a tensor or a nested structure of them."""
        from . import nest
        return nest.map_structure(_value, tensors)

    @contextlib.contextmanager
    def session(self, graph=None, config=None, use_gpu=True, force_gpu=False):
        from .session import Session
        g = graph if graph is not None else _fw.get_default_graph()
        with g.as_default(), Session(g) as sess:
            yield sess

    cached_session = session

    def get_temp_dir(self):
        d = getattr(self, "_weft_tmp", None)
        if d is None:
            d = self._weft_tmp = tempfile.mkdtemp(prefix="weft_test_")
        return d

    def _nested(self, a, b, check, path="value"):
        if isinstance(a, dict) and isinstance(b, dict):
            self.assertEqual(sorted(a), sorted(b), "%s: keys differ" % path)
            for k in a:
                self._nested(a[k], b[k], check, "%s[%r]" % (path, k))
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and not (
                np.asarray(_value(a[0]) if a else 0).dtype == object):
            self.assertEqual(len(a), len(b), "%s: lengths differ" % path)
            try:
                check(_value(a), _value(b), path)
            except (ValueError, TypeError):  # ragged: leaf by leaf
                for i, (x, y) in enumerate(zip(a, b)):
                    self._nested(x, y, check, "%s[%d]" % (path, i))
        else:
            check(_value(a), _value(b), path)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's names
        def check(x, y, path):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg="%s %s" % (path, msg or ""))
        self._nested(a, b, check)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol)
        except AssertionError:
            return
        raise AssertionError(msg or "the two values are close")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        def check(x, y, path):
            self.assertEqual(np.shape(x), np.shape(y), "%s: shapes differ %s" % (path, msg or ""))
            np.testing.assert_array_equal(x, y, err_msg="%s %s" % (path, msg or ""))
        self._nested(a, b, check)

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        self.assertFalse(np.array_equal(_value(a), _value(b)), msg or "the two values are equal")

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(abs(float(f1) - float(f2)) <= err, msg or "%r != %r +/- %r" % (f1, f2, err))

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2))
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(f1, f2, err, msg)

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_value(a) > comparison_target), "not all > %r" % (comparison_target,))

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_value(a) < comparison_target), "not all < %r" % (comparison_target,))

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_value(a) >= comparison_target), "not all >= %r" % (comparison_target,))

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_value(a) <= comparison_target), "not all <= %r" % (comparison_target,))

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        v = _value(target)
        lo = v > lower_bound if open_lower_bound else v >= lower_bound
        hi = v < upper_bound if open_upper_bound else v <= upper_bound
        self.assertTrue(np.all(lo & hi), "values outside [%r, %r]" % (lower_bound, upper_bound))

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        self.assertTrue(set(np.ravel(_value(target)).tolist()) <= set(expected_set))

    def assertShapeEqual(self, np_array, tf_tensor, msg=None):  # noqa: N802
        self.assertEqual(tuple(np.shape(np_array)), tuple(_fw.convert_to_tensor(tf_tensor).shape), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        self.assertEqual(np.asarray(_value(target)).dtype, np.dtype(expected_dtype))

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        from .errors import Error
        return self.assertRaisesRegex(Error, expected_err_re_or_predicate)

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            @contextlib.contextmanager
            def ctx():
                try:
                    yield
                except exception_type as e:
                    if not expected_err_re_or_predicate(e):
                        raise AssertionError("the exception did not match the predicate: %r" % e) from e
                    return
                raise AssertionError("%s not raised" % exception_type.__name__)
            return ctx()
        return self.assertRaisesRegex(exception_type, expected_err_re_or_predicate)

    def assertStartsWith(self, actual, expected_start, msg=None):  # noqa: N802
        self.assertTrue(str(actual).startswith(expected_start), msg or "%r does not start with %r" % (actual, expected_start))

    def assertEndsWith(self, actual, expected_end, msg=None):  # noqa: N802
        self.assertTrue(str(actual).endswith(expected_end), msg or "%r does not end with %r" % (actual, expected_end))


def main(argv=None):
    """unittest.main, as tf.test.main runs a test module's TestCases."""
    unittest.main(argv=argv)


def compute_gradient(f, x, delta=None):
    """(theoretical, numerical) Jacobians of f at the points x (a list of arrays), each a list with one
    [f's size, x_i's size] matrix per x_i, as tf.test.compute_gradient: the theoretical from weft's
    gradients (one per element of f's output), the numerical by central differences of step delta
    (default 1e-3 for float32, 1e-6 for float64)."""
    from . import gradients, placeholder
    from .session import Session
    xs = [np.asarray(v) for v in x]
    g = _fw.Graph()
    with g.as_default():
        ps = [placeholder(_fw.as_dtype(v.dtype), v.shape) for v in xs]
        y = f(*ps)
        y_flat_n = int(np.prod(y.shape)) if y.shape else 1
        from . import ops as _o
        yf = _o.reshape(y, [-1])
        rows = [gradients(yf[i], ps) for i in range(y_flat_n)]
        with Session(g) as sess:
            feed = dict(zip(ps, xs))
            theo = []
            for j, v in enumerate(xs):
                m = np.zeros((y_flat_n, v.size), v.dtype)
                for i in range(y_flat_n):
                    gi = rows[i][j]
                    if gi is not None:
                        m[i] = np.asarray(sess.run(gi, feed)).reshape(-1)
                theo.append(m)
            num = []
            for j, v in enumerate(xs):
                step = delta or (1e-3 if v.dtype == np.float32 else 1e-6)
                m = np.zeros((y_flat_n, v.size), v.dtype)
                for k in range(v.size):
                    plus, minus = v.copy().reshape(-1), v.copy().reshape(-1)
                    plus[k] += step
                    minus[k] -= step
                    fp = np.asarray(sess.run(yf, {**feed, ps[j]: plus.reshape(v.shape)}))
                    fm = np.asarray(sess.run(yf, {**feed, ps[j]: minus.reshape(v.shape)}))
                    m[:, k] = (fp - fm) / (2 * step)
                num.append(m)
    return theo, num


__all__ = ["TestCase", "main", "compute_gradient"]
