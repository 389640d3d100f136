# Generates image_codecs_reference.json with TF 2.21 (bench/.venv): small image files (base64; made by
# TF's encoders, or written by hand below: palette PNG, GIF, BMP) and what tf.io's decoders return
# for them. tests/python/test_image_codecs.py decodes the same bytes with weft.
# Run: bench/.venv/bin/python tests/python/data/gen_image_codecs_reference.py
import base64
import io
import json
import os
import struct
import zlib

os.environ["CUDA_VISIBLE_DEVICES"] = ""
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

h, w = 12, 16
yy, xx = np.mgrid[0:h, 0:w]
rgb = np.stack([xx * 16, yy * 20, (xx + yy) * 9], -1).clip(0, 255).astype(np.uint8)
out = {}


def keep(name, data, **decoded):
    out[name] = {"bytes": base64.b64encode(bytes(data)).decode()}
    for k, v in decoded.items():
        v = v.numpy()
        out[name][k] = {"shape": list(v.shape), "dtype": str(v.dtype), "values": v.reshape(-1).tolist()}


jpg = tf.io.encode_jpeg(tf.constant(rgb), quality=90).numpy()
keep("rgb.jpg", jpg, default=tf.io.decode_jpeg(jpg), accurate=tf.io.decode_jpeg(jpg, dct_method="INTEGER_ACCURATE"),
     gray=tf.io.decode_jpeg(jpg, channels=1, dct_method="INTEGER_ACCURATE"),
     ratio2=tf.io.decode_jpeg(jpg, ratio=2, dct_method="INTEGER_ACCURATE"),
     image_float=tf.io.decode_image(jpg, dtype=tf.float32))
gray_jpg = tf.io.encode_jpeg(tf.constant(rgb[..., :1]), quality=95).numpy()
keep("gray.jpg", gray_jpg, accurate=tf.io.decode_jpeg(gray_jpg, dct_method="INTEGER_ACCURATE"),
     rgb=tf.io.decode_jpeg(gray_jpg, channels=3, dct_method="INTEGER_ACCURATE"))
rgba = np.concatenate([rgb, (255 - rgb[..., :1])], -1)
png = tf.io.encode_png(tf.constant(rgba)).numpy()
keep("rgba.png", png, default=tf.io.decode_png(png), rgb=tf.io.decode_png(png, channels=3),
     u16=tf.io.decode_png(png, dtype=tf.uint16), gray=tf.io.decode_png(png, channels=1))
rgb16 = (rgb.astype(np.uint16) * 257 + np.arange(w, dtype=np.uint16)[:, None]).astype(np.uint16)
png16 = tf.io.encode_png(tf.constant(rgb16)).numpy()
keep("rgb16.png", png16, u16=tf.io.decode_png(png16, dtype=tf.uint16), u8=tf.io.decode_png(png16),
     rgba16=tf.io.decode_png(png16, channels=4, dtype=tf.uint16))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


palette = np.array([[16 * i, 255 - 16 * i, (64 * i) % 256] for i in range(16)], np.uint8)
index = ((xx + yy) % 16).astype(np.uint8)
pal_png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0)) +
           chunk(b"PLTE", palette.tobytes()) + chunk(b"tRNS", bytes([0, 128])) +
           chunk(b"IDAT", zlib.compress(b"".join(b"\0" + index[y].tobytes() for y in range(h)))) + chunk(b"IEND", b""))
keep("palette_trns.png", pal_png, default=tf.io.decode_png(pal_png), rgb=tf.io.decode_png(pal_png, channels=3))


def lzw_literals(indices, min_size=4):
    """GIF LZW data that sends every pixel as a literal code, with a clear code before the table
    would widen the codes: valid LZW any decoder reads."""
    clear, eoi, width = 1 << min_size, (1 << min_size) + 1, min_size + 1
    codes = []
    for i, v in enumerate(indices.reshape(-1).tolist()):
        if i % 12 == 0:
            codes.append(clear)
        codes.append(v)
    codes.append(eoi)
    acc = nbits = 0
    data = bytearray()
    for c in codes:
        acc |= c << nbits
        nbits += width
        while nbits >= 8:
            data.append(acc & 0xFF)
            acc >>= 8
            nbits -= 8
    if nbits:
        data.append(acc & 0xFF)
    blocks = b"".join(bytes([len(data[i:i + 255])]) + bytes(data[i:i + 255]) for i in range(0, len(data), 255))
    return bytes([min_size]) + blocks + b"\0"


gif = b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF3, 0, 0) + palette.tobytes()
for k in range(3):
    gif += b"\x21\xf9\x04" + struct.pack("<BHBB", 0x04, 5, 0, 0)  # graphic control: keep the frame, 50 ms
    gif += b"\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0) + lzw_literals((index + 5 * k) % 16)
gif += b"\x3b"
keep("anim.gif", gif, gif=tf.io.decode_gif(gif), image=tf.io.decode_image(gif),
     first=tf.io.decode_image(gif, expand_animations=False))
# A 24-bit BMP written by hand (bottom-up BGR rows padded to 4 bytes).
row = ((w * 3 + 3) // 4) * 4
pixels = b"".join(rgb[y, :, ::-1].tobytes().ljust(row, b"\0") for y in range(h - 1, -1, -1))
bmp = (b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54) +
       struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0) + pixels)
keep("rgb.bmp", bmp, default=tf.io.decode_bmp(bmp), image=tf.io.decode_image(bmp))
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_codecs_reference.json"), "w"))
print({k: len(v["bytes"]) for k, v in out.items()})
