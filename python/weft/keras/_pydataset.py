"""keras.utils.PyDataset (Keras 3) and Sequence (its Keras 2 name): batches by index, as fit /
evaluate / predict inputs.

    class Batches(keras.utils.PyDataset):
        def __init__(self, x, y, batch_size, **kwargs):
            super().__init__(**kwargs)
            self.x, self.y, self.batch_size = x, y, batch_size
        def __len__(self):
            return math.ceil(len(self.x) / self.batch_size)
        def __getitem__(self, i):
            s = slice(i * self.batch_size, (i + 1) * self.batch_size)
            return self.x[s], self.y[s]
    model.fit(Batches(x, y, 32), epochs=3)

An epoch is ``len(ds)`` batches (``ds[i]`` for every i; in a shuffled order when fit's
``shuffle``), after which ``on_epoch_end()`` is called. weft reads the batches on one thread, in
order of need, feeding its C++ training loop: ``workers``, ``use_multiprocessing`` and
``max_queue_size`` are accepted and do not start processes or threads.
"""


class PyDataset:
    """Base class of index-addressed batch sources (see the module docstring). Subclasses define
    ``__len__`` (or ``num_batches``) and ``__getitem__(index)`` returning ``x``, ``(x, y)`` or
    ``(x, y, sample_weight)``."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    workers = property(lambda self: getattr(self, "_workers", 1))
    use_multiprocessing = property(lambda self: getattr(self, "_use_multiprocessing", False))
    max_queue_size = property(lambda self: getattr(self, "_max_queue_size", 10))

    def __getitem__(self, index):
        raise NotImplementedError("%s must define __getitem__(self, index) returning a batch" % type(self).__name__)

    def __len__(self):
        raise NotImplementedError("%s must define __len__ (the number of batches per epoch)" % type(self).__name__)

    @property
    def num_batches(self):
        """The batches per epoch (len); None for an endless source (Keras 3)."""
        if type(self).__len__ is not PyDataset.__len__:
            return len(self)
        raise NotImplementedError("%s must define __len__ or the num_batches property" % type(self).__name__)

    def on_epoch_begin(self):
        """Called before each training epoch (override to act there)."""

    def on_epoch_end(self):
        """Called after each training epoch (override to reshuffle, for instance)."""

    def __iter__(self):
        """The batches in order, as Keras' Sequence iterates."""
        n = self.num_batches
        i = 0
        while n is None or i < n:
            yield self[i]
            i += 1


Sequence = PyDataset  # Keras 3 names the same class both ways

__all__ = ["PyDataset", "Sequence"]
