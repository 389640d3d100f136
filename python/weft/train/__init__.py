"""``weft.train`` (``tf.compat.v1.train``): TF1's optimizers, the global step, learning-rate decay
and the checkpoint Saver, for graph-mode programs run with ``weft.Session``::

    step = weft.train.get_or_create_global_step()
    train_op = weft.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
    saver = weft.train.Saver()
    with weft.Session() as sess:
        sess.run(weft.global_variables_initializer())
        ...
        saver.save(sess, "/tmp/run/model.ckpt", global_step=step)

See docs/python.md ("TF1 graph mode").
"""
from .optimizer import (Optimizer, GradientDescentOptimizer, MomentumOptimizer, AdamOptimizer,  # noqa: F401
                        RMSPropOptimizer, AdagradOptimizer)
from .training_util import (get_global_step, create_global_step, get_or_create_global_step,  # noqa: F401
                            global_step, exponential_decay)
from .saver import (Saver, import_meta_graph, latest_checkpoint, get_checkpoint_state, checkpoint_exists,  # noqa: F401
                    load_checkpoint, list_variables, load_variable, CheckpointState)
from .hooks import (SessionRunArgs, SessionRunContext, SessionRunValues, SessionRunHook,  # noqa: F401,E402
                    SecondOrStepTimer, StopAtStepHook, NanLossDuringTrainingError, NanTensorHook, LoggingTensorHook,
                    FeedFnHook, CheckpointSaverHook, SummarySaverHook, StepCounterHook, SummaryWriterCache)
from .monitored_session import (Scaffold, ChiefSessionCreator, WorkerSessionCreator, MonitoredSession,  # noqa: F401,E402
                                SingularMonitoredSession, MonitoredTrainingSession)
from .device_setter import replica_device_setter  # noqa: F401,E402
from .checkpoint import Checkpoint, CheckpointManager  # noqa: F401,E402 - TF2 object-based checkpoints
from ..io._example import BytesList, Example, Feature, Features, FloatList, Int64List  # noqa: F401,E402
from ..distribute import Server, ClusterSpec  # noqa: F401,E402 - TF1's tf.train.Server / tf.train.ClusterSpec
from .decay import (piecewise_constant, piecewise_constant_decay, polynomial_decay, natural_exp_decay,  # noqa: F401,E402
                    inverse_time_decay, cosine_decay, linear_cosine_decay, cosine_decay_restarts)
from .moving_averages import ExponentialMovingAverage  # noqa: F401,E402
