"""``tf.config.threading``: the thread-pool sizes of Sessions and Keras models made afterwards
(0: one thread per hardware thread). An explicit ``Session(config=ConfigProto(...))`` or
``compile(inter_op_threads=...)`` value wins over them."""
from ._state import defaults as _defaults


def _threads(n, what):
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError("%s: the number of threads must be an int >= 0 (0: one per hardware thread), got %r"
                         % (what, n))
    return n


def set_inter_op_parallelism_threads(num_threads):
    """Threads that run independent operations of a step at once."""
    _defaults["inter_op_threads"] = _threads(num_threads, "set_inter_op_parallelism_threads")


def get_inter_op_parallelism_threads():
    return _defaults["inter_op_threads"]


def set_intra_op_parallelism_threads(num_threads):
    """Threads one operation (a matrix product, a convolution) splits its work over."""
    _defaults["intra_op_threads"] = _threads(num_threads, "set_intra_op_parallelism_threads")


def get_intra_op_parallelism_threads():
    return _defaults["intra_op_threads"]


__all__ = ["set_inter_op_parallelism_threads", "get_inter_op_parallelism_threads",
           "set_intra_op_parallelism_threads", "get_intra_op_parallelism_threads"]
