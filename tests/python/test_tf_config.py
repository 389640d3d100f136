"""weft.config, weft.test, weft.io.gfile, keras.backend and keras.mixed_precision: TensorFlow's
utility surface (expected values from TF's documentation)."""
import os

import numpy as np
import pytest

import weft as tf
from weft.config._state import defaults


@pytest.fixture(autouse=True)
def restore_defaults():
    saved = dict(defaults)
    yield
    defaults.clear()
    defaults.update(saved)


def test_devices_as_tensorflow_lists_them():
    cpus = tf.config.list_physical_devices("CPU")
    assert cpus == [tf.config.PhysicalDevice(name="/physical_device:CPU:0", device_type="CPU")]
    assert repr(cpus[0]) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    gpus = tf.config.list_physical_devices("GPU")
    assert len(gpus) == tf.gpu_info()["count"]
    assert tf.config.list_physical_devices() == cpus + gpus
    assert tf.config.experimental.list_physical_devices("CPU") == cpus
    assert tf.config.list_logical_devices("CPU") == [tf.config.LogicalDevice("/device:CPU:0", "CPU")]
    assert tf.config.get_visible_devices("CPU") == cpus
    assert tf.test.is_gpu_available() == bool(gpus)
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if gpus else "")
    assert isinstance(tf.test.is_built_with_cuda(), bool)


def test_visible_devices_hide_gpus_but_not_cpus():
    tf.config.set_visible_devices([], "GPU")
    assert tf.config.get_visible_devices("GPU") == []
    assert tf.config.list_logical_devices("GPU") == []
    assert defaults["use_gpus"] is False
    with pytest.raises(ValueError, match="CPU devices cannot be hidden"):
        tf.config.set_visible_devices([], "CPU")
    tf.config.set_visible_devices(tf.config.list_physical_devices())  # everything visible again
    assert defaults["use_gpus"] is bool(tf.config.list_physical_devices("GPU"))
    assert tf.config.get_visible_devices() == tf.config.list_physical_devices()
    tf.config.set_visible_devices(tf.config.list_physical_devices("CPU"))  # no type: unlisted GPUs hidden
    assert tf.config.get_visible_devices() == tf.config.list_physical_devices("CPU")
    with pytest.raises(ValueError, match="not one of list_physical_devices"):
        tf.config.set_visible_devices([tf.config.PhysicalDevice("/physical_device:GPU:9", "GPU")], "GPU")


def test_memory_growth_only_on_gpus():
    cpu = tf.config.list_physical_devices("CPU")[0]
    with pytest.raises(ValueError, match="non-GPU device"):
        tf.config.experimental.set_memory_growth(cpu, True)
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
        assert tf.config.experimental.get_memory_growth(gpu) is True


def _threads():
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_threading_sets_the_session_pools():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    assert tf.config.threading.get_inter_op_parallelism_threads() == 1
    before = _threads()
    a = tf.Session(graph=tf.Graph())
    small = _threads() - before
    tf.config.threading.set_inter_op_parallelism_threads(4)
    tf.config.threading.set_intra_op_parallelism_threads(6)
    before = _threads()
    b = tf.Session(graph=tf.Graph())
    assert _threads() - before - small == (4 + 6) - (1 + 1)
    a.close(), b.close()
    with pytest.raises(ValueError, match="int >= 0"):
        tf.config.threading.set_intra_op_parallelism_threads(-1)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_threading_sets_keras_compile_defaults():
    def model_threads(inter, intra):
        tf.config.threading.set_inter_op_parallelism_threads(inter)
        tf.config.threading.set_intra_op_parallelism_threads(intra)
        m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
        before = _threads()
        m.compile(loss="mse", optimizer="sgd")
        m.predict(np.ones((2, 4), np.float32), verbose=0)
        return _threads() - before, m
    model_threads(1, 1)  # the first model may start process-wide threads of its own
    few, m1 = model_threads(1, 1)
    many, m2 = model_threads(3, 5)
    assert many - few == (3 + 5) - (1 + 1)


def test_run_functions_eagerly_and_determinism_are_remembered():
    tf.config.run_functions_eagerly(True)
    assert tf.config.functions_run_eagerly() is True
    tf.config.experimental.enable_op_determinism()
    assert tf.config.experimental.is_op_determinism_enabled()
    tf.config.run_functions_eagerly(False)


def test_gfile_round_trip(tmp_path):
    gf = tf.io.gfile
    d = str(tmp_path / "a" / "b")
    gf.makedirs(d)
    gf.makedirs(d)  # existing: fine
    assert gf.isdir(d) and gf.exists(d)
    with gf.GFile(os.path.join(d, "x.txt"), "w") as f:
        f.write("line1\nline2\n")
    with gf.GFile("file://" + os.path.join(d, "x.txt")) as f:
        assert f.readlines() == ["line1\n", "line2\n"]
        assert f.size() == 12
    with gf.GFile(os.path.join(d, "x.txt"), "rb") as f:
        assert f.read(5) == b"line1"
    assert gf.stat(os.path.join(d, "x.txt")).length == 12
    assert sorted(gf.listdir(str(tmp_path / "a"))) == ["b"]
    assert gf.glob(os.path.join(d, "*.txt")) == [os.path.join(d, "x.txt")]
    gf.copy(os.path.join(d, "x.txt"), os.path.join(d, "y.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        gf.copy(os.path.join(d, "x.txt"), os.path.join(d, "y.txt"))
    gf.rename(os.path.join(d, "y.txt"), os.path.join(d, "z.txt"))
    assert sorted(gf.listdir(d)) == ["x.txt", "z.txt"]
    walked = list(gf.walk(str(tmp_path / "a")))
    assert walked[0][1] == ["b"] and sorted(walked[1][2]) == ["x.txt", "z.txt"]
    gf.remove(os.path.join(d, "z.txt"))
    with pytest.raises(tf.errors.NotFoundError):
        gf.remove(os.path.join(d, "z.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        gf.mkdir(d)
    gf.rmtree(str(tmp_path / "a"))
    assert not gf.exists(str(tmp_path / "a"))
    with pytest.raises(NotImplementedError, match="local files only"):
        gf.exists("gs://bucket/model")


def test_backend_helpers():
    K = tf.keras.backend
    assert K.epsilon() == 1e-7 and K.floatx() == "float32" and K.image_data_format() == "channels_last"
    with pytest.raises(NotImplementedError, match="float32"):
        K.set_floatx("float16")
    with pytest.raises(NotImplementedError):
        K.set_epsilon(1e-4)
    K.set_floatx("float32")
    assert K.int_shape(tf.keras.Input(shape=(3, 4))) == (None, 3, 4)
    assert K.int_shape(np.zeros((2, 5))) == (2, 5)
    c = K.cast(np.array([1.7, -2.2]), "int32")
    assert c.dtype == np.int32 and c.tolist() == [1, -2]
    p = tf.placeholder(tf.float32, [2])
    assert K.cast(p, tf.int64).dtype == tf.int64
    m = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(4,))])
    m.compile(loss="mse", optimizer=tf.keras.optimizers.SGD(0.1))
    K.set_value(m.optimizer.learning_rate, 1e-4)
    assert abs(float(K.get_value(m.optimizer.learning_rate)) - 1e-4) < 1e-10
    K.set_value(m.optimizer.lr, 0.5)
    assert float(K.get_value(m.optimizer.learning_rate)) == 0.5
    tf.placeholder(tf.float32, [1], name="p")
    K.clear_session()
    assert tf.get_default_graph().get_operations() == []


def test_mixed_precision_float32_only():
    tf.keras.mixed_precision.set_global_policy("float32")
    assert tf.keras.mixed_precision.global_policy().compute_dtype == "float32"
    for name in ("mixed_float16", "mixed_bfloat16"):
        with pytest.raises(NotImplementedError, match="float32 only"):
            tf.keras.mixed_precision.set_global_policy(name)


def test_distribute_reduce_op_and_input_context():
    assert tf.distribute.ReduceOp.SUM == "SUM" and tf.distribute.ReduceOp.MEAN == "MEAN"
    ctx = tf.distribute.InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
    assert (ctx.num_input_pipelines, ctx.input_pipeline_id, ctx.num_replicas_in_sync) == (2, 1, 4)
    assert ctx.get_per_replica_batch_size(64) == 16
    with pytest.raises(ValueError, match="not divisible"):
        ctx.get_per_replica_batch_size(10)


def test_optimizer_jit_switch_is_remembered():
    tf.config.optimizer.set_jit(True)
    assert tf.config.optimizer.get_jit() is True
    with pytest.raises(ValueError, match="set_jit"):
        tf.config.optimizer.set_jit("sometimes")
