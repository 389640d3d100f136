"""tf.map_fn / scan / foldl / foldr / case / switch_case, tf.nest, tf.print and the small array
manipulations (reverse, roll, sequence_mask, meshgrid, unique, identity_n, tuple, is_tensor).
Expected values are the examples of TensorFlow's API docs ("TF doc") or closed forms."""
import sys

import numpy as np
import pytest

import weft as tf


def test_map_fn_and_scan_doc_examples_unrolled():
    # TF doc (tf.map_fn): fn=lambda t: tf.range(t, t + 3) over [3, 5, 2].
    got = tf.map_fn(lambda t: tf.range(t, t + 3), tf.constant([3, 5, 2]))
    np.testing.assert_array_equal(got.numpy(), [[3, 4, 5], [5, 6, 7], [2, 3, 4]])
    # TF doc (tf.scan): running sums, reversed sums, a tuple of elems, Fibonacci with a tuple state.
    elems = np.array([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(tf.scan(lambda a, x: a + x, elems).numpy(), [1, 3, 6, 10, 15, 21])
    np.testing.assert_array_equal(tf.scan(lambda a, x: a + x, elems, reverse=True).numpy(), [21, 20, 18, 15, 11, 6])
    np.testing.assert_array_equal(tf.scan(lambda a, x: x[0] - x[1] + a, (elems + 1, elems), np.array(0)).numpy(),
                                  [1, 2, 3, 4, 5, 6])
    fib = tf.scan(lambda a, _: (a[1], a[0] + a[1]), np.array([1, 0, 0, 0, 0, 0]), (np.array(0), np.array(1)))
    np.testing.assert_array_equal(fib[0].numpy(), [1, 1, 2, 3, 5, 8])
    np.testing.assert_array_equal(fib[1].numpy(), [1, 2, 3, 5, 8, 13])
    # TF doc (tf.foldl / tf.foldr): the sum 21; foldr starts from the last element.
    assert tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3, 4, 5, 6])).numpy() == 21
    assert tf.foldr(lambda a, x: a - x, tf.constant([1, 2, 3]), initializer=tf.constant(10)).numpy() == 4


def test_map_fn_and_scan_over_an_unknown_dimension_loop_and_differentiate():
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float64, [None])
        y = tf.map_fn(lambda t: t * t * 3.0, x)
        s = tf.scan(lambda a, t: a * t, x)
        back = tf.scan(lambda a, t: a + t, x, reverse=True)
        g = tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(s), x)[0]
        with tf.compat.v1.Session() as sess:
            got_y, got_s, got_back, got_g = sess.run([y, s, back, g], {x: [1., 2., 3.]})
    np.testing.assert_allclose(got_y, [3., 12., 27.])
    np.testing.assert_allclose(got_s, [1., 2., 6.])  # running products
    np.testing.assert_allclose(got_back, [6., 5., 3.])
    # d/dx [sum 3x^2 + x1 + x1x2 + x1x2x3] = 6x + [1 + x2 + x2x3, x1 + x1x3, x1x2]
    np.testing.assert_allclose(got_g, [6 + 1 + 2 + 6, 12 + 1 + 3, 18 + 2])


def test_a_loop_inside_a_keras_lambda_runs_and_trains():
    # map_fn over the batch (unknown when traced) is a while_loop, copied whole into the model's
    # graph (train/layers_traced.cc): values and gradients are those of the same map unrolled.
    p = tf.keras.Input([4])
    y = tf.keras.layers.Lambda(lambda t: tf.map_fn(lambda r: r * r, t))(tf.keras.layers.Dense(4, name="d")(p))
    model = tf.keras.Model(p, y)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    k, b = np.eye(4, dtype=np.float32) * 2, np.ones(4, np.float32)
    model.set_weights([k, b])
    np.testing.assert_allclose(model.predict(x, verbose=0), (x @ k + b) ** 2, rtol=1e-6)
    # One SGD step on mse against zeros: loss = mean(h^4) over the 12 values, dloss/dk = x^T 4h^3 / 12.
    model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
    model.train_on_batch(x, np.zeros((3, 4), np.float32))
    h = x @ k + b
    np.testing.assert_allclose(model.get_weights()[0], k - 0.01 * x.T @ (4 * h ** 3 / 12), rtol=1e-5, atol=1e-6)


def test_case_and_switch_case_doc_examples():
    x, y = tf.constant(1), tf.constant(2)
    f1, f2, f3 = (lambda: tf.constant(17)), (lambda: tf.constant(23)), (lambda: tf.constant(-1))
    # TF doc (tf.case): the first true pred's fn, else the default.
    assert tf.case([(tf.less(x, y), f1)], default=f2).numpy() == 17
    assert tf.case([(tf.less(y, x), f1), (tf.greater(x, y), f2)], default=f3).numpy() == -1
    # TF doc (tf.switch_case): an index out of range runs the default.
    fns = {0: lambda: tf.constant(17), 1: lambda: tf.constant(23)}
    assert tf.switch_case(tf.constant(1), fns, default=lambda: tf.constant(12)).numpy() == 23
    assert tf.switch_case(tf.constant(5), fns, default=lambda: tf.constant(12)).numpy() == 12
    assert tf.switch_case(tf.constant(5), [fns[0], fns[1]]).numpy() == 23  # no default: the last branch


def test_nest_doc_examples_and_errors():
    assert tf.nest.flatten({"b": 2, "a": [1, (3,)]}) == [1, 3, 2]
    assert tf.nest.flatten(None) == [None]
    assert tf.nest.pack_sequence_as({"key3": 0, "key1": 0, "key2": 0}, ["value1", "value2", "value3"]) == \
        {"key3": "value3", "key1": "value1", "key2": "value2"}
    assert tf.nest.map_structure(lambda a, b: a + b, (1, [2]), (10, [20])) == (11, [22])
    assert tf.nest.is_nested([1]) and not tf.nest.is_nested(np.zeros(3))
    with pytest.raises(ValueError, match="same nested structure"):
        tf.nest.assert_same_structure((1, 2), (1, 2, 3))
    with pytest.raises(TypeError, match="same sequence type"):
        tf.nest.assert_same_structure((1, 2), [1, 2])
    with pytest.raises(ValueError, match="3 leaves but 2 values"):
        tf.nest.pack_sequence_as((0, [0, 0]), [1, 2])


def test_print_formats_as_tensorflow_at_top_level_and_in_functions(capsys, monkeypatch):
    monkeypatch.setattr(tf._values, "graph_mode", [False])  # TF1 tests may have disabled eager
    tf.print("loss:", tf.constant(0.25), [tf.constant([1., 2.5]), 3], {"b": True}, output_stream=sys.stdout)
    tf.print(tf.range(10), output_stream=sys.stdout)  # summarize=3: first and last three
    tf.print(tf.reshape(tf.range(4), [2, 2]), output_stream=sys.stdout)
    tf.print(tf.constant([True, False]), summarize=-1, sep="|", end="!\n", output_stream=sys.stdout)

    @tf.function
    def step(a):
        tf.print("a*2 =", a * 2, output_stream=sys.stdout)
        return a + 1
    step(np.ones([2], np.float32))
    step(np.zeros([2], np.float32))
    assert capsys.readouterr().out == (
        "loss: 0.25 [[1 2.5], 3] {'b': 1}\n[0 1 2 ... 7 8 9]\n[[0 1]\n [2 3]]\n[1 0]!\n"
        "a*2 = [2 2]\na*2 = [0 0]\n")
    tf.print("to stderr")
    assert capsys.readouterr().err == "to stderr\n"
    with tf.Graph().as_default():  # TF1 graph: nothing to print until a run; weft warns instead
        assert tf.print(tf.compat.v1.placeholder(tf.float32)).type == "NoOp"
    assert "prints nothing" in capsys.readouterr().err


def test_reverse_roll_sequence_mask_meshgrid_unique_doc_examples():
    x = tf.constant(np.arange(24).reshape(2, 3, 4))
    np.testing.assert_array_equal(tf.reverse(x, [1, -1]).numpy(), np.arange(24).reshape(2, 3, 4)[:, ::-1, ::-1])
    # TF doc (tf.roll)
    np.testing.assert_array_equal(tf.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy(), [3, 4, 0, 1, 2])
    t = np.arange(10).reshape(2, 5)
    np.testing.assert_array_equal(tf.roll(t, shift=[1, -2], axis=[0, 1]).numpy(), [[7, 8, 9, 5, 6], [2, 3, 4, 0, 1]])
    np.testing.assert_array_equal(tf.roll(t, shift=[2, -3], axis=[1, 1]).numpy(), [[1, 2, 3, 4, 0], [6, 7, 8, 9, 5]])
    with tf.Graph().as_default():  # a dimension known only when the step runs
        p = tf.compat.v1.placeholder(tf.int32, [None])
        with tf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(tf.roll(p, 2, 0), {p: [0, 1, 2, 3, 4]}), [3, 4, 0, 1, 2])
    # TF doc (tf.sequence_mask)
    np.testing.assert_array_equal(tf.sequence_mask([1, 3, 2], 5).numpy(),
                                  [[1, 0, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]])
    np.testing.assert_array_equal(tf.sequence_mask([[1, 3], [2, 0]]).numpy(),
                                  [[[1, 0, 0], [1, 1, 1]], [[1, 1, 0], [0, 0, 0]]])
    assert tf.sequence_mask([2], 3, dtype=tf.float32).dtype == tf.float32
    # TF doc (tf.meshgrid): indexing="xy"
    X, Y = tf.meshgrid([1, 2, 3], [4, 5, 6])
    np.testing.assert_array_equal(X.numpy(), [[1, 2, 3]] * 3)
    np.testing.assert_array_equal(Y.numpy(), [[4, 4, 4], [5, 5, 5], [6, 6, 6]])
    I, J = tf.meshgrid([1, 2], [3, 4, 5], indexing="ij")
    assert I.shape == (2, 3) and J.numpy().tolist() == [[3, 4, 5], [3, 4, 5]]
    # TF doc (tf.unique)
    y, idx = tf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(y.numpy(), [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx.numpy(), [0, 0, 1, 2, 2, 2, 3, 4, 4])
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="no value while the graph is built"):
            tf.unique(tf.compat.v1.placeholder(tf.int32, [None]))
    a, b = tf.identity_n([tf.constant(1), tf.constant(2.0)])
    assert a.numpy() == 1 and b.numpy() == 2.0
    assert [t.numpy() for t in tf.tuple([tf.constant(3), tf.constant(4)])] == [3, 4]
    assert tf.is_tensor(tf.constant(1)) and not tf.is_tensor(np.ones(2)) and not tf.is_tensor(3)
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        tf.reverse(tf.constant([1, 2]), [3])


def test_branches_after_an_eager_step_keep_their_own_constants():
    # After an eager GradientTape step, top-level constants are shared by value (_recorder.py);
    # a constant made inside a cond branch must stay that branch's, or the other branch's copy
    # is dead when its branch is not taken.
    v = tf.Variable(tf.constant([0.3], tf.float64))
    with tf.GradientTape() as tape:
        y = tf.math.square(v)
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [0.6])
    fns = {0: lambda: tf.constant(17), 1: lambda: tf.constant(23)}
    assert tf.case([(tf.less(tf.constant(1), tf.constant(2)), fns[0])], default=fns[1]).numpy() == 17
    assert tf.switch_case(tf.constant(1), fns, default=lambda: tf.constant(12)).numpy() == 23
    assert tf.switch_case(tf.constant(5), fns, default=lambda: tf.constant(17)).numpy() == 17
