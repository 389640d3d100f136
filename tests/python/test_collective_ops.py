"""weft.collective_ops between 2 CPU devices of one session: all-reduce, broadcast, all-gather,
reduce-scatter, and the error for members whose inputs differ."""
import numpy as np
import pytest

import weft
from weft import collective_ops as C


def run_members(make, values):
    g = weft.Graph()
    outs = []
    with g.as_default():
        for r, v in enumerate(values):
            with weft.device("/device:CPU:%d" % r):
                outs.append(make(weft.constant(v), r))
    return weft.Session(g, num_cpu_devices=len(values)).run(outs)


def test_all_ops():
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    b = -3 * a + 1
    for out in run_members(lambda t, r: C.all_reduce(t, 2, 1, 1, r, final_op="Div"), [a, b]):
        np.testing.assert_array_equal(out, (a + b) / 2)
    for out in run_members(lambda t, r: C.all_reduce(t, 2, 1, 1, r, merge_op="Max", algorithm="ring"), [a, b]):
        np.testing.assert_array_equal(out, np.maximum(a, b))
    for out in run_members(lambda t, r: C.broadcast(t, 2, 1, 2, r, source_rank=1), [a, b]):
        np.testing.assert_array_equal(out, b)
    for out in run_members(lambda t, r: C.all_gather(t, 2, 1, 3, r), [a, b]):
        np.testing.assert_array_equal(out, np.concatenate([a, b]))
    first, second = run_members(lambda t, r: C.reduce_scatter(t, 2, 1, 4, r), [a, b])
    np.testing.assert_array_equal(first, (a + b)[:3])  # 5 rows over 2 ranks: 3 and 2
    np.testing.assert_array_equal(second, (a + b)[3:])


def test_members_that_differ_fail_clearly():
    a = np.ones((6,), np.float32)
    with pytest.raises(weft.errors.InvalidArgumentError, match="the members' inputs differ"):
        run_members(lambda t, r: C.all_reduce(t, 2, 1, 1, r), [a, a.reshape(2, 3)])
