"""``tf.einsum`` and ``tf.linalg``: products, norms, band and diagonal matrices, composed from weft
ops (Transpose, Reshape, MatMul / BatchMatMul, Mul, Sum), so each is a graph function with
gradients, usable in Session.run, tf.function, Lambda layers and weft.data maps::

    scores = weft.einsum("bqhd,bkhd->bhqk", q, k)              # attention logits
    causal = weft.linalg.band_part(weft.ones((n, n)), -1, 0)   # lower triangle
    y = weft.linalg.matvec(a, x)

Contract of einsum: TensorFlow's equation syntax (``"ij,jk->ik"``, implicit output ``"ij,jk"``,
``...`` for leading broadcast dims, a letter repeated in one operand takes its diagonal). Operands
are contracted left to right, two at a time, as one BatchMatMul each (batch letters: in both
operands and the output; summed letters: in both, not in the output); a letter in one operand only
and not in the output is summed first. Letters must name dims of the same size (or 1, broadcast, for
batch letters); the ranks must be known when the graph is built.
"""
import builtins
import string

import numpy as np

from . import ops as _ops
from .array_ops import _rank, _t, eye, global_norm, norm, tensordot  # noqa: F401
from ._linalg_solvers import det, inv, logdet, lstsq, slogdet, solve, triangular_solve  # noqa: F401
from .framework import Tensor, constant, int64
from .math import l2_normalize  # noqa: F401
from .ops import matmul, raw_ops  # noqa: F401

# ---- einsum -----------------------------------------------------------------------------------


def _parse(equation, operands):
    """(list of per-operand letter strings, output letters) with '...' expanded to capital letters
    (right-aligned across operands, as numpy broadcasting)."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
        if "->" in out:
            raise ValueError("weft.einsum: equation %r has more than one '->'" % equation)
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError("weft.einsum: equation %r names %d operands, got %d tensors" % (equation, len(terms), len(operands)))
    spare = [c for c in string.ascii_uppercase if c not in eq]
    ell_rank = 0
    for term, x in zip(terms, operands):
        letters = term.replace("...", "")
        if not all(c in string.ascii_letters for c in letters):
            raise ValueError("weft.einsum: equation %r: operand term %r may only hold letters and '...'" % (equation, term))
        r = _rank(x, "weft.einsum")
        if "..." in term:
            ell_rank = builtins.max(ell_rank, r - len(letters))
        elif r != len(letters):
            raise ValueError("weft.einsum: equation %r: operand %r has rank %d (shape %s) but its term names %d dims"
                             % (equation, term, r, x.shape, len(letters)))
    ell = "".join(spare[:ell_rank])
    expanded = []
    for term, x in zip(terms, operands):
        if "..." in term:
            k = len(x.shape) - len(term.replace("...", ""))
            if k < 0:
                raise ValueError("weft.einsum: operand %r has rank %d, fewer dims than its term" % (term, len(x.shape)))
            term = term.replace("...", ell[ell_rank - k:])
        expanded.append(term)
    if out is None:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        if out.count("...") > 1 or not all(c in string.ascii_letters for c in out.replace("...", "")):
            raise ValueError("weft.einsum: equation %r: output term %r may only hold letters and one '...'" % (equation, out))
        out = out.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise ValueError("weft.einsum: equation %r: output letter %r appears twice" % (equation, c))
            if not any(c in t for t in expanded):
                raise ValueError("weft.einsum: equation %r: output letter %r is in no operand" % (equation, c))
    return expanded, out


def _diagonal(x, term):
    """x with each repeated letter of term reduced to its diagonal: (x', term without repeats)."""
    while True:
        rep = next((c for c in term if term.count(c) > 1), None)
        if rep is None:
            return x, term
        i = term.index(rep)
        j = term.index(rep, i + 1)
        n = x.shape[i] if x.shape[i] is not None else x.shape[j]
        if n is None:
            raise ValueError("weft.einsum: the diagonal over letter %r needs a known dim, got shape %s" % (rep, x.shape))
        shape = [1] * len(term)
        shape[i] = shape[j] = int(n)
        mask = constant(np.eye(int(n), dtype=x.dtype.as_numpy_dtype).reshape(shape))
        x = _ops.reduce_sum(x * mask, axis=j)
        term = term[:j] + term[j + 1:]


def _sum_letters(x, term, keep):
    """x with the dims whose letters are not in ``keep`` summed away."""
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return x, term
    return _ops.reduce_sum(x, axis=axes), "".join(c for c in term if c in keep)


def _permute(x, term, order):
    if term == order:
        return x
    return _ops.transpose(x, [term.index(c) for c in order])


def _dim_list(x, start, end):
    """x's dims [start, end) as a list: ints where known when the graph is built, scalar int32
    tensors (read at run time) elsewhere -- a reshape target keeps every known dim."""
    dyn = None
    dims = []
    for i in builtins.range(start, end):
        if x.shape[i] is not None:
            dims.append(int(x.shape[i]))
        else:
            dyn = _ops.shape(x) if dyn is None else dyn
            dims.append(dyn[i])
    return dims


def _product(dims):
    """The product of a _dim_list (an int when every dim is)."""
    p = 1
    for d in dims:
        p = p * d
    return p


def _contract(a, ta, b, tb, keep):
    """a (letters ta) times b (letters tb), summing the letters in both that are not in keep:
    one BatchMatMul over [batch, free_a, summed] x [batch, summed, free_b]."""
    batch = "".join(c for c in ta if c in tb and c in keep)
    summed = "".join(c for c in ta if c in tb and c not in keep)
    fa = "".join(c for c in ta if c not in tb)
    fb = "".join(c for c in tb if c not in ta)
    for c in summed:
        da, db = a.shape[ta.index(c)], b.shape[tb.index(c)]
        if da is not None and db is not None and da != db:
            raise ValueError("weft.einsum: letter %r is %d in one operand and %d in the other (shapes %s, %s)"
                             % (c, da, db, a.shape, b.shape))
    a = _permute(a, ta, batch + fa + summed)
    b = _permute(b, tb, batch + summed + fb)
    nb, ns = len(batch), len(summed)
    a_batch, a_free = _dim_list(a, 0, nb), _dim_list(a, nb, nb + len(fa))
    b_batch, b_free = _dim_list(b, 0, nb), _dim_list(b, nb + ns, nb + ns + len(fb))
    k = _product(_dim_list(a, nb + len(fa), nb + len(fa) + ns))
    prod = _ops.matmul(_ops.reshape(a, a_batch + [_product(a_free), k]), _ops.reshape(b, b_batch + [k, _product(b_free)]))
    # Each batch letter's size: from whichever operand knows it and is not 1 (broadcast).
    out_batch = []
    for i, (x, y) in enumerate(zip(a_batch, b_batch)):
        if isinstance(x, int) and isinstance(y, int):
            out_batch.append(builtins.max(x, y))
        elif isinstance(x, int) and x != 1:
            out_batch.append(x)
        elif isinstance(y, int) and y != 1:
            out_batch.append(y)
        else:
            out_batch.append(_ops.shape(prod)[i])
    return _ops.reshape(prod, out_batch + a_free + b_free), batch + fa + fb


def einsum(equation, *inputs, **kwargs):
    """Sums of products over the letters of ``equation`` (TensorFlow's tf.einsum):
    ``einsum("ij,jk->ik", a, b)`` is a @ b, ``einsum("bhqd,bhkd->bhqk", q, k)`` attention logits,
    ``einsum("ii", a)`` the trace, ``einsum("i,j->ij", u, v)`` the outer product."""
    name = kwargs.pop("name", None)  # noqa: F841 - accepted as TF's
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError("weft.einsum got unexpected keyword arguments: %s" % ", ".join(sorted(kwargs)))
    if not inputs:
        raise ValueError("weft.einsum: %r needs at least one operand" % (equation,))
    xs = []
    for x in inputs:
        xs.append(_t(x, xs[0] if xs else None))
    for x in xs[1:]:
        if x.dtype != xs[0].dtype:
            raise TypeError("weft.einsum: operands have different dtypes (%s and %s)" % (xs[0].dtype, x.dtype))
    terms, out = _parse(equation, xs)
    pairs = [_diagonal(x, t) for x, t in zip(xs, terms)]
    # Letters needed after operand i: in the output or in a later operand.
    acc, ta = pairs[0]
    for i in builtins.range(1, len(pairs) + 1):
        later = out + "".join(t for _, t in pairs[i:])
        keep = later + (pairs[i][1] if i < len(pairs) else "")
        acc, ta = _sum_letters(acc, ta, keep)
        if i == len(pairs):
            break
        b, tb = pairs[i]
        rest = later + ta  # b's letters needed: shared with acc, the output or later operands
        b, tb = _sum_letters(b, tb, rest)
        acc, ta = _contract(acc, ta, b, tb, out + "".join(t for _, t in pairs[i + 1:]))
    return _permute(acc, ta, out)


# ---- tf.linalg --------------------------------------------------------------------------------


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """a [..., M, N] times the vectors b [..., N]: [..., M]."""
    b = _t(b, a)
    return _ops.squeeze(_ops.matmul(a, _ops.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a), axis=-1)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """a with its last two dims swapped."""
    a = _t(a)
    r = _rank(a, "weft.linalg.matrix_transpose")
    if r < 2:
        raise ValueError("weft.linalg.matrix_transpose needs rank >= 2, got shape %s" % (a.shape,))
    return _ops.transpose(a, list(builtins.range(r - 2)) + [r - 1, r - 2])


adjoint = matrix_transpose  # real dtypes: the conjugate is the matrix itself


def _last_two(x, what):
    r = _rank(x, what)
    if r < 2:
        raise ValueError("%s needs a matrix (rank >= 2), got shape %s" % (what, x.shape))
    m, n = x.shape[-2], x.shape[-1]
    return r, m, n


def band_part(input, num_lower, num_upper, name=None):
    """Keeps the band of each inner matrix: entry (i, j) where (num_lower < 0 or i - j <=
    num_lower) and (num_upper < 0 or j - i <= num_upper); zeros elsewhere (op MatrixBandPart).
    ``band_part(x, -1, 0)`` is the lower triangle (a causal mask from ones)."""
    x = _t(input)
    _last_two(x, "weft.linalg.band_part")

    def bound(v):
        return _ops.cast(v, int64) if isinstance(v, Tensor) else constant(int(v), int64)
    return raw_ops.MatrixBandPart(x, bound(num_lower), bound(num_upper), name=name)


def diag(diagonal, name="diag"):
    """Square matrices [..., N, N] with ``diagonal`` [..., N] on their diagonals, zeros elsewhere."""
    v = _t(diagonal)
    if _rank(v, "weft.linalg.diag") < 1 or v.shape[-1] is None:
        raise ValueError("weft.linalg.diag needs a known last dim, got shape %s" % (v.shape,))
    n = int(v.shape[-1])
    return _ops.expand_dims(v, -1) * constant(np.eye(n, dtype=v.dtype.as_numpy_dtype))


def diag_part(input, name="diag_part"):
    """The diagonals [..., min(M, N)] of the matrices [..., M, N]."""
    x = _t(input)
    _, m, n = _last_two(x, "weft.linalg.diag_part")
    if m is None or n is None:
        raise ValueError("weft.linalg.diag_part needs known matrix dims, got shape %s" % (x.shape,))
    k = builtins.min(int(m), int(n))
    if int(m) != k:
        x = x[..., :k, :]
    return _ops.reduce_sum(x * constant(np.eye(k, int(n), dtype=x.dtype.as_numpy_dtype)), axis=-1)


def set_diag(input, diagonal, name="set_diag"):
    """The matrices of ``input`` with their diagonals replaced by ``diagonal``."""
    x = _t(input)
    _, m, n = _last_two(x, "weft.linalg.set_diag")
    if m is None or n is None or int(m) != int(n):
        raise ValueError("weft.linalg.set_diag: weft takes square matrices of known size, got shape %s" % (x.shape,))
    off = constant(1.0 - np.eye(int(n)), dtype=x.dtype)
    return x * off + diag(_t(diagonal, x))


def trace(x, name=None):
    """The sums of the diagonals of the matrices [..., M, N]: [...]."""
    return _ops.reduce_sum(diag_part(x), axis=-1)


def _no_decomposition(what):
    def missing(*args, **kwargs):
        raise NotImplementedError("weft.linalg.%s: weft has no matrix decompositions beyond LU (inv, det, slogdet, "
                                  "logdet, solve, triangular_solve, lstsq)" % what)
    missing.__name__ = what
    return missing


for _n in ("cholesky", "qr", "svd", "eig", "eigh", "eigvalsh", "lu", "cholesky_solve", "pinv", "expm", "sqrtm"):
    globals()[_n] = _no_decomposition(_n)
del _n

__all__ = ["einsum", "matmul", "matvec", "tensordot", "matrix_transpose", "adjoint", "band_part", "diag", "diag_part",
           "set_diag", "trace", "norm", "global_norm", "l2_normalize", "eye", "inv", "det", "slogdet", "logdet",
           "solve", "triangular_solve", "lstsq"]
