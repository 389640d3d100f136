"""Collective ops (docs/collectives.md), as TensorFlow's ``collective_ops``: every member of a group
(one per device or task) adds the same op with the same ``group_key`` and ``instance_key`` and its
own ``rank``; ``group_devices`` lists the members' full device names in rank order (default: this
process's CPU:0 .. CPU:group_size-1).

    with weft.device("/device:CPU:0"):
        s0 = weft.collective_ops.all_reduce(g0, group_size=2, group_key=1, instance_key=1, rank=0)
    with weft.device("/device:CPU:1"):
        s1 = weft.collective_ops.all_reduce(g1, group_size=2, group_key=1, instance_key=1, rank=1)
    weft.Session(num_cpu_devices=2).run([s0, s1])
"""
from .ops import raw_ops

__all__ = ["all_reduce", "broadcast", "all_gather", "reduce_scatter"]


def _group(group_size, group_key, instance_key, rank, group_devices, timeout):
    return dict(group_size=group_size, group_key=group_key, instance_key=instance_key, rank=rank,
                group_devices=",".join(group_devices or []), timeout_seconds=float(timeout))


def all_reduce(t, group_size, group_key, instance_key, rank, merge_op="Add", final_op="Id", group_devices=None,
               algorithm="auto", timeout=60.0, name=None):
    """merge_op (Add, Max, Min) over the members' ``t``, then final_op (Id, or Div by group_size)."""
    return raw_ops.CollectiveReduce(t, merge_op=merge_op, final_op=final_op, algorithm=algorithm, name=name,
                                    **_group(group_size, group_key, instance_key, rank, group_devices, timeout))


def broadcast(t, group_size, group_key, instance_key, rank, source_rank=0, group_devices=None, timeout=60.0,
              name=None):
    """Every member gets member ``source_rank``'s ``t`` (the others' ``t`` gives the expected shape)."""
    return raw_ops.CollectiveBroadcast(t, source_rank=source_rank, name=name,
                                       **_group(group_size, group_key, instance_key, rank, group_devices, timeout))


def all_gather(t, group_size, group_key, instance_key, rank, group_devices=None, timeout=60.0, name=None):
    """The members' ``t`` (one shape) concatenated along dim 0 in rank order."""
    return raw_ops.CollectiveAllGather(t, name=name,
                                       **_group(group_size, group_key, instance_key, rank, group_devices, timeout))


def reduce_scatter(t, group_size, group_key, instance_key, rank, merge_op="Add", final_op="Id", group_devices=None,
                   timeout=60.0, name=None):
    """Member ``rank``'s rows of the all-reduce of ``t`` (dim 0 split, the first ranks one row more when
    it does not divide)."""
    return raw_ops.CollectiveReduceScatter(t, merge_op=merge_op, final_op=final_op, name=name,
                                           **_group(group_size, group_key, instance_key, rank, group_devices,
                                                    timeout))
