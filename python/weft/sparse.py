"""``weft.sparse`` (tf.sparse) at the level of TensorFlow's "Introduction to tensors" guide: a
SparseTensor (COO: ``indices`` [N, rank] int64, ``values`` [N], ``dense_shape`` [rank] int64) and
its dense form, as graph tensors::

    st = weft.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    weft.sparse.to_dense(st)     # [[1 0 0 0] [0 0 2 0] [0 0 0 0]]

``to_dense`` is a scatter (weft.scatter_nd); ``from_dense`` gathers the non-zeros. The dense
shape must be known when the graph is built (Python ints or a tensor computed from constants).
Sparse kernels (``sparse_dense_matmul``, sparse reductions, ``tf.sparse.add``) are not there:
use ``to_dense`` first.
"""
import numpy as np

from . import array_ops as _array_ops
from . import ops as _ops
from .framework import Tensor, constant, convert_to_tensor, int64


class SparseTensor:
    """TensorFlow's SparseTensor: the values at ``indices`` of a tensor of ``dense_shape``, zero
    elsewhere."""

    def __init__(self, indices, values, dense_shape):
        self.indices = _ops.cast(indices, int64) if isinstance(indices, Tensor) else constant(
            np.asarray(indices, np.int64).reshape(-1, len(dense_shape) if not isinstance(dense_shape, Tensor) else -1))
        self.values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self.dense_shape = _ops.cast(dense_shape, int64) if isinstance(dense_shape, Tensor) else constant(
            np.asarray(dense_shape, np.int64))
        n_idx, n_val = self.indices.shape[0], self.values.shape[0] if self.values.shape else None
        if len(self.values.shape or ()) != 1 or (n_idx is not None and n_val is not None and n_idx != n_val):
            raise ValueError("SparseTensor: values %s must be a vector with one value per row of indices %s"
                             % (self.values.shape, self.indices.shape))

    dtype = property(lambda self: self.values.dtype)

    @property
    def shape(self):
        return _array_ops.TensorShape(_shape_list(self.dense_shape))

    def __repr__(self):
        return "SparseTensor(indices=%s, values=%s, dense_shape=%s)" % (self.indices, self.values, self.dense_shape)


def _shape_list(dense_shape):
    """The dense shape as Python ints (its value, computed from constants)."""
    return [int(d) for d in np.asarray(dense_shape.numpy()).reshape(-1)]


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of ``sp_input``: its values at its indices, ``default_value`` (zero)
    elsewhere. An index outside the dense shape is an InvalidArgumentError."""
    if not isinstance(sp_input, SparseTensor):
        raise TypeError("weft.sparse.to_dense takes a SparseTensor, got %r" % (sp_input,))
    dims = _shape_list(sp_input.dense_shape)
    dense = _array_ops.scatter_nd(sp_input.indices, sp_input.values, dims)
    if default_value is None:
        return dense if name is None else _ops.identity(dense, name=name)
    hit = _array_ops.scatter_nd(sp_input.indices, _ops.ones_like(sp_input.values), dims)
    fill = _ops.fill(dims, _ops.cast(convert_to_tensor(default_value), sp_input.dtype))
    return _ops.where(_ops.equal(hit, _ops.zeros_like(hit)), fill, dense, name=name)


def from_dense(tensor, name=None):
    """The SparseTensor of ``tensor``'s non-zero elements (in row-major order)."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape is None or any(d is None for d in tensor.shape):
        raise ValueError("weft.sparse.from_dense needs a tensor of known shape, got %s" % (tensor.shape,))
    indices = _ops.where(_ops.not_equal(tensor, _ops.zeros_like(tensor)))
    return SparseTensor(indices, _array_ops.gather_nd(tensor, indices), list(tensor.shape))


def __getattr__(name):
    if name.startswith("_"):
        raise AttributeError(name)
    raise NotImplementedError("tf.sparse.%s is not supported by weft (its SparseTensor has to_dense / from_dense "
                              "only): use weft.sparse.to_dense and dense ops" % name)
