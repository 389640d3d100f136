"""tf.signal (python/weft/signal.py) and complex values (python/weft/_complex.py). Expected values:
numpy's FFT and closed forms, or TensorFlow 2.21's output for the same call kept here ("TF")."""
import numpy as np
import pytest

import weft as tf

RNG = np.random.default_rng(7)


def test_fft_rfft_irfft_match_numpy():
    x = RNG.standard_normal((3, 10))
    z = x + 1j * RNG.standard_normal((3, 10))
    c = tf.complex(tf.constant(z.real), tf.constant(z.imag))
    assert c.dtype is tf.complex128
    np.testing.assert_allclose(tf.signal.fft(c).numpy(), np.fft.fft(z), atol=1e-10)
    np.testing.assert_allclose(tf.signal.ifft(c).numpy(), np.fft.ifft(z), atol=1e-12)
    np.testing.assert_allclose(tf.signal.rfft(tf.constant(x)).numpy(), np.fft.rfft(x), atol=1e-10)
    # fft_length crops or zero-pads the input, as numpy's n= does.
    np.testing.assert_allclose(tf.signal.rfft(tf.constant(x), fft_length=[16]).numpy(), np.fft.rfft(x, 16), atol=1e-10)
    np.testing.assert_allclose(tf.signal.rfft(tf.constant(x), fft_length=[7]).numpy(), np.fft.rfft(x, 7), atol=1e-10)
    spec = np.fft.rfft(x)
    sc = tf.complex(tf.constant(spec.real), tf.constant(spec.imag))
    np.testing.assert_allclose(tf.signal.irfft(sc).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(tf.signal.irfft(sc, fft_length=[9]).numpy(), np.fft.irfft(spec, 9), atol=1e-12)
    # TF: irfft of [1+2j, 3-1j, 0.5+0.5j] is [1.875, 0.625, -1.125, -0.375].
    small = tf.complex(tf.constant([1., 3., .5]), tf.constant([2., -1., .5]))
    np.testing.assert_allclose(tf.signal.irfft(small).numpy(), [1.875, 0.625, -1.125, -0.375], atol=1e-6)
    np.testing.assert_allclose(np.abs(tf.abs(tf.signal.rfft(tf.constant(x, tf.float32))).numpy()),
                               np.abs(np.fft.rfft(x)), rtol=1e-4, atol=1e-4)


def test_2d_transforms_match_numpy():
    x = RNG.standard_normal((2, 4, 6))
    np.testing.assert_allclose(tf.signal.fft2d(tf.constant(x)).numpy(), np.fft.fft2(x), atol=1e-10)
    np.testing.assert_allclose(tf.signal.ifft2d(tf.constant(x)).numpy(), np.fft.ifft2(x), atol=1e-12)
    r = tf.signal.rfft2d(tf.constant(x))
    np.testing.assert_allclose(r.numpy(), np.fft.rfft2(x), atol=1e-10)
    np.testing.assert_allclose(tf.signal.irfft2d(r).numpy(), x, atol=1e-12)


def test_frame_windows_and_overlap_add():
    x = np.arange(10, dtype=np.float32)
    # TF's outputs for frame(x, 4, 3) and with pad_end=True, pad_value=-1.
    np.testing.assert_array_equal(tf.signal.frame(x, 4, 3).numpy(), [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    np.testing.assert_array_equal(tf.signal.frame(x, 4, 3, pad_end=True, pad_value=-1).numpy(),
                                  [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9], [9, -1, -1, -1]])
    assert tf.signal.frame(np.arange(12.).reshape(2, 6), 3, 2).shape == (2, 2, 3)  # TF
    assert tf.signal.frame(np.arange(12.).reshape(6, 2), 3, 2, axis=0).shape == (2, 3, 2)  # TF
    assert tf.signal.frame(x, 20, 3).shape == (0, 20)
    # TF's windows: periodic only changes even lengths.
    np.testing.assert_allclose(tf.signal.hann_window(5).numpy(), [0, .5, 1, .5, 0], atol=1e-7)
    np.testing.assert_allclose(tf.signal.hann_window(4).numpy(), [0, .5, 1, .5], atol=1e-7)
    np.testing.assert_allclose(tf.signal.hann_window(4, periodic=False).numpy(), [0, .75, .75, 0], atol=1e-6)
    np.testing.assert_allclose(tf.signal.hamming_window(4).numpy(), [.08, .54, 1, .54], atol=1e-6)
    np.testing.assert_array_equal(tf.signal.overlap_and_add(np.ones((3, 4), np.float32), 2).numpy(),
                                  [1, 1, 2, 2, 2, 2, 1, 1])  # TF


def test_fftshift_matches_numpy():
    for shape in [(5,), (4, 7)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(tf.signal.fftshift(x).numpy(), np.fft.fftshift(x))
        np.testing.assert_array_equal(tf.signal.ifftshift(x).numpy(), np.fft.ifftshift(x))
    x = np.arange(12.).reshape(3, 4)
    np.testing.assert_array_equal(tf.signal.fftshift(x, axes=1).numpy(), np.fft.fftshift(x, axes=1))


def test_frame_of_an_unknown_length_runs_in_the_graph():
    with tf.Graph().as_default():
        p = tf.compat.v1.placeholder(tf.float32, [None])
        f = tf.signal.frame(p, 4, 3)
        fp = tf.signal.frame(p, 4, 3, pad_end=True)
        with tf.compat.v1.Session() as sess:
            got, padded = sess.run([f, fp], {p: np.arange(10)})
    np.testing.assert_array_equal(got, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]])
    np.testing.assert_array_equal(padded[-1], [9, 0, 0, 0])


def _stft_np(x, length, step, n):
    frames = np.stack([x[i:i + length] for i in range(0, len(x) - length + 1, step)])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(length) / length)  # periodic Hann, even length
    return np.fft.rfft(frames * window, n)


def test_stft_and_its_inverse():
    x = RNG.standard_normal(200)
    s = tf.signal.stft(tf.constant(x), frame_length=64, frame_step=16)
    assert s.shape == (9, 33)
    np.testing.assert_allclose(s.numpy(), _stft_np(x, 64, 16, 64), atol=1e-9)
    s2 = tf.signal.stft(tf.constant(x), frame_length=60, frame_step=16)  # fft_length 64, zero-padded frames
    np.testing.assert_allclose(s2.numpy(), _stft_np(x, 60, 16, 64), atol=1e-9)
    back = tf.signal.inverse_stft(s, 64, 16, window_fn=tf.signal.inverse_stft_window_fn(16))
    # Every sample covered by a full set of overlapping frames is reconstructed exactly.
    np.testing.assert_allclose(back.numpy()[48:144], x[48:144], atol=1e-9)
    # The audio tutorial's spectrogram: float32 magnitudes of the frames.
    spec = tf.abs(tf.signal.stft(tf.constant(x, tf.float32), frame_length=64, frame_step=16))
    assert spec.dtype == tf.float32
    np.testing.assert_allclose(spec.numpy(), np.abs(_stft_np(x, 64, 16, 64)), rtol=1e-3, atol=1e-4)


def test_stft_gradient_matches_finite_differences():
    x0 = RNG.standard_normal(40)
    x = tf.Variable(x0)
    with tf.GradientTape() as t:
        s = tf.signal.stft(x, frame_length=16, frame_step=8)
        loss = tf.reduce_sum(tf.square(s.real)) + tf.reduce_sum(s.imag)
    g = np.asarray(t.gradient(loss, x))

    def f(v):
        s = _stft_np(v, 16, 8, 16)
        return np.sum(s.real ** 2) + np.sum(s.imag)
    num = np.array([(f(x0 + e) - f(x0 - e)) / 2e-6 for e in np.eye(40) * 1e-6])
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-6)


def test_mel_matrix_dct_and_mfccs():
    # TF's linear_to_mel_weight_matrix(4, 9, 8000, 125, 3800).
    want = [[0, 0, 0, 0], [0.895654, 0.104346, 0, 0], [0, 0.869078, 0.130922, 0], [0, 0.10917, 0.89083, 0],
            [0, 0, 0.505573, 0.494427], [0, 0, 0.004824, 0.995176], [0, 0, 0, 0.576924], [0, 0, 0, 0.203345],
            [0, 0, 0, 0]]
    np.testing.assert_allclose(tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 125., 3800.).numpy(), want, atol=2e-6)
    with pytest.raises(ValueError, match="Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 125., 4100.)
    with pytest.raises(ValueError, match="lower_edge_hertz 500.0 >= upper_edge_hertz 100.0"):
        tf.signal.linear_to_mel_weight_matrix(4, 9, 8000, 500., 100.)
    v = np.array([1., 2., 3., 4.], np.float32)
    # DCT-II closed form: 2 sum_n x_n cos(pi k (2n + 1) / 2N); TF gives [20, -6.3086443, 0, -0.4483409].
    n = np.arange(4)
    closed = np.array([2 * np.sum(v * np.cos(np.pi * k * (2 * n + 1) / 8)) for k in range(4)])
    np.testing.assert_allclose(tf.signal.dct(v).numpy(), closed, atol=1e-5)
    np.testing.assert_allclose(tf.signal.dct(v, type=3).numpy(), [11.999626, -9.102943, 2.6176615, -1.5143447], atol=1e-4)
    np.testing.assert_allclose(tf.signal.dct(v, norm="ortho").numpy(), [5., -2.2304425, 0., -0.15851244], atol=1e-5)
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(v, norm="ortho"), norm="ortho").numpy(), v, atol=1e-5)
    np.testing.assert_allclose(tf.signal.mfccs_from_log_mel_spectrograms(v[None]).numpy(),
                               [[7.071068, -2.2304425, 0., -0.15851244]], atol=1e-5)  # TF


def test_complex_values_and_bad_input():
    c = tf.complex(tf.constant([3., 0.]), tf.constant([4., -2.]))
    np.testing.assert_allclose(tf.abs(c).numpy(), [5., 2.])
    np.testing.assert_allclose(tf.math.real(c).numpy(), [3., 0.])
    np.testing.assert_allclose((c * c).numpy(), np.array([3 + 4j, -2j]) ** 2)
    np.testing.assert_allclose(tf.math.conj(c).numpy(), [3 - 4j, 2j])
    np.testing.assert_allclose(tf.math.angle(c).numpy(), np.angle([3 + 4j, -2j]), rtol=1e-6)
    np.testing.assert_allclose(tf.math.angle(tf.constant([-2., 0., 3.])).numpy(), [np.pi, 0., 0.], rtol=1e-6)
    with pytest.raises(TypeError, match="tf.exp of a complex value"):
        tf.exp(c)
    with pytest.raises(TypeError, match="rfft: the input must be float32 or float64, got int32"):
        tf.signal.rfft(tf.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="fft_length must have 1 element"):
        tf.signal.rfft(tf.constant([1., 2.]), fft_length=[2, 2])
