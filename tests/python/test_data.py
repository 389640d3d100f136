"""weft.data against tf.data's documented behaviour: the expected values are the examples in
TensorFlow's Dataset docstrings, or were printed by TensorFlow 2.21 (CPU) running the same
pipeline (marked "TF 2.21 printed")."""
import numpy as np
import pytest

import weft as tf

Dataset = tf.data.Dataset


def values(ds):
    return [tuple(v.tolist() if isinstance(v, np.ndarray) else v for v in e) if isinstance(e, tuple)
            else (e.tolist() if isinstance(e, np.ndarray) else e) for e in ds.as_numpy_iterator()]


def test_range_and_batch_docstrings():
    assert values(Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(2, 5)) == [2, 3, 4]
    assert values(Dataset.range(1, 5, 2)) == [1, 3]
    assert values(Dataset.range(1, 5, -2)) == []
    assert values(Dataset.range(5, 1)) == []
    assert values(Dataset.range(5, 1, -2)) == [5, 3]
    assert values(Dataset.range(8).batch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert values(Dataset.range(8).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    # TF 2.21 printed: batch's spec has an unknown batch dim unless drop_remainder.
    assert Dataset.range(10).batch(3).element_spec == tf.TensorSpec(shape=(None,), dtype=tf.int64)
    assert Dataset.range(10).batch(3, drop_remainder=True).element_spec.shape == (3,)
    assert Dataset.range(5).element_spec == tf.TensorSpec(shape=(), dtype=tf.int64)


def test_from_tensor_slices_structures_and_dtypes():
    assert values(Dataset.from_tensor_slices([1, 2, 3])) == [1, 2, 3]
    assert values(Dataset.from_tensor_slices([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
    assert values(Dataset.from_tensor_slices(([1, 2], [3, 4], [5, 6]))) == [(1, 3, 5), (2, 4, 6)]
    assert list(Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]}).as_numpy_iterator()) == \
        [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    # The docstring of as_numpy_iterator: nested structures come back as they went in.
    assert list(Dataset.from_tensor_slices({"a": ([1, 2], [3, 4]), "b": [5, 6]}).as_numpy_iterator()) == \
        [{"a": (1, 3), "b": 5}, {"a": (2, 4), "b": 6}]
    # TF 2.21 printed: Python floats are float32, ints int32; numpy arrays keep their dtype.
    spec = Dataset.from_tensor_slices((np.zeros((4, 3), np.uint8), [1, 2, 3, 4])).element_spec
    assert spec == (tf.TensorSpec((3,), tf.uint8), tf.TensorSpec((), tf.int32))
    assert Dataset.from_tensor_slices([1.5, 2.0]).element_spec.dtype == tf.float32
    assert Dataset.from_tensor_slices(np.array([1.5, 2.0])).element_spec.dtype == tf.float64
    assert Dataset.from_tensor_slices(np.array([1, 2])).element_spec.dtype == tf.int64
    assert Dataset.from_tensors(([1, 2, 3], [4.0])).element_spec == \
        (tf.TensorSpec((3,), tf.int32), tf.TensorSpec((1,), tf.float32))
    assert values(Dataset.from_tensors([1, 2, 3])) == [[1, 2, 3]]
    with pytest.raises(ValueError, match="differ in their first dim"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(TypeError, match="not a weft dtype"):
        Dataset.from_tensor_slices(np.array([1 + 2j]))
    texts = Dataset.from_tensor_slices(np.array(["a", "b"]))  # a host dataset (test_text_data.py)
    assert str(texts.element_spec.dtype) == "string" and list(texts.as_numpy_iterator()) == [b"a", b"b"]


def test_iteration_gives_eager_style_values():
    ds = Dataset.from_tensor_slices((np.arange(6, dtype=np.float32).reshape(3, 2), np.array([7, 8, 9])))
    xs, ys = [], []
    for x, y in ds:
        xs.append(x.numpy().tolist())
        ys.append(int(y.numpy()))
        assert x.shape == (2,)
    assert xs == [[0, 1], [2, 3], [4, 5]] and ys == [7, 8, 9]
    assert "numpy=7" in repr(next(iter(ds))[1])


def test_zip_enumerate_take_skip_shard_repeat():
    a, b = Dataset.range(1, 4), Dataset.range(4, 7)
    c = Dataset.range(7, 13).batch(2)
    d = Dataset.range(13, 15)
    assert values(Dataset.zip((a, b))) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip(a, b)) == [(1, 4), (2, 5), (3, 6)]
    assert values(Dataset.zip((a, b, c))) == [(1, 4, [7, 8]), (2, 5, [9, 10]), (3, 6, [11, 12])]
    assert values(Dataset.zip((a, d))) == [(1, 13), (2, 14)]
    assert list(Dataset.zip({"x": a, "y": b}).as_numpy_iterator())[0] == {"x": 1, "y": 4}
    assert values(Dataset.from_tensor_slices([1, 2, 3]).enumerate(start=5)) == [(5, 1), (6, 2), (7, 3)]
    assert values(Dataset.range(10).take(3)) == [0, 1, 2]
    assert values(Dataset.range(10).skip(7)) == [7, 8, 9]
    assert values(Dataset.range(10).shard(num_shards=3, index=0)) == [0, 3, 6, 9]
    assert values(Dataset.range(10).shard(num_shards=3, index=1)) == [1, 4, 7]
    assert values(Dataset.range(10).shard(num_shards=3, index=2)) == [2, 5, 8]
    assert values(Dataset.from_tensor_slices([1, 2, 3]).repeat(3)) == [1, 2, 3] * 3
    assert values(Dataset.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]


def test_from_generator():
    def gen():
        for i in range(5):
            yield np.full((2,), i, np.float32), i
    sig = (tf.TensorSpec(shape=(2,), dtype=tf.float32), tf.TensorSpec(shape=(), dtype=tf.int32))
    ds = Dataset.from_generator(gen, output_signature=sig)
    assert ds.element_spec == sig and ds.cardinality() == tf.data.UNKNOWN_CARDINALITY
    got = values(ds.map(lambda x, y: (x * 2.0, y)).batch(2).prefetch(2))
    assert got == [([[0, 0], [2, 2]], [0, 1]), ([[4, 4], [6, 6]], [2, 3]), ([[8, 8]], [4])]
    assert values(ds.take(2)) == values(ds.take(2))  # the generator is called again for each pass
    # the docstring's older form: output_types (and output_shapes)
    ds = Dataset.from_generator(lambda: iter([1, 2, 3]), output_types=tf.int64)
    assert values(ds) == [1, 2, 3] and ds.element_spec.shape is None  # TF: TensorShape(None)
    ragged = Dataset.from_generator(lambda: (np.arange(n) for n in (1, 3)), output_types=tf.int64)
    assert values(ragged.map(lambda v: v * 2)) == [[0], [0, 2, 4]]  # unknown rank through map
    ds = Dataset.from_generator(lambda n: ((i, [i] * 2) for i in range(n)), output_types=(tf.int32, tf.float32),
                                output_shapes=((), (2,)), args=(2,))
    assert values(ds) == [(0, [0.0, 0.0]), (1, [1.0, 1.0])]

    def wrong():
        yield np.zeros(3, np.float32), 1
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(3,\) where the output signature has"):
        list(Dataset.from_generator(wrong, output_signature=sig))

    def failing():
        yield 1
        raise RuntimeError("boom")
    with pytest.raises(tf.errors.InvalidArgumentError, match="RuntimeError: boom"):
        list(Dataset.from_generator(failing, output_types=tf.int32).prefetch(2))


def test_reduce():
    # Dataset.reduce's docstring examples
    assert Dataset.range(5).reduce(np.int64(0), lambda x, _: x + 1).numpy() == 5
    assert Dataset.range(5).reduce(np.int64(0), lambda x, y: x + y).numpy() == 10
    # the tf.data guide: a list of ints is int32, as is the Python 0
    assert Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1]).reduce(0, lambda state, value: state + value).numpy() == 22
    total, count = Dataset.from_tensor_slices((np.ones((4, 2), np.float32), [1, 2, 3, 4])).reduce(
        (np.zeros(2, np.float32), 0), lambda s, e: (s[0] + e[0], s[1] + e[1]))
    assert total.numpy().tolist() == [4, 4] and count.numpy() == 10
    with pytest.raises(TypeError, match="state like initial_state"):
        Dataset.range(3).reduce(0, lambda s, e: e)  # int32 state, int64 result


def test_concatenate():
    # Dataset.concatenate's docstring example
    a, b = Dataset.range(1, 4), Dataset.range(4, 8)
    assert values(a.concatenate(b)) == [1, 2, 3, 4, 5, 6, 7]
    assert a.concatenate(b).cardinality() == 7
    c = Dataset.zip((Dataset.range(7, 10), Dataset.range(10, 13)))
    with pytest.raises(TypeError, match="differ"):
        a.concatenate(c)
    with pytest.raises(TypeError, match="differ"):
        a.concatenate(Dataset.from_tensor_slices([1.0]))  # float32 after int64
    ragged = Dataset.from_tensors(np.zeros(2)).concatenate(Dataset.from_tensors(np.ones(3)))
    assert ragged.element_spec.shape == (None,) and values(ragged) == [[0, 0], [1, 1, 1]]


def test_cardinality_constants_and_rules():
    # Constants and results as TF 2.21 printed them.
    assert tf.data.INFINITE_CARDINALITY == -1 and tf.data.UNKNOWN_CARDINALITY == -2
    assert tf.data.experimental.INFINITE_CARDINALITY == -1 and tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    D = Dataset
    assert D.range(42).cardinality().numpy() == 42
    assert D.range(42).repeat().cardinality() == tf.data.INFINITE_CARDINALITY
    assert D.range(42).filter(lambda x: x < 3).cardinality() == tf.data.UNKNOWN_CARDINALITY
    assert D.range(42).repeat().filter(lambda x: x < 3).cardinality() == -2
    assert D.range(10).batch(3).cardinality() == 4
    assert D.range(10).batch(3).unbatch().cardinality() == -2
    assert D.range(10).batch(3, drop_remainder=True).unbatch().cardinality() == 9
    assert D.zip(D.range(3), D.range(5).repeat()).cardinality() == 3
    assert D.zip(D.range(3).repeat(), D.range(5).repeat()).cardinality() == -1
    assert D.zip(D.range(3), D.range(5).filter(lambda x: x > 1)).cardinality() == -2
    assert D.range(10).skip(3).cardinality() == 7 and D.range(10).skip(-1).cardinality() == 0
    assert D.range(10).repeat().skip(3).cardinality() == -1
    assert D.range(10).repeat().take(3).cardinality() == 3
    assert D.range(10).filter(lambda x: x > 3).take(3).cardinality() == -2
    assert D.range(10).shard(3, 1).cardinality() == 3
    assert len(D.range(7)) == 7
    with pytest.raises(TypeError, match="infinite"):
        len(D.range(7).repeat())
    assert D.range(7).repeat() and D.range(0)  # truthiness is not len()


def test_shuffle_seed_and_reshuffle():
    ds = Dataset.range(20).shuffle(20, seed=7)
    first, second = values(ds), values(ds)
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert first != second  # a new order each pass (reshuffle_each_iteration=True)
    assert values(Dataset.range(20).shuffle(20, seed=7)) == first  # the seed fixes the orders
    fixed = Dataset.range(20).shuffle(20, seed=7, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    # without a seed: random orders, unless a graph seed is set (then the same for the same seed)
    g = tf.Graph()
    with g.as_default():
        g.seed = 11
        a = values(Dataset.range(50).shuffle(50))
    g2 = tf.Graph()
    with g2.as_default():
        g2.seed = 11
        assert values(Dataset.range(50).shuffle(50)) == a
    small = values(Dataset.range(100).shuffle(buffer_size=1))
    assert small == list(range(100))  # a buffer of one element does not reorder


def test_cache_replays_the_first_pass():
    # Documented: shuffle before cache fixes the order of every later pass to the first one.
    ds = Dataset.range(30).shuffle(30, seed=3).cache()
    first = values(ds)
    assert values(ds) == first and sorted(first) == list(range(30))
    assert values(Dataset.range(5).map(lambda x: x * 2).cache()) == [0, 2, 4, 6, 8]
    assert values(Dataset.range(4).cache().repeat(2)) == [0, 1, 2, 3] * 2


def test_unbatch():
    assert values(Dataset.range(10).batch(3).unbatch()) == list(range(10))
    ds = Dataset.from_tensor_slices((np.arange(12).reshape(3, 2, 2), np.arange(6).reshape(3, 2))).unbatch()
    assert ds.element_spec == (tf.TensorSpec((2,), tf.int64), tf.TensorSpec((), tf.int64))
    assert values(ds)[:2] == [([0, 1], 0), ([2, 3], 1)]


def test_map_is_traced_into_a_graph():
    assert values(Dataset.range(1, 6).map(lambda x: x + 1)) == [2, 3, 4, 5, 6]
    # TF 2.21 printed these elements and specs for the same pipelines.
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    y = np.array([0, 2, 1], np.uint8)
    ds = Dataset.from_tensor_slices((x, y)).map(lambda a, b: (tf.cast(a, tf.float32) / 255.0, tf.one_hot(b, 3)))
    assert ds.element_spec == (tf.TensorSpec((4,), tf.float32), tf.TensorSpec((3,), tf.float32))
    got = list(ds.as_numpy_iterator())
    np.testing.assert_allclose(got[1][0], [0.01568627543747425, 0.019607843831181526, 0.0235294122248888,
                                           0.027450980618596077], rtol=1e-6)
    assert [g[1].tolist() for g in got] == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    ds = Dataset.from_tensor_slices(x).map(lambda a: tf.reshape(tf.expand_dims(a, -1), [2, 2, 1]))
    assert ds.element_spec == tf.TensorSpec((2, 2, 1), tf.uint8)
    assert [a.ravel().tolist() for a in ds.as_numpy_iterator()] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    ds = Dataset.range(3).map(lambda v: (v, 1.0, [1, 2]))
    assert ds.element_spec == (tf.TensorSpec((), tf.int64), tf.TensorSpec((), tf.float32),
                               tf.TensorSpec((2,), tf.int32))
    assert values(ds)[2] == (2, 1.0, [1, 2])
    # dict elements go to the function as one argument and may come back as dicts
    ds = Dataset.from_tensor_slices({"image": np.ones((2, 3), np.float32), "label": [4, 5]})
    out = list(ds.map(lambda d: {"x": d["image"] * 2.0, "y": d["label"]}).as_numpy_iterator())
    assert out[1]["y"] == 5 and out[1]["x"].tolist() == [2, 2, 2]
    # returning an input unchanged, and the same tensor twice
    assert values(Dataset.range(2).map(lambda v: (v, v))) == [(0, 0), (1, 1)]


def test_map_divides_integers_as_tf_does():
    # TF 2.21 printed: `/` on integer tensors is true division (uint8 -> float32, int64 -> float64).
    ds = Dataset.from_tensor_slices(np.array([[0, 128, 255]], np.uint8)).map(lambda x: x / 255)
    assert ds.element_spec == tf.TensorSpec((3,), tf.float32)
    np.testing.assert_allclose(values(ds)[0], [0.0, 0.5019608, 1.0], rtol=1e-6)
    ds = Dataset.from_tensor_slices(np.array([[0, 128, 255]], np.int64)).map(lambda x: x / 2)
    assert ds.element_spec.dtype == tf.float64 and values(ds)[0] == [0.0, 64.0, 127.5]


def test_an_element_that_fails_the_function_names_it():
    ds = Dataset.from_tensor_slices(np.array([0, 1, 7], np.int32)).map(
        lambda i: tf.gather(tf.constant([10.0, 20.0, 30.0]), i))
    it = ds.as_numpy_iterator()
    assert [next(it), next(it)] == [10.0, 20.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Dataset map/filter function.*7 is out of range"):
        next(it)


def test_map_in_parallel_keeps_the_order():
    n = 500
    ds = Dataset.range(n).map(lambda v: v * v, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
    assert values(ds) == [i * i for i in range(n)]
    assert values(Dataset.range(n).map(lambda v: v + 1, num_parallel_calls=3).batch(100).unbatch()) == \
        list(range(1, n + 1))


def test_filter():
    assert values(Dataset.from_tensor_slices([1, 2, 3]).filter(lambda x: x < 3)) == [1, 2]
    assert values(Dataset.from_tensor_slices([1, 2, 3]).filter(lambda x: tf.equal(x, 1))) == [1]
    assert values(Dataset.from_tensor_slices([1, 2, 3]).filter(lambda x: x == 2)) == [2]  # == is elementwise here
    with pytest.raises(Exception, match="scalar bool"):
        Dataset.range(3).filter(lambda x: x + 1)


def test_untraceable_functions_name_the_construct():
    def uses_if(x):
        if x > 2:
            return x
        return -x
    with pytest.raises(TypeError, match=r"uses_if .*test_data.py.*Python bool \(`if`"):
        Dataset.range(3).map(uses_if)
    with pytest.raises(TypeError, match=r"\.numpy\(\)"):
        Dataset.range(3).map(lambda x: x.numpy() + 1)
    with pytest.raises(TypeError, match="numpy array"):
        Dataset.range(3).map(lambda x: np.float32(x))
    with pytest.raises(TypeError, match="iterating over a tensor"):
        Dataset.from_tensor_slices(np.zeros((2, 3))).map(lambda x: [v for v in x])
    with pytest.raises(TypeError, match="returned None"):
        Dataset.range(3).map(lambda x: None)
    with pytest.raises(AttributeError) as e:  # an op weft lacks: Python's own error, with the tracing context
        Dataset.range(3).map(lambda x: tf.no_such_op(x))
    assert "while tracing" in str(e.value.__notes__)
    # outside tracing, tensors are left as they were: == is identity, bool is an error of its own
    t = tf.placeholder(tf.float32)
    assert (t == t) is True
    with pytest.raises(ValueError, match="placeholder"):  # outside tracing: weft/_values.py's rule
        t.numpy()
    with pytest.raises(TypeError):
        iter(t)
    with pytest.raises(TypeError, match="truth value"):
        bool(t)


def test_with_options_and_auto_shard_policy():
    options = tf.data.Options()
    assert options.experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.AUTO
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.OFF
    ds = Dataset.range(4).with_options(options).map(lambda x: x)
    assert ds.options().experimental_distribute.auto_shard_policy == tf.data.experimental.AutoShardPolicy.OFF
    # TF's enum values
    P = tf.data.experimental.AutoShardPolicy
    assert (P.OFF, P.AUTO, P.FILE, P.DATA, P.HINT) == (-1, 0, 1, 2, 3)


def _fused(ds):
    return "Batch(4) -> Map" in ds._ds.debug_string()


@pytest.mark.parametrize("fn,fused", [
    (lambda x, y: (tf.cast(x, tf.float32) / 255.0, y), True),
    (lambda x, y: (tf.expand_dims(tf.cast(x, tf.float32), -1) * 2.0 - 1.0, tf.one_hot(y, 5)), True),
    (lambda x, y: (tf.where(x > 100, x, tf.zeros_like(x)), y), True),
    # these mix rows or move the batch dim when run on a batch: they must stay per element
    (lambda x, y: (tf.cast(x, tf.float32) - tf.reduce_mean(tf.cast(x, tf.float32)), y), False),
    (lambda x, y: (tf.reduce_sum(x, axis=1), y), False),
    (lambda x, y: (x[:, 0], y), False),
    (lambda x, y: (tf.reshape(x, [9]), y), True),  # reshape keeps the batch dim: rewritten to [-1, 9]
    (lambda x, y: (tf.reshape(tf.cast(x, tf.float32), [-1, 1]) * 2.0, y), True),
    (lambda x, y: (tf.reshape(x, [3, 3, 1]) + tf.reshape(x, [-1])[0], y), False),
    (lambda x, y: (tf.reshape(x, tf.shape(x)), y), False),
    (lambda x, y: (tf.transpose(x), y), False),
    (lambda x, y: (tf.cast(x, tf.int64) + tf.cast(y, tf.int64), y), False),  # [3,3] + [] broadcast per element
    (lambda x, y: (tf.expand_dims(x, 0), y), False),
    (lambda x, y: (x, 7), False),  # a constant output has no batch dim
])
def test_map_then_batch_runs_per_batch_only_when_that_cannot_change_results(fn, fused):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 255, size=(10, 3, 3)).astype(np.uint8)
    y = rng.integers(0, 5, size=10).astype(np.int32)
    src = Dataset.from_tensor_slices((x, y))
    ds = src.map(fn).batch(4)
    assert _fused(ds) == fused, ds._ds.debug_string()
    per_element = src.map(fn).prefetch(1).batch(4)  # a stage in between: never fused
    assert not _fused(per_element)
    for a, b in zip(ds.as_numpy_iterator(), per_element.as_numpy_iterator()):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    assert ds.element_spec == per_element.element_spec


def test_leaving_a_generator_pipeline_early_does_not_hang():
    """Breaking out of a loop over from_generator -> parallel map -> prefetch destroys the iterator
    while its threads wait for the GIL (to call the generator): that must not deadlock."""
    import subprocess
    import sys
    script = """
import numpy as np
import weft as tf
def gen():
    i = 0
    while True:
        sum(range(20000))  # Python work: the threads often wait for the GIL
        yield np.float32(i)
        i += 1
ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.float32))
ds = ds.map(lambda x: x * 2.0, num_parallel_calls=2).prefetch(1)
for _ in range(30):
    for x in ds:
        if x.numpy() > 2:
            break
print("done")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "done" in out.stdout, out.stdout + out.stderr
