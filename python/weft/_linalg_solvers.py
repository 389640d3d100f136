"""``tf.linalg`` inverses, determinants and solvers over batches of small matrices [..., n, n]
(ops MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve:
LU with partial pivoting on the CPU, ops/linalg.cc), all with gradients. lstsq is composed:
the normal equations, TF's ``fast=True`` path."""
from . import ops as _ops
from .framework import Tensor, convert_to_tensor, float32, float64


def _float(x, what):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    if x.dtype not in (float32, float64):
        raise TypeError("weft.linalg.%s takes float32 or float64 matrices, got %s" % (what, x.dtype))
    return x


def inv(input, adjoint=False, name=None):
    """The inverse of each matrix (of its conjugate transpose when adjoint); InvalidArgumentError
    "Input is not invertible" for a singular one."""
    return _ops.raw_ops.MatrixInverse(_float(input, "inv"), adjoint=bool(adjoint), name=name)


def det(input, name=None):
    """The determinant of each matrix: [...]."""
    return _ops.raw_ops.MatrixDeterminant(_float(input, "det"), name=name)


def slogdet(input, name=None):
    """(sign, log |det|) of each matrix; (0, -inf) for a singular one."""
    return _ops.raw_ops.LogMatrixDeterminant(_float(input, "slogdet"), name=name)


def logdet(matrix, name=None):
    """log det of each Hermitian positive-definite matrix."""
    return _ops.identity(slogdet(matrix)[1], name=name)


def solve(matrix, rhs, adjoint=False, name=None):
    """x with matrix @ x = rhs (matrix^T @ x = rhs when adjoint): [..., n, n] and [..., n, k]."""
    m = _float(matrix, "solve")
    return _ops.raw_ops.MatrixSolve(m, _ops.cast(_float(rhs, "solve"), m.dtype), adjoint=bool(adjoint), name=name)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """x by substitution with the lower (or upper) triangle of matrix; the other triangle is not read."""
    m = _float(matrix, "triangular_solve")
    return _ops.raw_ops.MatrixTriangularSolve(m, _ops.cast(_float(rhs, "triangular_solve"), m.dtype),
                                              lower=bool(lower), adjoint=bool(adjoint), name=name)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """The least-squares solutions of matrix [..., m, n] @ x = rhs [..., m, k] with an optional
    L2 penalty, by the normal equations: (A^T A + l2 I)^-1 A^T b when m >= n, A^T (A A^T + l2 I)^-1 b
    when m < n (TF's fast path; ``fast=False`` takes it too: the same solution for full-rank
    matrices, with the normal equations' accuracy)."""
    a = _float(matrix, "lstsq")
    b = _ops.cast(_float(rhs, "lstsq"), a.dtype)
    if a.shape is None or len(a.shape) < 2 or a.shape[-2] is None or a.shape[-1] is None:
        raise ValueError("weft.linalg.lstsq needs matrices of known rank and last two dims, got shape %s" % (a.shape,))
    from .array_ops import eye
    m, n = int(a.shape[-2]), int(a.shape[-1])
    reg = float(l2_regularizer) if not isinstance(l2_regularizer, Tensor) else _ops.cast(l2_regularizer, a.dtype)
    if m >= n:
        gram = _ops.matmul(a, a, transpose_a=True) + reg * eye(n, dtype=a.dtype)
        return _ops.identity(solve(gram, _ops.matmul(a, b, transpose_a=True)), name=name)
    gram = _ops.matmul(a, a, transpose_b=True) + reg * eye(m, dtype=a.dtype)
    return _ops.matmul(a, solve(gram, b), transpose_a=True, name=name)
