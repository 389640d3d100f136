"""tf.random.stateless_*, tf.random.experimental.stateless_split / fold_in and tf.random.Generator,
against TensorFlow's documented behaviour: signatures, shapes, dtypes, errors, determinism (same
seed -> same values, in every run and Session), and distributions (moments within 5 standard
errors of their closed forms; fixed seeds, so these never flake). weft's numbers are not TF's."""
import numpy as np
import pytest

import weft as tf

N = 20000


def within(sample, mean, sd, n=None):
    n = n or sample.size
    assert abs(sample.mean() - mean) < 5 * sd / np.sqrt(n), (sample.mean(), mean)


def test_stateless_uniform_floats_ints_and_full_range(graph, sess):
    a = tf.random.stateless_uniform([N], seed=[1, 2])
    b = tf.random.stateless_uniform([N], seed=tf.constant([1, 2], tf.int64))
    c = tf.random.stateless_uniform([N], seed=[1, 3])
    lohi = tf.random.stateless_uniform([2, 3], seed=[4, 5], minval=-2.0, maxval=3.0, dtype=tf.float64)
    ints = tf.random.stateless_uniform([N], seed=[6, 7], minval=2, maxval=5, dtype=tf.int32)  # TF doc example
    full = tf.random.stateless_uniform([4], seed=[6, 7], minval=None, maxval=None, dtype=tf.int64)
    va, vb, vc, vl, vi, vf = sess.run([a, b, c, lohi, ints, full])
    assert va.dtype == np.float32 and va.shape == (N,)
    np.testing.assert_array_equal(va, vb)  # int32 and int64 seeds of one value agree
    assert not np.array_equal(va, vc)
    assert va.min() >= 0 and va.max() < 1
    within(va, 0.5, 1 / np.sqrt(12))
    assert vl.dtype == np.float64 and vl.shape == (2, 3) and vl.min() >= -2 and vl.max() < 3
    assert vi.dtype == np.int32 and set(np.unique(vi)) == {2, 3, 4}
    within(vi.astype(np.float64), 3.0, np.sqrt(8 / 12))
    assert vf.dtype == np.int64 and len(set(vf.tolist())) == 4
    # A pure function: every run and a fresh Session give the same values.
    np.testing.assert_array_equal(sess.run(a), va)
    with tf.Session(graph) as other:
        np.testing.assert_array_equal(other.run(a), va)


def test_stateless_uniform_errors(graph):
    with pytest.raises(ValueError, match="Must specify both or neither minval and maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=None, maxval=3, dtype=tf.int32)
    with pytest.raises(ValueError, match=r"seed must have shape \[2\], got shape \[3\]"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="seed must be an int32 or int64 tensor"):
        tf.random.stateless_uniform([2], seed=[1.0, 2.0])
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        tf.random.stateless_normal([2], seed=[1, 2], dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=5, maxval=5, dtype=tf.int32)


def test_stateless_normal_and_truncated_normal(graph, sess):
    n = tf.random.stateless_normal([N], seed=[3, 4], mean=1.5, stddev=2.0)
    t = tf.random.stateless_truncated_normal([N], seed=[3, 4], mean=-1.0, stddev=0.5, dtype=tf.float64)
    vn, vt = sess.run([n, t])
    within(vn, 1.5, 2.0)
    assert abs(vn.std() - 2.0) < 5 * 2.0 / np.sqrt(2 * N)
    assert vt.dtype == np.float64 and vt.min() >= -2.0 and vt.max() <= 0.0
    # The standard deviation of N(0, 1) cut at +-2: sqrt(0.773741).
    assert abs(vt.std() - 0.5 * np.sqrt(0.773741)) < 0.01


def test_stateless_normal_shape_from_a_tensor(graph, sess):
    x = tf.placeholder(tf.float32, shape=(None, 3))
    z = tf.random.stateless_normal(tf.shape(x), seed=[1, 1])
    got = sess.run(z, feed_dict={x: np.zeros((5, 3), np.float32)})
    assert got.shape == (5, 3)


def test_stateless_categorical(graph, sess):
    logits = tf.math.log([[0.25, 0.75], [1.0, 0.0]])
    draws = tf.random.stateless_categorical(logits, N, seed=[7, 17])
    got = sess.run(draws)
    assert got.shape == (2, N) and got.dtype == np.int64
    p = 0.75
    assert abs(got[0].mean() - p) < 5 * np.sqrt(p * (1 - p) / N)
    assert (got[1] == 0).all()  # a class of probability 0 is never drawn
    np.testing.assert_array_equal(sess.run(tf.random.stateless_categorical(logits, N, seed=[7, 17],
                                                                          dtype=tf.int32)), got)


def test_stateless_binomial(graph, sess):
    counts, probs = [10.0, 20.0, 100.0], [0.5, 0.1, 0.7]
    b = tf.random.stateless_binomial([N, 3], seed=[1, 2], counts=counts, probs=probs)
    got = sess.run(b)
    assert got.dtype == np.int32 and got.shape == (N, 3)  # output_dtype defaults to int32, as TF
    for k in range(3):
        n, p = counts[k], probs[k]
        within(got[:, k].astype(np.float64), n * p, np.sqrt(n * p * (1 - p)))
        assert got[:, k].min() >= 0 and got[:, k].max() <= n


def test_stateless_split_and_fold_in(graph, sess):
    seed = tf.constant([1, 2], tf.int64)
    split = tf.random.experimental.stateless_split(seed, num=3)
    folded = tf.random.experimental.stateless_fold_in(seed, 5)
    s, f = sess.run([split, folded])
    assert s.shape == (3, 2) and s.dtype == np.int64 and len({tuple(r) for r in s}) == 3
    assert f.shape == (2,) and f[1] == 5  # TF: stack([a draw from seed, data])
    new = tf.random.stateless_uniform([4], seed=split[0])
    assert sess.run(new).shape == (4,)


def test_generator_from_seed_replays_and_advances():
    g = tf.random.Generator.from_seed(1234)
    first, second = g.normal(shape=(2, 3)).numpy(), g.normal(shape=(2, 3)).numpy()
    assert first.shape == (2, 3) and first.dtype == np.float32
    assert not np.array_equal(first, second)
    h = tf.random.Generator.from_seed(1234)
    np.testing.assert_array_equal(h.normal(shape=(2, 3)).numpy(), first)
    np.testing.assert_array_equal(h.normal(shape=(2, 3)).numpy(), second)
    u = g.uniform(shape=[N], minval=-1.0, maxval=1.0).numpy()
    assert u.min() >= -1 and u.max() < 1
    within(u, 0.0, 2 / np.sqrt(12))
    ints = g.uniform(shape=[100], minval=0, maxval=3, dtype=tf.int64).numpy()
    assert ints.dtype == np.int64 and set(ints.tolist()) == {0, 1, 2}
    t = g.truncated_normal(shape=[1000], stddev=3.0).numpy()
    assert np.abs(t).max() <= 6.0
    assert g.uniform_full_int([3], dtype=tf.int32).numpy().dtype == np.int32
    assert tf.random.Generator.from_seed(5).normal([4]).numpy().tolist() != \
        tf.random.Generator.from_seed(6).normal([4]).numpy().tolist()


def test_generator_make_seeds_split_and_global():
    g = tf.random.Generator.from_seed(42)
    seeds = g.make_seeds(3).numpy()
    assert seeds.shape == (2, 3) and seeds.dtype == np.int64 and (seeds[1] == 0).all()
    # A column of make_seeds is a seed for the stateless functions (TF's augmentation recipe).
    img = tf.image.stateless_random_flip_left_right(np.ones((4, 4, 3), np.float32), seed=seeds[:, 0])
    assert img.numpy().shape == (4, 4, 3)
    a, b = g.split(2)
    va, vb = a.uniform([8]).numpy(), b.uniform([8]).numpy()
    assert not np.array_equal(va, vb)
    a2, _ = tf.random.Generator.from_seed(42).split(2)
    np.testing.assert_array_equal(a2.uniform([8]).numpy(), va)
    tf.random.set_global_generator(tf.random.Generator.from_seed(7))
    x = tf.random.get_global_generator().normal([3]).numpy()
    tf.random.set_global_generator(tf.random.Generator.from_seed(7))
    np.testing.assert_array_equal(tf.random.get_global_generator().normal([3]).numpy(), x)
    assert tf.random.experimental.Generator is tf.random.Generator
    with pytest.raises(TypeError, match="set_global_generator takes a weft.random.Generator"):
        tf.random.set_global_generator(3)


def test_generator_in_a_session_draws_anew_each_run_and_replays_per_session(graph):
    def build_and_run():
        g = tf.Graph()
        with g.as_default():
            gen = tf.random.Generator.from_seed(3)
            x, y = gen.normal([4]), gen.uniform([4])
            with tf.Session(g) as s:
                s.run(tf.global_variables_initializer())
                return [s.run([x, y]) for _ in range(2)]
    first, again = build_and_run(), build_and_run()
    assert not np.array_equal(first[0][0], first[1][0])  # each run advances the counter
    for r in range(2):  # two draws in one step get their counters in program order
        np.testing.assert_array_equal(first[r][0], again[r][0])
        np.testing.assert_array_equal(first[r][1], again[r][1])


def test_generator_in_a_traced_function_draws_anew_per_call():
    gen = tf.random.Generator.from_seed(11)

    @tf.function
    def draw():
        return gen.uniform([5])
    a, b = np.asarray(draw()), np.asarray(draw())
    assert a.shape == (5,) and not np.array_equal(a, b)
