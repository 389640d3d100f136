import os
import secrets
import socket

import numpy as np
import pytest

import weft

# Every server and worker of these tests (and the processes they start, which inherit it) shares
# one cluster secret, as weft-zoo launch's tasks do (docs/security.md); tests of a missing or wrong
# secret set their own.
os.environ.setdefault("WEFT_CLUSTER_SECRET", "pytest-" + secrets.token_hex(8))


@pytest.fixture
def graph():
    """A fresh graph as the default graph for the test."""
    g = weft.Graph()
    with g.as_default():
        yield g


@pytest.fixture
def sess(graph):
    with weft.Session(graph, inter_op_threads=2, intra_op_threads=2) as s:
        yield s


def aligned_empty(shape, dtype, offset=0):
    """A C-contiguous array whose data starts `offset` bytes after a 64-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(n + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start:start + n].view(dtype).reshape(shape)


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (all bound at once, then released)."""
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def numeric_grad(f, x, eps=1e-6):
    """Central differences of the scalar function f at x (float64), for gradient checks."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (f(xp) - f(xm)) / (2 * eps)
    return g
