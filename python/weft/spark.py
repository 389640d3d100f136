"""Run a weft training function on Spark's barrier execution mode, as the talks do with
sparklyr's ``spark_apply(barrier = TRUE)``: Spark starts all N tasks at once (all or nothing), each
task learns the others' addresses from ``BarrierTaskContext.getTaskInfos()``, sets its TF_CONFIG and
calls the function, which builds a ``MultiWorkerMirroredStrategy`` as on any worker.

    from pyspark.sql import SparkSession
    import weft.spark

    def train():
        import weft
        strategy = weft.distribute.MultiWorkerMirroredStrategy()
        with strategy.scope():
            model = weft.keras.Sequential([...]); model.compile(...)
        history = model.fit(x, y, batch_size=64 * strategy.num_workers, epochs=1, steps_per_epoch=5)
        return history.history["loss"][-1]

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    loss = weft.spark.run(train, num_workers=2, spark=spark)    # the chief's return value

Needs PyPI ``pyspark`` (3.x, Java 17); it is imported only when ``run`` is called. Each task picks a
free port on its host (or ``base_port`` + index) and the tasks exchange them with
``BarrierTaskContext.allGather``; the host of each task is its ``getTaskInfos()`` address. A
failing task fails the whole barrier stage, and ``run`` raises Spark's error (it names the task and
carries the Python traceback).
"""
import json
import os
import secrets
import socket
import sys


def _free_port(host):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def tf_config_from_barrier(context, base_port=None):
    """The TF_CONFIG text for this barrier task: worker i of the stage's tasks, at the host of
    ``getTaskInfos()[i]`` with a port every task shares through allGather."""
    hosts = [info.address.rsplit(":", 1)[0] for info in context.getTaskInfos()]
    index = context.partitionId()
    port = base_port + index if base_port else _free_port(hosts[index])
    ports = [int(p) for p in context.allGather(str(port))]
    workers = ["%s:%d" % (h, p) for h, p in zip(hosts, ports)]
    return json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}})


def run(fn, num_workers=2, spark=None, args=(), kwargs=None, base_port=None, all_results=False):
    """Runs ``fn(*args, **kwargs)`` on ``num_workers`` barrier tasks of ``spark`` (default: the
    active SparkSession, else a new local one with one core per worker), each with its TF_CONFIG;
    returns what the chief (task 0) returned (``all_results``: every task's, in task order)."""
    try:
        from pyspark import BarrierTaskContext
        from pyspark.sql import SparkSession
    except ImportError as e:
        raise ImportError("weft.spark needs pyspark (pip install pyspark; Java 17)") from e
    if num_workers < 1:
        raise ValueError("weft.spark.run: num_workers must be at least 1, got %r" % (num_workers,))
    if spark is None:
        spark = SparkSession.getActiveSession()
    if spark is None:  # a local one, whose Python workers run this interpreter (where weft is)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = SparkSession.builder.master("local[%d]" % num_workers).appName("weft").getOrCreate()
    kwargs = dict(kwargs or {})
    # One secret for the job's workers (docs/security.md): the user's, or a random one made here;
    # it travels to the tasks inside the closure (Spark ships it with the job, as the function).
    secret = os.environ.get("WEFT_CLUSTER_SECRET") or (
        None if os.environ.get("WEFT_CLUSTER_SECRET_FILE") or os.environ.get("WEFT_INSECURE") == "1"
        else secrets.token_hex(32))

    def task(_):
        context = BarrierTaskContext.get()
        if secret:
            os.environ["WEFT_CLUSTER_SECRET"] = secret
        os.environ["TF_CONFIG"] = tf_config_from_barrier(context, base_port)
        os.environ["WEFT_TASK"] = "worker:%d" % context.partitionId()
        result = fn(*args, **kwargs)
        context.barrier()  # every worker finished its steps before any task ends
        yield context.partitionId(), result

    rdd = spark.sparkContext.parallelize(range(num_workers), num_workers)
    results = dict(rdd.barrier().mapPartitions(task).collect())
    return [results[i] for i in range(num_workers)] if all_results else results[0]


__all__ = ["run", "tf_config_from_barrier"]
