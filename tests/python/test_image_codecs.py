"""tf.io / tf.image image codecs (python/weft/io/_image_codecs.py). Expected values: TF 2.21's
decoders on the same bytes (data/image_codecs_reference.json, gen_image_codecs_reference.py:
JPEG and PNG files TF encoded, a palette PNG, an animated GIF and a BMP written by hand), and PNG
decoded by hand with zlib for weft's encoder. The tests never import TensorFlow."""
import base64
import json
import os
import struct
import zlib

import numpy as np
import pytest

import weft as tf

REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "image_codecs_reference.json")))


def ref_bytes(name):
    return base64.b64decode(REF[name]["bytes"])


def ref_array(name, key):
    r = REF[name][key]
    return np.asarray(r["values"], dtype=r["dtype"]).reshape(r["shape"])


# (file, reference key) -> (weft call, max abs difference allowed)
CALLS = {
    ("rgb.jpg", "accurate"): (lambda b: tf.io.decode_jpeg(b, dct_method="INTEGER_ACCURATE"), 0),
    # TF's default is libjpeg's fast integer IDCT; weft's codec always runs the accurate one.
    ("rgb.jpg", "default"): (lambda b: tf.io.decode_jpeg(b), 4),
    ("rgb.jpg", "gray"): (lambda b: tf.io.decode_jpeg(b, channels=1, dct_method="INTEGER_ACCURATE"), 1),
    ("rgb.jpg", "ratio2"): (lambda b: tf.io.decode_jpeg(b, ratio=2, dct_method="INTEGER_ACCURATE"), 0),
    ("rgb.jpg", "image_float"): (lambda b: tf.io.decode_image(b, dtype=tf.float32), 4 / 255),
    ("gray.jpg", "accurate"): (lambda b: tf.image.decode_jpeg(b, dct_method="INTEGER_ACCURATE"), 0),
    ("gray.jpg", "rgb"): (lambda b: tf.io.decode_jpeg(b, channels=3, dct_method="INTEGER_ACCURATE"), 0),
    ("rgba.png", "default"): (lambda b: tf.io.decode_png(b), 0),
    ("rgba.png", "rgb"): (lambda b: tf.image.decode_png(b, channels=3), 0),
    ("rgba.png", "u16"): (lambda b: tf.io.decode_png(b, dtype=tf.uint16), 0),
    ("rgba.png", "gray"): (lambda b: tf.io.decode_png(b, channels=1), 1),  # libpng's and Pillow's luma rounding
    ("rgb16.png", "u16"): (lambda b: tf.io.decode_png(b, dtype=tf.uint16), 0),
    ("rgb16.png", "u8"): (lambda b: tf.io.decode_png(b), 0),
    ("rgb16.png", "rgba16"): (lambda b: tf.io.decode_png(b, channels=4, dtype=tf.uint16), 0),
    ("palette_trns.png", "default"): (lambda b: tf.io.decode_png(b), 0),
    ("palette_trns.png", "rgb"): (lambda b: tf.io.decode_png(b, channels=3), 0),
    ("anim.gif", "gif"): (lambda b: tf.io.decode_gif(b), 0),
    ("anim.gif", "image"): (lambda b: tf.io.decode_image(b), 0),
    ("anim.gif", "first"): (lambda b: tf.image.decode_image(b, expand_animations=False), 0),
    ("rgb.bmp", "default"): (lambda b: tf.io.decode_bmp(b), 0),
    ("rgb.bmp", "image"): (lambda b: tf.io.decode_image(b), 0),
}


@pytest.mark.parametrize("case", sorted(CALLS), ids=lambda c: "%s-%s" % c)
def test_decoders_as_tensorflow(case):
    name, key = case
    call, tol = CALLS[case]
    got = call(ref_bytes(name)).numpy()
    want = ref_array(name, key)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64)).max()
    assert diff <= tol, diff


def png_rows(data):
    """The pixel rows of a non-interlaced PNG with filter 0 on every row, read by hand: IHDR
    fields and the unfiltered bytes (the PNG spec's chunk layout and CRCs checked)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        assert struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0] == zlib.crc32(kind + body) & 0xFFFFFFFF
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, color, _, _, interlace = ihdr
    raw = zlib.decompress(idat)
    stride = len(raw) // h
    assert interlace == 0 and all(raw[y * stride] == 0 for y in range(h))
    return ihdr, [raw[y * stride + 1:(y + 1) * stride] for y in range(h)]


@pytest.mark.parametrize("channels,depth", [(1, 8), (2, 8), (3, 8), (4, 8), (1, 16), (3, 16)])
def test_encode_png_read_by_hand(channels, depth):
    dtype = np.uint8 if depth == 8 else np.uint16
    a = (np.arange(5 * 7 * channels).reshape(5, 7, channels) * (1 if depth == 8 else 997) % (1 << depth)).astype(dtype)
    data = tf.io.encode_png(a).numpy()
    (w, h, d, color, *_), rows = png_rows(data)
    assert (w, h, d, color) == (7, 5, depth, {1: 0, 2: 4, 3: 2, 4: 6}[channels])
    got = np.stack([np.frombuffer(r, ">u2" if depth == 16 else np.uint8) for r in rows]).reshape(5, 7, channels)
    np.testing.assert_array_equal(got, a)
    back = tf.io.decode_png(data, dtype=tf.uint16 if depth == 16 else tf.uint8).numpy()
    np.testing.assert_array_equal(back, a)


def test_encode_png_takes_tensors_and_compression_levels():
    a = np.tile(np.arange(16, dtype=np.uint8), (16, 1))[..., None]
    fast, small = tf.io.encode_png(tf.constant(a), compression=0), tf.image.encode_png(a, compression=9)
    assert len(small.numpy()) < len(fast.numpy())
    for data in (fast, small):
        np.testing.assert_array_equal(tf.io.decode_png(data).numpy(), a)
    with pytest.raises(ValueError, match="compression"):
        tf.io.encode_png(a, compression=10)
    with pytest.raises(TypeError, match="uint8 or uint16"):
        tf.io.encode_png(a.astype(np.float32))
    with pytest.raises(ValueError, match="1, 2, 3 or 4 channels"):
        tf.io.encode_png(np.zeros((2, 2, 5), np.uint8))


def test_encode_jpeg_round_trip_and_options():
    y, x = np.mgrid[0:16, 0:24]
    a = np.stack([x * 10, y * 15, 128 + 0 * x], -1).astype(np.uint8)
    best = tf.io.decode_jpeg(tf.io.encode_jpeg(a, quality=100, chroma_downsampling=False)).numpy()
    assert best.shape == (16, 24, 3) and np.abs(best.astype(int) - a).max() <= 3
    rough = tf.io.decode_jpeg(tf.io.encode_jpeg(a, quality=10)).numpy()
    assert np.abs(rough.astype(int) - a).mean() > np.abs(best.astype(int) - a).mean()
    assert tf.io.is_jpeg(tf.io.encode_jpeg(a)).numpy() and not tf.io.is_jpeg(tf.io.encode_png(a)).numpy()
    np.testing.assert_array_equal(tf.io.extract_jpeg_shape(tf.io.encode_jpeg(a, progressive=True)).numpy(), [16, 24, 3])
    gray = tf.io.encode_jpeg(a[..., :1], format="grayscale")
    assert tf.io.decode_jpeg(gray).shape == (16, 24, 1)
    with pytest.raises(ValueError, match="format 'rgb' needs 3"):
        tf.io.encode_jpeg(a[..., :1], format="rgb")
    with pytest.raises(ValueError, match="quality"):
        tf.io.encode_jpeg(a, quality=101)


def test_channels_and_dtypes():
    a = (np.arange(4 * 6 * 3).reshape(4, 6, 3) % 256).astype(np.uint8)
    png = tf.io.encode_png(a)
    assert tf.io.decode_png(png, channels=4).numpy()[..., 3].min() == 255
    np.testing.assert_array_equal(tf.io.decode_png(png, dtype=tf.uint16).numpy(), a.astype(np.uint16) * 257)
    np.testing.assert_allclose(tf.io.decode_image(png, dtype=tf.float32).numpy(), a / 255.0, rtol=1e-6)
    wide = tf.io.decode_png(png, dtype=tf.uint16)
    assert wide.dtype == tf.uint16 and wide.shape == (4, 6, 3)
    np.testing.assert_allclose(tf.image.convert_image_dtype(wide, tf.float32).numpy(), a / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(tf.image.convert_image_dtype(wide, tf.uint8).numpy(), a)
    with pytest.raises(ValueError, match="channels must be one of"):
        tf.io.decode_jpeg(png, channels=4)
    with pytest.raises(TypeError, match="uint8 or uint16"):
        tf.io.decode_png(png, dtype=tf.float32)


def test_bad_input_names_the_op():
    png = tf.io.encode_png(np.zeros((8, 8, 3), np.uint8)).numpy()
    jpg = tf.io.encode_jpeg(np.zeros((8, 8, 3), np.uint8)).numpy()
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_image: Unknown image file format"):
        tf.io.decode_image(b"hello world")
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_png: corrupt or truncated png"):
        tf.io.decode_png(png[:40])
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_jpeg: corrupt or truncated jpeg"):
        tf.io.decode_jpeg(jpg[:len(jpg) // 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_bmp: the contents are not a BMP"):
        tf.io.decode_bmp(png)
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_png: Got 3 frames"):
        tf.io.decode_png(ref_bytes("anim.gif"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="contents must be scalar"):
        tf.io.decode_png(np.array([png, png], dtype=object))
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="not the graph tensor"):
            tf.io.decode_png(tf.compat.v1.placeholder(tf.float32, [2]))
    # 16-bit colour PNG (decoded by weft itself) with a damaged image stream
    bad16 = bytearray(ref_bytes("rgb16.png"))
    i = bad16.index(b"IDAT") + 10
    bad16[i] ^= 0xFF
    with pytest.raises(tf.errors.InvalidArgumentError, match="decode_png: corrupt PNG"):
        tf.io.decode_png(bytes(bad16), dtype=tf.uint16)


def test_write_file_read_file(tmp_path):
    a = (np.arange(30).reshape(2, 5, 3) * 8).astype(np.uint8)
    path = str(tmp_path / "x.png")
    tf.io.write_file(path, tf.io.encode_png(a))
    np.testing.assert_array_equal(tf.io.decode_png(tf.io.read_file(path)).numpy(), a)
    tf.io.write_file(path, "text")
    assert tf.io.read_file(path).numpy() == b"text"
    with pytest.raises(tf.errors.NotFoundError, match="write_file"):
        tf.io.write_file(str(tmp_path / "missing" / "x.png"), b"x")


def test_load_images_tutorial_pipeline(tmp_path):
    """TF's "Load and preprocess images" tutorial: list_files -> map(read_file -> decode -> resize)
    -> batch, on PNG files whose pixels the test knows."""
    images = {}
    for cls in ("daisy", "roses"):
        os.makedirs(tmp_path / cls)
        for i in range(3):
            a = ((np.arange(6 * 4 * 3).reshape(6, 4, 3) + 40 * i + (cls == "roses") * 7) % 256).astype(np.uint8)
            path = str(tmp_path / cls / ("%d.png" % i))
            tf.io.write_file(path, tf.io.encode_png(a))
            images[path.encode()] = a
    class_names = np.array(["daisy", "roses"])
    list_ds = tf.data.Dataset.list_files(str(tmp_path / "*" / "*"), shuffle=False)
    assert [p.numpy() for p in list_ds] == sorted(images)

    def process_path(file_path):
        parts = tf.strings.split(file_path, os.path.sep)
        label = tf.argmax(parts[-2] == class_names)
        img = tf.io.decode_png(tf.io.read_file(file_path), channels=3)
        return tf.image.resize(img, [6, 4]), label  # same size: half-pixel bilinear is the identity

    ds = list_ds.map(process_path, num_parallel_calls=tf.data.AUTOTUNE).batch(4)
    xs, ys = zip(*[(x.numpy(), y.numpy()) for x, y in ds])
    np.testing.assert_array_equal(np.concatenate(ys), [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(np.concatenate(xs), np.stack([images[p] for p in sorted(images)]).astype(np.float32))
    shuffled = tf.data.Dataset.list_files(str(tmp_path / "*" / "*.png"), seed=3)
    assert sorted(p.numpy() for p in shuffled) == sorted(images)
    with pytest.raises(tf.errors.InvalidArgumentError, match="No files matched pattern"):
        tf.data.Dataset.list_files(str(tmp_path / "*.jpeg"))
