"""tf.config's logical CPU devices, tf.audio's WAV codec, tf.test.TestCase / compute_gradient,
tf.hessians, tf.tensor_scatter_nd_sub / max / min and tf.version. Expected values: closed forms
and the WAV format (16-bit PCM: sample / 32768)."""
import io
import unittest
import wave

import numpy as np
import pytest

import weft as tf


@pytest.fixture(autouse=True)
def tf2(monkeypatch):
    monkeypatch.setattr(tf._values, "graph_mode", [False])  # TF1 tests may have disabled eager


def test_logical_cpu_devices_feed_mirrored_strategy(monkeypatch):
    from weft.config import _state
    monkeypatch.setitem(_state.defaults, "cpu_logical_devices", None)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 3)
    assert [d.name for d in tf.config.list_logical_devices("CPU")] == ["/device:CPU:%d" % i for i in range(3)]
    assert tf.distribute.MirroredStrategy().num_replicas_in_sync == 3
    assert len(tf.config.get_logical_device_configuration(cpu)) == 3
    assert tf.config.experimental.VirtualDeviceConfiguration is tf.config.LogicalDeviceConfiguration
    with pytest.raises(ValueError, match="at least one"):
        tf.config.set_logical_device_configuration(cpu, [])
    with pytest.raises(ValueError, match="not a GPU"):
        tf.config.experimental.get_memory_info("CPU:0")


def test_wav_round_trip_and_pcm_values():
    samples = np.array([[0.5, -0.5], [-0.25, 0.25], [0.0, 1.0]], np.float32)
    data = tf.audio.encode_wav(samples, 8000).numpy()
    data = data.item() if isinstance(data, np.ndarray) else data
    with wave.open(io.BytesIO(data)) as w:  # Python's own reader: 2 channels, 16-bit, 8000 Hz
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (2, 2, 8000)
        pcm = np.frombuffer(w.readframes(3), "<i2").reshape(3, 2)
    np.testing.assert_array_equal(pcm, [[16384, -16384], [-8192, 8192], [0, 32767]])  # 1.0 clips to 32767
    audio, rate = tf.audio.decode_wav(data)
    np.testing.assert_array_equal(audio.numpy(), pcm / 32768.0)
    assert int(rate.numpy()) == 8000
    mono, _ = tf.audio.decode_wav(tf.audio.encode_wav(samples[:, :1], 8000), desired_channels=2, desired_samples=5)
    assert mono.numpy().shape == (5, 2) and mono.numpy()[3:].tolist() == [[0, 0], [0, 0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a WAV"):
        tf.audio.decode_wav(b"RIFFnope")


def test_test_case_assertions_and_sessions():
    class Case(tf.test.TestCase):
        def test_values(self):
            self.assertAllClose({"a": tf.constant([1., 2.])}, {"a": [1., 2.0000001]})
            self.assertAllEqual(tf.constant([[1, 2]]), [[1, 2]])
            with self.assertRaises(AssertionError):
                self.assertAllClose([1., 2.], [1., 2.1])
            with self.assertRaisesOpError("do not broadcast"):
                self.evaluate(tf.constant([1., 2.]) + tf.constant([1., 2., 3.]))
            self.assertAllInRange(tf.constant([0.5]), 0, 1)

        def test_graph_session(self):
            with tf.Graph().as_default():
                x = tf.compat.v1.placeholder(tf.float32, [2])
                with self.session() as sess:
                    self.assertAllEqual(sess.run(x * 2, {x: [1., 2.]}), [2., 4.])

    result = unittest.TextTestRunner(stream=io.StringIO()).run(unittest.defaultTestLoader.loadTestsFromTestCase(Case))
    assert result.testsRun == 2 and result.wasSuccessful(), result.errors + result.failures


def test_compute_gradient_and_hessians():
    theo, num = tf.test.compute_gradient(lambda v: v * v, [np.array([1., 2.])])
    np.testing.assert_allclose(theo[0], [[2., 0.], [0., 4.]])
    np.testing.assert_allclose(num[0], theo[0], atol=1e-6)
    with tf.Graph().as_default():
        x = tf.compat.v1.placeholder(tf.float64, [2])
        h = tf.hessians(tf.reduce_sum(x ** 3) + x[0] * x[1], x)[0]  # [[6 x0, 1], [1, 6 x1]]
        with tf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(h, {x: [1., 2.]}), [[6., 1.], [1., 12.]])


def test_scatter_combinations_and_version():
    np.testing.assert_array_equal(tf.tensor_scatter_nd_max([1., 5., 3.], [[0], [1]], [4., 2.]).numpy(), [4., 5., 3.])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_min([1., 5., 3.], [[0], [1]], [4., 2.]).numpy(), [1., 2., 3.])
    np.testing.assert_array_equal(tf.tensor_scatter_nd_sub([1., 5., 3.], [[0], [0]], [1., 1.]).numpy(), [-1., 5., 3.])
    assert tf.version.VERSION == tf.__version__
