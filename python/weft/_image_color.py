"""``tf.image`` colour functions: RGB <-> HSV, saturation, hue and gamma adjustments, composed
from elementwise weft ops with TF's formulas (its RGBToHSV / HSVToRGB / AdjustHue /
AdjustSaturation kernels): hue and saturation in [0, 1], values in the image's float range.
Integer images are adjusted in float32 (0..1) and converted back, saturating, as TF does."""
from . import ops as _ops
from .array_ops import stack as _stack, unstack as _unstack
from .framework import Tensor, convert_to_tensor, float32, float64
from .math import floor as _floor


def _rgb(images, what):
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape is None or not x.shape or x.shape[-1] != 3:
        raise ValueError("weft.image.%s needs images with a last dim of 3 (RGB), got shape %s" % (what, x.shape))
    return x


def _channels(x):
    return _unstack(x, 3, axis=len(x.shape) - 1)


def _stack_last(channels):
    return _stack(channels, axis=len(channels[0].shape))


def _float_only(x, what):
    if x.dtype not in (float32, float64):
        raise TypeError("weft.image.%s takes float32 or float64 images (convert with convert_image_dtype), got %s"
                        % (what, x.dtype))


def rgb_to_hsv(images, name=None):
    """[..., 3] RGB (floats in [0, 1]) to [..., 3] HSV, each in [0, 1]; hue 0 for greys."""
    x = _rgb(images, "rgb_to_hsv")
    _float_only(x, "rgb_to_hsv")
    r, g, b = _channels(x)
    v = _ops.maximum(_ops.maximum(r, g), b)
    rng = v - _ops.minimum(_ops.minimum(r, g), b)
    zero = _ops.zeros_like(v)
    s = _ops.where(v > zero, rng / _ops.where(v > zero, v, _ops.ones_like(v)), zero)
    safe = _ops.where(rng > zero, rng, _ops.ones_like(rng))
    norm = 1.0 / (6.0 * safe)
    h = _ops.where(_ops.equal(r, v), norm * (g - b),
                   _ops.where(_ops.equal(g, v), norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0))
    h = _ops.where(rng > zero, h, zero)
    h = _ops.where(h < zero, h + 1.0, h)
    return _ops.identity(_stack_last([h, s, v]), name=name)


def hsv_to_rgb(images, name=None):
    """[..., 3] HSV (each in [0, 1]) to [..., 3] RGB."""
    x = _rgb(images, "hsv_to_rgb")
    _float_only(x, "hsv_to_rgb")
    h, s, v = _channels(x)

    def clamp01(t):
        return _ops.minimum(_ops.maximum(t, 0.0), 1.0)
    dh = h * 6.0
    dr = clamp01(_ops.abs(dh - 3.0) - 1.0)
    dg = clamp01(2.0 - _ops.abs(dh - 2.0))
    db = clamp01(2.0 - _ops.abs(dh - 4.0))
    one_minus_s = 1.0 - s
    return _ops.identity(_stack_last([(one_minus_s + s * c) * v for c in (dr, dg, db)]), name=name)


def _adjust_hsv(image, what, f):
    """f(h, s, v) -> (h, s, v) on the image in float (integer images: 0..1, converted back)."""
    from .image import convert_image_dtype
    x = _rgb(image, what)
    flt = x if x.dtype in (float32, float64) else convert_image_dtype(x, float32)
    h, s, v = _channels(rgb_to_hsv(flt))
    rgb = hsv_to_rgb(_stack_last(list(f(h, s, v))))
    return rgb if x.dtype == flt.dtype else convert_image_dtype(rgb, x.dtype, saturate=True)


def adjust_saturation(image, saturation_factor, name=None):
    """The image with its HSV saturation multiplied by ``saturation_factor`` (clipped to [0, 1])."""
    def f(h, s, v):
        k = _ops.cast(saturation_factor, s.dtype) if isinstance(saturation_factor, Tensor) else float(saturation_factor)
        return h, _ops.minimum(_ops.maximum(s * k, 0.0), 1.0), v
    return _ops.identity(_adjust_hsv(image, "adjust_saturation", f), name=name)


def adjust_hue(image, delta, name=None):
    """The image with ``delta`` (in [-1, 1]) added to its HSV hue, wrapped into [0, 1)."""
    if not isinstance(delta, Tensor) and not -1.0 <= float(delta) <= 1.0:
        raise ValueError("weft.image.adjust_hue: delta must be in the interval [-1, 1], got %r" % (delta,))

    def f(h, s, v):
        d = _ops.cast(delta, h.dtype) if isinstance(delta, Tensor) else float(delta)
        moved = h + d
        return moved - _floor(moved), s, v
    return _ops.identity(_adjust_hsv(image, "adjust_hue", f), name=name)


def adjust_gamma(image, gamma=1, gain=1):
    """gain * image ** gamma (integer images in float 0..1, converted back), as TF."""
    from .image import convert_image_dtype
    if not isinstance(gamma, Tensor) and float(gamma) < 0:
        raise ValueError("weft.image.adjust_gamma: gamma must be non-negative, got %r" % (gamma,))
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    flt = x if x.dtype in (float32, float64) else convert_image_dtype(x, float32)
    g = _ops.cast(gamma, flt.dtype) if isinstance(gamma, Tensor) else _ops.constant(float(gamma), flt.dtype)
    k = _ops.cast(gain, flt.dtype) if isinstance(gain, Tensor) else _ops.constant(float(gain), flt.dtype)
    out = k * _ops.pow(flt, g)
    return out if x.dtype == flt.dtype else convert_image_dtype(out, x.dtype, saturate=True)


def check_saturation_range(lower, upper, what):
    if upper <= lower:
        raise ValueError("weft.image.%s: upper must be > lower, got lower=%r upper=%r" % (what, lower, upper))
    if lower < 0:
        raise ValueError("weft.image.%s: lower must be non-negative, got %r" % (what, lower))


def check_hue_delta(max_delta, what):
    if not 0 <= max_delta <= 0.5:
        raise ValueError("weft.image.%s: max_delta must be in [0, 0.5], got %r" % (what, max_delta))


def random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    check_saturation_range(lower, upper, "random_saturation")
    return adjust_saturation(image, _ops.random_uniform([], float(lower), float(upper), seed=seed))


def random_hue(image, max_delta, seed=None):
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta)."""
    check_hue_delta(max_delta, "random_hue")
    return adjust_hue(image, _ops.random_uniform([], -float(max_delta), float(max_delta), seed=seed))
