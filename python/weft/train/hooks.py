"""TF1's session-run hooks (``tf.compat.v1.train.SessionRunHook`` and the basic ones) for
``MonitoredTrainingSession``:

    class Logger(weft.train.SessionRunHook):
        def before_run(self, run_context):
            return weft.train.SessionRunArgs(loss)            # fetched in the same step
        def after_run(self, run_context, run_values):
            print(run_values.results)

    hooks = [weft.train.StopAtStepHook(last_step=1000), weft.train.NanTensorHook(loss), Logger()]
"""
import logging
import time

import numpy as np

from .training_util import get_global_step

_log = logging.getLogger("weft")


class SessionRunArgs:
    """What a hook's ``before_run`` adds to the step: fetches (any structure) and feeds."""

    def __init__(self, fetches, feed_dict=None, options=None):
        self.fetches, self.feed_dict, self.options = fetches, feed_dict, options


class SessionRunContext:
    """The step a hook sees: the caller's ``original_args`` and the ``session``; ``request_stop()``
    makes ``should_stop()`` true after this step."""

    def __init__(self, original_args, session):
        self.original_args, self.session = original_args, session
        self._stop_requested = False

    def request_stop(self):
        self._stop_requested = True

    @property
    def stop_requested(self):
        return self._stop_requested


class SessionRunValues:
    """The results of a hook's fetches in this step."""

    def __init__(self, results, options=None, run_metadata=None):
        self.results, self.options, self.run_metadata = results, options, run_metadata


class SessionRunHook:
    """Base class: ``begin()`` before the session exists (make ops here), ``after_create_session
    (session, coord)``, ``before_run(run_context)`` (may return SessionRunArgs), ``after_run
    (run_context, run_values)``, ``end(session)``."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one given)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps must be provided")
        self._secs, self._steps = every_secs, every_steps
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._secs is not None:
            return time.time() >= self._last_time + self._secs
        return step >= self._last_step + self._steps

    def update_last_triggered_step(self, step):
        now = time.time()
        elapsed = None if self._last_time is None else (now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


def _require_global_step(hook):
    step = get_global_step()
    if step is None:
        raise RuntimeError("Global step should be created to use %s." % type(hook).__name__)
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop when the global step reaches ``last_step`` (or ``num_steps`` past its value
    when the session starts)."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._global_step = _require_global_step(self)

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        # The fetched value may precede this step's increment: confirm with a fresh read.
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._global_step)) >= self._last_step:
                run_context.request_stop()


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fetches ``loss_tensor`` each step; on NaN raises NanLossDuringTrainingError (or, with
    ``fail_on_nan_loss=False``, logs and requests a stop)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss, self._fail = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results).any():
            if self._fail:
                raise NanLossDuringTrainingError
            _log.error("Model diverged with loss = NaN.")
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` (a list or a dict tag -> tensor) every ``every_n_iter`` steps or
    ``every_n_secs`` seconds (and at the end with ``at_end``), through the "weft" logger at INFO."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        if not at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if not isinstance(tensors, dict):
            tensors = {getattr(t, "name", str(t)): t for t in tensors}
        self._tensors, self._formatter, self._at_end = tensors, formatter, at_end
        self._timer = SecondOrStepTimer(every_n_secs, every_n_iter) if not (every_n_iter is None and
                                                                           every_n_secs is None) else None
        self._iter = 0

    def _log(self, values):
        text = self._formatter(values) if self._formatter else ", ".join("%s = %s" % (k, values[k]) for k in values)
        _log.info(text)

    def before_run(self, run_context):
        self._should = self._timer is not None and self._timer.should_trigger_for_step(self._iter)
        return SessionRunArgs(self._tensors) if self._should else None

    def after_run(self, run_context, run_values):
        if self._should:
            self._timer.update_last_triggered_step(self._iter)
            self._log(run_values.results)
        self._iter += 1

    def end(self, session):
        if self._at_end:
            self._log(session.run(self._tensors))


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()``'s dict to every step's feeds."""

    def __init__(self, feed_fn):
        self._feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self._feed_fn())


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint ``checkpoint_dir/model.ckpt-<global step>`` when the session starts, every
    ``save_secs`` seconds or ``save_steps`` steps, and at the end."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None):
        self._dir, self._saver, self._scaffold = checkpoint_dir, saver, scaffold
        self._path = "%s/%s" % (checkpoint_dir.rstrip("/"), checkpoint_basename)
        self._timer = SecondOrStepTimer(save_secs, save_steps)

    def begin(self):
        self._global_step = _require_global_step(self)
        if self._saver is None and self._scaffold is None:
            from .saver import Saver
            self._saver = Saver()

    def after_create_session(self, session, coord):
        self._save(session, int(session.run(self._global_step)))

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._save(run_context.session, step)

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)

    def _save(self, session, step):
        self._timer.update_last_triggered_step(step)
        import os
        os.makedirs(self._dir, exist_ok=True)
        saver = self._saver if self._saver is not None else self._scaffold.saver  # finalized with the session
        saver.save(session, self._path, global_step=step)


class SummarySaverHook(SessionRunHook):
    """Runs ``summary_op`` (default: every summary of the graph) every ``save_steps`` steps or
    ``save_secs`` seconds and writes it to ``output_dir`` (or ``summary_writer``)."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (summary_op is None) == (scaffold is None):
            raise ValueError("Exactly one of scaffold or summary_op should be set.")
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._dir, self._writer, self._scaffold, self._op = output_dir, summary_writer, scaffold, summary_op

    def begin(self):
        from ..compat.v1 import summary
        self._global_step = _require_global_step(self)
        if self._op is None:
            self._op = self._scaffold.summary_op or summary.merge_all()
        if self._writer is None and self._dir is not None:
            self._writer = FileWriterCache.get(self._dir)
        self._next_step = None

    def before_run(self, run_context):
        # The summaries run only in the steps that write them, as TF's hook asks for them.
        self._request = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        fetches = {"step": self._global_step}
        if self._request and self._op is not None and self._writer is not None:
            fetches["summary"] = self._op
        return SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        step = int(run_values.results["step"]) + 1
        if self._next_step is None or self._request:
            step = int(run_context.session.run(self._global_step))
        if self._request:
            self._timer.update_last_triggered_step(step)
            if "summary" in run_values.results:
                self._writer.add_summary(run_values.results["summary"], step)
        self._next_step = step + 1

    def end(self, session):
        if self._writer is not None:
            self._writer.flush()


class StepCounterHook(SessionRunHook):
    """Writes the "global_step/sec" scalar (and logs it) every ``every_n_steps`` steps."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        self._timer = SecondOrStepTimer(every_n_secs, None if every_n_secs is not None else every_n_steps)
        self._dir, self._writer = output_dir, summary_writer

    def begin(self):
        self._global_step = _require_global_step(self)
        if self._writer is None and self._dir is not None:
            self._writer = FileWriterCache.get(self._dir)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = int(run_values.results) + 1
        if self._timer.should_trigger_for_step(step):
            elapsed = self._timer.update_last_triggered_step(step)
            if elapsed is not None and elapsed[0] > 0:
                rate = elapsed[1] / elapsed[0]
                _log.info("global_step/sec: %g", rate)
                if self._writer is not None:
                    from ..compat.v1.summary import Summary
                    self._writer.add_summary(Summary(value=[Summary.Value(tag="global_step/sec",
                                                                          simple_value=rate)]), step)


class FileWriterCache:
    """One FileWriter per directory for the hooks of a process (TF's SummaryWriterCache)."""
    _writers = {}

    @classmethod
    def get(cls, logdir):
        from ..compat.v1.summary import FileWriter
        w = cls._writers.get(logdir)
        if w is None:
            w = cls._writers[logdir] = FileWriter(logdir)
        return w

    @classmethod
    def clear(cls):
        for w in cls._writers.values():
            w.close()
        cls._writers = {}


SummaryWriterCache = FileWriterCache

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunValues", "SessionRunHook", "SecondOrStepTimer",
           "StopAtStepHook", "NanLossDuringTrainingError", "NanTensorHook", "LoggingTensorHook", "FeedFnHook",
           "CheckpointSaverHook", "SummarySaverHook", "StepCounterHook", "FileWriterCache", "SummaryWriterCache"]
