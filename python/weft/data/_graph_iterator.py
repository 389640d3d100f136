"""TF1's dataset iterators in graph mode: ``tf.compat.v1.data.make_one_shot_iterator(ds)``,
``make_initializable_iterator(ds)`` (and the TF1 Dataset methods of the same names),
``Iterator.from_structure(types, shapes)`` with ``make_initializer(ds)``; ``get_next()`` and
``initializer`` as TF1 programs use them::

    it = tf.compat.v1.data.make_one_shot_iterator(ds.batch(32))
    x, y = it.get_next()
    loss = ...                                   # built on x, y
    sess.run(train_op)                           # each run takes the next batch

``get_next()`` returns placeholders (one per component, with the element spec's dtypes and
shapes, in the element's structure). A ``Session.run`` whose fetches depend on them takes the
iterator's next element from the C++ pipeline and feeds it: once per run and per ``get_next()``
call, as TF's IteratorGetNext op. At the end of the data the run raises
``errors.OutOfRangeError`` ("End of sequence"), as TF does; running ``initializer`` (a NoOp this
module watches for) starts the data again. A value fed for those placeholders in ``feed_dict``
is used instead (no element is taken).
"""
import weakref

from .. import errors
from .. import framework as _fw
from .. import ops as _ops
from . import _structure as _st

# graph -> {"getters": {placeholder op name: _Getter}, "inits": {op name: (iterator, dataset)},
#           "needed": {(version, fetch names, target names): [getters]}}
_per_graph = weakref.WeakKeyDictionary()


def _state(graph):
    s = _per_graph.get(graph)
    if s is None:
        s = _per_graph[graph] = {"getters": {}, "inits": {}, "needed": {}}
    return s


class _Getter:
    """The placeholders of one get_next() call."""

    def __init__(self, iterator, placeholders):
        self.iterator, self.placeholders = iterator, placeholders


class Iterator:
    """A graph-mode iterator over a weft.data Dataset (see the module docstring)."""

    def __init__(self, dataset, spec, initializable, graph=None, shared_name=None):
        self._graph = graph or _fw.get_default_graph()
        self._dataset, self._spec = dataset, spec
        self._it = None
        self._initialized = not initializable
        self.initializer = self.make_initializer(dataset) if (initializable and dataset is not None) else None

    @classmethod
    def from_structure(cls, output_types, output_shapes=None, shared_name=None, output_classes=None):
        """A reinitializable iterator: its element structure is given; ``make_initializer(ds)``
        gives the op that points it at a dataset of that structure."""
        is_type = lambda x: not isinstance(x, (tuple, list, dict))  # noqa: E731
        leaves = _st.flatten(output_types, is_type)
        template = _st.pack(output_types, [_st.TensorSpec(None, t) for t in leaves], is_type)
        shapes = ([None] * len(leaves) if output_shapes is None
                  else _st.flatten_as(template, output_shapes, "Iterator.from_structure(output_shapes)"))
        specs = [_st.TensorSpec(None if s is None else tuple(s), t) for t, s in zip(leaves, shapes)]
        return cls(None, _st.pack(template, specs, _st.is_spec), initializable=True)

    @property
    def element_spec(self):
        return self._spec

    output_types = property(lambda self: _st.pack(self._spec, [s.dtype for s in self._flat()], _st.is_spec))
    output_shapes = property(lambda self: _st.pack(self._spec, [s.shape for s in self._flat()], _st.is_spec))

    def _flat(self):
        return _st.flatten(self._spec, _st.is_spec)

    def make_initializer(self, dataset, name=None):
        """The op that (re)starts this iterator on ``dataset`` when run."""
        want = [(s.dtype, None if s.shape is None else len(s.shape)) for s in self._flat()]
        have = [(s.dtype, None if s.shape is None else len(s.shape)) for s in dataset._flat_spec()]
        if len(want) != len(have) or any(w[0] != h[0] or None not in (w[1], h[1]) and w[1] != h[1]
                                         for w, h in zip(want, have)):
            raise TypeError("Iterator.make_initializer: the dataset's elements %r do not match the iterator's %r" %
                            (dataset.element_spec, self._spec))
        with self._graph.as_default():
            op = _ops.no_op(name=name or "MakeIterator")
        _state(self._graph)["inits"][op.name] = (self, dataset)
        return op

    def get_next(self, name=None):
        """The next element, as placeholders the Session feeds (see the module docstring)."""
        base = name or "IteratorGetNext"
        with self._graph.as_default():
            phs = [_fw.placeholder(s.dtype, shape=s.shape, name="%s_%d" % (base, i) if i else base)
                   for i, s in enumerate(self._flat())]
        getter = _Getter(self, phs)
        st = _state(self._graph)
        for p in phs:
            st["getters"][p.op.name] = getter
        st["needed"].clear()
        return _st.pack(self._spec, phs, _st.is_spec)

    def _restart(self, dataset):
        self._dataset, self._it, self._initialized = dataset, None, True

    def _next(self):
        if not self._initialized:
            raise errors.FailedPreconditionError("GetNext() failed because the iterator has not been initialized: "
                                                 "run its initializer (sess.run(iterator.initializer)) first")
        if self._it is None:
            self._it = self._dataset._ds.make_iterator()
        try:
            return next(self._it)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None


def make_one_shot_iterator(dataset):
    """TF1: an iterator that goes once over ``dataset`` (no initialization needed)."""
    return Iterator(dataset, dataset.element_spec, initializable=False)


def make_initializable_iterator(dataset, shared_name=None):
    """TF1: an iterator that starts (again) when ``iterator.initializer`` runs."""
    return Iterator(dataset, dataset.element_spec, initializable=True)


def feeds(graph, tensors, targets, fed):
    """Session.run's hook: restarts iterators whose initializer is among ``targets`` and returns
    the (placeholder, value) feeds of the get_next() calls the fetches need (none fed already)."""
    st = _per_graph.get(graph)
    if st is None:
        return []
    for op in targets:
        hit = st["inits"].get(op.name)
        if hit is not None:
            hit[0]._restart(hit[1])
    if not st["getters"]:
        return []
    key = (graph.version, tuple(t.name for t in tensors), tuple(op.name for op in targets))
    needed = st["needed"].get(key)
    if needed is None:
        needed = st["needed"][key] = _needed_getters(st["getters"], tensors, targets)
    fed_names = {t.op.name for t in fed}
    out = []
    for getter, names in needed:
        if names <= fed_names:
            continue  # every component the run needs is fed: no element is taken
        values = getter.iterator._next()
        out.extend((p, v) for p, v in zip(getter.placeholders, values) if p.op.name not in fed_names)
    return out


def _needed_getters(getters, tensors, targets):
    """[(getter, names of its placeholders the run needs)] in the order first reached."""
    found = {}
    for op in _fw.ancestor_ops([t.op for t in tensors] + list(targets)):
        g = getters.get(op.name)
        if g is not None:
            found.setdefault(id(g), (g, set()))[1].add(op.name)
    return list(found.values())
