"""``tf.signal``: FFTs, framing, windows, STFT and its inverse, mel filter banks, DCT and MFCCs,
composed from weft's graph ops, so gradients are theirs and every device runs them::

    wave = tf.constant(np.sin(np.arange(16000) * 0.05), tf.float32)
    spec = tf.abs(tf.signal.stft(wave, frame_length=255, frame_step=128))          # [124, 129]
    mel = tf.matmul(spec, tf.signal.linear_to_mel_weight_matrix(40, 129, 16000, 20.0, 4000.0))
    mfcc = tf.signal.mfccs_from_log_mel_spectrograms(tf.math.log(mel + 1e-6))[..., :13]

The Fourier transforms are op FFT (ops/signal.cc: O(n log n) for every length, its gradient the
transform of the other sign); rfft / irfft crop, pad and mirror around it. The DCT (MFCCs) is a
MatMul with its matrix, built with numpy when the graph is built (the mel bins are few). Complex
results are ``ComplexTensor`` pairs of real tensors (weft has no complex dtype: _complex.py).
"""
import numpy as np

from . import framework as _fw
from ._complex import ComplexTensor

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2d", "ifft2d", "rfft2d", "irfft2d", "frame", "overlap_and_add",
           "hann_window", "hamming_window", "stft", "inverse_stft", "inverse_stft_window_fn",
           "linear_to_mel_weight_matrix", "mfccs_from_log_mel_spectrograms", "dct", "idct", "fftshift", "ifftshift"]


def _tf():
    return _fw.api()


def _real(x, what):
    if isinstance(x, ComplexTensor):
        raise TypeError("tf.signal.%s: the input must be real, got a complex value" % what)
    x = _fw.convert_to_tensor(x)
    if x.dtype not in (_fw.float32, _fw.float64):
        raise TypeError("tf.signal.%s: the input must be float32 or float64, got %s (%s)" % (what, x.dtype.name, x.name))
    return x


def _parts(x, what):
    """(real, imag) of a complex (or real) input."""
    if isinstance(x, ComplexTensor):
        return x.real, x.imag
    x = _real(x, what)
    return x, _tf().zeros_like(x)


def _last_dim(x, what):
    if x.shape is None or not x.shape or x.shape[-1] is None:
        raise ValueError("tf.signal.%s: the inner-most dimension of %s must be known when the graph is built (shape %s)"
                         % (what, x.name, x.shape))
    return int(x.shape[-1])


def _length(fft_length, default, what, rank=1):
    if fft_length is None:
        return default
    v = fft_length
    if isinstance(v, _fw.Tensor):
        v = _tf().get_static_value(v)
        if v is None:
            raise ValueError("tf.signal.%s: fft_length must be known when the graph is built" % what)
    v = np.asarray(v).reshape(-1)
    if v.size != rank:
        raise ValueError("tf.signal.%s: fft_length must have %d element(s), got %s" % (what, rank, v.tolist()))
    return [int(n) for n in v] if rank > 1 else int(v[0])


def _apply(x, m):
    """x [..., L] @ m [L, K] (a numpy matrix) -> [..., K], keeping the static shape."""
    tf = _tf()
    length, k = m.shape
    out = tf.matmul(tf.reshape(x, [-1, length]), _fw.constant(m, x.dtype))
    outer = list(x.shape[:-1])
    if outer.count(None) <= 1:
        return tf.reshape(out, [-1 if d is None else d for d in outer] + [k])
    return tf.reshape(out, tf.concat([tf.shape(x)[:-1], [k]], 0))


def _fit(x, n):
    """x with its inner-most axis cropped or zero-padded to n."""
    tf = _tf()
    length = x.shape[-1] if x.shape else None
    if length == n:
        return x
    if length is not None and length > n:
        return x[..., :n]
    if length is not None:
        return tf.pad(x, [[0, 0]] * (len(x.shape) - 1) + [[0, n - length]])
    zeros = tf.zeros(tf.concat([tf.shape(x)[:-1], [n]], 0), x.dtype)
    return tf.concat([x, zeros], -1)[..., :n]


def _fft_op(re, im, inverse):
    """Op FFT (ops/signal.cc): forward unscaled, inverse scaled by 1 / n, as tf.signal's."""
    r, i = _tf().raw_ops.FFT(re, im, inverse=inverse, normalize=inverse)
    return ComplexTensor(r, i)


def _dft(x, n_out, inverse, what):
    """The complex DFT of length n_out along the last axis (input cropped or zero-padded)."""
    re, im = _parts(x, what)
    return _fft_op(_fit(re, n_out), _fit(im, n_out), inverse)


def fft(input, name=None):  # noqa: A002 - TF's argument names
    """``tf.signal.fft``: the DFT over the inner-most axis (a complex result)."""
    re, im = _parts(input, "fft")
    return _fft_op(re, im, False)


def ifft(input, name=None):  # noqa: A002
    """``tf.signal.ifft``: the inverse DFT over the inner-most axis (scaled by 1/n)."""
    re, im = _parts(input, "ifft")
    return _fft_op(re, im, True)


def rfft(input_tensor, fft_length=None, name=None):
    """``tf.signal.rfft``: the DFT of a real signal, fft_length // 2 + 1 bins (the input's inner-most
    dimension is cropped or zero-padded to fft_length)."""
    x = _real(input_tensor, "rfft")
    n = _length(fft_length, None, "rfft")
    if n is None:
        n = _last_dim(x, "rfft")
    x = _fit(x, n)
    full = _fft_op(x, _tf().zeros_like(x), False)
    return ComplexTensor(full.real[..., :n // 2 + 1], full.imag[..., :n // 2 + 1])


def irfft(input_tensor, fft_length=None, name=None):
    """``tf.signal.irfft``: the real signal of length fft_length (default 2 * (bins - 1)) whose
    rfft is the input: the spectrum is completed by Hermitian symmetry and inverse-transformed;
    the imaginary parts of the DC and Nyquist bins drop out, as TF's."""
    tf = _tf()
    re, im = _parts(input_tensor, "irfft")
    n = _length(fft_length, None, "irfft")
    if n is None:
        n = 2 * (_last_dim(re, "irfft") - 1)
    if n < 1:
        raise ValueError("tf.signal.irfft: fft_length must be positive, got %d" % n)
    half = n // 2 + 1
    re, im = _fit(re, half), _fit(im, half)
    mirrored = np.arange(n - half, 0, -1, dtype=np.int32)  # X[n - k] for k = half .. n - 1
    if mirrored.size:
        axis = len(re.shape) - 1
        re = tf.concat([re, tf.gather(re, mirrored, axis=axis)], -1)
        im = tf.concat([im, -tf.gather(im, mirrored, axis=axis)], -1)
    return _fft_op(re, im, True).real


def _swap(x):
    """The last two axes swapped (ComplexTensor or real)."""
    if isinstance(x, ComplexTensor):
        return ComplexTensor(_swap(x.real), _swap(x.imag))
    if x.shape is None or len(x.shape) < 2:
        raise ValueError("tf.signal: a 2-D transform needs a tensor of known rank >= 2, got shape %s" % (x.shape,))
    r = len(x.shape)
    return _tf().transpose(x, list(range(r - 2)) + [r - 1, r - 2])


def fft2d(input, name=None):  # noqa: A002
    """``tf.signal.fft2d``: the DFT over the two inner-most axes."""
    return _swap(fft(_swap(fft(input))))


def ifft2d(input, name=None):  # noqa: A002
    """``tf.signal.ifft2d``: the inverse DFT over the two inner-most axes."""
    return _swap(ifft(_swap(ifft(input))))


def rfft2d(input_tensor, fft_length=None, name=None):
    """``tf.signal.rfft2d``: rfft over the inner-most axis, then the DFT over the one before."""
    x = _real(input_tensor, "rfft2d")
    n0, n1 = _length(fft_length, [None, None], "rfft2d", rank=2) if fft_length is not None else (None, None)
    inner = rfft(x, None if n1 is None else [n1])
    t = _swap(inner)
    return _swap(_dft(t, n0 if n0 is not None else _last_dim(t.real, "rfft2d"), False, "rfft2d"))


def irfft2d(input_tensor, fft_length=None, name=None):
    """``tf.signal.irfft2d``: the inverse DFT over the second inner-most axis, then irfft."""
    n0, n1 = _length(fft_length, [None, None], "irfft2d", rank=2) if fft_length is not None else (None, None)
    t = input_tensor if isinstance(input_tensor, ComplexTensor) else ComplexTensor(input_tensor, 0.0 * input_tensor)
    t = _swap(t)
    outer = _swap(_dft(t, n0 if n0 is not None else _last_dim(t.real, "irfft2d"), True, "irfft2d"))
    return irfft(outer, None if n1 is None else [n1])


def _shift(x, axes, sign, what):
    tf = _tf()
    x = _fw.convert_to_tensor(x)
    if x.shape is None:
        raise ValueError("tf.signal.%s: the rank of %s must be known when the graph is built" % (what, x.name))
    r = len(x.shape)
    axes = list(range(r)) if axes is None else [int(a) for a in np.atleast_1d(axes)]
    dims = [x.shape[a] for a in axes]
    if None in dims:
        raise ValueError("tf.signal.%s: the shifted dims of %s must be known when the graph is built (shape %s)" % (
            what, x.name, x.shape))
    return tf.roll(x, [sign * (d // 2) for d in dims], axes)


def fftshift(x, axes=None, name=None):
    """``tf.signal.fftshift``: the zero frequency moved to the centre (a roll by n // 2 per axis)."""
    return _shift(x, axes, 1, "fftshift")


def ifftshift(x, axes=None, name=None):
    """``tf.signal.ifftshift``: fftshift's inverse (a roll by -(n // 2) per axis)."""
    return _shift(x, axes, -1, "ifftshift")


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """``tf.signal.frame``: overlapping windows of ``frame_length`` every ``frame_step`` samples
    along ``axis``: [..., frames, frame_length, ...]. Without ``pad_end`` a signal shorter than a
    frame gives 0 frames; with it the end is padded with ``pad_value`` to ceil(n / frame_step) frames."""
    tf = _tf()
    x = _fw.convert_to_tensor(signal)
    if x.shape is None:
        raise ValueError("tf.signal.frame: the signal's rank must be known when the graph is built")
    r = len(x.shape)
    if r == 0:
        raise ValueError("tf.signal.frame: the signal must have at least one dimension, got a scalar")
    a = axis + r if axis < 0 else axis
    if not 0 <= a < r:
        raise ValueError("tf.signal.frame: axis %d is out of range for a signal of rank %d" % (axis, r))
    frame_length, frame_step = int(frame_length), int(frame_step)
    if frame_length <= 0 or frame_step <= 0:
        raise ValueError("tf.signal.frame: frame_length and frame_step must be positive, got %d and %d"
                         % (frame_length, frame_step))
    n = x.shape[a]
    if n is not None:
        frames = -(-n // frame_step) if pad_end else max(0, 1 + (n - frame_length) // frame_step)
        need = (frames - 1) * frame_step + frame_length if frames else 0
        if pad_end and need > n:
            pad_shape = [d for d in x.shape]
            pad_shape[a] = need - n
            if None in pad_shape:
                dims = tf.unstack(tf.shape(x))
                dims[a] = need - n
                pad = tf.fill(tf.stack(dims), tf.cast(pad_value, x.dtype))
            else:
                pad = tf.fill(pad_shape, tf.cast(pad_value, x.dtype))
            x = tf.concat([x, pad], a)
        idx = (np.arange(frames)[:, None] * frame_step + np.arange(frame_length)[None, :]).astype(np.int32)
        return tf.gather(x, idx.reshape(frames, frame_length), axis=a)
    n = tf.shape(x)[a]
    if pad_end:
        frames = (n + frame_step - 1) // frame_step
        extra = tf.maximum((frames - 1) * frame_step + frame_length - n, 0)
        dims = tf.unstack(tf.shape(x))
        dims[a] = extra
        x = tf.concat([x, tf.fill(tf.stack(dims), tf.cast(pad_value, x.dtype))], a)
    else:
        frames = tf.maximum(1 + (n - frame_length) // frame_step, 0)
    idx = tf.expand_dims(tf.range(frames) * frame_step, 1) + tf.expand_dims(tf.range(frame_length), 0)
    return tf.gather(x, idx, axis=a)


def overlap_and_add(signal, frame_step, name=None):
    """``tf.signal.overlap_and_add``: [..., frames, frame_length] -> [..., (frames - 1) * frame_step
    + frame_length], frames summed where they overlap (an UnsortedSegmentSum)."""
    tf = _tf()
    x = _fw.convert_to_tensor(signal)
    if x.shape is None or len(x.shape) < 2:
        raise ValueError("tf.signal.overlap_and_add: the signal must have rank >= 2, got shape %s" % (x.shape,))
    length = _last_dim(x, "overlap_and_add")
    frame_step = int(frame_step)
    frames = x.shape[-2] if x.shape[-2] is not None else tf.shape(x)[-2]
    out_len = (frames - 1) * frame_step + length
    ids = tf.reshape(tf.expand_dims(tf.range(frames) * frame_step, 1) + tf.expand_dims(tf.range(length), 0), [-1])
    outer = tf.shape(x)[:-2]
    flat = tf.transpose(tf.reshape(x, tf.concat([[-1], tf.reshape(frames * length, [1])], 0)))
    summed = tf.transpose(tf.math.unsorted_segment_sum(flat, ids, out_len))
    static = list(x.shape[:-2])
    if None not in static and not isinstance(out_len, _fw.Tensor):
        return tf.reshape(summed, static + [out_len])
    return tf.reshape(summed, tf.concat([outer, tf.reshape(out_len, [1])], 0))


def _raised_cosine(window_length, periodic, dtype, a, b, what):
    n = int(_tf().get_static_value(window_length) if isinstance(window_length, _fw.Tensor) else window_length)
    if n < 0:
        raise ValueError("tf.signal.%s: window_length must be >= 0, got %d" % (what, n))
    if n == 1:
        return _fw.constant(np.ones(1), dtype)
    # TF's definition: periodic changes the denominator of even lengths only.
    denom = n + (1 if periodic else 0) * (1 - n % 2) - 1
    return _fw.constant(a - b * np.cos(2 * np.pi * np.arange(n) / max(denom, 1)), dtype)


def hann_window(window_length, periodic=True, dtype=_fw.float32, name=None):
    """``tf.signal.hann_window``: 0.5 - 0.5 cos(2 pi n / N)."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window")


def hamming_window(window_length, periodic=True, dtype=_fw.float32, name=None):
    """``tf.signal.hamming_window``: 0.54 - 0.46 cos(2 pi n / N)."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window")


def _fft_length(frame_length):
    return 1 << int(np.ceil(np.log2(frame_length)))


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):
    """``tf.signal.stft``: rfft of the windowed frames, [..., frames, fft_length // 2 + 1] (fft_length:
    the smallest power of 2 >= frame_length by default)."""
    x = _real(signals, "stft")
    frames = frame(x, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        frames = frames * window_fn(int(frame_length), dtype=x.dtype)
    return rfft(frames, [int(fft_length) if fft_length is not None else _fft_length(int(frame_length))])


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """``tf.signal.inverse_stft_window_fn``: the window that makes inverse_stft invert stft: the
    forward window over the sum of its squares at each overlap."""
    def fn(frame_length, dtype=_fw.float32):
        w = np.asarray(_tf().get_static_value(forward_window_fn(frame_length, dtype=dtype)), np.float64)
        overlaps = -(-frame_length // frame_step)
        denom = np.pad(w * w, (0, overlaps * frame_step - frame_length)).reshape(overlaps, frame_step).sum(0)
        return _fw.constant(w / np.tile(denom, overlaps)[:frame_length], dtype)
    return fn


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):
    """``tf.signal.inverse_stft``: irfft of each frame, cut to frame_length, windowed, overlap-added.
    With ``window_fn=tf.signal.inverse_stft_window_fn(frame_step)`` it inverts ``stft``."""
    frame_length = int(frame_length)
    n = int(fft_length) if fft_length is not None else _fft_length(frame_length)
    frames = irfft(stfts, [n])
    tf = _tf()
    if n > frame_length:
        frames = frames[..., :frame_length]
    elif n < frame_length:
        r = len(frames.shape)
        frames = tf.pad(frames, [[0, 0]] * (r - 1) + [[0, frame_length - n]])
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=frames.dtype)
    return overlap_and_add(frames, frame_step)


def _hertz_to_mel(f):
    return 1127.0 * np.log(1.0 + f / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0,
                                upper_edge_hertz=3800.0, dtype=_fw.float32, name=None):
    """``tf.signal.linear_to_mel_weight_matrix``: [num_spectrogram_bins, num_mel_bins] triangular
    filters, evenly spaced on the mel scale (HTK's 1127 ln(1 + f / 700)); the DC bin gets no weight."""
    if num_mel_bins <= 0:
        raise ValueError("num_mel_bins must be positive. Got: %s" % num_mel_bins)
    if lower_edge_hertz < 0.0:
        raise ValueError("lower_edge_hertz must be non-negative. Got: %s" % lower_edge_hertz)
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError("lower_edge_hertz %.1f >= upper_edge_hertz %.1f" % (lower_edge_hertz, upper_edge_hertz))
    if sample_rate <= 0.0:
        raise ValueError("sample_rate must be positive. Got: %s" % sample_rate)
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError("upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). Got %s "
                         "for sample_rate: %s" % (upper_edge_hertz, sample_rate))
    linear = np.linspace(0.0, sample_rate / 2.0, num_spectrogram_bins)[1:]
    bins_mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(_hertz_to_mel(lower_edge_hertz), _hertz_to_mel(upper_edge_hertz), num_mel_bins + 2)
    lower, center, upper = edges[:-2][None, :], edges[1:-1][None, :], edges[2:][None, :]
    w = np.maximum(0.0, np.minimum((bins_mel - lower) / (center - lower), (upper - bins_mel) / (upper - center)))
    return _fw.constant(np.concatenate([np.zeros((1, num_mel_bins)), w], 0), dtype)


def _dct_matrix(n, type, norm):  # noqa: A002
    k = np.arange(n)
    if type == 2:
        m = 2 * np.cos(np.pi * np.outer(2 * k + 1, k) / (2 * n))  # [in n, out k]
        if norm == "ortho":
            m *= np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))[None, :]
        return m
    # type 3: y_k = x_0 + 2 sum_{n>=1} x_n cos(pi n (2k + 1) / 2N); ortho: the inverse of ortho type 2
    m = 2 * np.cos(np.pi * np.outer(k, 2 * k + 1) / (2 * n))
    m[0, :] = 1.0
    if norm == "ortho":
        m = _dct_matrix(n, 2, "ortho").T
    return m


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """``tf.signal.dct`` over the last axis: types 2 and 3, ``norm`` None or "ortho"."""
    x = _real(input, "dct")
    if axis != -1:
        raise NotImplementedError("tf.signal.dct: only axis=-1 is supported, as in TensorFlow")
    if type not in (2, 3):
        raise NotImplementedError("tf.signal.dct: type %r is not supported by weft (types 2 and 3 are)" % (type,))
    if norm not in (None, "ortho"):
        raise ValueError("tf.signal.dct: norm must be None or 'ortho', got %r" % (norm,))
    length = _last_dim(x, "dct")
    if n is not None and n != length:
        x = x[..., :n] if n < length else _tf().pad(x, [[0, 0]] * (len(x.shape) - 1) + [[0, n - length]])
        length = n
    return _apply(x, _dct_matrix(length, type, norm))


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):  # noqa: A002
    """``tf.signal.idct``: dct of the inverse type (2 <-> 3), as TF's (unscaled without ``norm``)."""
    return dct(input, type={2: 3, 3: 2}.get(type, type), n=n, axis=axis, norm=norm)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """``tf.signal.mfccs_from_log_mel_spectrograms``: DCT-II of the log-mel bins scaled by
    1 / sqrt(2 * num_mel_bins), as TF's."""
    x = _real(log_mel_spectrograms, "mfccs_from_log_mel_spectrograms")
    bins = _last_dim(x, "mfccs_from_log_mel_spectrograms")
    return _apply(x, _dct_matrix(bins, 2, None) / np.sqrt(2.0 * bins))
