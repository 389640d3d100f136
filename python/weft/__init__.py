"""weft: a small dataflow-graph deep-learning framework (C++20), from Python.

Graph API (TensorFlow 1 style)::

    import numpy as np, weft
    x = weft.placeholder(weft.float32, shape=(None, 3), name="x")
    w = weft.Variable(np.ones((3, 1), np.float32), name="w")
    loss = weft.reduce_mean(weft.square(x @ w))
    dw, = weft.gradients(loss, [w])
    with weft.Session() as sess:
        sess.run(weft.global_variables_initializer())
        print(sess.run([loss, dw], feed_dict={x: np.ones((4, 3), np.float32)}))

Keras-like API::

    from weft import keras
    model = keras.Sequential([keras.layers.Dense(10, input_shape=(784,))])
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  optimizer=keras.optimizers.SGD(0.1), metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=1)

Errors are ``weft.errors.*`` exceptions carrying the C++ message. See docs/python.md.
"""
import pkgutil as _pkgutil

# Installed (pip install ., or build.sh's editable .venv) the extension sits in this package. From a
# source tree with PYTHONPATH=python:build/python it is in build/python/weft/, which extend_path
# joins to this package.
__path__ = _pkgutil.extend_path(__path__, __name__)

try:
    from . import _weft
except ImportError as _e:  # pragma: no cover - a set-up problem, explained
    raise ImportError(
        "weft's C++ extension (weft._weft) was not found or did not load (%s). Install weft with "
        "`pip install .` (or ./build.sh, then use .venv/bin/python), or put python/ and build/python/ "
        "on PYTHONPATH after `ninja -C build`." % _e) from _e

import os as _os  # noqa: E402

# numpy arrays made from now on have 64-byte-aligned data, so weft can use them without a copy
# (numpy's default alignment is 16). Set WEFT_NUMPY_ALLOCATOR=0 to keep numpy's allocator.
if _os.environ.get("WEFT_NUMPY_ALLOCATOR", "1") != "0":
    _weft._install_numpy_allocator()

from . import errors  # noqa: E402
from .framework import (  # noqa: E402,F401
    DType, float32, float64, int32, int64, uint8, bool_, float16, bfloat16, as_dtype,
    Graph, Tensor, Operation, Variable, get_default_graph, reset_default_graph, name_scope, device,
    control_dependencies, constant, placeholder, convert_to_tensor, global_variables, trainable_variables,
    global_variables_initializer, variables_initializer, group, load_graph, save_graph, graph_to_dot)
from .ops import *  # noqa: E402,F401,F403
from .ops import raw_ops, gradients, recompute_grad, slice, pow, abs  # noqa: E402,F401
from .array_ops import *  # noqa: E402,F401,F403
from . import math  # noqa: E402,F401
from .math import (  # noqa: E402,F401  (the tf.math functions TF also exports at the top level)
    truediv, divide, floordiv, floor, round, ceil, cumsum, reduce_any, reduce_all, reduce_logsumexp, reduce_std,
    reduce_variance, reduce_euclidean_norm, count_nonzero, is_nan, is_inf, is_finite, log1p, expm1, erf, sin, cos, floormod, mod,
    squared_difference, divide_no_nan, log_sigmoid, logical_xor, softplus, xlogy, in_top_k, top_k, confusion_matrix,
    l2_normalize, tan, sinh, cosh, asinh, acosh, atanh, asin, acos, atan, atan2, accumulate_n, searchsorted,
    histogram_fixed_width, histogram_fixed_width_bins)
from .session import Session, InteractiveSession, get_default_session  # noqa: E402,F401
from . import _values  # noqa: E402,F401 - Tensor.numpy() of tensors computed from constants
from ._values import executing_eagerly  # noqa: E402,F401
from ._function import function  # noqa: E402,F401
from .control_flow_ops import cond, while_loop  # noqa: E402,F401
from .tensor_array import TensorArray  # noqa: E402,F401
from . import nest  # noqa: E402,F401
from .functional_ops import map_fn, scan, foldl, foldr, case, switch_case  # noqa: E402,F401
from .manip_ops import (repeat, reverse, roll, sequence_mask, meshgrid, unique, identity_n, tuple,  # noqa: E402,F401,A004
                        is_tensor, dynamic_partition, dynamic_stitch, space_to_batch_nd, space_to_batch, batch_to_space,
                        reverse_sequence, shape_n, parallel_stack, saturate_cast, broadcast_static_shape,
                        broadcast_dynamic_shape, scalar_mul, realdiv, timestamp, get_current_name_scope,
                        unique_with_counts, unravel_index, truncatediv, truncatemod, grad_pass_through, vectorized_map,
                        is_symbolic_tensor, VariableAggregation, VariableSynchronization)
from .logging_ops import print, get_logger  # noqa: E402,F401,A004 - tf.print (shadows the builtin only here)
from . import autograph  # noqa: E402,F401
from ._values import get_static_value  # noqa: E402,F401
from ._function import inside_function, init_scope  # noqa: E402,F401
from . import debugging  # noqa: E402,F401
from .debugging import (Assert, assert_equal, assert_greater, assert_less, assert_rank,  # noqa: E402,F401
                        check_numerics)
from ._tape import GradientTape, UnconnectedGradients  # noqa: E402,F401
from ._custom_gradient import custom_gradient, RegisterGradient, no_gradient, NotDifferentiable  # noqa: E402,F401
from ._py_function import py_function, numpy_function  # noqa: E402,F401
from ._module import Module  # noqa: E402,F401
from . import nn  # noqa: E402,F401
from . import linalg  # noqa: E402,F401
from .linalg import einsum  # noqa: E402,F401
from . import keras  # noqa: E402,F401
# TF2's tf.optimizers, tf.losses, tf.metrics and tf.initializers are Keras' (compat.v1 keeps TF1's).
from .keras import initializers, losses, metrics, optimizers  # noqa: E402,F401
# TF2's top-level initializer classes are Keras' (callable: init(shape, dtype)).
constant_initializer, zeros_initializer, ones_initializer = (initializers.Constant, initializers.Zeros,
                                                             initializers.Ones)
random_normal_initializer, random_uniform_initializer = initializers.RandomNormal, initializers.RandomUniform
from . import random  # noqa: E402,F401
from . import image  # noqa: E402,F401
from . import signal  # noqa: E402,F401
from ._complex import complex, complex64, complex128  # noqa: E402,F401,A004 - tf.complex (shadows the builtin here only)
from ._weft import gpu_info  # noqa: E402,F401
from . import distribute  # noqa: E402,F401
from . import collective_ops  # noqa: E402,F401
from . import data  # noqa: E402,F401
from . import config, io, test  # noqa: E402,F401
from . import saved_model  # noqa: E402,F401
from .data import TensorSpec  # noqa: E402,F401
from . import dtypes, ragged, sparse, strings  # noqa: E402,F401 - host-side ragged / sparse / string values
from ._text_values import string  # noqa: E402,F401 - tf.string: the dtype of host string values
from .io._image_codecs import uint16  # noqa: E402,F401 - tf.uint16: 16-bit images, host values only
from .ragged import RaggedTensor  # noqa: E402,F401
from .sparse import SparseTensor  # noqa: E402,F401

bool = bool_  # weft.bool, as tf.bool (shadows the builtin only inside this namespace)
double, half = float64, float16  # TF's aliases
from .version import VERSION as __version__  # noqa: E402
from . import audio, version  # noqa: E402,F401
from ._hessians import hessians  # noqa: E402,F401
from .array_ops import tensor_scatter_nd_sub, tensor_scatter_nd_max, tensor_scatter_nd_min  # noqa: E402,F401
from . import train, summary, compat  # noqa: E402,F401 - last: compat.v1 takes in everything above
