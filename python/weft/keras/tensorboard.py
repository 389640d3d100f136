"""``keras.callbacks.TensorBoard``: training curves and the model's graph as TensorBoard event files.

    tb = weft.keras.callbacks.TensorBoard(log_dir="logs", update_freq="batch")
    model.fit(x, y, epochs=5, validation_data=(xv, yv), callbacks=[tb])
    # tensorboard --logdir logs

Keras' layout and names: ``log_dir/train`` gets "epoch_<metric>" per epoch (step = epoch, from 0),
"batch_<metric>" every ``update_freq`` batches (step = the batch count of this fit, from 1) and the
graph of the training step; ``log_dir/validation`` gets the "val_" metrics as "epoch_<metric>" and
"evaluation_<metric>_vs_iterations" (step = batches trained). Scalars and weight histograms
(``histogram_freq``) are written in TF2's form (tensors with the "scalars" / "histograms" plugin's
metadata), the graph as a GraphDef.
"""
import os
import time

from .. import _events
from .callbacks import Callback


class TensorBoard(Callback):
    """See the module doc. ``write_images``, ``profile_batch``, ``embeddings_freq`` and
    ``embeddings_metadata`` are accepted for Keras' signature and write nothing (weft has no image
    summaries, profiler or projector)."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None):
        super().__init__()
        if update_freq != "epoch" and update_freq != "batch" and (not isinstance(update_freq, int) or update_freq < 1):
            raise ValueError("TensorBoard(update_freq=%r): use 'epoch', 'batch' or a positive number of batches" %
                             (update_freq,))
        self.log_dir = str(log_dir)
        self.histogram_freq = int(histogram_freq or 0)
        self.write_graph = write_graph
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self._writers = {}
        self._global_train_batch = 0

    def _writer(self, run):
        """The event writer of ``log_dir/<run>``, opened on first use (as Keras does)."""
        w = self._writers.get(run)
        if w is None:
            w = self._writers[run] = _events.EventFileWriter(os.path.join(self.log_dir, run), ".v2")
        return w

    def _close_writers(self):
        for w in self._writers.values():
            w.close()
        self._writers = {}

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._should_write_graph = bool(self.write_graph)
        self._close_writers()  # a new fit starts new event files
        self._writer("train")

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = self._batch_start = time.time()
        self._epoch_first_batch = self._global_train_batch

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        step = self._global_train_batch
        if self._should_write_graph:
            model = getattr(self.model, "_cpp", None)
            if model is not None:
                self._writer("train").add_graph(model)
            self._should_write_graph = False
        now = time.time()
        if self.update_freq != "epoch" and step % self.update_freq == 0:
            w = self._writer("train")
            if self.write_steps_per_second:
                w.add_scalar("batch_steps_per_second", 1.0 / max(now - self._batch_start, 1e-9), step)
            for name, value in (logs or {}).items():
                w.add_scalar("batch_" + name, value, step)
        self._batch_start = now

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        lr = self._learning_rate()
        if lr is not None:
            train["learning_rate"] = lr
        if self.write_steps_per_second:
            train["steps_per_second"] = (self._global_train_batch - self._epoch_first_batch) / \
                max(time.time() - self._epoch_start, 1e-9)
        w = self._writer("train")
        for name, value in train.items():
            w.add_scalar("epoch_" + name, value, epoch)
        if val:
            v = self._writer("validation")
            for name, value in val.items():
                v.add_scalar("epoch_" + name, value, epoch)
            for name, value in val.items():
                v.add_scalar("evaluation_%s_vs_iterations" % name, value, self._global_train_batch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        for writer in self._writers.values():
            writer.flush()

    def on_train_end(self, logs=None):
        self._close_writers()

    def _learning_rate(self):
        opt = getattr(self.model, "optimizer", None)
        lr = getattr(opt, "learning_rate", None)
        try:
            return float(lr) if lr is not None else None
        except (TypeError, ValueError):
            return None  # a schedule object: Keras evaluates it, weft's has no Python value

    def _log_weights(self, epoch):
        """Histograms of the weights, tagged "<layer>/<weight>" (Keras' weight paths)."""
        values = self.model.get_weights()
        names = [(layer.name, w[0]) for layer in self.model.layers for w in layer._weight_specs]
        if len(names) != len(values):
            raise RuntimeError("TensorBoard(histogram_freq=...): the model lists %d weights but get_weights() gave %d"
                               % (len(names), len(values)))
        summary = _events.summary_proto([_events.histogram_tensor_value("%s/%s" % (layer, name), v)
                                         for (layer, name), v in zip(names, values)])
        self._writer("train").add_event(step=epoch, summary=summary)
