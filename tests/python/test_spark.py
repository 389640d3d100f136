"""weft.spark: training through Spark's barrier execution mode (local[2], 2 barrier tasks, each a
MultiWorkerMirroredStrategy worker). `./build.sh test` installs pyspark (python/requirements-test.txt)
and Java 17; elsewhere the test is skipped, saying so, when pyspark is not installed."""
import shutil
import sys

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (pip install pyspark to run the Spark test)")


@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")
def test_barrier_tasks_train_and_return_the_chiefs_result(monkeypatch):
    from pyspark.sql import SparkSession
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # the task's Python must import weft

    # Defined here so that Spark ships it by value (the tasks cannot import this test module).
    def train():
        import hashlib

        import weft
        keras = weft.keras
        strategy = weft.distribute.MultiWorkerMirroredStrategy(collective_timeout=30, connect_timeout=30)
        rng = np.random.default_rng(0)
        x = rng.normal(size=(256, 8)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int64)
        with strategy.scope():
            model = keras.Sequential([keras.layers.Dense(16, activation="relu", input_shape=(8,)), keras.layers.Dense(2)])
            model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                          optimizer=keras.optimizers.SGD(0.1), metrics=["accuracy"])
        history = model.fit(x, y, batch_size=64, epochs=2, verbose=0)
        digest = hashlib.sha256(b"".join(w.tobytes() for w in model.get_weights())).hexdigest()
        return strategy.num_workers, strategy.worker_index, history.history["loss"], digest

    import weft.spark
    spark = (SparkSession.builder.master("local[2]").appName("weft-test")
             .config("spark.ui.enabled", "false").getOrCreate())
    try:
        workers, index, losses, digest = weft.spark.run(train, num_workers=2, spark=spark)
        assert (workers, index) == (2, 0)  # the chief's result
        assert losses[-1] < losses[0]
        both = weft.spark.run(train, num_workers=2, spark=spark, all_results=True)
        assert [r[1] for r in both] == [0, 1]
        assert both[0][3] == both[1][3]  # the workers' weights are bit-identical
        assert both[0][2] == both[1][2]  # and both logged the global loss
    finally:
        spark.stop()
