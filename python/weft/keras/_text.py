"""Keras' text and lookup preprocessing layers: TextVectorization, StringLookup, IntegerLookup.

weft's graphs carry no strings, so these layers run on the host, in Python, as preprocessing: call
them on a list or numpy array (of str, or of ints for IntegerLookup) and feed the numpy ids they
return to a model (an ``Input(dtype="int32")`` + ``Embedding``), or adapt them and vectorize the
data set once before ``fit``. Calling one on a KerasTensor (inside a model) is a TypeError that
says so. Their rules are Keras 3's (TensorFlow 2.21), checked against its output kept as data in
tests/python/data/keras_text_reference.json:

- the vocabulary: the mask token (index 0, when there is one), the OOV token(s), then the tokens
  adapted from data by descending count, ties by descending token (Keras' lexsort order), cut to
  max_tokens entries in all;
- TextVectorization standardizes (``lower_and_strip_punctuation``: lower case, then Keras'
  punctuation set removed), splits on whitespace, adds n-grams (sizes 1..n, or the given sizes,
  joined with a space, each size's in order after the previous size's), then looks tokens up;
- ``output_mode="int"`` pads with 0 to the longest example (or pads / truncates to
  output_sequence_length); multi_hot / count / one_hot / tf_idf give one row of vocabulary size
  per example, tf_idf weighting counts by log(1 + documents / (1 + documents with the token)),
  the OOV slot by the mean of those weights.
"""
import collections
import re

import numpy as np

_MODES = ("int", "multi_hot", "count", "one_hot", "tf_idf")
# Keras' DEFAULT_STRIP_REGEX (",-\." is a range: it takes "-" too).
_STRIP = re.compile(r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


def _not_in_graph(what):
    raise TypeError("%s runs on the host, on a list or numpy array: weft's graphs carry no strings. Vectorize the "
                    "data first (ids = layer(texts), or adapt and map the layer over the data in Python) and feed "
                    "the ids to a model whose Input has dtype='int32'" % what)


def _is_symbolic(x):
    from .. import _weft
    return isinstance(x, _weft.keras.KerasTensor) or type(x).__name__ == "Tensor"


def _rows_of(data, what):
    """Adapt data as a flat list of examples: a list / tuple / numpy array, or a weft.data Dataset
    (of numbers; its elements or batches are flattened)."""
    from ..data import Dataset
    if isinstance(data, Dataset):
        out = []
        for element in data.as_numpy_iterator():
            out.extend(np.asarray(element).reshape(-1).tolist())
        return out
    if isinstance(data, (str, bytes)):
        return [data]
    return np.asarray(data, dtype=object).reshape(-1).tolist()


class _IndexLookup:
    """The shared part of Keras' lookup layers: a vocabulary with special tokens, adapt, and the
    int / multi_hot / count / one_hot / tf_idf encodings (Keras' IndexLookup)."""

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                 output_mode, pad_to_max_tokens, sparse, name, what):
        self._what = what
        self.name = name
        if output_mode not in _MODES:
            raise ValueError("%s: output_mode must be one of %s, got %r" % (what, ", ".join(map(repr, _MODES)),
                                                                          output_mode))
        if sparse:
            raise ValueError("%s: sparse=True is not supported by weft (outputs are dense numpy arrays)" % what)
        if num_oov_indices not in (0, 1):
            # Keras hashes OOV tokens over several indices with FarmHash; weft does not reproduce it.
            raise ValueError("%s: num_oov_indices=%r is not supported by weft (0 or 1)" % (what, num_oov_indices))
        if max_tokens is not None and max_tokens <= (mask_token is not None) + num_oov_indices:
            raise ValueError("%s: max_tokens=%d leaves no room for tokens after the mask and OOV tokens"
                             % (what, max_tokens))
        if invert and output_mode != "int":
            raise ValueError("%s: invert=True needs output_mode='int', got %r" % (what, output_mode))
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("%s: pad_to_max_tokens=True needs max_tokens" % what)
        if idf_weights is not None and output_mode != "tf_idf":
            raise ValueError("%s: idf_weights are only for output_mode='tf_idf'" % what)
        self.max_tokens, self.num_oov_indices = max_tokens, num_oov_indices
        self.mask_token, self.oov_token = mask_token, oov_token
        self.invert, self.output_mode, self.pad_to_max_tokens = invert, output_mode, pad_to_max_tokens
        self._tokens = None  # the learned or given tokens, without the special ones
        self._idf = None     # tf_idf: one weight per index of the vocabulary
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ---- the vocabulary ---------------------------------------------------------------------
    def _specials(self):
        out = [] if self.mask_token is None or self.output_mode != "int" else [self.mask_token]
        return out + [self.oov_token] * self.num_oov_indices

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the tokens (without the mask and OOV tokens, or with them at their places, as Keras
        accepts) and, for tf_idf, their idf weights (one per token)."""
        tokens = list(_rows_of(vocabulary, self._what))
        specials = self._specials()
        if tokens[:len(specials)] == specials:
            tokens = tokens[len(specials):]
        for t in tokens:
            if t in (self.mask_token, self.oov_token) and t is not None:
                raise ValueError("%s: the vocabulary holds the special token %r at index %d (mask and OOV tokens "
                                 "go first, or are left out)" % (self._what, t, tokens.index(t)))
        if len(set(tokens)) != len(tokens):
            dup = [t for t, n in collections.Counter(tokens).items() if n > 1][0]
            raise ValueError("%s: the vocabulary has %r more than once" % (self._what, dup))
        if self.max_tokens is not None and len(tokens) + len(specials) > self.max_tokens:
            raise ValueError("%s: a vocabulary of %d tokens (+ %d special) is over max_tokens=%d"
                             % (self._what, len(tokens), len(specials), self.max_tokens))
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("%s: output_mode='tf_idf' with a given vocabulary needs idf_weights" % self._what)
            idf = np.asarray(idf_weights, np.float32).reshape(-1)
            if idf.size != len(tokens):
                raise ValueError("%s: %d idf_weights for %d tokens" % (self._what, idf.size, len(tokens)))
            self._idf = np.concatenate([np.full(len(specials), idf.mean() if idf.size else 0, np.float32), idf])
        self._tokens = tokens
        self._index = {t: i + len(specials) for i, t in enumerate(tokens)}

    def _adapt_tokens(self, documents):
        """documents: one list of tokens per example."""
        counts, doc_counts = collections.Counter(), collections.Counter()
        skip = {t for t in (self.mask_token, self.oov_token) if t is not None}
        for doc in documents:
            doc = [t for t in doc if t not in skip]
            counts.update(doc)
            doc_counts.update(set(doc))
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        room = None if self.max_tokens is None else self.max_tokens - len(self._specials())
        tokens = [t for t, _ in ranked[:room]]
        self._idf = None
        self._tokens = None
        idf = None
        if self.output_mode == "tf_idf":
            n = len(documents)
            idf = np.log(1.0 + n / (1.0 + np.array([doc_counts[t] for t in tokens], np.float64))).astype(np.float32)
        self.set_vocabulary(tokens, idf)

    def get_vocabulary(self, include_special_tokens=True):
        self._require_vocabulary()
        return (self._specials() if include_special_tokens else []) + list(self._tokens)

    def vocabulary_size(self):
        self._require_vocabulary()
        return len(self._specials()) + len(self._tokens)

    def _require_vocabulary(self):
        if self._tokens is None:
            raise RuntimeError("%s has no vocabulary yet: call adapt(data) or pass vocabulary=" % self._what)

    # ---- lookups ----------------------------------------------------------------------------
    def _ids(self, token):
        if self.mask_token is not None and token == self.mask_token:
            return 0
        i = self._index.get(token)
        if i is not None:
            return i
        if self.num_oov_indices == 0:
            raise ValueError("%s: %r is not in the vocabulary and num_oov_indices=0" % (self._what, token))
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _encode(self, docs, sequence_length=None):
        """docs: one list of tokens per example -> numpy (int64 ids, or one row per example)."""
        self._require_vocabulary()
        ids = [[self._ids(t) for t in doc] for doc in docs]
        if self.output_mode == "int":
            width = sequence_length if sequence_length is not None else max([len(r) for r in ids] + [0])
            out = np.zeros((len(ids), width), np.int64)
            for i, r in enumerate(ids):
                r = r[:width]
                out[i, :len(r)] = r
            return out
        depth = self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()
        out = np.zeros((len(ids), depth), np.float32 if self.output_mode == "tf_idf" else np.int64)
        for i, r in enumerate(ids):
            if self.output_mode == "one_hot" and len(r) != 1:
                raise ValueError("%s: output_mode='one_hot' takes one token per example, example %d has %d"
                                 % (self._what, i, len(r)))
            for j in r:
                out[i, j] = 1 if self.output_mode in ("multi_hot", "one_hot") else out[i, j] + 1
        if self.output_mode == "tf_idf":
            out[:, :len(self._idf)] *= self._idf
        return out

    def _invert(self, ids):
        self._require_vocabulary()
        vocab = self.get_vocabulary()
        ids = np.asarray(ids)
        if ids.dtype.kind not in "iu":
            raise TypeError("%s(invert=True) takes integer ids, got %s" % (self._what, ids.dtype))
        flat = [vocab[i] if 0 <= i < len(vocab) else self.oov_token for i in ids.reshape(-1).tolist()]
        return np.array(flat, dtype=object if not isinstance(self.oov_token, int) else np.int64).reshape(ids.shape)

    def _depth(self):
        """The width of a multi_hot / count / one_hot / tf_idf row."""
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def __repr__(self):
        return "<weft.keras.layers.%s name=%r output_mode=%r>" % (type(self).__name__, self.name, self.output_mode)


class StringInput:
    """``keras.Input(shape, dtype="string")``: the text input of a functional model whose first
    layer is a host text layer (keras.io's ``end_to_end_model``: ``inputs = keras.Input(shape=(1,),
    dtype="string"); indices = vectorize_layer(inputs); keras.Model(inputs, model(indices))``).
    weft's graphs carry no strings: calling the text layer on it gives the model's real input (an
    int64 keras.Input of the layer's output shape), and ``keras.Model(inputs=this, ...)`` becomes
    a model of that input that runs the layer on the host first (fit / evaluate / predict on texts)."""

    def __init__(self, shape, name=None):
        self.shape = (None,) + tuple(shape)
        self.dtype = "string"
        self.name = name or "input"
        self.host_layers, self.ids = None, None

    def ids_after(self, layer, per_example_shape):
        if self.ids is not None:
            raise TypeError("keras.Input(dtype='string') %r: only one text layer can take it (weft runs it on the host "
                            "before the model; chain text layers inside a standardize function)" % self.name)
        from .layers import Input
        self.host_layers = [layer]
        self.ids = Input(shape=per_example_shape, dtype="int64", name=self.name)
        return self.ids

    def __repr__(self):
        return "<KerasTensor shape=%s, dtype=string, name=%s (host text)>" % (self.shape, self.name)


class _Lookup(_IndexLookup):
    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary from ``data`` (a list or array of tokens, any shape)."""
        if self.output_mode == "tf_idf":
            raise ValueError("%s: adapt with output_mode='tf_idf' is not supported by weft: use TextVectorization, "
                             "or pass vocabulary= and idf_weights=" % self._what)
        self._adapt_tokens([[self._token(t) for t in _rows_of(data, self._what)]])

    def __call__(self, inputs):
        if isinstance(inputs, StringInput):
            return inputs.ids_after(self, tuple(inputs.shape) if self.output_mode == "int" else (self._depth(),))
        if _is_symbolic(inputs):
            if isinstance(self, IntegerLookup) and type(inputs).__name__ == "Tensor":  # a graph tensor
                return self._graph_ids(inputs)
            _not_in_graph(type(self).__name__)
        if self.invert:
            return self._invert(inputs)
        arr = np.asarray(inputs, dtype=object)
        if self.output_mode == "int":
            return self._encode([[self._token(t) for t in arr.reshape(-1).tolist()]])[0].reshape(arr.shape)
        rows = arr.reshape(-1, 1) if arr.ndim <= 1 else arr.reshape(-1, arr.shape[-1])
        out = self._encode([[self._token(t) for t in r] for r in rows.tolist()])
        return out.reshape(tuple(arr.shape[:-1]) + (out.shape[-1],)) if arr.ndim > 1 else out


    def _graph_ids(self, x):
        """The ids of an integer graph tensor (a tf.data function's, or a tf.function's), built from
        ops: _ids' rules, each element compared with the vocabulary (its tokens are few)."""
        import weft as _ops  # TensorFlow's ops (the package is loaded: a layer exists)
        from .. import framework as _fw
        if self.invert or self.output_mode != "int" or self.num_oov_indices != 1:
            raise NotImplementedError("%s on a graph tensor (%s) takes output_mode='int', num_oov_indices=1, "
                                      "invert=False; call it on numpy data for the others" % (self._what, x.name))
        if not x.dtype.is_integer:
            raise TypeError("%s takes integers, got %s of dtype %s" % (self._what, x.name, x.dtype))
        self._require_vocabulary()
        x = _ops.cast(x, "int64")
        vocab = _fw.constant(np.array(self._tokens or [0], np.int64))
        ids = _fw.constant(np.array([self._index[t] for t in self._tokens] or [0], np.int64))
        hit = _ops.logical_and(_ops.equal(_ops.expand_dims(x, -1), vocab), _fw.constant(bool(self._tokens)))
        found = _ops.reduce_sum(_ops.cast(hit, "int64") * ids, -1)  # tokens are unique: one hit at most
        out = _ops.where(_ops.reduce_any(hit, -1), found, _ops.zeros_like(found) + self._ids(None))
        if self.mask_token is not None:
            out = _ops.where(_ops.equal(x, int(self.mask_token)), _ops.zeros_like(out), out)
        return out


class StringLookup(_Lookup):
    """Keras' StringLookup: maps strings to int ids through a vocabulary (adapted or given), and
    back with ``invert=True``. Runs on the host on lists / numpy arrays (see the module doc)."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", name=None, **kwargs):
        _check_dtype(kwargs, "StringLookup", ("string", "str", None))
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, name, "StringLookup")

    def _token(self, t):
        return t.decode(self.encoding) if isinstance(t, bytes) else str(t)


class IntegerLookup(_Lookup):
    """Keras' IntegerLookup: maps integers to int ids through a vocabulary (adapted or given), and
    back with ``invert=True``; mask_token None and oov_token -1 by default, as Keras. Runs on the
    host on lists / numpy arrays (see the module doc)."""

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, name=None, **kwargs):
        _check_dtype(kwargs, "IntegerLookup", ("int64", "int32", None))
        if vocabulary_dtype not in ("int64", "int32"):
            raise ValueError("IntegerLookup: vocabulary_dtype must be 'int64' or 'int32', got %r" % (vocabulary_dtype,))
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, name, "IntegerLookup")

    def _token(self, t):
        if isinstance(t, (float, np.floating)) and float(t) != int(t):
            raise ValueError("IntegerLookup: %r is not a whole number" % (t,))
        if isinstance(t, (str, bytes)):
            raise TypeError("IntegerLookup takes integers, got %r (StringLookup takes strings)" % (t,))
        return int(t)


def _check_dtype(kwargs, what, allowed):
    dtype = kwargs.pop("dtype", None)
    if dtype not in allowed and str(dtype) not in allowed:
        raise ValueError("%s: dtype=%r is not supported (weft's lookups output int64 ids)" % (what, dtype))
    if kwargs:
        raise TypeError("%s got unexpected arguments: %s" % (what, ", ".join(sorted(kwargs))))


class TextVectorization(_IndexLookup):
    """Keras' TextVectorization: strings -> token ids (or multi_hot / count / tf_idf rows), with a
    vocabulary adapted from text or given. Runs on the host on lists / numpy arrays of str (see the
    module doc); ``adapt`` takes a list, a numpy array of str / bytes, a Python iterable of them, or a
    weft.data Dataset of texts (a host dataset of strings, data/_host.py), whose map calls the layer
    on each batch (``ds.map(lambda text, label: (layer(tf.expand_dims(text, -1)), label))``)."""

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", name=None, **kwargs):
        _check_dtype(kwargs, "TextVectorization", ("string", "str", "int64", None))
        if standardize not in (None, "lower_and_strip_punctuation", "lower", "strip_punctuation") and \
                not callable(standardize):
            raise ValueError("TextVectorization: standardize must be None, 'lower_and_strip_punctuation', 'lower', "
                             "'strip_punctuation' or a function, got %r" % (standardize,))
        if split not in (None, "whitespace", "character") and not callable(split):
            raise ValueError("TextVectorization: split must be None, 'whitespace', 'character' or a function, got %r"
                             % (split,))
        if isinstance(ngrams, int) and not isinstance(ngrams, bool):
            if ngrams < 1:
                raise ValueError("TextVectorization: ngrams must be >= 1, got %d" % ngrams)
            self._sizes = tuple(range(1, ngrams + 1))
        elif ngrams is None:
            self._sizes = (1,)
        elif isinstance(ngrams, (tuple, list)) and all(isinstance(n, int) and n >= 1 for n in ngrams):
            self._sizes = tuple(ngrams)
        else:
            raise ValueError("TextVectorization: ngrams must be None, an int or a tuple of ints, got %r" % (ngrams,))
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError("TextVectorization: output_sequence_length is only for output_mode='int'")
        if ragged:
            raise ValueError("TextVectorization: ragged=True is not supported by weft (outputs are padded arrays)")
        self.standardize, self.split, self.ngrams = standardize, split, ngrams
        self.output_sequence_length, self.encoding = output_sequence_length, encoding
        super().__init__(max_tokens, 1, "", "[UNK]", vocabulary, idf_weights, False, output_mode,
                         pad_to_max_tokens, sparse, name, "TextVectorization")

    def _tokens_of(self, text):
        if isinstance(text, np.ndarray) and text.ndim == 0:  # one string of a host string value
            text = text.item()
        if isinstance(text, bytes):
            text = text.decode(self.encoding)
        if not isinstance(text, str):
            raise TypeError("TextVectorization takes strings, got %r" % (text,))
        if callable(self.standardize):
            text = self.standardize(text)
            if isinstance(text, np.ndarray) and text.shape == ():  # tf.strings' result: a host string value
                text = text.item()
            if isinstance(text, bytes):
                text = text.decode(self.encoding)
        else:
            if self.standardize in ("lower", "lower_and_strip_punctuation"):
                text = text.lower()
            if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
                text = _STRIP.sub("", text)
        if callable(self.split):
            words = list(self.split(text))
        elif self.split == "whitespace":
            words = text.split()
        elif self.split == "character":
            words = list(text)
        else:
            words = [text]
        out = []
        for n in self._sizes:
            out.extend(" ".join(words[i:i + n]) for i in range(len(words) - n + 1))
        return out

    def _documents(self, data):
        from ..data import Dataset
        if isinstance(data, Dataset):  # adapt(ds.map(lambda x, y: x)): texts, or batches of them
            texts = []
            for element in data.as_numpy_iterator():
                if isinstance(element, (tuple, dict)):
                    raise TypeError("TextVectorization.adapt: the dataset's elements must be texts (or batches of "
                                    "them), got element_spec %r; map it to the texts first (ds.map(lambda x, y: x))"
                                    % (data.element_spec,))
                texts.extend(np.asarray(element, dtype=object).reshape(-1).tolist())
            data = texts
        if _is_symbolic(data):
            _not_in_graph("TextVectorization")
        if isinstance(data, (str, bytes)):
            data = [data]
        texts = data.view(np.ndarray) if isinstance(data, np.ndarray) else np.asarray(list(data), dtype=object)
        return [self._tokens_of(t) for t in texts.reshape(-1).tolist()]

    def adapt(self, data, batch_size=None, steps=None):
        """Learns the vocabulary (and, for tf_idf, the idf weights) from ``data``: texts, one
        document each."""
        self._adapt_tokens(self._documents(data))

    def __call__(self, inputs):
        if isinstance(inputs, StringInput):
            shape = (self.output_sequence_length,) if self.output_mode == "int" else (self._depth(),)
            return inputs.ids_after(self, shape)
        if _is_symbolic(inputs):
            _not_in_graph("TextVectorization")
        return self._encode(self._documents(inputs), self.output_sequence_length)


__all__ = ["TextVectorization", "StringLookup", "IntegerLookup", "StringInput"]
