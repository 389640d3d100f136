"""Distribution strategies, as tf.distribute names them.

    strategy = weft.distribute.MirroredStrategy()        # the CPU devices of this process
    with strategy.scope():
        model = weft.keras.Sequential([...])             # variables mirrored on every replica
        model.compile(...)
    model.fit(x, y, batch_size=64 * strategy.num_replicas_in_sync)   # the global batch

MirroredStrategy: one copy of every variable per device, gradients all-reduced, identical updates.
CentralStorageStrategy: variables on one device, computation replicated, gradients summed there.
OneDeviceStrategy: everything on one device. MultiWorkerMirroredStrategy: every worker process
runs the same program; the cluster comes from TF_CONFIG (``weft-zoo launch`` writes it) or the rank
mpirun / srun give (cluster_resolver.TFConfigClusterResolver); gradients are all-reduced across all
workers' replicas over UCX, initial values come from the chief. A model remembers the strategy whose scope it was
created in (compile and fit may then run outside the scope); a model created outside a scope and
compiled inside one is an error, as in TensorFlow. See docs/distributed.md.

Across processes (UCX builds): ``Server(cluster, job_name, task_index)`` runs this process's task
(``server.join()`` for a ps task), and ``weft.Session(target=server.target)`` runs graphs whose
operations are pinned with ``weft.device("/job:ps/task:0")`` over the cluster;
``cluster_resolver.TFConfigClusterResolver()`` reads $TF_CONFIG.
"""
import atexit
import contextlib
import json
import os
import threading
import types
import weakref

from . import _weft

_local = threading.local()


def _default_cpu_devices():
    """CPU devices a MirroredStrategy() without arguments uses: those tf.config's
    set_logical_device_configuration made, else $WEFT_NUM_CPU_DEVICES, else one per core up to 2
    (each device needs a core of its own to be a real replica)."""
    from .config._state import defaults
    if defaults["cpu_logical_devices"]:
        return defaults["cpu_logical_devices"]
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

    @property
    def shard_optimizer_state(self):
        """0: every replica keeps all optimizer slots; 1 or 2: the ZeRO stage (MirroredStrategy)."""
        return self._cpp.shard_optimizer_state

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

    def status(self):
        """What this process's training under the strategy is doing (weft): a dict with ``step``
        (training steps run), ``images_per_second`` (global-batch examples a second over the last
        ~2 s), ``collective_fraction`` (share of that window with a collective running or waiting
        for peers) and ``collective_seconds`` (that time since the first step). `weft-zoo launch
        --status` prints the same numbers for every task."""
        return dict(self._cpp.status())

    def experimental_distribute_dataset(self, dataset, options=None):
        """``dataset`` (of global batches) as this worker's replicas see it; ``model.fit`` takes either."""
        from .keras._data_adapter import DistributedDataset
        return DistributedDataset(self, dataset)

    def __repr__(self):
        return "<weft.distribute.%s over %s>" % (type(self).__name__, ", ".join(self.devices))


class OneDeviceStrategy(Strategy):
    def __init__(self, device="/device:CPU:0"):
        super().__init__(_weft.distribute.OneDeviceStrategy(device))


class MirroredStrategy(Strategy):
    """Mirrors variables over ``devices`` (names like "/device:CPU:1"; default: the CPU devices of
    this process, see _default_cpu_devices). ``shard_optimizer_state`` (weft): 0 (default) off; 1:
    each replica keeps the optimizer slots of 1/num_replicas_in_sync of the parameters, updates
    that shard and all-gathers the result (ZeRO stage 1); 2: the gradients are also reduce-scattered
    instead of all-reduced (stage 2). Training equals the unsharded strategy's (docs/pipeline.md,
    "Sharded optimizer state")."""

    def __init__(self, devices=None, cross_device_ops=None, shard_optimizer_state=0):
        stage = _shard_stage(shard_optimizer_state)
        if devices is None:
            cpp = _weft.distribute.MirroredStrategy(_default_cpu_devices(), stage)
        else:
            cpp = _weft.distribute.MirroredStrategy([str(d) for d in devices], stage)
        super().__init__(cpp)


class CentralStorageStrategy(Strategy):
    """Variables on ``parameter_device`` (CPU:0), computation replicated over ``compute_devices``."""

    def __init__(self, compute_devices=None, parameter_device="/job:localhost/replica:0/task:0/device:CPU:0"):
        if compute_devices is None:
            cpp = _weft.distribute.CentralStorageStrategy(_default_cpu_devices())
        else:
            cpp = _weft.distribute.CentralStorageStrategy([str(d) for d in compute_devices], parameter_device)
        super().__init__(cpp)


class PipelineStrategy(Strategy):
    """Pipeline parallelism (weft; TensorFlow has no such strategy): a Sequential or functional model
    created in ``scope()`` is cut into ``num_stages`` stages by layer (default 2), stage i's weights
    and work on CPU:i of this process, and every global batch is split into ``micro_batches``
    micro-batches (which must divide it) that flow through the stages as ``schedule`` says:
    ``"gpipe"`` (all forwards, then all backwards) or ``"1f1b"`` (one forward, one backward: fewer
    live activations). ``boundaries``: the names of the first layers of stages 1..n-1 (default:
    stages balanced by parameter count). Each weight's gradients are summed over the micro-batches
    on its stage and applied once: a step equals one single-device step on the global batch.
    ``layer_costs``: one number per layer (in ``model.layers`` order, e.g. measured times) that the
    balancing weighs instead of parameter counts. ``replicas`` > 1: stages x replicas, replica d's stage i on CPU:(d * num_stages + i), the batch
    split over the replicas, each stage's gradients all-reduced across its replicas.
    ``server``: this process's ``Server``, the cluster's first worker (UCX builds): stage i runs on
    task i of its cluster (default: a stage per task), whose processes only serve
    (``Server(...).join()``); the stages' tensors travel over UCX.
    ``bubble_fraction``: the schedule's ideal idle share, (n - 1) / (micro_batches + n - 1)."""

    def __init__(self, num_stages=None, micro_batches=4, schedule="gpipe", boundaries=None, replicas=1,
                 server=None, step_timeout=30.0, layer_costs=None):
        boundaries = [str(b) for b in boundaries or []]
        costs = [float(c) for c in layer_costs or []]
        if server is None:
            cpp = _weft.distribute.PipelineStrategy(2 if num_stages is None else int(num_stages), int(micro_batches),
                                                    str(schedule), boundaries, int(replicas), costs)
        else:
            if int(replicas) != 1:
                raise ValueError("PipelineStrategy: replicas=%r with a server: stages x replicas run on the CPU "
                                 "devices of one process" % (replicas,))
            cpp = _weft.distribute.ClusterPipelineStrategy(server._cpp, 0 if num_stages is None else int(num_stages),
                                                           int(micro_batches), str(schedule), boundaries,
                                                           float(step_timeout), costs)
        super().__init__(cpp)

    @property
    def stage_tasks(self):
        """The task of each stage ("worker:1"), with a server; None in one process."""
        return list(self._cpp.stage_tasks) if hasattr(self._cpp, "stage_tasks") else None

    @property
    def replicas(self):
        return self._cpp.replicas

    @property
    def num_stages(self):
        return self._cpp.num_stages

    @property
    def micro_batches(self):
        return self._cpp.micro_batches

    @property
    def schedule(self):
        return self._cpp.schedule

    @property
    def bubble_fraction(self):
        return self._cpp.bubble_fraction

    def stages_of(self, model):
        """The stage of each layer of ``model`` (in ``model.layers`` order)."""
        return list(self._cpp.stages_of(model._build()))


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

    def __eq__(self, other):
        if isinstance(other, ClusterSpec):
            other = other.as_dict()
        return isinstance(other, dict) and self.as_dict() == other

    def __repr__(self):
        return "ClusterSpec(%r)" % (self._jobs,)


class TFConfigClusterResolver:
    """This process's place in the cluster, as tf.distribute.cluster_resolver.TFConfigClusterResolver:
    TF_CONFIG when set; else the rank that mpirun (OMPI_COMM_WORLD_RANK), a PMI launcher (PMI_RANK)
    or srun (SLURM_PROCID) gives, with addresses from ``hosts`` / $WEFT_HOSTS, ``hostfile`` /
    $WEFT_HOSTFILE, or 127.0.0.1 when every rank runs on this machine; ports ``base_port`` + rank
    ($WEFT_BASE_PORT, default 23456) where an address has none. See distributed/cluster_resolver.h."""

    def __init__(self, hosts=None, hostfile=None, base_port=0):
        if isinstance(hosts, str):
            hosts = [h for h in hosts.split(",") if h]
        self._tf_config = _weft.distribute.resolve_cluster(list(hosts or []), hostfile or "", int(base_port))
        config = json.loads(self._tf_config)
        self._cluster = config["cluster"]
        self.task_type = config["task"]["type"]
        self.task_id = config["task"]["index"]
        self.rpc_layer = "ucx"

    def cluster_spec(self):
        """The cluster as a ClusterSpec (equal to its dict {"worker": ["host:port", ...], ...})."""
        return ClusterSpec(self._cluster)

    def tf_config(self):
        """The TF_CONFIG text for this task."""
        return self._tf_config

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {}

    def __repr__(self):
        return "<TFConfigClusterResolver %s:%d of %s>" % (self.task_type, self.task_id, self._cluster)


cluster_resolver = types.SimpleNamespace(TFConfigClusterResolver=TFConfigClusterResolver)


def _shard_stage(stage):
    if isinstance(stage, bool) or not isinstance(stage, int):
        raise TypeError(f"shard_optimizer_state must be the int 0, 1 or 2, got {stage!r}")
    return stage  # the C++ strategy refuses values outside 0..2 with InvalidArgument


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous training over several worker processes, each running this same program
    (tf.distribute.MultiWorkerMirroredStrategy). ``cluster_resolver``: where this worker is
    (default TFConfigClusterResolver()); ``devices_per_worker``: CPU replicas in each process;
    ``collective_timeout``: seconds a collective waits for a missing worker before failing.
    Creating it connects to the other workers (waits up to ``connect_timeout`` seconds for them).
    The workers prove a shared secret to each other (WEFT_CLUSTER_SECRET / WEFT_CLUSTER_SECRET_FILE,
    set by weft-zoo launch and weft.spark.run); ``insecure=True`` runs without one.
    ``trace_events``: the always-on trace ring's size (0: no trace), dumped as Chrome/Perfetto JSON
    to weft-trace-<job>-<index>.json on a failed step, a hang report (SIGUSR1 too), a fatal signal
    or ``dump_trace()`` (docs/distributed.md, "How to read a trace"). ``shard_optimizer_state``
    (weft): 0, 1 or 2, as MirroredStrategy's: each worker keeps the optimizer slots of 1/N of the
    parameters (ZeRO stages 1 and 2); ``model.save_weights`` is then a collective step every worker
    runs."""

    def __init__(self, communication_options=None, cluster_resolver=None, devices_per_worker=1,
                 collective_timeout=60.0, connect_timeout=60.0, insecure=False, trace_events=16384,
                 shard_optimizer_state=0):
        if not hasattr(_weft.distribute, "MultiWorkerMirroredStrategy"):
            raise RuntimeError("MultiWorkerMirroredStrategy needs UCX: this weft was built without it")
        self.cluster_resolver = cluster_resolver or TFConfigClusterResolver()
        cpp = _weft.distribute.MultiWorkerMirroredStrategy(
            self.cluster_resolver.tf_config(), devices_per_worker=int(devices_per_worker),
            collective_timeout=float(collective_timeout), connect_timeout=float(connect_timeout),
            insecure=bool(insecure), trace_events=int(trace_events),
            shard_optimizer_state=_shard_stage(shard_optimizer_state))
        super().__init__(cpp)
        # At exit, leave in order: another worker may still wait for this one's last messages.
        atexit.register(_leave_quietly, weakref.ref(cpp))

    def dump_trace(self, path=None):
        """Writes this process's recent events (the always-on trace ring) as Chrome/Perfetto trace
        JSON to ``path`` (default: weft-trace-<job>-<index>.json in the working directory) and
        returns the path. ``weft-zoo trace merge DIR -o all.json`` puts the workers' dumps on one
        timeline."""
        return self._cpp.dump_trace(path or "")

    def shutdown(self):
        """Tells the other workers this one is done and waits (bounded) until they all are; also
        done at interpreter exit."""
        self._cpp.shutdown()

    @property
    def num_workers(self):
        return self._cpp.num_workers

    @property
    def worker_index(self):
        return self._cpp.worker_index

    @property
    def is_chief(self):
        return self._cpp.is_chief

    @property
    def task(self):
        """"worker:1"."""
        return self._cpp.task


def _leave_quietly(ref):
    cpp = ref()
    if cpp is not None:
        try:
            cpp.shutdown()
        except Exception:  # a worker that failed: nothing to wait for
            pass


# tf.distribute.experimental.MultiWorkerMirroredStrategy, as the talks spell it.
experimental = types.SimpleNamespace(MultiWorkerMirroredStrategy=MultiWorkerMirroredStrategy,
                                     CentralStorageStrategy=CentralStorageStrategy)


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
                 start=True, num_cpu_devices=1, threads=0, insecure=False):
        if not hasattr(_weft.distribute, "Server"):
            raise NotImplementedError("weft.distribute.Server: this build of weft has no UCX")
        if protocol not in (None, "ucx", "grpc"):
            raise ValueError("protocol %r: weft's servers speak UCX" % (protocol,))
        cluster = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(cluster.jobs) != 1:
                raise ValueError("Server: job_name is needed when the cluster has several jobs (%s)" % cluster.jobs)
            job_name = cluster.jobs[0]
        # The cluster secret comes from WEFT_CLUSTER_SECRET / WEFT_CLUSTER_SECRET_FILE; without one,
        # insecure=True (or WEFT_INSECURE=1) says anyone who reaches the port may drive this task.
        self._cpp = _weft.distribute.Server(json.dumps(cluster.as_dict()), job_name,
                                            0 if task_index is None else int(task_index), num_cpu_devices, threads,
                                            bool(insecure))
        self.cluster_spec = cluster
        _servers[self.target] = self

    @property
    def target(self):
        """"ucx://host:port": what weft.Session(target=...) takes."""
        return self._cpp.target

    def handshake_stats(self):
        """{"accepted", "dropped", "last_drop"}: inbound connections that passed or failed the handshake."""
        return self._cpp.handshake_stats()

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


class ReduceOp:
    """How values from the replicas are combined (tf.distribute.ReduceOp): SUM or MEAN."""
    SUM = "SUM"
    MEAN = "MEAN"


class InputContext:
    """What an input function learns about its place in a distributed run (tf.distribute's):
    this worker's input pipeline among ``num_input_pipelines`` and the replicas in sync.

        def dataset_fn(ctx):
            batch = ctx.get_per_replica_batch_size(64)
            return ds.shard(ctx.num_input_pipelines, ctx.input_pipeline_id).batch(batch)
    """

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        if not 0 <= input_pipeline_id < num_input_pipelines:
            raise ValueError("InputContext: input_pipeline_id %r must be in [0, num_input_pipelines=%r)" %
                             (input_pipeline_id, num_input_pipelines))
        self._num_input_pipelines = int(num_input_pipelines)
        self._input_pipeline_id = int(input_pipeline_id)
        self._num_replicas_in_sync = int(num_replicas_in_sync)

    num_input_pipelines = property(lambda self: self._num_input_pipelines)
    input_pipeline_id = property(lambda self: self._input_pipeline_id)
    num_replicas_in_sync = property(lambda self: self._num_replicas_in_sync)

    def get_per_replica_batch_size(self, global_batch_size):
        """``global_batch_size / num_replicas_in_sync``; ValueError when it does not divide."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError("The `global_batch_size` %r is not divisible by `num_replicas_in_sync` %r " %
                             (global_batch_size, self._num_replicas_in_sync))
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self):
        return "tf.distribute.InputContext(input pipeline id {}, total: {})".format(self._input_pipeline_id,
                                                                                   self._num_input_pipelines)


__all__ = ["Strategy", "OneDeviceStrategy", "MirroredStrategy", "CentralStorageStrategy", "PipelineStrategy",
           "MultiWorkerMirroredStrategy", "TFConfigClusterResolver", "cluster_resolver", "experimental", "get_strategy",
           "has_strategy", "Server", "ClusterSpec", "ReduceOp", "InputContext"]
