"""``tf.image.stateless_random_*``: the random image functions with a shape-[2] seed tensor in
place of an op seed, so the same seed gives the same image in every run (weft.random's
stateless_uniform draws; see _stateless_random.py). As TF: a 3-D image takes one draw, a batch's
flips take one draw per image, the colour functions one draw per call."""
import numpy as np

from . import _image_color as _color
from . import ops as _ops
from ._stateless_random import stateless_uniform
from .framework import Tensor, constant, convert_to_tensor, int32


def _flip(image, seed, axis_from_h, what):
    from .image import _flip as flip, _image
    x, r = _image(image, what)
    flipped = flip(x, r, axis_from_h)
    if r == 3:
        cond = _ops.less(stateless_uniform([], seed), 0.5)
    else:  # one draw per image: flipped where round(u) == 1, as TF's batch path
        cond = _ops.greater_equal(stateless_uniform([_ops.shape(x)[0]], seed), 0.5)
    return _ops.raw_ops.Select(cond, flipped, x)  # a vector condition selects whole images (rows)


def stateless_random_flip_left_right(image, seed):
    """The image (each image of a batch) flipped left-right with probability 1/2, decided by seed."""
    return _flip(image, seed, 1, "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image, seed):
    """The image (each image of a batch) flipped up-down with probability 1/2, decided by seed."""
    return _flip(image, seed, 0, "stateless_random_flip_up_down")


def stateless_random_brightness(image, max_delta, seed):
    """adjust_brightness by a delta drawn from [-max_delta, max_delta)."""
    from .image import adjust_brightness
    if max_delta < 0:
        raise ValueError("weft.image.stateless_random_brightness: max_delta must be non-negative, got %r"
                         % (max_delta,))
    return adjust_brightness(image, stateless_uniform([], seed, -float(max_delta), float(max_delta)))


def stateless_random_contrast(image, lower, upper, seed):
    """adjust_contrast by a factor drawn from [lower, upper)."""
    from .image import adjust_contrast
    if upper <= lower:
        raise ValueError("weft.image.stateless_random_contrast: upper must be > lower, got %r, %r" % (lower, upper))
    if lower < 0:
        raise ValueError("weft.image.stateless_random_contrast: lower must be non-negative, got %r" % (lower,))
    return adjust_contrast(image, stateless_uniform([], seed, float(lower), float(upper)))


def stateless_random_saturation(image, lower, upper, seed=None):
    """adjust_saturation by a factor drawn from [lower, upper)."""
    _color.check_saturation_range(lower, upper, "stateless_random_saturation")
    return _color.adjust_saturation(image, stateless_uniform([], seed, float(lower), float(upper)))


def stateless_random_hue(image, max_delta, seed):
    """adjust_hue by a delta drawn from [-max_delta, max_delta)."""
    _color.check_hue_delta(max_delta, "stateless_random_hue")
    return _color.adjust_hue(image, stateless_uniform([], seed, -float(max_delta), float(max_delta)))


def stateless_random_crop(value, size, seed, name=None):
    """A window of ``size`` (Python ints, one per dim of value) at an offset drawn from seed (as TF:
    full-range int32 draws modulo shape - size + 1)."""
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if isinstance(size, Tensor):
        raise NotImplementedError("weft.image.stateless_random_crop takes size as Python ints, not a tensor")
    size = [int(s) for s in size]
    if x.shape is None or len(x.shape) != len(size):
        raise ValueError("weft.image.stateless_random_crop: size %s needs one entry per dim of value %s"
                         % (size, x.shape))
    draws = stateless_uniform([len(size)], seed, 0, 2 ** 31 - 1, dtype=int32)
    for d, n in enumerate(size):
        full = x.shape[d]
        if full is not None and n > full:
            raise ValueError("weft.image.stateless_random_crop: size %s is larger than value %s in dim %d"
                             % (size, x.shape, d))
        if full is not None and n == full:
            continue
        limit = _ops.shape(x)[d] - n + 1 if full is None else constant(full - n + 1, int32)
        from .math import floormod
        offset = floormod(draws[d], limit)
        x = _ops.gather(x, offset + constant(np.arange(n, dtype=np.int32)), axis=d)
    return _ops.identity(x, name=name)


def stateless_random_jpeg_quality(image, min_jpeg_quality, max_jpeg_quality, seed):
    raise NotImplementedError("weft.image.stateless_random_jpeg_quality is not supported: weft has no JPEG codec "
                              "(decode and re-encode images with PIL before weft.data)")


__all__ = ["stateless_random_flip_left_right", "stateless_random_flip_up_down", "stateless_random_brightness",
           "stateless_random_contrast", "stateless_random_saturation", "stateless_random_hue",
           "stateless_random_crop", "stateless_random_jpeg_quality"]
