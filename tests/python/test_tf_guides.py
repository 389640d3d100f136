"""TensorFlow's guides ("Introduction to tensors", "Introduction to Variables", "Introduction to
graphs and tf.function", "Introduction to modules, layers and models", "Overfit and underfit",
"Training checkpoints") run with ``import weft as tf``: the constructs they rely on, with the
results the guides print (or closed forms)."""
import numpy as np
import pytest

import weft as tf
from weft import _values


@pytest.fixture(autouse=True)
def fresh_graph():
    """TF2-style code uses the global default graph (a graph of one's own entered with as_default()
    is TF1 graph mode, as in TF2): a fresh one per test."""
    saved = _values.graph_mode[0]
    _values.graph_mode[0] = False       # an earlier test's tf.disable_eager_execution() (TF1 programs)
    tf.reset_default_graph()
    yield tf.get_default_graph()
    _values.graph_mode[0] = saved


# ---- Introduction to tensors --------------------------------------------------------------------

def test_integer_matmul_and_printing_as_the_guide_shows():
    a = tf.constant([[1, 2], [3, 4]])
    b = tf.constant([[1, 1], [1, 1]])
    assert str(tf.add(a, b)) == "tf.Tensor(\n[[2 3]\n [4 5]], shape=(2, 2), dtype=int32)"
    assert str(tf.matmul(a, b)) == "tf.Tensor(\n[[3 3]\n [7 7]], shape=(2, 2), dtype=int32)"
    assert str(a @ b) == str(tf.matmul(a, b))
    assert str(tf.constant(4)) == "tf.Tensor(4, shape=(), dtype=int32)"
    assert str(tf.constant([2.0, 3.0, 4.0])) == "tf.Tensor([2. 3. 4.], shape=(3,), dtype=float32)"
    assert repr(tf.constant(4)) == "<tf.Tensor: shape=(), dtype=int32, numpy=4>"
    assert repr(tf.constant([1, 2])) == "<tf.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>"
    # int64 batched products against numpy's (exact for integers).
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4) - 7
    y = np.arange(20, dtype=np.int64).reshape(4, 5) * 3
    np.testing.assert_array_equal(tf.matmul(tf.constant(x), tf.constant(y)).numpy(), x @ y)
    # A placeholder's tensor has no value: it prints as the symbolic tensor.
    p = tf.placeholder(tf.float32, shape=(None, 2), name="p")
    assert str(p).startswith("<weft.Tensor 'p:0'")


def test_cast_through_float16_as_the_guide_shows():
    the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
    the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
    assert the_f16_tensor.dtype == tf.float16
    np.testing.assert_array_equal(the_f16_tensor.numpy(), np.array([2.19921875, 3.30078125, 4.3984375], np.float16))
    assert str(tf.cast(the_f16_tensor, dtype=tf.uint8)) == "tf.Tensor([2 3 4], shape=(3,), dtype=uint8)"


def test_static_shape_has_tensorshape_methods():
    x = tf.constant([[1], [2], [3]])
    assert x.shape.as_list() == [3, 1] and x.shape.rank == 2 and x.shape.is_fully_defined()
    assert x.shape == (3, 1) and x.shape[1:].as_list() == [1] and x.shape.num_elements() == 3
    assert tf.zeros([3, 2, 4, 5]).shape[-1] == 5
    assert tf.dtypes.int32 == tf.int32 and tf.dtypes.float16 == tf.float16


def test_python_values_take_the_dtype_of_the_tensor_beside_them():
    assert tf.maximum(0., [1, -1]).dtype == tf.float32
    np.testing.assert_array_equal(tf.maximum(0., [1, -1]).numpy(), [1., 0.])
    assert tf.multiply(tf.constant([1.5, 2.0]), 2).dtype == tf.float32
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])


def test_ragged_sparse_and_strings_at_the_guides_level():
    with pytest.raises(ValueError):
        tf.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
    rt = tf.ragged.constant([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
    assert repr(rt) == "<tf.RaggedTensor [[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]]>"
    assert str(rt.shape) == "(4, None)" and rt.dtype == tf.int32
    np.testing.assert_array_equal(rt.to_tensor().numpy(), [[0, 1, 2, 3], [4, 5, 0, 0], [6, 7, 8, 0], [9, 0, 0, 0]])
    np.testing.assert_array_equal(rt.row_lengths(), [4, 2, 3, 1])
    np.testing.assert_array_equal(rt[2].numpy(), [6, 7, 8])
    with pytest.raises(NotImplementedError, match="to_tensor"):
        tf.ragged.map_flat_values

    st = tf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    np.testing.assert_array_equal(tf.sparse.to_dense(st).numpy(), [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(tf.sparse.to_dense(st, default_value=-1).numpy(),
                                  [[1, -1, -1, -1], [-1, -1, 2, -1], [-1, -1, -1, -1]])
    assert str(st).startswith("SparseTensor(indices=tf.Tensor(\n[[0 0]\n [1 2]], shape=(2, 2), dtype=int64), "
                              "values=tf.Tensor([1 2], shape=(2,), dtype=int32)")
    back = tf.sparse.from_dense(tf.constant([[0, 3], [4, 0]]))
    np.testing.assert_array_equal(back.indices.numpy(), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(tf.sparse.to_dense(back).numpy(), [[0, 3], [4, 0]])
    bad = tf.sparse.SparseTensor(indices=[[5, 0]], values=[1], dense_shape=[3, 4])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.sparse.to_dense(bad).numpy()

    # String tensors are host values with TF's bytes (the guide's printed values).
    scalar_string_tensor = tf.constant("Gray wolf")
    assert scalar_string_tensor.numpy() == b"Gray wolf" and scalar_string_tensor.shape == ()
    assert tf.strings.split(scalar_string_tensor, sep=" ").numpy().tolist() == [b"Gray", b"wolf"]
    tensor_of_strings = tf.constant(["Gray wolf", "Quick brown fox", "Lazy dog"])
    assert repr(tf.strings.split(tensor_of_strings)) == \
        "<tf.RaggedTensor [[b'Gray', b'wolf'], [b'Quick', b'brown', b'fox'], [b'Lazy', b'dog']]>"
    np.testing.assert_array_equal(tf.strings.to_number(tf.strings.split(tf.constant("1 10 100"), " ")), [1, 10, 100])
    assert tf.strings.bytes_split(tf.constant("Duck")).numpy().tolist() == [b"D", b"u", b"c", b"k"]
    with pytest.raises(NotImplementedError, match="a string tensor"):
        tf.reduce_sum(tf.constant("Gray wolf"))
    assert str(tf.io.decode_raw("Duck", tf.uint8)) == "tf.Tensor([ 68 117  99 107], shape=(4,), dtype=uint8)"
    np.testing.assert_array_equal(tf.io.decode_raw([b"\x01\x00", b"\x02\x01"], tf.uint8).numpy(),
                                  [[1, 0], [2, 1]])
    with pytest.raises(ValueError, match="whole number"):
        tf.io.decode_raw(b"abc", tf.int32)


# ---- Introduction to Variables ------------------------------------------------------------------

def test_variables_assign_at_top_level():
    a = tf.Variable([2.0, 3.0])
    a.assign([1, 2])
    np.testing.assert_array_equal(a.numpy(), [1., 2.])
    b = tf.Variable(a)            # a copy of a's value: later assigns to a leave it alone
    a.assign([5, 6])
    np.testing.assert_array_equal(a.numpy(), [5., 6.])
    np.testing.assert_array_equal(b.numpy(), [1., 2.])
    np.testing.assert_array_equal(a.assign_add([2, 3]).numpy(), [7., 9.])
    np.testing.assert_array_equal(a.assign_sub([7, 9]).numpy(), [0., 0.])
    np.testing.assert_array_equal(a.numpy(), [0., 0.])
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="Mark")
    assert repr(v) == ("<tf.Variable 'Mark:0' shape=(2, 2) dtype=float32, numpy=\n"
                       "array([[1., 2.],\n       [3., 4.]], dtype=float32)>")
    assert str(v) == repr(v)
    assert tf.Variable(1, trainable=False).trainable is False
    np.testing.assert_array_equal(tf.math.argmax(v).numpy(), [1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        a.assign([1.0, 2.0, 3.0])


def test_graph_mode_and_sessions_keep_tf1_semantics():
    v = tf.Variable(1.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        up = v.assign_add(1.0)          # built in a Session block: runs only when run
        assert sess.run(v) == 1.0
        assert sess.run(up) == 2.0
        assert str(v * 2).startswith("<weft.Tensor")
    _values.graph_mode[0] = False
    try:
        tf.compat.v1.disable_eager_execution()
        w = tf.Variable(3.0)
        w.assign(4.0)                   # TF1 graph mode: waits for Session.run
        assert not tf.executing_eagerly()
        assert str(w + 1).startswith("<weft.Tensor")
    finally:
        _values.graph_mode[0] = False
    assert w.numpy() == 3.0
    with tf.Graph().as_default():       # a graph of one's own: TF2 builds graphs there too
        assert not tf.executing_eagerly()
        u = tf.Variable(1.0)
        u.assign(2.0)
        assert str(tf.constant(1)).startswith("<weft.Tensor")
    assert u.numpy() == 1.0
    # TF1 code without disable_eager_execution: a variable initialized from a feed; building an
    # assign at top level must not fail, and the user's Session runs it.
    p = tf.placeholder(tf.float32, [2])
    fed = tf.Variable(p)
    count = tf.Variable(0)
    bump = count.assign_add(1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer(), feed_dict={p: np.ones(2, np.float32)})
        assert sess.run(bump) == 1 and sess.run(bump) == 2
        np.testing.assert_array_equal(sess.run(fed), [1., 1.])


# ---- Introduction to graphs and tf.function ------------------------------------------------------

def test_function_traces_once_per_signature_of_eager_tensors():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)               # a Python side effect: runs when tracing
        return x * x + tf.constant(2)

    assert f(tf.constant(2)).numpy() == 6
    assert str(f(tf.constant(3))) == "tf.Tensor(11, shape=(), dtype=int32)"   # as the guide prints it
    assert len(traces) == 1            # same dtype and shape: one trace, as in TF
    np.testing.assert_array_equal(f(tf.constant([1, 2])).numpy(), [3, 6])
    assert len(traces) == 2            # a vector is another signature than a scalar
    tf.config.run_functions_eagerly(True)
    try:
        f(tf.constant(2))
        f(tf.constant(2))
        assert len(traces) == 4        # run as written at every call
    finally:
        tf.config.run_functions_eagerly(False)


def test_function_with_python_control_flow_on_values():
    @tf.function
    def simple_relu(x):
        if tf.greater(x, 0):
            return x
        else:
            return 0
    assert simple_relu(tf.constant(1)).numpy() == 1
    assert simple_relu(tf.constant(-1)).numpy() == 0   # a tensor, as TF's function returns
    assert tf.executing_eagerly()

    seen = []

    @tf.function
    def inside(x):
        seen.append(tf.executing_eagerly())
        return x + 1
    inside(np.array([1.0], np.float32))
    assert seen == [False]

    @tf.function
    def my_relu(x):
        return tf.maximum(0., x)
    cf = my_relu.get_concrete_function(tf.TensorSpec(shape=[None], dtype=tf.float32))
    np.testing.assert_array_equal(cf(tf.constant([1., -2.])).numpy(), [1., 0.])
    with pytest.raises(ValueError, match="input_signature"):
        cf(tf.constant([[1., -2.]]))


# ---- Introduction to modules, layers and models -------------------------------------------------

class _Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class _Seq(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = _Dense(3, 3)
        self.dense_2 = _Dense(3, 2)

    def __call__(self, x):
        return self.dense_2(self.dense_1(x))


def test_checkpoint_of_a_module_and_manager(tmp_path):
    m = _Seq()
    x = tf.constant([[2.0, 2.0, 2.0]])
    want = m(x).numpy()
    ckpt = tf.train.Checkpoint(model=m)
    path = ckpt.write(str(tmp_path / "ckpt"))
    names = dict(tf.train.list_variables(path))
    assert names["model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 3]
    assert names["model/dense_2/b/.ATTRIBUTES/VARIABLE_VALUE"] == [2]
    other = _Seq()
    assert not np.allclose(other.dense_1.w.numpy(), m.dense_1.w.numpy())   # fresh normal draws
    tf.train.Checkpoint(model=other).restore(path).assert_consumed()
    for a, b in ((other.dense_1.w, m.dense_1.w), (other.dense_2.w, m.dense_2.w), (other.dense_2.b, m.dense_2.b)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(other(x).numpy(), want)

    step = tf.Variable(1)
    ckpt = tf.train.Checkpoint(step=step, model=m)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "run"), max_to_keep=2)
    assert manager.latest_checkpoint is None
    assert ckpt.restore(manager.latest_checkpoint) is not None   # nothing to restore: starts from scratch
    for _ in range(3):
        step.assign_add(1)
        manager.save()
    assert [p.rsplit("/", 1)[1] for p in manager.checkpoints] == ["ckpt-2", "ckpt-3"]
    assert tf.train.latest_checkpoint(str(tmp_path / "run")) == manager.latest_checkpoint
    step.assign(100)
    ckpt.restore(manager.latest_checkpoint)
    assert int(step.numpy()) == 4
    again = tf.train.CheckpointManager(tf.train.Checkpoint(step=step, model=m), str(tmp_path / "run"), max_to_keep=2)
    assert again.latest_checkpoint == manager.latest_checkpoint


def _momentum_run(tmp_path, steps_before, steps_after, restore=None):
    """A custom training loop (tf.function, GradientTape, SGD with momentum) on a fixed problem;
    writes a Checkpoint of model and optimizer after ``steps_before`` steps (or restores
    ``restore`` first), then takes ``steps_after`` more. Returns (checkpoint path, weights)."""
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))], name="ckpt_model")
    model.set_weights([np.arange(6, dtype=np.float32).reshape(3, 2) / 10, np.zeros(2, np.float32)])
    opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    x = np.array([[1., 2., 3.], [-1., 0., 1.]], np.float32)
    y = np.array([[1., 0.], [0., 1.]], np.float32)

    @tf.function
    def step(a, b):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(a, training=True) - b))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    if restore:
        ckpt.restore(restore).assert_consumed()
    path = None
    for _ in range(steps_before):
        step(x, y)
    if not restore:
        path = ckpt.write(str(tmp_path / "opt"))
    for _ in range(steps_after):
        step(x, y)
    return path, model.get_weights()


def test_checkpoint_keeps_a_custom_loop_optimizers_slots(tmp_path):
    # TF's training-checkpoints guide: Checkpoint(model=..., optimizer=...) resumes training exactly,
    # momentum included: 3 steps, save, 2 steps == restore into fresh objects, 2 steps.
    path, straight = _momentum_run(tmp_path, 3, 2)
    names = dict(tf.train.list_variables(path))
    assert names["optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"] == []
    assert any(k.startswith("optimizer/slots/") for k in names)
    _, resumed = _momentum_run(tmp_path, 0, 2, restore=path)
    for a, b in zip(straight, resumed):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    _, no_momentum = _momentum_run(tmp_path, 0, 2, restore=None)
    assert not np.allclose(no_momentum[0], straight[0])  # the slots mattered


def test_checkpoint_refuses_what_it_cannot_keep(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.1), loss="mse")
    with pytest.raises(NotImplementedError, match="optimizer.*compiled model.*model.save"):
        tf.train.Checkpoint(optimizer=model.optimizer).write(str(tmp_path / "a"))
    with pytest.raises(NotImplementedError, match="iterator"):
        tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(3))).write(str(tmp_path / "b"))

    class Lazy(tf.Module):
        def __call__(self, x):
            if not hasattr(self, "w"):
                self.w = tf.Variable(tf.ones([x.shape[-1], 2]))
            return tf.matmul(x, self.w)
    built = Lazy()
    built(tf.constant([[1.0, 2.0]]))
    path = tf.train.Checkpoint(model=built).write(str(tmp_path / "c"))
    with pytest.raises(NotImplementedError, match="call the model once"):
        tf.train.Checkpoint(model=Lazy()).restore(path)
    with pytest.raises(NotImplementedError, match="tf.train.Checkpoint"):
        tf.saved_model.save(built, str(tmp_path / "saved"))


def test_custom_layer_called_on_an_eager_tensor():
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.out_features), initializer="ones")
            self.b = self.add_weight(shape=(self.out_features,), initializer="zeros")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b
    layer = FlexibleDense(3)
    np.testing.assert_allclose(np.asarray(layer(tf.constant([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]]))),
                               [[6.0] * 3, [9.0] * 3])


# ---- Basic regression, Overfit and underfit ------------------------------------------------------

def test_regularization_losses_and_one_column_inputs():
    from weft.keras import layers, regularizers
    model = tf.keras.Sequential([layers.Dense(4, kernel_regularizer=regularizers.l2(0.001), input_shape=(1,)),
                                 layers.Dense(1, kernel_regularizer=regularizers.l1(0.01))])
    x = np.linspace(-1, 1, 7).astype(np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), model.predict(x[:, None], verbose=0))
    k1, _, k2, _ = model.get_weights()
    want = 0.001 * np.sum(k1 ** 2) + 0.01 * np.sum(np.abs(k2))
    np.testing.assert_allclose(float(tf.add_n(model.losses)), want, rtol=1e-5)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, 2 * x, epochs=1, verbose=0)


def test_dataset_from_eager_tensors():
    inputs = tf.range(4.)[:, None]
    ds = tf.data.Dataset.from_tensor_slices(dict(x=inputs, y=inputs * 5.)).batch(2)
    first = next(iter(ds))
    np.testing.assert_array_equal(np.asarray(first["y"]), [[0.], [5.]])
