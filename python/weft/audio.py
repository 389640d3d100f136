"""``tf.audio``: WAV files (16-bit PCM) to float32 samples and back, on the host (Python's wave
module), as TensorFlow's decode_wav / encode_wav."""
import io
import wave

import numpy as np

from . import framework as _fw


def _bytes(contents, what):
    if isinstance(contents, _fw.Tensor):
        contents = contents.numpy()
    if isinstance(contents, np.ndarray):
        contents = contents.item() if contents.size == 1 else None
    if isinstance(contents, str):
        contents = contents.encode("latin-1")
    if not isinstance(contents, (bytes, bytearray)):
        raise TypeError("%s: contents must be the bytes of one WAV file (tf.io.read_file's value)" % what)
    return bytes(contents)


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """(audio, sample_rate): float32 samples in [-1, 1), shape [samples, channels], and an int32
    scalar. desired_channels: channels kept (one channel is repeated to fill more, as TF);
    desired_samples: samples kept, zero-padded at the end."""
    data = _bytes(contents, "decode_wav")
    try:
        with wave.open(io.BytesIO(data)) as w:
            channels, width, rate, n = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(n)
    except (wave.Error, EOFError) as e:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("decode_wav: not a WAV file (%s)" % e) from None
    if width != 2:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError("decode_wav: %d-bit samples; TF's decode_wav reads 16-bit PCM" % (8 * width))
    audio = np.frombuffer(raw, "<i2").reshape(-1, channels).astype(np.float32) / 32768.0
    if desired_channels is not None and desired_channels > 0 and desired_channels != channels:
        if channels == 1:
            audio = np.repeat(audio, desired_channels, axis=1)
        elif desired_channels < channels:
            audio = audio[:, :desired_channels]
        else:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError("decode_wav: %d channels cannot become %d" % (channels, desired_channels))
    if desired_samples is not None and desired_samples >= 0:
        audio = audio[:desired_samples]
        if len(audio) < desired_samples:
            audio = np.concatenate([audio, np.zeros((desired_samples - len(audio), audio.shape[1]), np.float32)])
    return _fw.constant(audio), _fw.constant(np.int32(rate))


def encode_wav(audio, sample_rate, name=None):
    """The bytes of a 16-bit PCM WAV file of float samples [samples, channels] in [-1, 1] (clipped)."""
    a = np.asarray(audio.numpy() if isinstance(audio, _fw.Tensor) else audio, np.float32)
    if a.ndim != 2:
        raise ValueError("encode_wav: audio must be [samples, channels], got shape %s" % (a.shape,))
    rate = int(np.asarray(sample_rate.numpy() if isinstance(sample_rate, _fw.Tensor) else sample_rate))
    pcm = np.clip(np.round(a * 32768.0), -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(a.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    from . import _text_values
    return _text_values.wrap(_text_values.as_bytes_array(buf.getvalue()))


__all__ = ["decode_wav", "encode_wav"]
