"""``tf.nn.conv3d``, ``max_pool3d``, ``avg_pool3d`` over [N, D, H, W, C] (NDHWC), composed from
the 2-D ops: the depth window is unrolled into its kd taps. Tap a reads the input depths
a * dilation + z * stride for the output depths z (one strided slice), the batch and those depths
are merged, and the 2-D op runs over (H, W); the kd results are summed (conv), or maxed /
averaged (pools). So there are kd Conv2D / pool nodes per call whatever the depth, with the 2-D
kernels' speed and gradients. SAME pads the depth as TF does (total max((Do - 1) s + (k - 1) d + 1
- D, 0), the smaller half before): zeros for conv, -inf for max, and the average divides by the
taps inside the input. Depth, height and width must be known when the graph is built."""
import numpy as np

from . import ops as _o
from .framework import Tensor, constant, convert_to_tensor


def _triple(v, what):
    """(d, h, w) from an int, three ints or TF's [1, d, h, w, 1]."""
    if isinstance(v, int):
        return (v, v, v)
    v = [int(x) for x in v]
    if len(v) == 5 and v[0] == 1 and v[4] == 1:
        return tuple(v[1:4])
    if len(v) != 3:
        raise ValueError("%s must be an int, [d, h, w] or [1, d, h, w, 1], got %s" % (what, v))
    return tuple(v)


def _input(x, what):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if x.shape is None or len(x.shape) != 5 or any(d is None for d in x.shape[1:]):
        raise ValueError("weft.nn.%s needs an input [batch, depth, height, width, channels] with known depth, height, "
                         "width and channels, got shape %s" % (what, x.shape))
    return x


def _depth_plan(depth, k, stride, dilation, padding, what):
    """(output depth, padding before, padding after) along depth, TF's rules."""
    padding = padding.upper()
    span = (k - 1) * dilation + 1
    if padding == "VALID":
        if depth < span:
            raise ValueError("weft.nn.%s: the depth window %d (dilated) is larger than the input depth %d"
                             % (what, span, depth))
        return (depth - span) // stride + 1, 0, 0
    if padding != "SAME":
        raise ValueError("weft.nn.%s: padding must be 'VALID' or 'SAME', got %r" % (what, padding))
    out = -(-depth // stride)
    total = max((out - 1) * stride + span - depth, 0)
    return out, total // 2, total - total // 2


def _taps(x, k, stride, dilation, out_depth, pad, value):
    """The kd tensors [N * Do, H, W, C]: tap a holds the (padded) input depths a * dilation + z * stride."""
    if pad[0] or pad[1]:
        x = _o.pad(x, [[0, 0], pad, [0, 0], [0, 0], [0, 0]], constant_values=value)
    h, w, c = (int(d) for d in x.shape[2:])
    taps = []
    for a in range(k):
        first = a * dilation
        sl = x[:, first:first + (out_depth - 1) * stride + 1:stride]
        taps.append(_o.reshape(sl, [-1, h, w, c]))
    return taps


def _merge(y, out_depth):
    """[N * Do, Ho, Wo, F] back to [N, Do, Ho, Wo, F]."""
    dims = [int(d) for d in y.shape[1:]]
    return _o.reshape(y, [-1, out_depth] + dims)


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """3-D convolution of ``input`` [N, D, H, W, C] with ``filters`` [KD, KH, KW, C, F]; strides and
    dilations: [1, d, h, w, 1] (as TF), three ints or an int."""
    if data_format not in (None, "NDHWC", "channels_last"):
        raise NotImplementedError("weft.nn.conv3d computes in NDHWC only, got data_format=%r" % (data_format,))
    x = _input(input, "conv3d")
    f = filters if isinstance(filters, Tensor) else convert_to_tensor(filters, x.dtype)
    if f.shape is None or len(f.shape) != 5 or any(d is None for d in f.shape):
        raise ValueError("weft.nn.conv3d needs filters [depth, height, width, in_channels, out_channels] of known "
                         "shape, got %s" % (f.shape,))
    if int(f.shape[3]) != int(x.shape[4]):
        raise ValueError("weft.nn.conv3d: filters %s expect %d input channels, the input %s has %d"
                         % (f.shape, int(f.shape[3]), x.shape, int(x.shape[4])))
    (sd, sh, sw), (dd, dh, dw) = _triple(strides, "strides"), _triple(dilations or 1, "dilations")
    kd = int(f.shape[0])
    out_depth, before, after = _depth_plan(int(x.shape[1]), kd, sd, dd, padding, "conv3d")
    total = None
    for a, tap in enumerate(_taps(x, kd, sd, dd, out_depth, (before, after), 0.0)):
        y = _o.raw_ops.Conv2D(tap, f[a], strides=[sh, sw], padding=padding.upper(), dilations=[dh, dw])
        total = y if total is None else total + y
    return _o.identity(_merge(total, out_depth), name=name)


def _pool3d(input, ksize, strides, padding, data_format, what, is_max):
    if data_format not in (None, "NDHWC", "channels_last"):
        raise NotImplementedError("weft.nn.%s computes in NDHWC only, got data_format=%r" % (what, data_format))
    x = _input(input, what)
    (kd, kh, kw), (sd, sh, sw) = _triple(ksize, "ksize"), _triple(strides, "strides")
    depth = int(x.shape[1])
    out_depth, before, after = _depth_plan(depth, kd, sd, 1, padding, what)
    # Pool (H, W) first on every input depth, then combine the depth taps.
    c = int(x.shape[4])
    planes = _o.reshape(x, [-1, int(x.shape[2]), int(x.shape[3]), c])
    op = _o.raw_ops.MaxPool if is_max else _o.raw_ops.AvgPool
    pooled = op(planes, ksize=[kh, kw], strides=[sh, sw], padding=padding.upper())
    ho, wo = int(pooled.shape[1]), int(pooled.shape[2])
    pooled = _o.reshape(pooled, [-1, depth, ho, wo, c])
    fill = -np.inf if is_max else 0.0
    taps = _taps(pooled, kd, sd, 1, out_depth, (before, after), fill)
    out = taps[0]
    for t in taps[1:]:
        out = _o.maximum(out, t) if is_max else out + t
    if not is_max:
        # The taps of output depth z inside the input: the divisor TF's SAME average uses.
        counts = [sum(1 for a in range(kd) if 0 <= z * sd + a - before < depth) for z in range(out_depth)]
        inv = (1.0 / np.asarray(counts, np.float64)).astype(x.dtype.as_numpy_dtype)
        scale = constant(inv.reshape(1, -1, 1, 1, 1))
        return _merge(out, out_depth) * scale
    return _merge(out, out_depth)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Max over [kd, kh, kw] windows of ``input`` [N, D, H, W, C]."""
    return _o.identity(_pool3d(input, ksize, strides, padding, data_format, "max_pool3d", True), name=name)


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """Mean over [kd, kh, kw] windows of ``input`` [N, D, H, W, C] (SAME: over the window's part
    inside the input, as TF)."""
    return _o.identity(_pool3d(input, ksize, strides, padding, data_format, "avg_pool3d", False), name=name)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """A depthwise convolution ([KH, KW, C, M]) followed by a 1x1 convolution ([1, 1, C * M, F]), as TF."""
    from .nn import depthwise_conv2d
    y = depthwise_conv2d(input, depthwise_filter, strides=strides, padding=padding, data_format=data_format,
                         dilations=dilations)
    return _o.raw_ops.Conv2D(y, pointwise_filter, strides=[1, 1], padding="VALID", dilations=[1, 1], name=name)
