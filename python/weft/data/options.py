"""tf.data.Options: the settings of a dataset that weft honours (auto-sharding under a
multi-worker strategy); other TF option groups are accepted and ignored."""
import enum
import types


class AutoShardPolicy(enum.IntEnum):
    """How a dataset is split across the workers of MultiWorkerMirroredStrategy (TF's values).
    weft's datasets are in memory, so AUTO means DATA, as TF's AUTO does without files."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class DistributeOptions:
    def __init__(self):
        self.auto_shard_policy = AutoShardPolicy.AUTO
        self.num_devices = None


class Options:
    """``options = weft.data.Options(); options.experimental_distribute.auto_shard_policy =
    weft.data.experimental.AutoShardPolicy.DATA; ds = ds.with_options(options)``."""

    def __init__(self):
        self.experimental_distribute = DistributeOptions()
        # Accepted for TF programs that set them; weft's pipeline has no such knobs.
        self.experimental_optimization = types.SimpleNamespace()
        self.threading = types.SimpleNamespace(private_threadpool_size=None, max_intra_op_parallelism=None)
        self.experimental_deterministic = None
        self.deterministic = None

    def merge(self, other):
        """A copy of these options with ``other``'s non-default settings over them."""
        out = Options()
        for src in (self, other):
            policy = src.experimental_distribute.auto_shard_policy
            if src is self or policy != AutoShardPolicy.AUTO:
                out.experimental_distribute.auto_shard_policy = AutoShardPolicy(policy)
        return out

    def __repr__(self):
        return "Options(auto_shard_policy=%s)" % self.experimental_distribute.auto_shard_policy.name
