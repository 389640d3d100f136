"""Distribution strategies, as tf.distribute names them.

    strategy = weft.distribute.MirroredStrategy()        # the CPU devices of this process
    with strategy.scope():
        model = weft.keras.Sequential([...])             # variables mirrored on every replica
        model.compile(...)
    model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync)   # the global batch

MirroredStrategy: one copy of every variable per device, gradients all-reduced, identical updates.
CentralStorageStrategy: variables on one device, computation replicated, gradients summed there.
OneDeviceStrategy: everything on one device. A model remembers the strategy whose scope it was
created in (compile and fit may then run outside the scope); a model created outside a scope and
compiled inside one is an error, as in TensorFlow. See docs/distributed.md.

Across processes (UCX builds): ``Server(cluster, job_name, task_index)`` runs this process's task
(``server.join()`` for a ps task), and ``weft.Session(target=server.target)`` runs graphs whose
operations are pinned with ``weft.device("/job:ps/task:0")`` over the cluster;
``cluster_resolver.TFConfigClusterResolver()`` reads $TF_CONFIG.
"""
import contextlib
import json
import os
import threading
import weakref

from . import _weft

_local = threading.local()


def _default_cpu_devices():
    """CPU devices a MirroredStrategy() without arguments uses: $WEFT_NUM_CPU_DEVICES, else one per
    core up to 2 (each device needs a core of its own to be a real replica)."""
    env = os.environ.get("WEFT_NUM_CPU_DEVICES")
    if env:
        return max(1, int(env))
    return max(1, min(2, os.cpu_count() or 1))


class Strategy:
    """Base of the strategies: ``scope()``, ``num_replicas_in_sync``, ``extended devices``."""

    def __init__(self, cpp):
        self._cpp = cpp

    @property
    def num_replicas_in_sync(self):
        return self._cpp.num_replicas_in_sync

    @property
    def devices(self):
        """The replicas' devices (full names)."""
        return tuple(self._cpp.devices)

    @contextlib.contextmanager
    def scope(self):
        """Models (and their variables) created inside are distributed by this strategy."""
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        self._cpp._enter()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()
            self._cpp._exit()

    def __repr__(self):
        return "<weft.distribute.%s over %s>" % (type(self).__name__, ", ".join(self.devices))


class OneDeviceStrategy(Strategy):
    def __init__(self, device="/device:CPU:0"):
        super().__init__(_weft.distribute.OneDeviceStrategy(device))


class MirroredStrategy(Strategy):
    """Mirrors variables over ``devices`` (names like "/device:CPU:1"; default: the CPU devices of
    this process, see _default_cpu_devices)."""

    def __init__(self, devices=None, cross_device_ops=None):
        if devices is None:
            cpp = _weft.distribute.MirroredStrategy(_default_cpu_devices())
        else:
            cpp = _weft.distribute.MirroredStrategy([str(d) for d in devices])
        super().__init__(cpp)


class CentralStorageStrategy(Strategy):
    """Variables on ``parameter_device`` (CPU:0), computation replicated over ``compute_devices``."""

    def __init__(self, compute_devices=None, parameter_device="/job:localhost/replica:0/task:0/device:CPU:0"):
        if compute_devices is None:
            cpp = _weft.distribute.CentralStorageStrategy(_default_cpu_devices())
        else:
            cpp = _weft.distribute.CentralStorageStrategy([str(d) for d in compute_devices], parameter_device)
        super().__init__(cpp)


class ClusterSpec:
    """The jobs of a cluster and their tasks' addresses, as tf.train.ClusterSpec:
    ``ClusterSpec({"worker": ["127.0.0.1:10090"], "ps": ["127.0.0.1:10091"]})``."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError("ClusterSpec needs a dict of job -> [\"host:port\", ...], got %r" % (cluster,))
        self._jobs = {str(job): [str(a) for a in addresses] for job, addresses in cluster.items()}

    def as_dict(self):
        return {job: list(addresses) for job, addresses in self._jobs.items()}

    @property
    def jobs(self):
        return list(self._jobs)

    def num_tasks(self, job_name):
        return len(self._jobs.get(job_name, []))

    def task_address(self, job_name, task_index):
        return self._jobs[job_name][task_index]

    def __repr__(self):
        return "ClusterSpec(%r)" % (self._jobs,)


class _ClusterResolvers:
    """``weft.distribute.cluster_resolver``."""

    class TFConfigClusterResolver:
        """Reads the cluster and this process's task from $TF_CONFIG, as TensorFlow writes it."""

        def __init__(self, task_type=None, task_id=None):
            config = json.loads(os.environ.get("TF_CONFIG", "{}") or "{}")
            self._cluster = ClusterSpec(config.get("cluster", {}))
            task = config.get("task", {})
            self.task_type = task_type if task_type is not None else task.get("type")
            self.task_id = task_id if task_id is not None else task.get("index", 0)
            self.rpc_layer = config.get("rpc_layer")

        def cluster_spec(self):
            return self._cluster


cluster_resolver = _ClusterResolvers()

_servers = weakref.WeakValueDictionary()  # target -> Server of this process


class Server:
    """This process's task of a cluster, as tf.distribute.Server: it listens on the task's address
    (over UCX), runs the partitions clients register there, and holds their variables.

        server = weft.distribute.Server(cluster, job_name="ps", task_index=0)
        server.join()                                  # a ps task: serve until killed

        server = weft.distribute.Server(cluster, job_name="worker", task_index=0)
        with weft.device("/job:ps/task:0"):
            w = weft.Variable(...)
        with weft.Session(target=server.target) as sess:   # steps run over the cluster
            ...
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True, num_cpu_devices=1, threads=0):
        if not hasattr(_weft.distribute, "Server"):
            raise NotImplementedError("weft.distribute.Server: this build of weft has no UCX")
        if protocol not in (None, "ucx", "grpc"):
            raise ValueError("protocol %r: weft's servers speak UCX" % (protocol,))
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Server: job_name is needed when the cluster has several jobs (%s)" % cluster.jobs)
            job_name = cluster.jobs[0]
        self._cpp = _weft.distribute.Server(json.dumps(cluster.as_dict()), job_name,
                                            0 if task_index is None else int(task_index), num_cpu_devices, threads)
        self.cluster_spec = cluster
        _servers[self.target] = self

    @property
    def target(self):
        """"ucx://host:port": what weft.Session(target=...) takes."""
        return self._cpp.target

    def join(self):
        """Serves until stop() is called (or Ctrl-C)."""
        self._cpp.join()

    def stop(self):
        self._cpp.stop()


def _server_for_target(target):
    server = _servers.get(target)
    if server is None:
        raise ValueError("Session(target=%r): no weft.distribute.Server of this process serves that target "
                         "(create one first: weft.distribute.Server(cluster, job_name, task_index))" % (target,))
    return server._cpp


def get_strategy():
    """The strategy whose scope is active on this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def has_strategy():
    return get_strategy() is not None


__all__ = ["Strategy", "OneDeviceStrategy", "MirroredStrategy", "CentralStorageStrategy", "get_strategy",
           "has_strategy", "Server", "ClusterSpec", "cluster_resolver"]
