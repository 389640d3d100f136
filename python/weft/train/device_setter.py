"""TF1's ``replica_device_setter``: a device function that puts variables on the ps tasks (round
robin) and everything else on the worker, for between-graph replication.

    cluster = weft.train.ClusterSpec({"ps": ["h:2222", "h:2223"], "worker": ["h:2224"]})
    with weft.device(weft.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:0")):
        w = weft.Variable(...)          # /job:ps/task:0
        b = weft.Variable(...)          # /job:ps/task:1
        y = weft.matmul(x, w) + b       # /job:worker/task:0

Inner ``weft.device`` blocks override the fields they set, as in TF; optimizer slots and updates
follow their variables (weft.train's optimizers place them on the variable's device).
"""
from ..distribute import ClusterSpec

# The op types a ps task holds: weft's variables (TF's names of variable ops, for programs that list them).
_PS_OPS = ("Variable", "VariableV2", "VarHandleOp", "AutoReloadVariable")


class _RoundRobinStrategy:
    def __init__(self, num_tasks):
        self._num_tasks, self._next = num_tasks, 0

    def __call__(self, op):
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``weft.device(...)``: ops of the types in ``ps_ops`` (variables) go to
    ``ps_device`` task ``ps_strategy(op)`` (round robin over the ps tasks), others to ``worker_device``.
    With ``cluster`` (a ClusterSpec or dict) the number of ps tasks is its "ps" job's; with no ps
    task it returns None (no device function), as TF does."""
    if cluster is not None:
        spec = cluster if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster)
        ps_job = ps_device.split("/job:")[1].split("/")[0] if ps_device and "/job:" in ps_device else "ps"
        ps_tasks = spec.num_tasks(ps_job)
    if ps_tasks == 0:
        return None
    ps_ops = tuple(ps_ops) if ps_ops is not None else _PS_OPS
    strategy = ps_strategy or _RoundRobinStrategy(ps_tasks)

    def device_function(op):
        if ps_device and op.type in ps_ops:
            return "%s/task:%d" % (ps_device.rstrip("/"), strategy(op))
        return worker_device or None
    return device_function


__all__ = ["replica_device_setter"]
