"""``keras.backend`` (``K``) tensor functions, as TF 2's tf.keras.backend (Keras 2) defines them,
for the custom losses, metrics and Lambda layers Keras code writes with them::

    def rmse(y_true, y_pred):
        return K.sqrt(K.mean(K.square(y_pred - y_true), axis=-1))

Each is one or a few weft ops (weft.math / weft.nn / array ops); ``axis=None`` reduces over every
dimension and ``keepdims`` keeps the reduced ones, as Keras'. The cross-entropies take
probabilities unless ``from_logits`` and clip them to [epsilon, 1 - epsilon] first, as Keras 2's
backend does, and return per-element (binary) or per-row (categorical) values without a mean.
"""
import numpy as np

from .. import framework as _fw

__all__ = ["mean", "sum", "max", "min", "prod", "std", "var", "any", "all", "argmax", "argmin", "square", "sqrt",
           "exp", "log", "abs", "pow", "round", "sign", "maximum", "minimum", "clip", "sigmoid", "softmax",
           "relu", "tanh", "elu", "softplus", "softsign", "hard_sigmoid", "dot", "batch_dot", "transpose",
           "permute_dimensions", "reshape", "expand_dims", "squeeze", "stack", "concatenate", "flatten",
           "batch_flatten", "tile", "repeat_elements", "repeat", "ones_like", "zeros_like", "ones", "zeros",
           "one_hot", "gather", "shape", "ndim", "dtype", "cumsum", "logsumexp", "l2_normalize", "equal",
           "not_equal", "greater", "greater_equal", "less", "less_equal", "switch", "stop_gradient",
           "random_normal", "random_uniform", "dropout", "constant", "variable", "eval", "count_params",
           "learning_phase", "in_train_phase", "in_test_phase", "is_keras_tensor", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "update", "update_add",
           "update_sub", "moving_average_update", "print_tensor"]


def _t(x):
    return _fw.convert_to_tensor(x) if not isinstance(x, _fw.Tensor) else x


def _float(x):
    x = _t(x)
    return x if x.dtype in (_fw.float32, _fw.float64) else _fw.api().cast(x, _fw.float32)


def _reduction(name):
    def f(x, axis=None, keepdims=False):
        return getattr(_fw.api(), name)(_t(x), axis=axis, keepdims=keepdims)
    f.__name__ = name
    f.__doc__ = "Keras' backend reduction over ``axis`` (None: all dims) via weft.%s." % name
    return f


mean = _reduction("reduce_mean")
sum = _reduction("reduce_sum")  # noqa: A001 - Keras' name
max = _reduction("reduce_max")  # noqa: A001
min = _reduction("reduce_min")  # noqa: A001
prod = _reduction("reduce_prod")


def var(x, axis=None, keepdims=False):
    """The population variance (divides by N), as Keras'."""
    return _fw.api().math.reduce_variance(_float(x), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return _fw.api().math.reduce_std(_float(x), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _fw.api().reduce_any(_fw.api().cast(_t(x), _fw.bool_), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _fw.api().reduce_all(_fw.api().cast(_t(x), _fw.bool_), axis=axis, keepdims=keepdims)


def argmax(x, axis=-1):
    return _fw.api().argmax(_t(x), axis)


def argmin(x, axis=-1):
    return _fw.api().argmin(_t(x), axis)


def square(x):
    return _fw.api().square(_t(x))


def sqrt(x):
    """sqrt of x clipped at 0 from below, as Keras 2's backend."""
    x = _float(x)
    return _fw.api().sqrt(_fw.api().maximum(x, _fw.constant(0, x.dtype)))


def exp(x):
    return _fw.api().exp(_float(x))


def log(x):
    return _fw.api().log(_float(x))


def abs(x):  # noqa: A001
    return _fw.api().abs(_t(x))


def pow(x, a):  # noqa: A001
    x = _t(x)
    return _fw.api().pow(x, _fw.convert_to_tensor(a, x.dtype) if not isinstance(a, _fw.Tensor) else a)


def round(x):  # noqa: A001
    return _fw.api().round(_t(x))


def sign(x):
    return _fw.api().sign(_t(x))


def maximum(x, y):
    return _fw.api().maximum(_t(x), y)


def minimum(x, y):
    return _fw.api().minimum(_t(x), y)


def clip(x, min_value, max_value):
    """x clipped to [min_value, max_value] (max_value below min_value becomes min_value)."""
    if max_value is not None and min_value is not None and not isinstance(max_value, _fw.Tensor) \
            and not isinstance(min_value, _fw.Tensor) and max_value < min_value:
        max_value = min_value
    return _fw.api().clip_by_value(_t(x), min_value, max_value)


def sigmoid(x):
    return _fw.api().sigmoid(_float(x))


def softmax(x, axis=-1):
    from .. import nn
    return nn.softmax(_float(x), axis=axis)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Keras' relu: x above ``threshold``, ``alpha * (x - threshold)`` below, capped at max_value."""
    x = _float(x)
    c = lambda v: _fw.constant(v, x.dtype)  # noqa: E731
    if alpha == 0.0 and threshold == 0.0:
        y = _fw.api().nn.relu(x)
    else:
        y = _fw.api().where(x > c(threshold), x, c(alpha) * (x - c(threshold)))
    return y if max_value is None else _fw.api().minimum(y, c(max_value))


def tanh(x):
    return _fw.api().tanh(_float(x))


def elu(x, alpha=1.0):
    x = _float(x)
    return _fw.api().where(x > _fw.constant(0, x.dtype), x, _fw.constant(alpha, x.dtype) * (_fw.api().exp(x) - 1))


def softplus(x):
    from .. import nn
    return nn.softplus(_float(x))


def softsign(x):
    return _fw.api().math.softsign(_float(x))


def hard_sigmoid(x):
    """Keras 2's piecewise-linear sigmoid: clip(0.2 x + 0.5, 0, 1)."""
    x = _float(x)
    return _fw.api().clip_by_value(x * 0.2 + 0.5, 0.0, 1.0)


def dot(x, y):
    """Keras' dot: a matrix product for rank 2; for higher ranks the last axis of x with the
    second-to-last of y (numpy's dot), via tensordot."""
    x, y = _t(x), _t(y)
    if len(x.shape) == 2 and len(y.shape) == 2:
        return _fw.api().matmul(x, y)
    from .. import linalg
    return linalg.tensordot(x, y, [[len(x.shape) - 1], [max(len(y.shape) - 2, 0)]])


def batch_dot(x, y, axes=None):
    """Keras' batch_dot for the common cases: rank-3 inputs contracting x's last axis with y's
    second (axes None, (2, 1)) or y's last (axes (2, 2)); rank-2 inputs give [batch, 1]."""
    x, y = _t(x), _t(y)
    if isinstance(axes, int):
        axes = (axes, axes)
    rx, ry = len(x.shape), len(y.shape)
    if rx == 2 and ry == 2:
        return _fw.api().reduce_sum(x * y, axis=1, keepdims=True)
    if axes is None:
        axes = (rx - 1, ry - 2 if ry > 2 else ry - 1)
    axes = (axes[0] % rx, axes[1] % ry)
    if rx == 3 and ry == 3 and axes == (2, 1):
        return _fw.api().matmul(x, y)
    if rx == 3 and ry == 3 and axes == (2, 2):
        return _fw.api().matmul(x, y, transpose_b=True)
    if rx == 3 and ry == 3 and axes == (1, 1):
        return _fw.api().matmul(x, y, transpose_a=True)
    raise NotImplementedError("keras.backend.batch_dot: shapes %s and %s with axes %s are not supported by weft; "
                              "use tf.einsum" % (x.shape, y.shape, axes))


def transpose(x):
    return _fw.api().transpose(_t(x))


def permute_dimensions(x, pattern):
    return _fw.api().transpose(_t(x), perm=list(pattern))


def reshape(x, shape):
    return _fw.api().reshape(_t(x), shape)


def expand_dims(x, axis=-1):
    return _fw.api().expand_dims(_t(x), axis)


def squeeze(x, axis):
    return _fw.api().squeeze(_t(x), [axis])


def stack(x, axis=0):
    from .. import array_ops
    return array_fw.api().stack(list(x), axis=axis)


def concatenate(tensors, axis=-1):
    tensors = [_t(t) for t in tensors]
    if axis < 0:
        axis += len(tensors[0].shape)
    return _fw.api().concat(tensors, axis)


def flatten(x):
    return _fw.api().reshape(_t(x), [-1])


def batch_flatten(x):
    return _fw.api().reshape(_t(x), [-1, int(np.prod(_t(x).shape[1:]))])


def tile(x, n):
    return _fw.api().tile(_t(x), [n] if isinstance(n, int) else list(n))


def repeat_elements(x, rep, axis):
    """Each slice along ``axis`` repeated ``rep`` times (np.repeat), for a known dimension."""
    x = _t(x)
    axis = axis % len(x.shape)
    n = x.shape[axis]
    if n is None:
        raise ValueError("keras.backend.repeat_elements: dim %d of %s is unknown" % (axis, x.shape))
    idx = np.repeat(np.arange(n), rep).astype(np.int32)
    return _fw.api().gather(x, _fw.constant(idx), axis=axis) if n else x


def repeat(x, n):
    """[batch, dim] -> [batch, n, dim] (Keras' repeat)."""
    x = _t(x)
    return _fw.api().tile(_fw.api().expand_dims(x, 1), [1, n, 1])


def ones_like(x, dtype=None, name=None):
    y = _fw.api().ones_like(_t(x))
    return y if dtype is None else _fw.api().cast(y, dtype)


def zeros_like(x, dtype=None, name=None):
    y = _fw.api().zeros_like(_t(x))
    return y if dtype is None else _fw.api().cast(y, dtype)


def ones(shape, dtype=None, name=None):
    return _fw.api().ones(shape, dtype or _fw.float32)


def zeros(shape, dtype=None, name=None):
    return _fw.api().zeros(shape, dtype or _fw.float32)


def one_hot(indices, num_classes):
    return _fw.api().one_hot(_t(indices), num_classes)


def gather(reference, indices):
    return _fw.api().gather(_t(reference), indices)


def shape(x):
    """The shape as a tensor computed when the step runs (K.shape; int_shape is the static one)."""
    return _fw.api().shape(_t(x))


def ndim(x):
    s = getattr(x, "shape", None)
    return None if s is None else len(s)


def dtype(x):
    return str(getattr(x, "dtype", np.asarray(x).dtype)).replace("weft.", "")


def cumsum(x, axis=0):
    from .. import math
    return math.cumsum(_t(x), axis=axis)


def logsumexp(x, axis=None, keepdims=False):
    return _fw.api().reduce_logsumexp(_float(x), axis=axis, keepdims=keepdims)


def l2_normalize(x, axis=None):
    from .. import nn
    return nn.l2_normalize(_float(x), axis=axis)


def _compare(name):
    def f(x, y):
        return getattr(_ops, name)(_t(x), y)
    f.__name__ = name
    return f


equal, not_equal = _compare("equal"), _compare("not_equal")
greater, greater_equal = _compare("greater"), _compare("greater_equal")
less, less_equal = _compare("less"), _compare("less_equal")


def switch(condition, then_expression, else_expression):
    """then where condition, else elsewhere (callables are called first), as Keras'."""
    a = then_expression() if callable(then_expression) else then_expression
    b = else_expression() if callable(else_expression) else else_expression
    return _fw.api().where(_fw.api().cast(_t(condition), _fw.bool_), a, b)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [_fw.api().stop_gradient(_t(v)) for v in variables]
    return _fw.api().stop_gradient(_t(variables))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    from .. import random
    return random.normal(shape, mean, stddev, dtype or _fw.float32, seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    from .. import random
    return random.uniform(shape, minval, maxval, dtype or _fw.float32, seed=seed)


def dropout(x, level, noise_shape=None, seed=None):
    from .. import nn
    return nn.dropout(_float(x), rate=level, noise_shape=noise_shape, seed=seed)


def constant(value, dtype=None, shape=None, name=None):
    v = np.asarray(value, dtype=_fw.as_dtype(dtype or _fw.float32).as_numpy_dtype)
    if shape is not None:
        v = np.broadcast_to(v, shape).copy()
    return _fw.constant(v, name=name)


def variable(value, dtype=None, name=None, constraint=None):
    v = np.asarray(value, dtype=_fw.as_dtype(dtype or _fw.float32).as_numpy_dtype)
    return _fw.Variable(v, name=name)


def eval(x):  # noqa: A001 - Keras' name
    """The value of ``x`` as numpy (a tensor with a value, a variable at top level, an array)."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def count_params(x):
    return int(np.prod(getattr(x, "shape", np.shape(x))))


def learning_phase():
    """0: weft layers learn their training flag from the call (fit / training=True), not a global."""
    return 0


def in_train_phase(x, alt, training=None):
    """``x`` when ``training`` is true, else ``alt`` (callables are called); training None is
    inference here (weft passes the flag to the call, not through a global learning phase)."""
    pick = x if training else alt
    return pick() if callable(pick) else pick


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training)


def is_keras_tensor(x):
    from . import _custom
    kt = getattr(_custom, "KerasTensor", None)
    return kt is not None and isinstance(x, kt)


def _clip_probs(output, eps):
    return _fw.api().clip_by_value(output, eps, 1.0 - eps)


def binary_crossentropy(target, output, from_logits=False):
    """Per element: -(t log p + (1 - t) log(1 - p)), p clipped to [eps, 1 - eps] (Keras 2)."""
    from .backend import epsilon
    target, output = _float(target), _float(output)
    if from_logits:
        from .. import nn
        return nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    p = _clip_probs(output, epsilon())
    return -(target * _fw.api().log(p + epsilon()) + (1.0 - target) * _fw.api().log(1.0 - p + epsilon()))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Per row: -sum(t log p) with p = output / sum(output) clipped to [eps, 1 - eps] (Keras 2)."""
    from .backend import epsilon
    target, output = _float(target), _float(output)
    if from_logits:
        from .. import nn
        return nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    p = _clip_probs(output / _fw.api().reduce_sum(output, axis=axis, keepdims=True), epsilon())
    return -_fw.api().reduce_sum(target * _fw.api().log(p), axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """categorical_crossentropy of one_hot(target) (the classes along ``axis``, the last)."""
    output = _float(output)
    target = _fw.api().cast(_fw.api().reshape(_t(target), [-1] if len(output.shape) == 2 else _fw.api().shape(output)[:-1]),
                       _fw.int32)
    return categorical_crossentropy(_fw.api().one_hot(target, output.shape[-1]), output, from_logits, axis)


def update(x, new_x):
    return x.assign(new_x)


def update_add(x, increment):
    return x.assign_add(increment)


def update_sub(x, decrement):
    return x.assign_sub(decrement)


def moving_average_update(x, value, momentum):
    return x.assign(x * momentum + value * (1.0 - momentum))


def print_tensor(x, message="", summarize=3):
    """Prints ``message`` and the value (tf.print) and returns ``x``."""
    from .. import logging_ops
    logging_ops.print(message, x, summarize=summarize)
    return x


# ---- more of tf.keras.backend (Keras 2's K.*) ----------------------------------------------
def arange(start, stop=None, step=1, dtype="int32"):
    from .. import array_ops
    return array_ops.range(start, stop, step, dtype=_fw.as_dtype(dtype))


def cos(x):
    from .. import math
    return math.cos(_float(x))


def sin(x):
    from .. import math
    return math.sin(_float(x))


def cumprod(x, axis=0):
    from . import _ops_numpy
    return _ops_numpy.cumprod(x, axis=axis)


def eye(size, dtype=None, name=None):
    from .. import array_ops
    return array_ops.eye(int(size), dtype=_fw.as_dtype(dtype or "float32"))


def reverse(x, axes):
    from .. import manip_ops
    return manip_ops.reverse(_t(x), list(np.atleast_1d(axes)))


def map_fn(fn, elems, name=None, dtype=None):
    from .. import functional_ops
    return functional_ops.map_fn(fn, elems, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    from .. import functional_ops
    return functional_ops.foldl(fn, elems, initializer=initializer)


def foldr(fn, elems, initializer=None, name=None):
    from .. import functional_ops
    return functional_ops.foldr(fn, elems, initializer=initializer)


def gradients(loss, variables):
    return _fw.api().gradients(loss, variables)


def in_top_k(predictions, targets, k):
    from .. import math
    return math.in_top_k(targets, predictions, k)  # tf.math's (TF 2) argument order


def bias_add(x, bias, data_format=None):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("K.bias_add: channels-last only (weft's image format), got %r" % (data_format,))
    from .. import nn
    return nn.bias_add(_t(x), _t(bias))


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    from .. import nn
    return nn.batch_normalization(_t(x), mean, var, beta, gamma, epsilon)


def temporal_padding(x, padding=(1, 1)):
    """Zeros before and after the steps of [batch, steps, features]."""
    return _fw.api().pad(_t(x), [[0, 0], list(padding), [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    if data_format not in (None, "channels_last"):
        raise NotImplementedError("K.spatial_2d_padding: channels-last only, got %r" % (data_format,))
    return _fw.api().pad(_t(x), [[0, 0], list(padding[0]), list(padding[1]), [0, 0]])


def standardize_dtype(dtype):
    from . import utils
    return utils.standardize_dtype(dtype)


def is_float_dtype(dtype):
    return standardize_dtype(dtype).startswith(("float", "bfloat"))


def is_int_dtype(dtype):
    return standardize_dtype(dtype).startswith(("int", "uint"))


def result_type(*dtypes):
    """The dtype numpy promotes ``dtypes`` to, with Python floats as float32 (Keras' rule)."""
    names = [standardize_dtype(d) for d in dtypes]
    return np.result_type(*[np.dtype(n) for n in names]).name if names else "float32"


def cast_to_floatx(x):
    return np.asarray(x, dtype=np.float32)


_uids = {}


def get_uid(prefix=""):
    """1, 2, 3, ... per prefix, for unique names."""
    _uids[prefix] = _uids.get(prefix, 0) + 1
    return _uids[prefix]


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _fw.api().random.truncated_normal(shape, mean, stddev, dtype=_fw.as_dtype(dtype or "float32"), seed=seed)


def binary_focal_crossentropy(target, output, apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False):
    """Per element (Keras' backend function): the focal-scaled binary cross-entropy."""
    from . import _python_losses as pl
    return pl.per_example(_focal_elements, target, output, apply_class_balancing=apply_class_balancing, alpha=alpha,
                          gamma=gamma, from_logits=from_logits)


def _focal_elements(t, p, apply_class_balancing, alpha, gamma, from_logits):
    # binary_focal averages over `axis`: over a new last axis of length 1, one value per element.
    from .. import ops
    from . import _python_losses as pl
    return pl.binary_focal(ops.expand_dims(t, -1), ops.expand_dims(p, -1), apply_class_balancing, alpha, gamma,
                           from_logits, 0.0, -1)


def categorical_focal_crossentropy(target, output, alpha=0.25, gamma=2.0, from_logits=False, axis=-1):
    from . import _python_losses as pl
    return pl.per_example(pl.categorical_focal, target, output, alpha=alpha, gamma=gamma, from_logits=from_logits,
                          axis=axis)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Keras 2's CTC cost, [batch, 1]: y_pred (batch, time, classes) softmax probabilities whose
    last class is the blank, y_true (batch, max_label) labels, input_length and label_length
    (batch, 1) each example's time steps and label count."""
    from .. import ops
    from . import _python_losses as pl
    probs = _float(y_pred)
    classes = probs.shape[-1]
    if classes is None:
        raise ValueError("K.ctc_batch_cost: the class dimension of y_pred must be known, got %s" % (probs.shape,))
    logits = ops.log(probs + 1e-7)  # Keras 2: log(y_pred + epsilon) as the logits
    cost = pl.ctc(ops.cast(_t(y_true), "int32"), logits, ops.reshape(_t(label_length), [-1]),
                  ops.reshape(_t(input_length), [-1]), blank=int(classes) - 1)
    return ops.expand_dims(cost, 1)


def name_scope(name):
    return _fw.name_scope(name)


def to_dense(tensor):
    return tensor


def is_sparse(tensor):
    """False: weft's Keras tensors are dense."""
    return False


def batch_get_value(tensors):
    from .backend import get_value
    return [get_value(t) for t in tensors]


def batch_set_value(tuples):
    from .backend import set_value
    for x, value in tuples:
        set_value(x, value)


__all__ += ["arange", "cos", "sin", "cumprod", "eye", "reverse", "map_fn", "foldl", "foldr", "gradients", "in_top_k",
            "bias_add", "batch_normalization", "temporal_padding", "spatial_2d_padding", "standardize_dtype",
            "is_float_dtype", "is_int_dtype", "result_type", "cast_to_floatx", "get_uid", "truncated_normal",
            "binary_focal_crossentropy", "categorical_focal_crossentropy", "ctc_batch_cost", "name_scope", "to_dense", "is_sparse",
            "batch_get_value", "batch_set_value"]
