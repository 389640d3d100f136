"""``tf.random.log_uniform_candidate_sampler`` (op LogUniformCandidateSampler) and the sampled
losses built on it, ``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss`` (the word2vec
tutorial's), composed as TF's _compute_sampled_logits: the true and sampled classes' logits from
the rows of ``weights`` / ``biases``, less log(expected count) (subtract_log_q), accidental hits
(a sampled class that is one of the row's labels) pushed to -FLT_MAX in the softmax loss."""
import collections

import numpy as np

from . import ops as _o
from .framework import Tensor, constant, convert_to_tensor, int64

SampledValues = collections.namedtuple("SampledValues",
                                       ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """(sampled_candidates [num_sampled] int64, true_expected_count [batch, num_true],
    sampled_expected_count [num_sampled]) with classes drawn from P(c) = log((c + 2) / (c + 1)) /
    log(range_max + 1) (Zipf-like: ids sorted by descending frequency); new draws every run."""
    tc = _o.cast(true_classes if isinstance(true_classes, Tensor) else convert_to_tensor(true_classes), int64)
    out = _o.raw_ops.LogUniformCandidateSampler(tc, num_true=int(num_true), num_sampled=int(num_sampled),
                                                unique=bool(unique), range_max=int(range_max), seed=int(seed or 0),
                                                name=name)
    return SampledValues(*out)


def _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
                    subtract_log_q, remove_accidental_hits, seed):
    """(logits [batch, num_true + num_sampled], labels of the same shape: 1/num_true on the true columns)."""
    from .nn import embedding_lookup
    if isinstance(weights, (list, tuple)) or isinstance(biases, (list, tuple)):
        raise NotImplementedError("weft.nn sampled losses take one weights and one biases tensor (no sharded list)")
    weights = weights if isinstance(weights, Tensor) else convert_to_tensor(weights)
    if weights.shape is None or len(weights.shape) != 2 or weights.shape[-1] is None:
        raise ValueError("weft.nn sampled losses need weights [num_classes, dim] of known dim, got %s"
                         % (weights.shape,))
    inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs, weights.dtype)
    biases = biases if isinstance(biases, Tensor) else convert_to_tensor(biases, weights.dtype)
    labels = _o.cast(labels if isinstance(labels, Tensor) else convert_to_tensor(labels), int64)
    labels = _o.reshape(labels, [-1, int(num_true)])
    if sampled_values is None:
        sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes, seed=seed)
    sampled, true_count, sampled_count = (_o.stop_gradient(v) for v in sampled_values)
    flat = _o.reshape(labels, [-1])
    n_true = _o.shape(flat, out_type=int64)[0]
    ids = _o.concat([flat, _o.cast(sampled, int64)], 0)
    all_w = embedding_lookup(weights, ids)
    all_b = embedding_lookup(biases, ids)
    true_w, sampled_w = all_w[:n_true], all_w[n_true:]
    true_b, sampled_b = all_b[:n_true], all_b[n_true:]
    true_w = _o.reshape(true_w, [-1, int(num_true), int(weights.shape[-1])])
    true_logits = _o.reduce_sum(_o.expand_dims(inputs, 1) * true_w, -1) + _o.reshape(true_b, [-1, int(num_true)])
    sampled_logits = _o.matmul(inputs, sampled_w, transpose_b=True) + sampled_b
    if remove_accidental_hits:
        from .math import reduce_any
        hit = reduce_any(_o.equal(_o.expand_dims(labels, -1), _o.reshape(_o.cast(sampled, int64), [1, 1, -1])),
                         axis=1)  # [batch, num_sampled]: a sampled class that is one of the row's labels
        sampled_logits = sampled_logits + _o.cast(hit, sampled_logits.dtype) * constant(
            float(-np.finfo(np.float32).max), sampled_logits.dtype)
    if subtract_log_q:
        true_logits = true_logits - _o.log(_o.cast(true_count, true_logits.dtype))
        sampled_logits = sampled_logits - _o.log(_o.cast(sampled_count, sampled_logits.dtype))
    logits = _o.concat([true_logits, sampled_logits], 1)
    targets = _o.concat([_o.ones_like(true_logits) / float(num_true), _o.zeros_like(sampled_logits)], 1)
    return logits, targets


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, name="nce_loss"):
    """Noise-contrastive estimation loss per example [batch]: the sigmoid cross-entropies of the true
    and the sampled classes' logits, summed."""
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, None)
    from .nn import sigmoid_cross_entropy_with_logits
    return _o.reduce_sum(sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), 1, name=name)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, seed=None, name="sampled_softmax_loss"):
    """The softmax cross-entropy over the true and the sampled classes, per example [batch]."""
    logits, targets = _sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                      sampled_values, True, remove_accidental_hits, seed)
    from .nn import softmax_cross_entropy_with_logits
    return _o.identity(softmax_cross_entropy_with_logits(labels=_o.stop_gradient(targets), logits=logits), name=name)
