"""``weft.image``: TensorFlow's ``tf.image`` functions over images [height, width, channels] or
batches [batch, height, width, channels], composed from weft ops. They run in sessions, have
gradients where TF's do (resize, flips, crops, standardization), and are mostly used inside
``weft.data`` map functions::

    ds = ds.map(lambda x, y: (weft.image.resize(weft.image.random_flip_left_right(x), [32, 32]) / 255.0, y))

resize follows TF2: half-pixel centers, no corner alignment, bilinear output float32, nearest
output in the input's dtype. Not supported (a clear error): the bicubic, area, lanczos, gaussian
and mitchellcubic methods, antialias=True, JPEG / PNG coding. Colour (HSV, saturation, hue,
gamma): _image_color.py; psnr, ssim, total_variation, sobel_edges, extract_patches:
_image_metrics.py; stateless_random_*: _image_stateless.py.
"""
import numpy as np

from . import ops as _ops
from .array_ops import range as _range, tensordot as _tensordot
from .framework import Tensor, as_dtype, constant, convert_to_tensor, float32, float64, int32, int64, uint8
from .math import reduce_std as _reduce_std
from .ops import raw_ops


class ResizeMethod:
    """The ``method`` names of weft.image.resize (as tf.image.ResizeMethod)."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_INT_MAX = {uint8: 255, int32: 2 ** 31 - 1, int64: 2 ** 63 - 1}


def _image(images, what):
    """(tensor, rank) of a 3-D image or 4-D batch; the height axis is rank - 3."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape is None or len(x.shape) not in (3, 4):
        raise ValueError("weft.image.%s needs an image [height, width, channels] or a batch [batch, height, width, "
                         "channels], got shape %s" % (what, x.shape))
    return x, len(x.shape)


def _dim(x, axis):
    """x's dim `axis` as an int when known, else an int32 scalar tensor."""
    d = x.shape[axis]
    return int(d) if d is not None else _ops.shape(x)[axis]


# ---- dtype conversion -------------------------------------------------------------------------

def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Converts between integer images (0..MAX) and float images (0..1), as TF: int -> float
    multiplies by 1 / MAX, float -> int multiplies by MAX + 0.5 and truncates, int -> int
    rescales by a power of two, float -> float casts. Float -> int always clamps to 0..MAX first
    (TF leaves out-of-range values undefined unless saturate=True)."""
    if isinstance(image, np.ndarray) and image.dtype == np.uint16:
        return _from_uint16(image, dtype)
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    src, dst = x.dtype, as_dtype(dtype)
    if src == dst:
        return x
    floats = (float32, float64)
    if src not in floats and src not in _INT_MAX or dst not in floats and dst not in _INT_MAX:
        raise TypeError("weft.image.convert_image_dtype converts between uint8, int32, int64, float32 and float64, "
                        "not %s to %s" % (src, dst))
    if src in floats and dst in floats:
        return _ops.cast(x, dst)
    if src not in floats and dst in floats:
        return _ops.cast(x, dst) * (1.0 / _INT_MAX[src])
    if src in floats:
        top = _INT_MAX[dst]
        scaled = x * (top + 0.5)
        # The clamp to [0, top] in float, then the cast: TF's saturate path.
        upper = float(np.nextafter(np.float64(top), 0) if dst == int64 else top)
        return _ops.cast(_ops.minimum(_ops.maximum(scaled, 0.0), upper), dst)
    a, b = _INT_MAX[src], _INT_MAX[dst]
    if a > b:
        return _ops.cast(raw_ops.Div(x, constant((a + 1) // (b + 1), src)), dst)
    return _ops.cast(x, dst) * constant((b + 1) // (a + 1), dst)


def _from_uint16(image, dtype):
    """A uint16 host image (decode_png(dtype=uint16)'s; weft has no uint16 tensors) converted on the
    host as TF converts: floats x / 65535, uint8 the high byte, int32 / int64 scaled up."""
    a = np.asarray(image).view(np.ndarray)
    name = str(dtype)
    if name == "uint16":
        return image
    dst = as_dtype(dtype)
    if dst in (float32, float64):
        return constant((a.astype(np.float64) / 65535.0).astype(str(dst)))
    if dst == uint8:
        return constant((a >> 8).astype(np.uint8))
    if dst in (int32, int64):
        return constant(a.astype(str(dst)) << (15 if dst == int32 else 47))
    raise TypeError("weft.image.convert_image_dtype: cannot convert uint16 to %s" % (dst,))


# ---- flips and rotations ----------------------------------------------------------------------

def _flip(x, rank, axis_from_h):
    key = [slice(None)] * rank
    key[rank - 3 + axis_from_h] = slice(None, None, -1)
    return x[tuple(key)]


def flip_left_right(image):
    """The image mirrored horizontally (width reversed); batches flip every image."""
    x, r = _image(image, "flip_left_right")
    return _flip(x, r, 1)


def flip_up_down(image):
    """The image mirrored vertically (height reversed); batches flip every image."""
    x, r = _image(image, "flip_up_down")
    return _flip(x, r, 0)


def _random_flip(image, seed, axis_from_h, what):
    x, r = _image(image, what)
    flipped = _flip(x, r, axis_from_h)
    if r == 3:
        cond = _ops.less(_ops.random_uniform([], seed=seed), 0.5)
    else:  # one draw per image of the batch: a row-selecting condition
        n = _ops.shape(x)[0]
        cond = _ops.less(raw_ops.RandomUniformLike(_ops.cast(_range(n), float32), seed=int(seed or 0)), 0.5)
    return raw_ops.Select(cond, flipped, x)  # a vector condition selects whole images (rows)


def random_flip_left_right(image, seed=None):
    """With probability 1/2 (per image of a batch) the image flipped left-right, else unchanged."""
    return _random_flip(image, seed, 1, "random_flip_left_right")


def random_flip_up_down(image, seed=None):
    """With probability 1/2 (per image of a batch) the image flipped up-down, else unchanged."""
    return _random_flip(image, seed, 0, "random_flip_up_down")


def transpose(image, name=None):
    """Height and width swapped."""
    x, r = _image(image, "transpose")
    return _ops.transpose(x, [1, 0, 2] if r == 3 else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """The image rotated counter-clockwise by k * 90 degrees (k a Python int)."""
    k = int(k) % 4
    if k == 0:
        return _image(image, "rot90")[0]
    if k == 1:
        return flip_up_down(transpose(image))
    if k == 2:
        return flip_up_down(flip_left_right(image))
    return flip_left_right(transpose(image))


# ---- resize -----------------------------------------------------------------------------------

def _source_coords(in_size, out_size):
    """TF2's half-pixel source coordinate of each output pixel: (i + 0.5) * in / out (float32)."""
    scale = _ops.cast(in_size, float32) / constant(float(out_size), float32) if isinstance(in_size, Tensor) \
        else constant(np.float32(in_size) / np.float32(out_size), float32)
    return (constant(np.arange(out_size, dtype=np.float32)) + 0.5) * scale


def _resize_axis(x, axis, out_size, method):
    """x resized along `axis` (height or width) to out_size by gathering source rows/columns."""
    in_size = _dim(x, axis)
    last = (in_size - 1) if not isinstance(in_size, Tensor) else in_size - 1
    src = _source_coords(in_size, out_size)
    if method == "nearest":
        # floor((i + 0.5) * scale), clamped to the last pixel (the coordinate is never negative).
        idx = _ops.minimum(_ops.cast(src, int32), _ops.cast(last, int32) if isinstance(last, Tensor) else last)
        return _ops.gather(x, idx, axis=axis)
    # Bilinear: the centre-aligned coordinate (i + 0.5) * scale - 0.5, clamped at 0 (TF's lower
    # index max(floor(c), 0) with a weight that no longer matters there, since both rows are row 0).
    c = _ops.maximum(src - 0.5, 0.0)
    lo = _ops.cast(c, int32)  # c >= 0: truncation is floor
    hi = _ops.minimum(lo + 1, _ops.cast(last, int32) if isinstance(last, Tensor) else last)
    frac = c - _ops.cast(lo, float32)
    frac = _ops.reshape(frac, [out_size] + [1] * (len(x.shape) - 1 - axis))
    a = _ops.gather(x, lo, axis=axis)
    b = _ops.gather(x, hi, axis=axis)
    return a + (b - a) * frac


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False, antialias=False, name=None):
    """Images resized to ``size`` = [new_height, new_width] (Python ints), TF2 semantics: pixel
    centres at half-integers, bilinear output float32, nearest output in the input's dtype. With
    preserve_aspect_ratio the image is scaled to fit inside size (the input's height and width
    must then be known)."""
    x, r = _image(images, "resize")
    method = method.lower() if isinstance(method, str) else method
    if method == "nearest_neighbor":
        method = "nearest"
    if method not in ("bilinear", "nearest"):
        raise NotImplementedError("weft.image.resize supports method 'bilinear' and 'nearest', not %r" % (method,))
    if antialias:
        raise NotImplementedError("weft.image.resize does not support antialias=True (use antialias=False)")
    if isinstance(size, Tensor):
        raise NotImplementedError("weft.image.resize takes size as two Python ints (the output shape is fixed when "
                                  "the graph is built), not a tensor")
    size = [int(s) for s in size]
    if len(size) != 2 or min(size) <= 0:
        raise ValueError("weft.image.resize: size must be [new_height, new_width] > 0, got %s" % (size,))
    h_axis = r - 3
    if preserve_aspect_ratio:
        h, w = x.shape[h_axis], x.shape[h_axis + 1]
        if h is None or w is None:
            raise ValueError("weft.image.resize(preserve_aspect_ratio=True) needs the image's height and width known, "
                             "got shape %s" % (x.shape,))
        scale = min(np.float32(size[0]) / np.float32(h), np.float32(size[1]) / np.float32(w))
        size = [int(np.round(np.float32(scale) * np.float32(h))), int(np.round(np.float32(scale) * np.float32(w)))]
    if method == "bilinear" and x.dtype != float32:
        x = _ops.cast(x, float32)
    x = _resize_axis(x, h_axis, size[0], method)
    return _resize_axis(x, h_axis + 1, size[1], method)


# ---- crops and pads ---------------------------------------------------------------------------

def _hw(x, r, what):
    h, w = x.shape[r - 3], x.shape[r - 2]
    if h is None or w is None:
        raise ValueError("weft.image.%s needs the image's height and width known, got shape %s" % (what, x.shape))
    return int(h), int(w)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The [target_height, target_width] window at (offset_height, offset_width)."""
    x, r = _image(image, "crop_to_bounding_box")
    h, w = _hw(x, r, "crop_to_bounding_box")
    if offset_height < 0 or offset_width < 0 or target_height <= 0 or target_width <= 0 or \
            offset_height + target_height > h or offset_width + target_width > w:
        raise ValueError("weft.image.crop_to_bounding_box: window (%d, %d) + (%d, %d) does not fit image %s"
                         % (offset_height, offset_width, target_height, target_width, x.shape))
    begin = [0] * (r - 3) + [int(offset_height), int(offset_width), 0]
    size = [-1] * (r - 3) + [int(target_height), int(target_width), -1]
    return _ops.slice(x, begin, size)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """The image placed at (offset_height, offset_width) in zeros of [target_height, target_width]."""
    x, r = _image(image, "pad_to_bounding_box")
    h, w = _hw(x, r, "pad_to_bounding_box")
    after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
    if offset_height < 0 or offset_width < 0 or after_h < 0 or after_w < 0:
        raise ValueError("weft.image.pad_to_bounding_box: image %s at (%d, %d) does not fit in (%d, %d)"
                         % (x.shape, offset_height, offset_width, target_height, target_width))
    pads = [[0, 0]] * (r - 3) + [[offset_height, after_h], [offset_width, after_w], [0, 0]]
    return _ops.pad(x, pads)


def resize_with_crop_or_pad(image, target_height, target_width):
    """The image cropped (centred) and/or zero-padded (centred) to the target size, as TF."""
    x, r = _image(image, "resize_with_crop_or_pad")
    h, w = _hw(x, r, "resize_with_crop_or_pad")
    dh, dw = target_height - h, target_width - w
    crop_h, crop_w = max(-dh // 2, 0), max(-dw // 2, 0)
    pad_h, pad_w = max(dh // 2, 0), max(dw // 2, 0)
    if (min(target_height, h), min(target_width, w)) != (h, w) or crop_h or crop_w:
        x = crop_to_bounding_box(x, crop_h, crop_w, min(target_height, h), min(target_width, w))
    if (target_height, target_width) != (min(target_height, h), min(target_width, w)):
        x = pad_to_bounding_box(x, pad_h, pad_w, target_height, target_width)
    return x


def central_crop(image, central_fraction):
    """The central ``central_fraction`` (in (0, 1]) of the image's height and width."""
    x, r = _image(image, "central_crop")
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("weft.image.central_crop: central_fraction must be in (0, 1], got %r" % (central_fraction,))
    if central_fraction == 1.0:
        return x
    h, w = _hw(x, r, "central_crop")
    top = int((float(h) - float(h) * central_fraction) / 2)
    left = int((float(w) - float(w) * central_fraction) / 2)
    return crop_to_bounding_box(x, top, left, h - 2 * top, w - 2 * left)


def random_crop(value, size, seed=None, name=None):
    """A window of ``size`` (one int per dim of value) at a uniformly random offset."""
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if isinstance(size, Tensor):
        raise NotImplementedError("weft.image.random_crop takes size as Python ints, not a tensor")
    size = [int(s) for s in size]
    if x.shape is None or len(x.shape) != len(size):
        raise ValueError("weft.image.random_crop: size %s needs one entry per dim of value %s" % (size, x.shape))
    draws = _ops.random_uniform([len(size)], seed=seed)
    for d, n in enumerate(size):
        full = x.shape[d]
        if full is not None and n > full:
            raise ValueError("weft.image.random_crop: size %s is larger than value %s in dim %d" % (size, x.shape, d))
        if full is not None and n == full:
            continue
        limit = _ops.cast(_dim(x, d) - n + 1, float32) if full is None else float(full - n + 1)
        offset = _ops.cast(draws[d] * limit, int32)  # in [0, limit)
        x = _ops.gather(x, offset + constant(np.arange(n, dtype=np.int32)), axis=d)
    return x


# ---- colour and statistics --------------------------------------------------------------------

def rgb_to_grayscale(images, name=None):
    """[..., 3] RGB to [..., 1] luma with TF's weights (0.2989, 0.5870, 0.1140), in the input's dtype."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape is None or not x.shape or x.shape[-1] != 3:
        raise ValueError("weft.image.rgb_to_grayscale needs images with a last dim of 3, got shape %s" % (x.shape,))
    flt = convert_image_dtype(x, float32)
    gray = _tensordot(flt, constant(np.asarray([0.2989, 0.5870, 0.1140], np.float32)), [[-1], [-1]])
    return convert_image_dtype(_ops.expand_dims(gray, -1), x.dtype)


def grayscale_to_rgb(images, name=None):
    """[..., 1] to [..., 3] by repeating the channel."""
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape is None or not x.shape or x.shape[-1] != 1:
        raise ValueError("weft.image.grayscale_to_rgb needs images with a last dim of 1, got shape %s" % (x.shape,))
    return _ops.concat([x, x, x], len(x.shape) - 1)


def _in_float(image, f):
    """f applied to the image as float32 (0..1 for integer images), converted back to the input's
    dtype (saturating), as TF's adjust_* functions."""
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    out = f(convert_image_dtype(x, float32) if x.dtype != float64 else x)
    return convert_image_dtype(out, x.dtype, saturate=True)


def adjust_brightness(image, delta):
    """image + delta (in the float range: 0..1 for integer images)."""
    return _in_float(image, lambda x: x + _ops.cast(delta, x.dtype) if isinstance(delta, Tensor) else x + float(delta))


def adjust_contrast(images, contrast_factor):
    """(x - mean) * contrast_factor + mean, with the mean over height and width per channel."""
    x, r = _image(images, "adjust_contrast")

    def f(y):
        mean = _ops.reduce_mean(y, [r - 3, r - 2], keepdims=True)
        factor = _ops.cast(contrast_factor, y.dtype) if isinstance(contrast_factor, Tensor) else float(contrast_factor)
        return (y - mean) * factor + mean
    return _in_float(x, f)


def random_brightness(image, max_delta, seed=None):
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("weft.image.random_brightness: max_delta must be non-negative, got %r" % (max_delta,))
    return adjust_brightness(image, _ops.random_uniform([], -float(max_delta), float(max_delta), seed=seed))


def random_contrast(image, lower, upper, seed=None):
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if not 0 <= lower < upper:
        raise ValueError("weft.image.random_contrast needs 0 <= lower < upper, got %r, %r" % (lower, upper))
    return adjust_contrast(image, _ops.random_uniform([], float(lower), float(upper), seed=seed))


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1 / sqrt(num_pixels)) per image, in float32 (num_pixels counts
    height * width * channels, as TF)."""
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if x.shape is None or len(x.shape) < 3:
        raise ValueError("weft.image.per_image_standardization needs an image of rank >= 3, got shape %s" % (x.shape,))
    x = _ops.cast(x, float32)
    axes = [-1, -2, -3]
    dims = x.shape[-3:]
    if all(d is not None for d in dims):
        min_std = constant(np.float32(1.0 / np.sqrt(np.float32(np.prod(dims)))))
    else:
        min_std = _ops.rsqrt(_ops.cast(_ops.reduce_prod(_ops.shape(x)[-3:]), float32))
    mean = _ops.reduce_mean(x, axes, keepdims=True)
    std = _reduce_std(x, axes, keepdims=True)
    return (x - mean) / _ops.maximum(std, min_std)


def _unsupported(name, instead):
    def f(*args, **kwargs):
        raise NotImplementedError("weft.image.%s is not supported; %s" % (name, instead))
    f.__name__ = name
    return f


from ._image_color import (adjust_gamma, adjust_hue, adjust_saturation, hsv_to_rgb, random_hue,  # noqa: E402,F401
                           random_saturation, rgb_to_hsv)
from ._image_metrics import (extract_patches, image_gradients, psnr, sobel_edges, ssim,  # noqa: E402,F401
                             total_variation)
from ._image_stateless import (stateless_random_brightness, stateless_random_contrast,  # noqa: E402,F401
                               stateless_random_crop, stateless_random_flip_left_right,
                               stateless_random_flip_up_down, stateless_random_hue, stateless_random_jpeg_quality,
                               stateless_random_saturation)
# The codecs are tf.io's (host functions over file bytes: io/_image_codecs.py), also tf.image's.
from .io._image_codecs import (decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg,  # noqa
                               encode_png, extract_jpeg_shape, is_jpeg)
