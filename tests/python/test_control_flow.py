"""tf.cond and tf.while_loop as TensorFlow programs write them (`import weft as tf`): only the
branch taken runs, loops run in the graph, nested loop variables keep their structure, errors
name what was wrong. Expected values are closed forms."""
import collections

import numpy as np
import pytest

import weft as tf
import weft.compat.v1 as tf1


def _run(fetches, feed_dict=None, init=False, **kw):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict, **kw)


def test_cond_runs_only_the_branch_taken():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [])
        v = tf.Variable(0.0)
        y = tf.cond(x > 0, lambda: v.assign_add(x), lambda: -x)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(y, {x: 2.0}) == 2.0
            assert sess.run(y, {x: -3.0}) == 3.0          # the assign did not run
            assert sess.run(y, {x: 0.5}) == 2.5
            assert sess.run(v) == 2.5


def test_cond_structures_and_the_v1_spelling():
    with tf.Graph().as_default():
        p = tf1.placeholder(tf.bool, [])
        x = tf.constant([1.0, 2.0, 3.0])
        out = tf.cond(p, lambda: (x * 2.0, {"s": tf.reduce_sum(x)}), lambda: (x - 1.0, {"s": tf.constant(0.0)}))
        assert isinstance(out, tuple) and set(out[1]) == {"s"}
        single = tf1.cond(p, lambda: [x], lambda: [x + 1.0])   # strict=False: the element itself
        assert isinstance(single, tf.Tensor)
        with tf.Session() as sess:
            a = sess.run(out, {p: True})
            np.testing.assert_array_equal(a[0], [2.0, 4.0, 6.0])
            assert a[1]["s"] == 6.0
            b = sess.run(out, {p: False})
            np.testing.assert_array_equal(b[0], [0.0, 1.0, 2.0])
            assert b[1]["s"] == 0.0
            np.testing.assert_array_equal(sess.run(single, {p: False}), [2.0, 3.0, 4.0])
        with pytest.raises(ValueError, match=r"different structures: true_fn returned \[float32\[3\], float32\[3\]\], "
                                             r"false_fn returned float32\[3\]"):
            tf.cond(p, lambda: [x, x], lambda: x)
        assert tf.cond(True, lambda: 1, lambda: 2) == 1


def test_while_loop_power_and_inside_a_function():
    @tf.function
    def power(x, n):
        return tf.while_loop(lambda i, p: i < n, lambda i, p: (i + 1, p * x), (tf.constant(0), tf.constant(1.0)))[1]

    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [])
        n = tf1.placeholder(tf.int32, [])
        y = power(x, n)
        with tf.Session() as sess:
            for k in (0, 1, 7):
                assert sess.run(y, {x: 1.5, n: k}) == pytest.approx(1.5 ** k, rel=1e-6)


def test_while_loop_nested_structures_come_back_as_given():
    Pair = collections.namedtuple("Pair", "a b")
    with tf.Graph().as_default():
        state = {"i": tf.constant(0), "acc": [Pair(tf.constant(1.0), tf.constant(0.0)), np.float32(2.0)]}
        out = tf.while_loop(
            lambda s: s["i"] < 5,
            lambda s: {"i": s["i"] + 1, "acc": [Pair(s["acc"][0].a * 2.0, s["acc"][0].b + 1.0), s["acc"][1] * 3.0]},
            [state])
        assert isinstance(out, list) and isinstance(out[0]["acc"][0], Pair)
        got = _run(out)
        assert got[0]["i"] == 5
        assert got[0]["acc"][0].a == 32.0 and got[0]["acc"][0].b == 5.0 and got[0]["acc"][1] == 486.0


def test_nested_loops_and_a_cond_inside_a_loop():
    with tf.Graph().as_default():
        # sum over i < 4, j < 5 of i * j = 6 * 10
        def outer(i, total):
            inner = tf.while_loop(lambda j, t: j < 5, lambda j, t: (j + 1, t + i * j), (0, total))
            return i + 1, inner[1]
        nested = tf.while_loop(lambda i, t: i < 4, outer, (0, 0))[1]
        # even numbers below 10 summed by a cond in the body: 20
        evens = tf.while_loop(lambda i, s: i < 10,
                              lambda i, s: (i + 1, tf.cond(tf.equal(tf.math.floormod(i, 2), 0), lambda: s + i, lambda: s)), (0, 0))[1]
        assert _run([nested, evens]) == [60, 20]


def test_maximum_iterations_and_v1_single_variable():
    with tf.Graph().as_default():
        forever = tf.while_loop(lambda x: True, lambda x: x * x, [tf.constant(2.0)], maximum_iterations=3)
        v1 = tf1.while_loop(lambda x: x < 100.0, lambda x: x * 3.0, [tf.constant(1.0)])
        assert isinstance(forever, list) and isinstance(v1, tf.Tensor)
        assert _run([forever[0], v1]) == [256.0, 243.0]


def test_shape_invariants():
    with tf.Graph().as_default():
        grow = lambda i, v: (i + 1, tf.concat([v, v], 0))  # noqa: E731
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"loop variable 'loop_vars\[1\]'.* from \[1\] to \[2\]"):
            tf.while_loop(lambda i, v: i < 3, grow, (0, tf.constant([1.0])))
        out = tf.while_loop(lambda i, v: i < 3, grow, (0, tf.constant([1.0])),
                            shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
        assert out[1].shape == (None,)
        np.testing.assert_array_equal(_run(out[1]), np.ones(8, np.float32))


def test_gradient_of_cond_matches_finite_differences():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float64, [])
        y = tf.cond(x > 0, lambda: x * x * x, lambda: x * x - 2.0 * x)
        dy, = tf.gradients(y, [x])
        with tf.Session() as sess:
            for at in (1.3, -0.7):
                h = 1e-6
                numeric = (sess.run(y, {x: at + h}) - sess.run(y, {x: at - h})) / (2 * h)
                analytic = sess.run(dy, {x: at})
                assert analytic == pytest.approx(numeric, rel=1e-6)
                assert analytic == pytest.approx(3 * at * at if at > 0 else 2 * at - 2.0, rel=1e-9)


def _finite_differences(sess, y, x, at, feeds, h=1e-6):
    """d(sum of y)/dx at x = at by central differences, element by element."""
    grad = np.zeros_like(at)
    for idx in np.ndindex(at.shape):
        up, down = at.copy(), at.copy()
        up[idx] += h
        down[idx] -= h
        grad[idx] = (np.sum(sess.run(y, {**feeds, x: up})) - np.sum(sess.run(y, {**feeds, x: down}))) / (2 * h)
    return grad


def test_gradient_of_while_loop_with_a_tape_and_tf_gradients():
    # The example: y = x^3, dy/dx = 3 x^2 = 12 at x = 2.
    with tf.Graph().as_default():
        x = tf.Variable(2.0)
        with tf.GradientTape() as t:
            i, y = tf.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * x), (0, 1.0))
        g = t.gradient(y, x)
        assert _run(g, init=True) == pytest.approx(12.0)

    @tf.function
    def grad_of_power(v):
        with tf.GradientTape() as t:
            t.watch(v)
            _, y = tf.while_loop(lambda i, y: i < 4, lambda i, y: (i + 1, y * v), (0, 1.0))
        return t.gradient(y, v)

    with tf.Graph().as_default():
        assert _run(grad_of_power(tf.constant(3.0))) == pytest.approx(4 * 27.0)
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float64, [])
        n = tf1.placeholder(tf.int32, [])
        _, p = tf.while_loop(lambda i, p: i < n, lambda i, p: (i + 1, p * x), (0, tf.constant(1.0, tf.float64)))
        dp, = tf.gradients(p, [x])
        with tf.Session() as sess:
            for k in (0, 1, 6):  # 0 iterations: no gradient reaches x, a zero as TF's
                assert sess.run(dp, {x: 1.5, n: k}) == pytest.approx(k * 1.5 ** (k - 1) if k else 0.0, rel=1e-12)


def test_gradient_of_an_rnn_style_loop_matches_finite_differences():
    # h <- tanh(h W + b) over 5 steps with a running sum of h; loss = sum + sum(h_final^2).
    rng = np.random.RandomState(0)
    h0 = rng.uniform(-0.5, 0.5, (2, 3))
    w_at = rng.uniform(-0.8, 0.8, (3, 3))
    with tf.Graph().as_default():
        w = tf1.placeholder(tf.float64, [3, 3])
        b = tf.constant([0.1, -0.2, 0.05], tf.float64)
        h_init = tf1.placeholder(tf.float64, [None, 3])  # an unknown batch: the Add pushes its shape only

        def body(i, h, acc):
            h = tf.tanh(tf.matmul(h, w) + b)
            return i + 1, h, acc + tf.reduce_sum(h)

        _, h, acc = tf.while_loop(lambda i, h, acc: i < 5, body, (0, h_init, tf.constant(0.0, tf.float64)))
        loss = acc + tf.reduce_sum(h * h)
        dw, dh0 = tf.gradients(loss, [w, h_init])
        with tf.Session() as sess:
            feeds = {w: w_at, h_init: h0}
            got_w, got_h = sess.run([dw, dh0], feeds)
            np.testing.assert_allclose(got_w, _finite_differences(sess, loss, w, w_at, {h_init: h0}), rtol=1e-6,
                                       atol=1e-9)
            np.testing.assert_allclose(got_h, _finite_differences(sess, loss, h_init, h0, {w: w_at}), rtol=1e-6,
                                       atol=1e-9)


def test_gradient_of_a_growing_loop_variable_and_of_a_loop_on_cpu1():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float64, [])
        # acc = [x, x^2, ..., x^5] by concatenation (a shape invariant with an unknown dim); sum(acc^2).
        _, acc = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.concat([a, tf.reshape(a[-1] * x, [1])], 0)),
                               (0, tf.reshape(x, [1])), shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))
        y = tf.reduce_sum(acc * acc)
        # The loop's body pinned to /cpu:1, its driver on /cpu:0.
        with tf.device("/cpu:0"):
            z0 = x * 1.0
        with tf.device("/cpu:1"):
            _, z = tf.while_loop(lambda i, z: i < 3, lambda i, z: (i + 1, tf.tanh(z) * x), (0, z0))
        dy, dz = tf.gradients(y, [x])[0], tf.gradients(z, [x])[0]
        with tf.Session(num_cpu_devices=2) as sess:
            at = np.array(1.2)
            assert sess.run(dy, {x: at}) == pytest.approx(sum(2 * k * at ** (2 * k - 1) for k in range(1, 6)), rel=1e-12)
            assert sess.run(dz, {x: at}) == pytest.approx(_finite_differences(sess, z, x, at, {}), rel=1e-6)


def test_a_loop_split_across_devices_with_an_inner_loop_and_a_cond_and_its_gradient():
    # The loops' control on /cpu:0, the inner body's multiply on /cpu:1 (TF's control loops carry
    # the iterations there); the same program without devices gives the reference value.
    def build(split):
        x = tf1.placeholder(tf.float64, [])

        def outer_body(i, v):
            def inner_body(j, u):
                if split:
                    with tf.device("/cpu:1"):
                        w = u * x
                else:
                    w = u * x
                return j + 1, tf.cond(w > 1.0, lambda: w * 0.5, lambda: w + 0.25)
            return i + 1, tf.while_loop(lambda j, u: j < i + 1, inner_body, (0, v))[1]

        with tf.device("/cpu:0" if split else None):
            _, y = tf.while_loop(lambda i, v: i < 3, outer_body, (0, x))
        return x, y

    with tf.Graph().as_default():
        x, y = build(False)
        want = _run(y, {x: 1.3})
    with tf.Graph().as_default():
        x, y = build(True)
        dy, = tf.gradients(y, [x])
        with tf.Session(num_cpu_devices=2) as sess:
            assert sess.run(y, {x: 1.3}) == pytest.approx(want, rel=1e-15)
            assert sess.run(dy, {x: 1.3}) == pytest.approx(_finite_differences(sess, y, x, np.array(1.3), {}), rel=1e-6)


def test_gradient_of_while_loop_edges():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float64, [])
        i0 = tf.constant(0)
        # maximum_iterations stops a loop whose cond never fails: y = x * x^3.
        y = tf.while_loop(lambda v: True, lambda v: v * x, [x], maximum_iterations=3)[0]
        # integer loop variables get no gradient (None), as TF's.
        i, z = tf.while_loop(lambda i, z: i < 2, lambda i, z: (i + 1, z * z), (i0, x))
        assert tf.gradients(z, [i0]) == [None]
        # back_prop=False: no gradient flows through the loop.
        w = tf.while_loop(lambda v: v < 100.0, lambda v: v * x, [x], back_prop=False)[0]
        assert tf.gradients(w, [x]) == [None]
        dy, dz = tf.gradients(y, [x])[0], tf.gradients(z, [x])[0]
        with tf.Session() as sess:
            assert sess.run(dy, {x: 1.1}) == pytest.approx(4 * 1.1 ** 3, rel=1e-12)
            assert sess.run(dz, {x: 1.1}) == pytest.approx(4 * 1.1 ** 3, rel=1e-12)
        # A cond in the body: each iteration differentiates the branch it took.
        _, c = tf.while_loop(lambda i, c: i < 4,
                             lambda i, c: (i + 1, tf.cond(c > 1.0, lambda: c * 0.5, lambda: c * x)), (0, x))
        dc, = tf.gradients(c, [x])
        with tf.Session() as sess:
            # x = 1.5: 1.5 -> 0.75 -> 1.125 -> 0.5625 -> 0.84375 (halve, times x, halve, times x): c = x^3 / 4
            # on this path, dc/dx = 3 x^2 / 4.
            assert sess.run(c, {x: 1.5}) == pytest.approx(1.5 ** 3 / 4, rel=1e-12)
            assert sess.run(dc, {x: 1.5}) == pytest.approx(3 * 1.5 ** 2 / 4, rel=1e-12)
        # Nested loops: 2 outer iterations of v <- (v * x * x) + 1 (an inner loop of 2 multiplies).
        nested = tf.while_loop(lambda i, v: i < 2, lambda i, v: (
            i + 1, tf.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, u * x), (0, v))[1] + 1.0), (0, x))[1]
        dn, = tf.gradients(nested, [x])
        with tf.Session() as sess:
            # v = (x * x^2 + 1) * x^2 + 1 = x^5 + x^2 + 1: d/dx = 5 x^4 + 2 x.
            assert sess.run(nested, {x: 1.1}) == pytest.approx(1.1 ** 5 + 1.1 ** 2 + 1, rel=1e-12)
            assert sess.run(dn, {x: 1.1}) == pytest.approx(5 * 1.1 ** 4 + 2 * 1.1, rel=1e-12)


def test_an_infinite_loop_ends_at_the_step_timeout():
    with tf.Graph().as_default():
        y = tf.while_loop(lambda i: True, lambda i: i + 1, [tf.constant(0)])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(y, options=tf1.RunOptions(timeout_in_ms=300))
