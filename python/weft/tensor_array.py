"""``tf.TensorArray`` over weft's graph ops: a value, as TF2's TensorArray is (every method that
changes it returns a new TensorArray; keep the result: ``ta = ta.write(i, x)``)::

    ta = tf.TensorArray(tf.float32, size=3)
    for i in tf.range(3):                      # a static range: unrolled
        ta = ta.write(i, tf.cast(i, tf.float32) * 2.0)
    ta.stack()                                 # [0., 2., 4.]
    i, ta = tf.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, x[i])),
                          (0, tf.TensorArray(tf.float32, size=n, element_shape=[4])))

Representation (no op of its own): while every index is known when the graph is built (Python
ints, a static ``tf.range``), the array is a Python list of element tensors (unwritten: None), so
``stack`` stacks them and gradients are those of the elements. An index only known at run time,
``unstack`` of a tensor, or entering a ``tf.while_loop`` turns it into one dense tensor
``[size, *element_shape]`` (zeros where unwritten): that tensor is the loop variable, ``read`` is a
Gather and ``write(i, x)`` is ``buf * (1 - m) + m * x`` with ``m`` the one-hot row of ``i`` (its
gradient: dy with row i zeroed to buf, row i of dy to x); a ``dynamic_size`` array grows by
concatenating zeros. A dense write costs O(size) per call. Reading an unwritten index gives zeros
of the element shape, as TF2's TensorArray does; without a known element shape it is an error.
"""
import numpy as np

from . import framework as _fw
from .errors import InvalidArgumentError, OutOfRangeError

__all__ = ["TensorArray"]


def _tf():
    return _fw.api()


def _static_int(x):
    """x as a Python int when the graph already knows it (a number, or a tensor of constants
    outside a loop body), else None."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return int(x)
    if isinstance(x, _fw.Tensor) and _fw._flow_depth[0] == 0 and x.shape is not None and len(x.shape) == 0:
        try:
            v = _tf().get_static_value(x)
        except Exception:  # noqa: BLE001 - a value that cannot be computed now is simply not static
            return None
        return None if v is None else int(v)
    return None


def _static_ints(x):
    if isinstance(x, _fw.Tensor):
        if _fw._flow_depth[0] > 0:
            return None
        try:
            x = _tf().get_static_value(x)
        except Exception:  # noqa: BLE001
            return None
        if x is None:
            return None
    arr = np.asarray(x)
    return [int(v) for v in arr.reshape(-1)] if arr.dtype.kind in "iu" and arr.ndim == 1 else None


def _merge(known, shape, what):
    """The element shape ``known`` refined by a value's ``shape`` (lists, None = unknown)."""
    if shape is None:
        return known
    if known is None:
        return list(shape)
    if len(known) != len(shape) or any(a is not None and b is not None and a != b for a, b in zip(known, shape)):
        raise ValueError("TensorArray.%s: incompatible shape for value (%s), expected (%s)" % (
            what, tuple(shape), tuple(known)))
    return [a if a is not None else b for a, b in zip(known, shape)]


class TensorArray:
    """TF's ``tf.TensorArray(dtype, size=None, dynamic_size=None, clear_after_read=None,
    tensor_array_name=None, handle=None, flow=None, infer_shape=True, element_shape=None,
    colocate_with_first_write_call=True, name=None)``."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                 handle=None, flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
                 name=None):
        if handle is not None or flow is not None:
            raise NotImplementedError("TensorArray: handle= and flow= (TF1's resource TensorArrays) are not supported")
        self._dtype = _fw.as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        # TF2's eager TensorArray clears read elements unless told otherwise; in graphs it never does.
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        self._name = name or tensor_array_name or "TensorArray"
        self._element_shape = None
        if element_shape is not None:
            es = element_shape.as_list() if hasattr(element_shape, "as_list") else element_shape
            self._element_shape = None if es is None else [None if d is None else int(d) for d in es]
        self._items = self._buf = None
        self._read = set()
        # A loop entered before the element shape is known carries a placeholder [size, 0] tensor
        # ("pending"); the body's first write learns the shape into this box, shared by the copies,
        # so the array after the loop knows it too.
        self._pending, self._box = False, [None]
        if size is None:
            if not self._dynamic_size:
                raise ValueError("TensorArray: size must be given unless dynamic_size=True")
            size = 0
        n = _static_int(size)
        if n is not None:
            if n < 0:
                raise ValueError("TensorArray: size must be >= 0, got %d" % n)
            self._items = [None] * n
        else:
            size = _fw.convert_to_tensor(size, _fw.int32)
            if self._element_shape is None or None in self._element_shape:
                self._buf, self._pending = _tf().zeros(_tf().stack([size, 0]), self._dtype), True
            else:
                self._buf = _tf().zeros(_tf().concat([_tf().reshape(size, [1]), self._element_shape], 0), self._dtype)

    # ---- properties

    dtype = property(lambda self: self._dtype)
    dynamic_size = property(lambda self: self._dynamic_size)

    @property
    def element_shape(self):
        return _tf().TensorShape(self._element_shape)

    @property
    def flow(self):
        return self.stack() if self._buf is None else self._buf

    def _copy(self, items=None, buf=None):
        out = object.__new__(TensorArray)
        out.__dict__.update(self.__dict__)
        out._items, out._buf, out._read = items, buf, set(self._read)
        return out

    def _value(self, v, what):
        if isinstance(v, _fw.Tensor) and v.dtype != self._dtype:
            raise InvalidArgumentError("TensorArray %s: dtype is %s but %s was given a %s value (%s)" % (
                self._name, self._dtype.name, what, v.dtype.name, v.name))
        v = _fw.convert_to_tensor(v, self._dtype)
        if self._infer_shape:
            self._element_shape = _merge(self._element_shape, None if v.shape is None else list(v.shape), what)
            self._box[0] = self._element_shape
        return v

    def _zeros(self, what):
        es = self._element_shape
        if es is None or None in es:
            raise ValueError("TensorArray %s.%s: an element was never written and the element shape is not fully "
                             "known (%s); write it first or give element_shape=" % (self._name, what, es))
        return _tf().zeros(es, self._dtype)

    def size(self, name=None):
        if self._items is not None:
            return _fw.constant(len(self._items), _fw.int32)
        return _tf().shape(self._buf)[0]

    def _check_index(self, i, what):
        if i < 0:
            raise OutOfRangeError("TensorArray %s.%s: index %d is negative" % (self._name, what, i))
        n = len(self._items) if self._items is not None else (
            self._buf.shape[0] if self._buf.shape is not None else None)
        if n is not None and i >= n and not (what == "write" and self._dynamic_size):
            raise OutOfRangeError("TensorArray %s.%s: tried to %s index %d but the array is %ssize %d" % (
                self._name, what, what, i, "" if what == "read" else "not resizeable and its ", n))

    # ---- the dense form (loops, run-time indices)

    def _dense(self, what):
        """The array as one tensor [size, *element_shape] (zeros where unwritten)."""
        if self._pending:
            raise ValueError("TensorArray %s.%s: nothing was written yet and the element shape is not known; write "
                             "first or give element_shape=" % (self._name, what))
        if self._buf is not None:
            return self._buf
        if not self._items:
            es = self._element_shape
            if es is None or None in es:
                raise ValueError("TensorArray %s.%s: the array is empty and its element shape is not fully known (%s);"
                                 " give element_shape=" % (self._name, what, es))
            return _tf().zeros([0] + es, self._dtype)
        if any(t is None for t in self._items):
            self._zeros(what)  # raises when the shape is unknown
        if not self._infer_shape and len({tuple(t.shape or ()) for t in self._items if t is not None}) > 1:
            raise ValueError("TensorArray %s.%s: the elements have different shapes (infer_shape=False); use concat()"
                             % (self._name, what))
        return _tf().stack([self._zeros(what) if t is None else t for t in self._items])

    def _numeric(self, t):
        return _tf().cast(t, _fw.int32) if self._dtype == _fw.bool_ else t

    def _dense_write(self, buf, index, value):
        tf = _tf()
        index = _fw.convert_to_tensor(index, _fw.int32)
        b, v = self._numeric(buf), self._numeric(value)
        if self._dynamic_size:  # grow to index + 1 rows
            n = tf.shape(b)[0]
            extra = tf.maximum(index + 1 - n, 0)
            b = tf.concat([b, tf.zeros(tf.concat([tf.reshape(extra, [1]), tf.shape(b)[1:]], 0), b.dtype)], 0)
        rank = len(self._element_shape)
        hot = tf.cast(tf.equal(tf.range(tf.shape(b)[0]), index), b.dtype)
        hot = tf.reshape(hot, [-1] + [1] * rank)
        out = b * (1 - hot) + hot * tf.expand_dims(v, 0)
        return tf.cast(out, self._dtype) if self._dtype == _fw.bool_ else out

    def _coerce(self, buf, shape):
        """``buf`` of a pending array ([size, 0] before the first write, [size, *shape] after)
        as [size, *shape]: its rows padded with zeros to the element's size, then reshaped."""
        tf = _tf()
        static = shape
        n = tf.shape(buf)[0]
        m = tf.size(buf) // tf.maximum(n, 1)
        shape = _fw.convert_to_tensor(shape, _fw.int32)
        e = tf.reduce_prod(shape)
        full = tf.concat([tf.reshape(buf, tf.stack([n, m])), tf.zeros(tf.stack([n, e - m]), buf.dtype)], 1)
        if isinstance(static, list) and None not in static and int(np.prod(static)) > 0:
            return tf.reshape(full, [-1] + static)  # keeps the static element shape
        return tf.reshape(full, tf.concat([tf.reshape(n, [1]), shape], 0))

    def _loop_tensor(self):
        """The tensor a tf.while_loop carries for this array, and its shape invariant."""
        es = self._element_shape
        if self._pending or (self._items is not None and (es is None or None in es)
                             and all(t is None for t in self._items)):
            if self._pending:
                return self._buf, None
            return _tf().zeros([len(self._items), 0], self._dtype), None
        buf = self._dense("while_loop")
        n = None if self._dynamic_size or buf.shape is None else buf.shape[0]
        return buf, [n] + list(self._element_shape)

    def _from_loop(self, buf):
        out = self._copy(buf=buf)
        es = self._box[0]
        if self._items is not None and (self._element_shape is None or None in self._element_shape) \
                and all(t is None for t in self._items) or self._pending:
            if es is None or None in es:
                out._pending = True  # nothing written yet (the body's first pass): the shape comes later
            else:
                out._element_shape, out._pending = list(es), False
                out._buf = self._coerce(buf, es)
        return out

    # ---- TF's methods

    def write(self, index, value, name=None):
        value = self._value(value, "write")
        i = _static_int(index)
        if i is not None:
            self._check_index(i, "write")
        if self._items is not None and i is not None:
            items = list(self._items)
            items.extend([None] * (i + 1 - len(items)))
            items[i] = value
            return self._copy(items=items)
        if self._pending:  # in a loop body: the first write gives the element shape
            buf = self._coerce(self._buf, _tf().shape(value))
            out = self._copy(buf=self._dense_write(buf, index, value))
            out._pending = False
            return out
        if self._element_shape is None or None in self._element_shape:
            raise ValueError("TensorArray %s.write: an index known only at run time needs a fully known element "
                             "shape (got %s)" % (self._name, self._element_shape))
        return self._copy(buf=self._dense_write(self._dense("write"), index, value))

    def read(self, index, name=None):
        i = _static_int(index)
        if i is not None:
            self._check_index(i, "read")
            if self._clear_after_read and _tf().executing_eagerly():
                if i in self._read:
                    raise InvalidArgumentError(
                        "TensorArray %s.read: could not read index %d twice because it was cleared after a previous "
                        "read (perhaps try setting clear_after_read = false?)" % (self._name, i))
                self._read.add(i)
            if self._items is not None:
                t = self._items[i]
                return self._zeros("read") if t is None else t
        return _tf().gather(self._dense("read"), _fw.convert_to_tensor(index, _fw.int32))

    def stack(self, name=None):
        return self._dense("stack")

    def gather(self, indices, name=None):
        idx = _static_ints(indices)
        if idx is not None:
            for i in idx:
                self._check_index(i, "gather")
            if self._items is not None and not any(self._items[i] is None for i in idx):
                return _tf().stack([self._items[i] for i in idx]) if idx else _tf().gather(self._dense("gather"), idx)
        return _tf().gather(self._dense("gather"), _fw.convert_to_tensor(indices, _fw.int32))

    def unstack(self, value, name=None):
        value = _fw.convert_to_tensor(value, self._dtype)
        if value.shape is not None and len(value.shape) == 0:
            raise ValueError("TensorArray %s.unstack: value must have at least one dimension, got a scalar" % self._name)
        n = None if value.shape is None else value.shape[0]
        have = len(self._items) if self._items is not None else None
        if n is not None and have is not None and not self._dynamic_size and n != have:
            raise ValueError("TensorArray %s.unstack: cannot unstack %d tensors into a TensorArray of static size %d"
                             % (self._name, n, have))
        if self._infer_shape and value.shape is not None:
            self._element_shape = _merge(self._element_shape, list(value.shape[1:]), "unstack")
        return self._copy(buf=value)

    def scatter(self, indices, value, name=None):
        value = _fw.convert_to_tensor(value, self._dtype)
        if self._infer_shape and value.shape is not None:
            self._element_shape = _merge(self._element_shape, list(value.shape[1:]), "scatter")
        idx = _static_ints(indices)
        if idx is not None:
            if value.shape is not None and value.shape[0] is not None and value.shape[0] != len(idx):
                raise ValueError("TensorArray %s.scatter: %d indices but value has %d rows" % (
                    self._name, len(idx), value.shape[0]))
            ta = self
            for k, i in enumerate(idx):
                ta = ta.write(i, value[k])
            return ta
        ta = self
        rows = _tf().unstack(value) if value.shape is not None and value.shape[0] is not None else None
        if rows is None:
            raise ValueError("TensorArray %s.scatter: indices known only at run time need a value with a known first "
                             "dimension" % self._name)
        indices = _fw.convert_to_tensor(indices, _fw.int32)
        for k, r in enumerate(rows):
            ta = ta.write(indices[k], r)
        return ta

    def concat(self, name=None):
        if self._items is not None:
            parts = [self._zeros("concat") if t is None else t for t in self._items]
            if not parts:
                return _tf().reshape(self._dense("concat"), [0] + self._element_shape[1:])
            return _tf().concat(parts, 0)
        buf = self._buf
        return _tf().reshape(buf, _tf().concat([[-1], _tf().shape(buf)[2:]], 0))

    def split(self, value, lengths, name=None):
        value = _fw.convert_to_tensor(value, self._dtype)
        ls = _static_ints(lengths)
        if ls is None:
            raise ValueError("TensorArray %s.split: lengths must be known when the graph is built" % self._name)
        if value.shape is not None and value.shape[0] is not None and sum(ls) != value.shape[0]:
            raise ValueError("TensorArray %s.split: lengths sum to %d but value has %d rows" % (
                self._name, sum(ls), value.shape[0]))
        have = len(self._items) if self._items is not None else None
        if have is not None and not self._dynamic_size and len(ls) != have:
            raise ValueError("TensorArray %s.split: %d lengths for a TensorArray of static size %d" % (
                self._name, len(ls), have))
        items, start = [], 0
        for n in ls:
            items.append(value[start:start + n])
            start += n
        if self._infer_shape and len(set(ls)) > 1:
            self._infer_shape = False  # elements of different lengths: only concat() rebuilds them
        elif self._infer_shape and value.shape is not None and ls:
            self._element_shape = _merge(self._element_shape, [ls[0]] + list(value.shape[1:]), "split")
        return self._copy(items=items)

    def identity(self):
        return self._copy(items=None if self._items is None else list(self._items), buf=self._buf)

    def close(self, name=None):
        return _tf().no_op()

    def mark_used(self):
        """TF1's graph-mode call that silences the unused-TensorArray warning (weft gives none)."""

    def __repr__(self):
        return "<weft.TensorArray dtype=%s size=%s element_shape=%s>" % (
            self._dtype.name, len(self._items) if self._items is not None else "?", self._element_shape)
