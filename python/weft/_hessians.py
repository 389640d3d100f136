"""``tf.hessians`` (TF1's): second derivatives of sum(ys) for each x, shape x.shape + x.shape."""
import numpy as np

from . import ops as _ops


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """For each x in xs, d2 sum(ys) / dx dx as a tensor of shape x.shape + x.shape (one gradient of
    each element of the first gradient: x's size must be known)."""
    single = not isinstance(xs, (list, tuple))
    xs = [xs] if single else list(xs)
    out = []
    for x in xs:
        shape = [int(d) for d in x.shape] if x.shape is not None and all(
            d is not None and d >= 0 for d in x.shape) else None
        if shape is None:
            raise ValueError("weft.hessians needs %s's shape known, got %s" % (x.name, x.shape))
        n = int(np.prod(shape)) if shape else 1
        g = _ops.gradients(ys, [x])[0]
        if g is None:
            out.append(None)
            continue
        gf = _ops.reshape(g, [-1])
        rows = []
        for i in range(n):
            h = _ops.gradients(gf[i], [x])[0]
            rows.append(_ops.reshape(h, [-1]) if h is not None else _ops.zeros([n], x.dtype))
        from .array_ops import stack
        out.append(_ops.reshape(stack(rows, 0), shape + shape))
    return out
