"""``tf.image`` quality measures and filters: psnr, ssim, total_variation, image_gradients,
sobel_edges, extract_patches, composed from weft ops with TF's formulas (so they have gradients).
Images are [height, width, channels] or [batch, height, width, channels]."""
import numpy as np

from . import ops as _ops
from .framework import Tensor, constant, convert_to_tensor, float32, float64


def _batch(images, what):
    """(4-D float tensor, rank of the input): a 3-D image gets a batch dim of 1."""
    from .image import _image
    x, r = _image(images, what)
    return (x if r == 4 else _ops.expand_dims(x, 0)), r


def _to_float(x, max_val):
    """TF's psnr / ssim preamble: max_val in x's dtype, both converted to float32 image ranges."""
    from .image import convert_image_dtype
    if x.dtype in (float32, float64):
        return x, _ops.cast(max_val, x.dtype) if isinstance(max_val, Tensor) else constant(float(max_val), x.dtype)
    mv = _ops.cast(max_val, x.dtype) if isinstance(max_val, Tensor) else constant(max_val, x.dtype)
    return convert_image_dtype(x, float32), convert_image_dtype(mv, float32)


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image: 20 log10(max_val) - 10 log10(mse over height, width and
    channels)."""
    a = a if isinstance(a, Tensor) else convert_to_tensor(a)
    b = b if isinstance(b, Tensor) else convert_to_tensor(b, a.dtype)
    if a.dtype != b.dtype:
        raise TypeError("weft.image.psnr: a and b must have one dtype, got %s and %s" % (a.dtype, b.dtype))
    fa, mv = _to_float(a, max_val)
    fb, _ = _to_float(b, max_val)
    mse = _ops.reduce_mean(_ops.square(fa - fb), [-3, -2, -1])
    ten = float(np.log(10.0))
    return _ops.subtract(20.0 * _ops.log(mv) / ten, (10.0 / ten) * _ops.log(mse), name=name)


def _gauss_kernel(size, sigma, channels, dtype):
    coords = np.arange(size, dtype=np.float64) - (size - 1) / 2.0
    g = -0.5 * (coords[:, None] ** 2 + coords[None, :] ** 2) / sigma ** 2
    g = np.exp(g - g.max())
    g /= g.sum()
    return constant(np.tile(g[:, :, None, None], (1, 1, channels, 1)).astype(dtype.as_numpy_dtype))


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03, return_index_map=False):
    """Structural similarity per image (Wang et al. 2004, TF's form): luminance * contrast-structure
    under an 11x11 Gaussian window (sigma 1.5, VALID), averaged over positions and channels;
    ``return_index_map`` gives the map [..., h', w'] averaged over channels only."""
    from .nn import depthwise_conv2d
    x1, r = _batch(img1, "ssim")
    x2, _ = _batch(img2, "ssim")
    if x1.dtype != x2.dtype:
        raise TypeError("weft.image.ssim: img1 and img2 must have one dtype, got %s and %s" % (x1.dtype, x2.dtype))
    h, w, c = x1.shape[1], x1.shape[2], x1.shape[3]
    if c is None:
        raise ValueError("weft.image.ssim needs the channel count known, got shape %s" % (x1.shape,))
    if (h is not None and h < filter_size) or (w is not None and w < filter_size):
        raise ValueError("weft.image.ssim: images of height and width %s, %s are smaller than filter_size %d"
                         % (h, w, filter_size))
    x1, mv = _to_float(x1, max_val)
    x2, _ = _to_float(x2, max_val)
    kernel = _gauss_kernel(int(filter_size), float(filter_sigma), int(c), x1.dtype)

    def reducer(t):
        return depthwise_conv2d(t, kernel, strides=1, padding="VALID")
    c1, c2 = (k1 * mv) ** 2, (k2 * mv) ** 2
    mean0, mean1 = reducer(x1), reducer(x2)
    num0 = mean0 * mean1 * 2.0
    den0 = _ops.square(mean0) + _ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x1 * x2) * 2.0
    den1 = reducer(_ops.square(x1) + _ops.square(x2))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    index = luminance * cs
    if return_index_map:
        out = _ops.reduce_mean(index, [-1])
    else:
        out = _ops.reduce_mean(index, [-3, -2, -1])
    return out if r == 4 else _ops.squeeze(out, [0])


def total_variation(images, name=None):
    """The sum of absolute differences of neighbouring pixels (down and across), per image of a
    batch (a scalar for one image)."""
    from .image import _image
    x, r = _image(images, "total_variation")
    hd = x[..., 1:, :, :] - x[..., :-1, :, :]
    wd = x[..., :, 1:, :] - x[..., :, :-1, :]
    axes = [-3, -2, -1]
    return _ops.add(_ops.reduce_sum(_ops.abs(hd), axes), _ops.reduce_sum(_ops.abs(wd), axes), name=name)


def image_gradients(image):
    """(dy, dx) of a batch [b, h, w, c]: forward differences, zero in the last row / column."""
    from .image import _image
    x, r = _image(image, "image_gradients")
    if r != 4:
        raise ValueError("weft.image.image_gradients needs a 4-D batch [batch, height, width, channels], got shape %s"
                         % (x.shape,))
    dy = x[:, 1:, :, :] - x[:, :-1, :, :]
    dx = x[:, :, 1:, :] - x[:, :, :-1, :]
    dy = _ops.concat([dy, _ops.zeros_like(x[:, :1, :, :])], 1)
    dx = _ops.concat([dx, _ops.zeros_like(x[:, :, :1, :])], 2)
    return dy, dx


def sobel_edges(image):
    """[b, h, w, c, 2]: the Sobel responses (dy, dx) of every channel, with the image padded by
    reflection (as TF)."""
    from .image import _image
    from .nn import depthwise_conv2d
    x, r = _image(image, "sobel_edges")
    if r != 4:
        raise ValueError("weft.image.sobel_edges needs a 4-D batch [batch, height, width, channels], got shape %s"
                         % (x.shape,))
    c = x.shape[3]
    if c is None or x.shape[1] is None or x.shape[2] is None or x.shape[1] < 2 or x.shape[2] < 2:
        raise ValueError("weft.image.sobel_edges needs known height, width >= 2 and channels, got shape %s"
                         % (x.shape,))
    if x.dtype not in (float32, float64):
        x = _ops.cast(x, float32)
    ky = np.array([[-1, -2, -1], [0, 0, 0], [1, 2, 1]], np.float64)
    pad = _ops.concat([x[:, 1:2], x, x[:, -2:-1]], 1)
    pad = _ops.concat([pad[:, :, 1:2], pad, pad[:, :, -2:-1]], 2)
    outs = []
    for k in (ky, ky.T):
        kernel = constant(np.tile(k[:, :, None, None], (1, 1, int(c), 1)).astype(x.dtype.as_numpy_dtype))
        outs.append(_ops.expand_dims(depthwise_conv2d(pad, kernel, strides=1, padding="VALID"), -1))
    return _ops.concat(outs, 4)


def extract_patches(images, sizes, strides, rates, padding, name=None):
    """[b, out_h, out_w, kh * kw * c]: each (dilated) kh x kw patch flattened in (row, column,
    channel) order, as TF; a convolution with a one-hot kernel, so it has a gradient."""
    from .nn import conv2d
    x = images if isinstance(images, Tensor) else convert_to_tensor(images)
    if x.shape is None or len(x.shape) != 4 or x.shape[3] is None:
        raise ValueError("weft.image.extract_patches needs a 4-D batch with known channels, got shape %s"
                         % (x.shape,))

    def four(v, what):
        v = [int(i) for i in v]
        if len(v) != 4 or v[0] != 1 or v[3] != 1:
            raise ValueError("weft.image.extract_patches: %s must be [1, rows, cols, 1], got %s" % (what, v))
        return v[1], v[2]
    (kh, kw), (sh, sw), (rh, rw) = four(sizes, "sizes"), four(strides, "strides"), four(rates, "rates")
    c = int(x.shape[3])
    kernel = np.zeros((kh, kw, c, kh * kw * c))
    for i in range(kh):
        for j in range(kw):
            for ch in range(c):
                kernel[i, j, ch, (i * kw + j) * c + ch] = 1.0
    work = x if x.dtype in (float32, float64) else _ops.cast(x, float64)
    out = conv2d(work, constant(kernel.astype(work.dtype.as_numpy_dtype)), strides=(sh, sw), padding=padding,
                 dilations=(rh, rw))
    return _ops.identity(out if work.dtype == x.dtype else _ops.cast(out, x.dtype), name=name)
