"""Image codecs on the host: TensorFlow's ``tf.io.decode_* / encode_*`` (also ``tf.image.*``).

    img = weft.io.decode_jpeg(weft.io.read_file("cat.jpg"), channels=3)      # uint8 [h, w, 3]
    ds = weft.data.Dataset.list_files("photos/*/*.jpg").map(
        lambda p: weft.image.resize(weft.io.decode_jpeg(weft.io.read_file(p), channels=3), [180, 180]))

weft's string tensors are host values (weft/_text_values.py), so file bytes are decoded in Python,
eagerly or in a host dataset's ``map``; a decoded image is a constant tensor of its pixels, which
weft ops (resize, casts) take as any other. The codec is Pillow (PyPI, pinned in
python/requirements.txt), loaded on first use: it wraps the same libjpeg-turbo, zlib and GIF/BMP
readers TF's kernels do, and a host-side decoder needs no string tensors in the graph. PNG is
written here (filter 0 + zlib, 8 and 16 bits), and 16-bit colour PNG is read here too, since
Pillow reduces it to 8 bits.

Contracts (TF's): decoders take one scalar string and return uint8 (or uint16 for PNG) of shape
[height, width, channels], GIF and ``decode_image(expand_animations=True)`` of a GIF
[frames, height, width, 3]; ``channels=0`` keeps the file's channels; a corrupt or truncated file
is InvalidArgumentError naming the op. Known differences: JPEG pixels come from libjpeg-turbo's
accurate integer IDCT (TF defaults to the fast one: values may differ by a few levels), and
RGB -> grayscale uses ITU-R 601 weights with Pillow's rounding."""
import io
import struct
import zlib

import numpy as np

_PNG_SIG = b"\x89PNG\r\n\x1a\n"


def _pil(op):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("weft.io.%s needs Pillow (pip install pillow; weft pins it in python/requirements.txt)"
                          % op) from None
    return Image


def _error(op, message):
    from ..framework import _weft_error
    return _weft_error("InvalidArgument", "weft.io.%s: %s" % (op, message))


def _contents(contents, op):
    """The bytes of a scalar string: Python bytes / str, a host string value (``read_file``'s)."""
    from ..framework import Tensor
    if isinstance(contents, Tensor):
        raise TypeError("weft.io.%s takes the file's bytes (a host string value, e.g. weft.io.read_file's), not the "
                        "graph tensor %s: weft has no string tensors in graphs" % (op, contents.name))
    if isinstance(contents, np.ndarray):
        if contents.ndim != 0:
            raise _error(op, "contents must be scalar, got shape %s" % (contents.shape,))
        contents = contents.item()
    if isinstance(contents, str):
        contents = contents.encode("latin-1")
    if not isinstance(contents, (bytes, bytearray, memoryview)):
        raise TypeError("weft.io.%s: contents must be a string (bytes), got %r" % (op, type(contents).__name__))
    return bytes(contents)


def _format(data):
    if data[:3] == b"\xff\xd8\xff":
        return "jpeg"
    if data[:8] == _PNG_SIG:
        return "png"
    if data[:3] == b"GIF":
        return "gif"
    if data[:2] == b"BM":
        return "bmp"
    return None


def _check_channels(op, channels, allowed):
    if channels not in allowed:
        raise ValueError("weft.io.%s: channels must be one of %s, got %r" % (op, sorted(allowed), channels))


# ---- 16-bit PNG (Pillow keeps only 8 bits of colour samples) -----------------------------------

def _png_chunks(data, op):
    pos, out = 8, []
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if len(body) != n or pos + 12 + n > len(data):
            raise _error(op, "truncated PNG (chunk %r of %d bytes at offset %d)" % (kind, n, pos))
        if zlib.crc32(kind + body) & 0xFFFFFFFF != struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]:
            raise _error(op, "corrupt PNG (bad CRC in chunk %r at offset %d)" % (kind, pos))
        out.append((kind, body))
        pos += 12 + n
        if kind == b"IEND":
            return out
    raise _error(op, "truncated PNG (no IEND chunk)")


def _unfilter(raw, h, stride, bpp, op):
    """PNG rows un-filtered (types 0-4 of the PNG spec, section 9) into a uint8 [h, stride] array."""
    if len(raw) != h * (stride + 1):
        raise _error(op, "corrupt PNG (image data holds %d bytes, %d expected)" % (len(raw), h * (stride + 1)))
    rows = np.frombuffer(raw, np.uint8).reshape(h, stride + 1)
    out = np.zeros((h, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    for y in range(h):
        f, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 0xFF
        elif f in (1, 3, 4):
            cur = np.zeros(stride + bpp, np.int32)  # bpp leading zeros stand for the pixel left of x = 0
            up = np.concatenate([np.zeros(bpp, np.int32), prev])
            for x in range(0, stride, bpp):  # each pixel needs the one decoded left of it
                a, b, c = cur[x:x + bpp], up[x + bpp:x + 2 * bpp], up[x:x + bpp]
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) >> 1
                else:
                    p = a + b - c
                    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
                    pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
                cur[x + bpp:x + 2 * bpp] = (line[x:x + bpp] + pred) & 0xFF
            cur = cur[bpp:]
        else:
            raise _error(op, "corrupt PNG (unknown filter type %d in row %d)" % (f, y))
        out[y] = cur
        prev = cur
    return out


def _decode_png16(data, op):
    """A non-interlaced 16-bit PNG (grey, grey+alpha, RGB, RGBA) as uint16 [h, w, c]."""
    chunks = _png_chunks(data, op)
    w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    c = {0: 1, 4: 2, 2: 3, 6: 4}.get(color)
    if c is None or interlace:
        raise NotImplementedError("weft.io.%s: 16-bit PNG of colour type %d, interlace %d is not supported"
                                  % (op, color, interlace))
    try:
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    except zlib.error as e:
        raise _error(op, "corrupt PNG image data (%s)" % e) from None
    rows = _unfilter(raw, h, w * c * 2, c * 2, op)
    return rows.view(">u2").astype(np.uint16).reshape(h, w, c)


# ---- decoding ---------------------------------------------------------------------------------

def _open(data, op, gray=False):
    """The loaded Pillow image; ``gray`` asks libjpeg for its luma channel directly (as TF's
    channels=1 decode does) instead of converting RGB afterwards."""
    Image = _pil(op)
    try:
        im = Image.open(io.BytesIO(data))
        if gray and im.format == "JPEG":
            im.draft("L", im.size)
        im.load()
        return im
    except Exception as e:  # Pillow raises OSError, SyntaxError, ValueError, ... on bad bytes
        why = str(e).split(" <_io.")[0]  # Pillow names its BytesIO; the caller knows better
        raise _error(op, "corrupt or truncated %s image (%d bytes): %s" % (_format(data) or "unknown", len(data), why)) \
            from None


def _to_array(im, channels, op):
    """A Pillow image (one frame) as uint8 or uint16 [h, w, c] with TF's channel rules."""
    mode = im.mode
    if mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif mode in ("CMYK", "YCbCr", "LAB", "HSV", "1", "PA"):
        im = im.convert({"1": "L", "PA": "RGBA"}.get(mode, "RGB"))
    elif mode == "L" and "transparency" in im.info:
        im = im.convert("LA")
    elif mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        a = np.asarray(im)
        a = np.clip(a, 0, 65535).astype(np.uint16)[..., None]
        return _channels16(a, channels)
    a = np.asarray(im.convert("RGB") if im.mode == "RGBX" else im)
    if a.ndim == 2:
        a = a[..., None]
    have = a.shape[2]
    if channels in (0, None) or channels == have:
        return np.ascontiguousarray(a, np.uint8)
    if channels == 1:
        return np.asarray(im.convert("L"), np.uint8)[..., None]
    if channels == 3:
        return np.asarray(im.convert("RGB"), np.uint8)
    if channels == 4:
        return np.asarray(im.convert("RGBA"), np.uint8)
    raise ValueError("weft.io.%s: channels must be 0, 1, 3 or 4, got %r" % (op, channels))


def _channels16(a, channels):
    """uint16 [h, w, c] with c changed to ``channels`` (grey <-> colour, alpha added opaque)."""
    c = a.shape[2]
    if channels in (0, None) or channels == c:
        return a
    grey = a[..., :1] if c <= 2 else np.rint(
        a[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])).astype(np.uint16)[..., None]
    if channels == 1:
        return grey
    rgb = np.repeat(grey, 3, axis=2) if c <= 2 else a[..., :3]
    if channels == 3:
        return np.ascontiguousarray(rgb)
    alpha = a[..., -1:] if c in (2, 4) else np.full(a.shape[:2] + (1,), 65535, np.uint16)
    return np.concatenate([rgb, alpha], axis=2)


def _cast(a, dtype, op):
    """uint8 / uint16 pixels in the requested integer dtype (TF scales by 257 or takes the high byte)."""
    want = np.dtype(dtype if isinstance(dtype, (type, np.dtype)) else str(dtype))
    if want == a.dtype:
        return a
    if want == np.uint16:
        return a.astype(np.uint16) * 257
    if want == np.uint8:
        return (a >> 8).astype(np.uint8)
    raise TypeError("weft.io.%s: dtype must be uint8 or uint16, got %s" % (op, want))


def _frames(im, op):
    out = []
    for k in range(getattr(im, "n_frames", 1)):
        im.seek(k)
        out.append(np.asarray(im.convert("RGB"), np.uint8))
    return np.stack(out)


def _decode(contents, op, channels, dtype=None, frames=False):
    """The decoded array of ``contents`` (any of JPEG, PNG, GIF, BMP, as TF's shared decode kernel)."""
    data = _contents(contents, op)
    kind = _format(data)
    if kind is None:
        raise _error(op, "Unknown image file format. One of JPEG, PNG, GIF, BMP required (%d bytes, starting %r)"
                     % (len(data), data[:8]))
    if kind == "png" and len(data) > 26 and data[24] == 16 and data[25] in (2, 4, 6):
        a = _channels16(_decode_png16(data, op), channels)  # Pillow would keep 8 of the 16 bits
        return _cast(a, dtype or np.uint8, op)
    im = _open(data, op, gray=channels == 1)
    if kind == "gif":
        stack = _frames(im, op)
        if frames:
            return stack
        if stack.shape[0] != 1:
            raise _error(op, "Got %d frames, but animated gifs can only be decoded by tf.io.decode_gif or "
                         "tf.io.decode_image" % stack.shape[0])
        return _to_array(_pil(op).fromarray(stack[0], "RGB"), channels, op)
    a = _to_array(im, channels, op)
    return _cast(a, dtype or (np.uint16 if a.dtype == np.uint16 else np.uint8), op) if kind == "png" else \
        _cast(a, np.uint8, op)


class HostUInt16:
    """``weft.uint16`` (tf.uint16): the dtype of 16-bit images as PNG decodes them. weft's graphs
    have no uint16, so such an image is a host value (``.numpy()``, ``.shape``, ``.dtype``) that
    ``weft.image.convert_image_dtype`` turns into float or uint8 tensors; a placeholder or
    constant of it is refused."""

    name = "uint16"
    as_numpy_dtype = np.uint16
    is_floating = is_complex = is_bool = is_quantized = False
    is_integer = is_unsigned = True
    size = 2
    min, max = 0, 65535

    def __repr__(self):
        return "weft.uint16"

    def __str__(self):
        return "uint16"

    def __eq__(self, other):
        return other is self or (isinstance(other, str) and other == "uint16") or \
            (isinstance(other, (type, np.dtype)) and np.dtype(other) == np.uint16)

    def __hash__(self):
        return hash("uint16")

    def __reduce__(self):
        return "uint16"


uint16 = HostUInt16()


def _tensor(a):
    """A decoded image: a constant tensor, or a host value for uint16 (weft has no uint16 tensors)."""
    if a.dtype == np.uint16:
        from .. import _text_values
        return _text_values.wrap(np.ascontiguousarray(a))
    from ..framework import constant
    return constant(np.ascontiguousarray(a))


def _dtype_name(dtype, op):
    name = getattr(dtype, "name", None) if not isinstance(dtype, (type, np.dtype)) else np.dtype(dtype).name
    name = name if isinstance(name, str) else str(dtype)
    return {"float": "float32", "double": "float64", "half": "float16"}.get(name, name)


def decode_png(contents, channels=0, dtype="uint8", name=None):
    """``tf.io.decode_png``: uint8 or uint16 [height, width, channels]; channels 0 (the file's), 1,
    3 or 4. 16-bit files read as uint8 keep the high byte; 8-bit files read as uint16 are scaled
    by 257 (TF's). Also decodes JPEG, BMP and one-frame GIF bytes, as TF's kernel does."""
    _check_channels("decode_png", channels, {0, 1, 3, 4})
    want = _dtype_name(dtype, "decode_png")
    if want not in ("uint8", "uint16"):
        raise TypeError("weft.io.decode_png: dtype must be uint8 or uint16, got %s" % want)
    want = np.dtype(want)
    a = _decode(contents, "decode_png", channels, want)
    return _tensor(_cast(a, want, "decode_png"))


def decode_jpeg(contents, channels=0, ratio=1, fancy_upscaling=True, try_recover_truncated=False,
                acceptable_fraction=1, dct_method="", name=None):
    """``tf.io.decode_jpeg``: uint8 [height, width, channels], channels 0 (the file's), 1 or 3.
    ``ratio`` 1, 2, 4 or 8 downscales while decoding (libjpeg's scaled IDCT, output size
    ceil(size / ratio)). Also decodes PNG, BMP and one-frame GIF bytes, as TF's kernel does."""
    _check_channels("decode_jpeg", channels, {0, 1, 3})
    if ratio not in (1, 2, 4, 8):
        raise ValueError("weft.io.decode_jpeg: ratio must be 1, 2, 4 or 8, got %r" % (ratio,))
    if dct_method not in ("", "INTEGER_FAST", "INTEGER_ACCURATE"):
        raise ValueError("weft.io.decode_jpeg: dct_method must be '', 'INTEGER_FAST' or 'INTEGER_ACCURATE', got %r"
                         % (dct_method,))
    if try_recover_truncated:
        raise NotImplementedError("weft.io.decode_jpeg(try_recover_truncated=True) is not supported")
    data = _contents(contents, "decode_jpeg")
    if ratio != 1 and _format(data) == "jpeg":
        im = _open_draft(data, ratio, channels)
        return _tensor(_to_array(im, channels, "decode_jpeg"))
    return _tensor(_cast(_decode(data, "decode_jpeg", channels), np.uint8, "decode_jpeg"))


def _open_draft(data, ratio, channels):
    Image = _pil("decode_jpeg")
    try:
        im = Image.open(io.BytesIO(data))
        w, h = im.size
        im.draft("L" if channels == 1 else None, (-(-w // ratio), -(-h // ratio)))
        im.load()
        return im
    except Exception as e:
        raise _error("decode_jpeg", "cannot decode the image (%d bytes): %s" % (len(data), e)) from None


def decode_bmp(contents, channels=0, name=None):
    """``tf.io.decode_bmp``: uint8 [height, width, channels], channels 0 (the file's), 1, 3 or 4."""
    _check_channels("decode_bmp", channels, {0, 1, 3, 4})
    data = _contents(contents, "decode_bmp")
    if _format(data) != "bmp":
        raise _error("decode_bmp", "the contents are not a BMP file (%d bytes, starting %r)" % (len(data), data[:8]))
    return _tensor(_decode(data, "decode_bmp", channels))


def decode_gif(contents, name=None):
    """``tf.io.decode_gif``: every frame, composed as the GIF's disposal rules say, as uint8
    [num_frames, height, width, 3]."""
    data = _contents(contents, "decode_gif")
    if _format(data) != "gif":
        return _tensor(_decode(data, "decode_gif", 3)[None])  # TF's kernel reads JPEG / PNG / BMP as one frame
    return _tensor(_decode(data, "decode_gif", 3, frames=True))


def decode_image(contents, channels=None, dtype="uint8", name=None, expand_animations=True):
    """``tf.io.decode_image``: the format found from the bytes; 3-D [h, w, c], or 4-D for a GIF
    with ``expand_animations`` (all frames; else the first frame, 3-D). dtype uint8, uint16 or a
    float (pixels scaled to [0, 1] as convert_image_dtype)."""
    _check_channels("decode_image", channels, {None, 0, 1, 3, 4})
    out = _dtype_name(dtype, "decode_image")
    if out not in ("uint8", "uint16", "float16", "float32", "float64"):
        raise TypeError("weft.io.decode_image: dtype must be uint8, uint16 or a float dtype, got %s" % out)
    data = _contents(contents, "decode_image")
    kind = _format(data)
    if kind == "gif":
        if channels in (1, 4):
            raise _error("decode_image", "channels must be 0 or 3 for GIF, got %d" % channels)
        stack = _decode(data, "decode_image", 3, frames=True)
        a = stack if expand_animations else stack[0]
    else:
        a = _decode(data, "decode_image", channels, np.uint16 if out == "uint16" else None)
    if out.startswith("float"):  # convert_image_dtype's scaling: x / MAX of the decoded depth
        scale = 65535.0 if a.dtype == np.uint16 else 255.0
        return _tensor((a.astype(np.float64) / scale).astype(out))
    return _tensor(_cast(a, out, "decode_image"))


def is_jpeg(contents, name=None):
    """``tf.io.is_jpeg``: whether the bytes start as a JPEG file does (a bool scalar)."""
    from ..framework import constant
    return constant(_format(_contents(contents, "is_jpeg")) == "jpeg")


def extract_jpeg_shape(contents, output_type="int32", name=None):
    """``tf.io.extract_jpeg_shape``: [height, width, channels] from the JPEG header, not decoding."""
    from ..framework import as_dtype, constant
    data = _contents(contents, "extract_jpeg_shape")
    if _format(data) != "jpeg":
        raise _error("extract_jpeg_shape", "the contents are not a JPEG file (%d bytes)" % len(data))
    Image = _pil("extract_jpeg_shape")
    try:
        im = Image.open(io.BytesIO(data))
    except Exception as e:
        raise _error("extract_jpeg_shape", "cannot read the JPEG header: %s" % e) from None
    c = {"L": 1, "RGB": 3, "CMYK": 4}.get(im.mode, len(im.getbands()))
    return constant(np.array([im.size[1], im.size[0], c], str(as_dtype(output_type))))


# ---- encoding ---------------------------------------------------------------------------------

def _image_array(image, op, dtypes):
    from ..framework import Tensor
    if isinstance(image, Tensor):
        from ..data import _structure as _st
        image = _st.to_array(image, "weft.io.%s" % op)
    a = np.asarray(image)
    if a.ndim != 3:
        raise ValueError("weft.io.%s: image must be 3-D [height, width, channels], got shape %s" % (op, a.shape))
    if a.dtype not in dtypes:
        raise TypeError("weft.io.%s: image dtype must be %s, got %s" % (op, " or ".join(str(np.dtype(d)) for d in dtypes),
                                                                      a.dtype))
    return a


def png_bytes(a, compression=-1):
    """PNG bytes of a uint8 or uint16 [height, width, 1..4] array: filter 0 on every row, zlib at
    ``compression`` (-1: zlib's default; 0-9)."""
    h, w, c = a.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    depth = 16 if a.dtype == np.uint16 else 8
    body = np.ascontiguousarray(a.astype(">u2") if depth == 16 else a).reshape(h, -1)
    rows = np.concatenate([np.zeros((h, 1), np.uint8), body.view(np.uint8).reshape(h, -1)], axis=1)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (_PNG_SIG + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows.tobytes(), compression)) + chunk(b"IEND", b""))


def _string(b):
    from .. import _text_values
    return _text_values.wrap(_text_values.as_bytes_array(b))


def encode_png(image, compression=-1, name=None):
    """``tf.io.encode_png``: a uint8 or uint16 [height, width, channels] image (1-4 channels) as
    PNG bytes (a host string value); compression -1 (default) or 0-9."""
    a = _image_array(image, "encode_png", (np.uint8, np.uint16))
    if a.shape[2] not in (1, 2, 3, 4):
        raise ValueError("weft.io.encode_png: image must have 1, 2, 3 or 4 channels, got shape %s" % (a.shape,))
    if not -1 <= int(compression) <= 9:
        raise ValueError("weft.io.encode_png: compression must be -1 or 0-9, got %r" % (compression,))
    return _string(png_bytes(a, int(compression)))


def encode_jpeg(image, format="", quality=95, progressive=False, optimize_size=False,  # noqa: A002 - TF's name
                chroma_downsampling=True, density_unit="in", x_density=300, y_density=300, xmp_metadata="",
                name=None):
    """``tf.io.encode_jpeg``: a uint8 [height, width, 1 or 3] image as JPEG bytes (a host string
    value). format '' (from the channels), 'grayscale' or 'rgb'; quality 0-100; chroma
    downsampling 4:2:0 (else 4:4:4); the density in the JFIF header."""
    a = _image_array(image, "encode_jpeg", (np.uint8,))
    if format not in ("", "grayscale", "rgb"):
        raise ValueError("weft.io.encode_jpeg: format must be '', 'grayscale' or 'rgb', got %r" % (format,))
    if density_unit not in ("in", "cm"):
        raise ValueError("weft.io.encode_jpeg: density_unit must be 'in' or 'cm', got %r" % (density_unit,))
    c = {"": a.shape[2], "grayscale": 1, "rgb": 3}[format]
    if a.shape[2] != c or c not in (1, 3):
        raise ValueError("weft.io.encode_jpeg: image has %d channels; format %r needs %s" %
                         (a.shape[2], format, "1 or 3" if not format else c))
    if not 0 <= int(quality) <= 100:
        raise ValueError("weft.io.encode_jpeg: quality must be in [0, 100], got %r" % (quality,))
    Image = _pil("encode_jpeg")
    im = Image.fromarray(a[..., 0] if c == 1 else a, "L" if c == 1 else "RGB")
    out = io.BytesIO()
    dpi = (x_density, y_density) if density_unit == "in" else (x_density * 2.54, y_density * 2.54)
    extra = {"xmp": xmp_metadata.encode()} if xmp_metadata else {}
    im.save(out, "JPEG", quality=int(quality), progressive=bool(progressive), optimize=bool(optimize_size),
            subsampling=2 if chroma_downsampling else 0, dpi=dpi, **extra)
    return _string(out.getvalue())


def write_file(filename, contents, name=None):
    """``tf.io.write_file``: writes the bytes (a host string value, bytes or str) to ``filename``,
    creating or replacing it (parent directories must exist, as TF's)."""
    path = filename.item() if isinstance(filename, np.ndarray) else filename
    path = path.decode("utf-8") if isinstance(path, bytes) else str(path)
    data = contents.item() if isinstance(contents, np.ndarray) else contents
    data = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        with open(path, "wb") as f:
            f.write(data)
    except FileNotFoundError:
        from ..framework import _weft_error
        raise _weft_error("NotFound", "weft.io.write_file: %s; No such file or directory" % path) from None
