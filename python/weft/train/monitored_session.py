"""TF1's ``MonitoredTrainingSession``: a session that initializes or restores the variables, runs
hooks around every step, saves checkpoints and summaries, and says when to stop.

    step = weft.train.get_or_create_global_step()
    train_op = weft.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
    with weft.train.MonitoredTrainingSession(checkpoint_dir="/tmp/run",
                                             hooks=[weft.train.StopAtStepHook(last_step=1000)]) as sess:
        while not sess.should_stop():
            sess.run(train_op, feed_dict=...)

A chief with a ``checkpoint_dir`` restores the latest checkpoint there (else runs the initializers)
and saves every ``save_checkpoint_steps`` steps or ``save_checkpoint_secs`` seconds (600 by default)
and summaries every ``save_summaries_steps`` steps (100). A non-chief waits until the chief has
initialized the (shared, ps) variables. ``master`` is a server target, as for Session.
"""
import time

from .. import errors
from ..framework import get_default_graph, global_variables_initializer
from ..session import Session
from .hooks import (CheckpointSaverHook, FileWriterCache, SessionRunArgs, SessionRunContext, SessionRunValues,
                    StepCounterHook, SummarySaverHook)
from .saver import Saver, latest_checkpoint


class Scaffold:
    """What a monitored session needs to start: ``init_op`` (default: initialize every variable),
    ``init_feed_dict``, ``init_fn(scaffold, session)``, ``saver`` (default: Saver()) and
    ``summary_op`` (default: every summary). ``finalize()`` makes the defaults."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None,
                 local_init_feed_dict=None):
        self.init_op, self.init_feed_dict, self.init_fn = init_op, init_feed_dict, init_fn
        self.summary_op, self.saver = summary_op, saver
        self._finalized = False

    def finalize(self):
        if self._finalized:
            return self
        from ..compat.v1 import summary
        if self.init_op is None:
            self.init_op = global_variables_initializer()
        if self.summary_op is None:
            self.summary_op = summary.merge_all()
        if self.saver is None:
            self.saver = Saver(allow_empty=True)
        self._finalized = True
        return self


def _wait_until_initialized(sess, max_wait_secs):
    """Polls until every variable of the graph can be read (a chief initialized them)."""
    from .. import _variables
    variables = _variables.all_variables(sess.graph)
    deadline = time.monotonic() + max_wait_secs
    while True:
        try:
            sess.run(variables)
            return
        except errors.FailedPreconditionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


class ChiefSessionCreator:
    """Makes the session and initializes it: restore the latest checkpoint of ``checkpoint_dir`` (or
    ``checkpoint_filename_with_path``), else run the scaffold's init_op; then its init_fn."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._dir, self._path = checkpoint_dir, checkpoint_filename_with_path

    def create_session(self):
        s = self._scaffold.finalize()
        sess = Session(self._master, get_default_graph(), self._config)
        path = self._path or (latest_checkpoint(self._dir) if self._dir else None)
        if path:
            s.saver.restore(sess, path)
        else:
            sess.run(s.init_op, feed_dict=s.init_feed_dict)
        if s.init_fn is not None:
            s.init_fn(s, sess)
        return sess


class WorkerSessionCreator:
    """Makes a non-chief's session and waits (up to ``max_wait_secs``) for the chief to initialize."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config, self._wait = master, config, max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        sess = Session(self._master, get_default_graph(), self._config)
        _wait_until_initialized(sess, self._wait)
        return sess


class MonitoredSession:
    """Runs steps with hooks: each ``run`` asks every hook's ``before_run`` for extra fetches and
    feeds, runs them in the same step, and hands each hook its results; a hook's request_stop()
    makes ``should_stop()`` true. Closing (or leaving ``with``) calls the hooks' ``end``."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or [])
        for h in self._hooks:
            h.begin()
        self._sess = (session_creator or ChiefSessionCreator()).create_session()
        self._stop = False
        for h in self._hooks:
            h.after_create_session(self._sess, None)

    @property
    def graph(self):
        return self._sess.graph

    def should_stop(self):
        return self._stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self._sess is None:
            raise RuntimeError("Run called on a closed MonitoredSession")
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), self._sess)
        extra, feeds = {}, dict(feed_dict or {})
        for i, h in enumerate(self._hooks):
            args = h.before_run(context)
            if args is None:
                continue
            if args.fetches is not None:
                extra[i] = args.fetches
            for k, v in (args.feed_dict or {}).items():
                if k in feeds:
                    raise RuntimeError("Same tensor is fed by a SessionRunHook and user. %s" % getattr(k, "name", k))
                feeds[k] = v
        results = self._sess.run({"caller": fetches, "hooks": extra}, feed_dict=feeds)
        for i, h in enumerate(self._hooks):
            h.after_run(context, SessionRunValues(results["hooks"].get(i)))
        self._stop = self._stop or context.stop_requested
        return results["caller"]

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)``; step_context.run_with_hooks(...) runs a step with the hooks."""
        class _StepContext:
            def __init__(ctx):
                ctx.session = self._sess

            def run_with_hooks(ctx, *args, **kwargs):
                return self.run(*args, **kwargs)

            def request_stop(ctx):
                self._stop = True
        return step_fn(_StepContext())

    def close(self):
        if self._sess is None:
            return
        try:
            for h in self._hooks:
                h.end(self._sess)
        finally:
            self._sess.close()
            self._sess = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # As in TF: running out of input (OutOfRangeError, StopIteration) ends the loop cleanly;
        # other errors close the session without the hooks' end().
        clean = exc_type is None or issubclass(exc_type, (errors.OutOfRangeError, StopIteration))
        if clean:
            self.close()
        elif self._sess is not None:
            self._sess.close()
            self._sess = None
        return clean and exc_type is not None


class SingularMonitoredSession(MonitoredSession):
    """A chief MonitoredSession (``raw_session()`` gives the underlying Session)."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        super().__init__(ChiefSessionCreator(scaffold, master, config, checkpoint_dir, checkpoint_filename_with_path),
                         hooks)

    def raw_session(self):
        return self._sess


_DEFAULT = object()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=_DEFAULT, save_summaries_steps=_DEFAULT,
                             save_summaries_secs=_DEFAULT, config=None, stop_grace_period_secs=120,
                             log_step_count_steps=100, max_wait_secs=7200, save_checkpoint_steps=_DEFAULT,
                             summary_dir=None, save_graph_def=True):
    """A MonitoredSession set up as TF1's: see the module doc."""
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or [])
    if not is_chief:
        return MonitoredSession(WorkerSessionCreator(scaffold, master, config, max_wait_secs), all_hooks)
    all_hooks += list(chief_only_hooks or [])
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps))
        steps = 100 if save_summaries_steps is _DEFAULT and save_summaries_secs is _DEFAULT else \
            (None if save_summaries_steps is _DEFAULT else save_summaries_steps)
        secs = None if save_summaries_secs is _DEFAULT else save_summaries_secs
        if steps or secs:
            all_hooks.append(SummarySaverHook(save_steps=steps, save_secs=secs, scaffold=scaffold,
                                              output_dir=summary_dir))
    if checkpoint_dir:
        if save_checkpoint_secs is _DEFAULT and save_checkpoint_steps is _DEFAULT:
            secs, steps = 600, None
        else:
            secs = None if save_checkpoint_secs is _DEFAULT else save_checkpoint_secs
            steps = None if save_checkpoint_steps is _DEFAULT else save_checkpoint_steps
        if secs or steps:
            all_hooks.append(CheckpointSaverHook(checkpoint_dir, save_secs=secs, save_steps=steps, scaffold=scaffold))
        if save_graph_def:
            FileWriterCache.get(checkpoint_dir).add_graph(get_default_graph())
    return MonitoredSession(ChiefSessionCreator(scaffold, master, config, checkpoint_dir), all_hooks)


__all__ = ["Scaffold", "ChiefSessionCreator", "WorkerSessionCreator", "MonitoredSession", "SingularMonitoredSession",
           "MonitoredTrainingSession"]
