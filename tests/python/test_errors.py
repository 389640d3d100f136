"""C++ errors arrive as weft.errors classes (also the matching builtins) with the C++ message."""
import numpy as np
import pytest

import weft
from weft import errors, _weft


def test_feed_of_wrong_dtype(graph, sess):
    # Floats for an int placeholder: TF would cast; weft refuses a cast that changes the kind.
    x = weft.placeholder(weft.int32, shape=(None, 3), name="x")
    with pytest.raises(errors.InvalidArgumentError) as e:
        sess.run(x * 2, feed_dict={x: np.zeros((2, 3), np.float64)})
    assert isinstance(e.value, ValueError) and isinstance(e.value, errors.Error)
    assert e.value.code == "InvalidArgument"
    msg = str(e.value)
    assert "x" in msg and "float64" in msg and "int32" in msg


def test_feed_of_wrong_shape(graph, sess):
    x = weft.placeholder(weft.float32, shape=(None, 3), name="x")
    with pytest.raises(ValueError) as e:
        sess.run(x * 2.0, feed_dict={x: np.zeros((2, 4), np.float32)})
    assert isinstance(e.value, errors.InvalidArgumentError)
    assert "[2,4]" in str(e.value) and "x" in str(e.value)


def test_missing_feed_names_the_placeholder(graph, sess):
    x = weft.placeholder(weft.float32, shape=(2,), name="needed")
    with pytest.raises(errors.Error, match="needed"):
        sess.run(x + 1.0)


def test_not_found_is_a_key_error_without_quotes(graph):
    with pytest.raises(KeyError) as e:
        graph.get_tensor_by_name("nope:0")
    assert isinstance(e.value, errors.NotFoundError)
    assert str(e.value).startswith(e.value.message) and not str(e.value).startswith("'")
    assert "nope" in str(e.value)


def test_shape_error_at_build_time_names_the_node(graph):
    a = weft.constant(np.zeros((2, 3), np.float32))
    b = weft.constant(np.zeros((4, 5), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="MatMul"):
        weft.matmul(a, b, name="mm")


def test_uninitialized_variable(graph, sess):
    v = weft.Variable(np.zeros(2, np.float32), name="v")
    with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
        sess.run(v)
    sess.run(weft.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(v), [0, 0])


@pytest.mark.parametrize("code,cls,builtin", [
    ("Cancelled", errors.CancelledError, None),
    ("InvalidArgument", errors.InvalidArgumentError, ValueError),
    ("NotFound", errors.NotFoundError, KeyError),
    ("AlreadyExists", errors.AlreadyExistsError, None),
    ("FailedPrecondition", errors.FailedPreconditionError, RuntimeError),
    ("OutOfRange", errors.OutOfRangeError, IndexError),
    ("Unimplemented", errors.UnimplementedError, NotImplementedError),
    ("ResourceExhausted", errors.ResourceExhaustedError, MemoryError),
    ("Unavailable", errors.UnavailableError, ConnectionError),
    ("DeadlineExceeded", errors.DeadlineExceededError, TimeoutError),
    ("Aborted", errors.AbortedError, RuntimeError),
    ("DataLoss", errors.DataLossError, OSError),
    ("Internal", errors.InternalError, RuntimeError),
])
def test_every_code_maps_to_its_class(code, cls, builtin):
    with pytest.raises(cls) as e:
        _weft._raise_error(code, "what went wrong: node 'n'")
    assert type(e.value) is cls
    assert str(e.value) == "what went wrong: node 'n'"
    assert e.value.code == code
    if builtin is not None:
        assert isinstance(e.value, builtin)


def test_damaged_graph_file_is_data_loss(tmp_path):
    p = tmp_path / "g.weftgraph"
    p.write_bytes(b"not a graph file at all")
    with pytest.raises(errors.DataLossError, match=str(p)):
        weft.Graph.load(str(p))


def test_tensors_of_two_graphs_do_not_mix():
    g1, g2 = weft.Graph(), weft.Graph()
    with g1.as_default():
        a = weft.constant(1.0)
    with g2.as_default():
        b = weft.constant(2.0)
        with pytest.raises(errors.InvalidArgumentError, match="another graph"):
            weft.add(a, b)
