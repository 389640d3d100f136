"""Keras' numeric preprocessing layers ``Discretization`` and ``CategoryEncoding``, written as
weft custom layers (so they run inside models, on KerasTensors, and on data). Keras 3's
arguments, defaults and results, with one difference: weft's Keras models compute in float32, so
bucket ids (``output_mode="int"``) come out as float32 values (whole numbers), which weft's
Embedding takes as ids."""
import numpy as np

from .. import framework as _fw
from ._custom import _KT, Layer


def _encode(tf, x, depth, output_mode, count_weights=None):
    """Integer ids to vectors of ``depth`` (tf-keras' encode_categorical_inputs): one_hot gives
    [batch, depth] for ids [batch] or [batch, 1] and [batch, k, depth] for [batch, k]; multi_hot (1
    where an id is present) and count (or the sum of count_weights) give [batch, depth], a vector
    of ids being one id per sample."""
    if x.shape is None or len(x.shape) not in (1, 2):
        raise ValueError("inputs of rank 1 or 2 are supported (ids [batch] or [batch, k]), got shape %s" % (x.shape,))
    ids = tf.cast(x, tf.int32)
    if output_mode == "one_hot":
        if len(x.shape) == 2 and x.shape[-1] == 1:
            ids = tf.squeeze(ids, [-1])
        return tf.one_hot(ids, depth, dtype=tf.float32)
    if len(x.shape) == 1:
        ids = tf.expand_dims(ids, -1)
        if count_weights is not None:
            count_weights = tf.expand_dims(count_weights, -1)
    oh = tf.one_hot(ids, depth, dtype=tf.float32)  # [batch, k, depth]
    if count_weights is not None:
        oh = oh * tf.expand_dims(tf.cast(count_weights, tf.float32), -1)
    total = tf.reduce_sum(oh, axis=-2)
    return tf.minimum(total, 1.0) if output_mode == "multi_hot" else total


class CategoryEncoding(Layer):
    """Integer ids in [0, num_tokens) to one_hot / multi_hot / count vectors [batch, num_tokens];
    ``count_weights`` (call argument, the inputs' shape) sums weights instead of counting."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None or int(num_tokens) < 1:
            raise ValueError("CategoryEncoding: num_tokens must be a positive int, got %r" % (num_tokens,))
        if output_mode not in ("one_hot", "multi_hot", "count"):
            raise ValueError("CategoryEncoding: output_mode must be 'one_hot', 'multi_hot' or 'count', got %r"
                             % (output_mode,))
        if sparse:
            raise NotImplementedError("CategoryEncoding: sparse=True is not supported by weft (dense outputs only)")
        self.num_tokens, self.output_mode = int(num_tokens), output_mode

    def __call__(self, inputs, *args, count_weights=None, **kwargs):
        # Keras takes a plain list of ids (one sample per entry) as data, not as several inputs;
        # count_weights travel as a second input, so each call's weights are read (not traced in).
        if isinstance(inputs, (list, tuple)) and not any(hasattr(i, "shape") for i in inputs):
            inputs = np.asarray(inputs)
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError("CategoryEncoding: count_weights is only for output_mode='count', got %r"
                                 % (self.output_mode,))
            if not isinstance(inputs, (_fw.Tensor, _KT)):  # data: the ops on constants, at once
                tf = _fw.api()
                return _encode(tf, tf.constant(np.asarray(inputs)), self.num_tokens, self.output_mode,
                               tf.constant(np.asarray(count_weights, np.float32)))
            inputs = [inputs, count_weights]
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        tf = _fw.api()
        ids, weights = (inputs[0], inputs[1]) if isinstance(inputs, (list, tuple)) else (inputs, None)
        return _encode(tf, ids, self.num_tokens, self.output_mode, weights)


class Discretization(Layer):
    """Buckets of continuous values: bucket i holds bin_boundaries[i - 1] <= x < bin_boundaries[i]
    (len(boundaries) + 1 buckets); or, with ``num_bins``, boundaries learned by ``adapt(data)`` at
    the quantiles 1/num_bins, ..., (num_bins - 1)/num_bins of the data. ``output_mode`` "int"
    (bucket ids, float32 here), "one_hot", "multi_hot", "count"."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False,
                 **kwargs):
        super().__init__(**kwargs)
        if (bin_boundaries is None) == (num_bins is None):
            raise ValueError("Discretization: pass exactly one of bin_boundaries and num_bins, got bin_boundaries=%r "
                             "num_bins=%r" % (bin_boundaries, num_bins))
        if output_mode not in ("int", "one_hot", "multi_hot", "count"):
            raise ValueError("Discretization: output_mode must be 'int', 'one_hot', 'multi_hot' or 'count', got %r"
                             % (output_mode,))
        if sparse:
            raise NotImplementedError("Discretization: sparse=True is not supported by weft")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        if self.bin_boundaries is not None and sorted(self.bin_boundaries) != self.bin_boundaries:
            raise ValueError("Discretization: bin_boundaries must be sorted, got %r" % (bin_boundaries,))
        self.num_bins, self.epsilon, self.output_mode = num_bins, float(epsilon), output_mode

    def adapt(self, data, batch_size=None, steps=None):
        """Sets the boundaries to the data's quantiles (numpy's linear interpolation; Keras' summary
        of precision epsilon gives nearby values)."""
        if self.num_bins is None:
            raise ValueError("Discretization.adapt needs num_bins (the layer was made with bin_boundaries)")
        if hasattr(data, "as_numpy_iterator"):
            data = np.concatenate([np.asarray(b, np.float64).reshape(-1) for b in data.as_numpy_iterator()])
        values = np.sort(np.asarray(data, np.float64).reshape(-1))
        if values.size == 0:
            raise ValueError("Discretization.adapt got no data")
        qs = np.linspace(0.0, 1.0, int(self.num_bins) + 1)[1:-1]
        self.bin_boundaries = [float(v) for v in np.quantile(values, qs)]

    def call(self, inputs):
        tf = _fw.api()
        if self.bin_boundaries is None:
            raise ValueError("Discretization: call adapt(data) first (the layer was made with num_bins)")
        x = tf.cast(inputs, tf.float32)
        flat = tf.reshape(x, [-1])
        buckets = tf.searchsorted(tf.constant(np.asarray(self.bin_boundaries, np.float32)), flat, side="right")
        ids = tf.reshape(buckets, tf.shape(x))
        if self.output_mode == "int":
            return tf.cast(ids, tf.float32)
        return _encode(tf, ids, len(self.bin_boundaries) + 1, self.output_mode)
