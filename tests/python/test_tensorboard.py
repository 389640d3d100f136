"""TensorBoard event files written by weft (weft.summary, weft.compat.v1.summary.FileWriter, the
Keras TensorBoard callback), read back with tensorboard's own event readers (which check the
TFRecord framing's CRCs and parse the protos)."""
import glob
import os

import numpy as np
import pytest

import weft
import weft.compat.v1 as tf1
from weft import keras

ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                         reason="PyPI tensorboard is not installed (python/requirements-test.txt)")
from tensorboard.backend.event_processing import event_file_loader  # noqa: E402
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def load(logdir):
    acc = ea.EventAccumulator(str(logdir), size_guidance={ea.TENSORS: 0, ea.SCALARS: 0, ea.HISTOGRAMS: 0})
    acc.Reload()
    return acc


def tensor_series(acc, tag):
    return [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in acc.Tensors(tag)]


def test_masked_crc_matches_tensorboard():
    from weft import _events
    for data in [b"", b"a", b"123456789", bytes(range(256)) * 3]:
        assert _events._masked_crc(data) == pywrap_tensorflow.masked_crc32c(data)


def test_tf2_scalars_are_float_tensors_of_the_scalars_plugin(tmp_path):
    writer = weft.summary.create_file_writer(str(tmp_path))
    assert weft.summary.scalar("ignored", 1.0, step=0) is False  # no default writer, as in TF
    with writer.as_default():
        for step in range(3):
            assert weft.summary.scalar("loss", 1.0 / (step + 1), step=step)
        weft.summary.experimental.set_step(7)
        weft.summary.scalar("acc", np.float64(0.5))
        weft.summary.experimental.set_step(None)
        with pytest.raises(ValueError, match="no step"):
            weft.summary.scalar("acc", 0.5)
        with pytest.raises(ValueError, match="one number"):
            weft.summary.scalar("acc", [1.0, 2.0], step=1)
    writer.close()
    files = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert len(files) == 1
    events = list(event_file_loader.EventFileLoader(files[0]).Load())
    assert events[0].file_version == "brain.Event:2"
    acc = load(tmp_path)
    assert sorted(acc.Tags()["tensors"]) == ["acc", "loss"]
    np.testing.assert_allclose(tensor_series(acc, "loss"), [(0, 1.0), (1, 0.5), (2, 1.0 / 3)], rtol=1e-6)
    assert tensor_series(acc, "acc") == [(7, 0.5)]
    assert acc.SummaryMetadata("loss").plugin_data.plugin_name == "scalars"


def test_tf2_histogram_image_and_text(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="pillow (a tensorboard dependency) is missing")
    import io
    writer = weft.summary.create_file_writer(str(tmp_path))
    data = np.array([0.0, 0.0, 1.0, 3.0])
    images = np.zeros((4, 2, 3, 3), np.float32)
    images[0, 0, 0] = [1.0, 0.5, 2.0]                     # floats in [0, 1], clipped: 255, 127, 255
    with writer.as_default(step=5):
        assert weft.summary.histogram("h", data, buckets=3)
        assert weft.summary.image("im", images, max_outputs=2)
        assert weft.summary.text("note", "hello")
        assert weft.summary.scalar("c", weft.constant(2.5))  # a tensor that needs no feeds
        with pytest.raises(ValueError, match="cannot be computed alone"):
            weft.summary.scalar("p", weft.placeholder(weft.float32))
    writer.close()
    acc = load(tmp_path)
    rows = tensor_util.make_ndarray(acc.Tensors("h")[0].tensor_proto)
    np.testing.assert_allclose(rows, [[0, 1, 2], [1, 2, 1], [2, 3, 1]])
    assert acc.SummaryMetadata("im").plugin_data.plugin_name == "images"
    blobs = tensor_util.make_ndarray(acc.Tensors("im")[0].tensor_proto)
    assert blobs.shape == (4,) and blobs[0] == b"3" and blobs[1] == b"2"  # width, height, then 2 PNGs
    px = np.asarray(Image.open(io.BytesIO(blobs[2])))
    assert px.shape == (2, 3, 3) and px[0, 0].tolist() == [255, 127, 255] and px[1, 2].tolist() == [0, 0, 0]
    assert tensor_util.make_ndarray(acc.Tensors("note")[0].tensor_proto) == b"hello"
    assert tensor_series(acc, "c") == [(5, 2.5)]


def test_file_writer_writes_graph_and_summaries(tmp_path):
    g = weft.Graph()
    with g.as_default():
        x = tf1.placeholder(tf1.float32, [None, 2], name="x")
        with tf1.device("/device:CPU:0"):
            w = tf1.Variable(np.ones((2, 1), np.float32), name="w")
        with tf1.name_scope("model"):
            y = tf1.matmul(x, w, name="y")
            loss = tf1.reduce_mean(tf1.square(y), name="loss")
            tf1.summary.scalar("loss", loss)
            tf1.summary.histogram("w", w)
        merged = tf1.summary.merge_all()
        assert tf1.summary.merge_all(scope="nothing") is None
        with tf1.Session(graph=g) as sess, tf1.summary.FileWriter(str(tmp_path), sess.graph) as writer:
            sess.run(tf1.global_variables_initializer())
            for step in range(2):
                s = sess.run(merged, {x: np.full((3, 2), step + 1.0, np.float32)})
                assert isinstance(s, bytes)
                writer.add_summary(s, step)
            writer.add_summary(tf1.Summary(value=[tf1.Summary.Value(tag="acc", simple_value=0.75)]), 5)
            with pytest.raises(TypeError, match="add_summary"):
                writer.add_summary(1.0, 1)
    acc = load(tmp_path)
    # TF1's simple_value summaries are TensorBoard scalars; tags carry the name scope.
    assert sorted(acc.Tags()["scalars"]) == ["acc", "model/loss"]
    got = [(e.step, e.value) for e in acc.Scalars("model/loss")]
    np.testing.assert_allclose(got, [(0, 4.0), (1, 16.0)])  # mean((2 * v)^2) for v = 1, 2
    assert [(e.step, e.value) for e in acc.Scalars("acc")] == [(5, 0.75)]
    h = acc.Histograms("model/w")[0].histogram_value
    assert (h.min, h.max, h.num, h.sum) == (1.0, 1.0, 2.0, 2.0)
    nodes = {n.name: n for n in acc.Graph().node}
    assert {"x", "w", "model/y", "model/loss"} <= set(nodes)
    assert nodes["model/y"].op == "MatMul" and list(nodes["model/y"].input) == ["x", "w"]
    assert nodes["w"].device.endswith("CPU:0")
    assert nodes["x"].attr["T"].type == 1  # DT_FLOAT


def test_keras_callback_layout_tags_and_steps(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    tb = keras.callbacks.TensorBoard(log_dir=str(tmp_path), update_freq=2, histogram_freq=1)
    hist = model.fit(x, y, batch_size=16, epochs=2, validation_data=(x, y), verbose=0, callbacks=[tb])
    assert sorted(os.listdir(tmp_path)) == ["train", "validation"]
    train, val = load(tmp_path / "train"), load(tmp_path / "validation")
    assert sorted(train.Tags()["tensors"]) == ["batch_accuracy", "batch_loss", "dense/bias", "dense/kernel",
                                               "dense_1/bias", "dense_1/kernel", "epoch_accuracy", "epoch_learning_rate",
                                               "epoch_loss"]
    assert sorted(val.Tags()["tensors"]) == ["epoch_accuracy", "epoch_loss", "evaluation_accuracy_vs_iterations",
                                             "evaluation_loss_vs_iterations"]
    # 4 batches an epoch: batch scalars every 2nd batch, counted from 1 across epochs.
    assert [s for s, _ in tensor_series(train, "batch_loss")] == [2, 4, 6, 8]
    np.testing.assert_allclose([v for _, v in tensor_series(train, "epoch_loss")], hist.history["loss"], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in tensor_series(val, "epoch_loss")], hist.history["val_loss"], rtol=1e-6)
    assert [s for s, _ in tensor_series(val, "epoch_loss")] == [0, 1]
    # Keras writes the optimizer's rate each epoch (SGD's default 0.01).
    np.testing.assert_allclose([v for _, v in tensor_series(train, "epoch_learning_rate")], [0.01, 0.01], rtol=1e-6)
    assert [s for s, _ in tensor_series(val, "evaluation_loss_vs_iterations")] == [4, 8]
    # Weight histograms in TF2's form, once per epoch (histogram_freq=1): 30 buckets over the 4 x 8 kernel.
    kernel = train.Tensors("dense/kernel")
    assert [e.step for e in kernel] == [0, 1] and train.SummaryMetadata("dense/kernel").plugin_data.plugin_name == \
        "histograms"
    rows = tensor_util.make_ndarray(kernel[-1].tensor_proto)
    assert rows.shape == (30, 3) and rows[:, 2].sum() == 32 and np.all(rows[:, 0] < rows[:, 1])
    ops = {n.op for n in train.Graph().node}
    assert {"MatMul", "Relu"} <= ops


def test_keras_callback_epoch_only_and_bad_update_freq(tmp_path):
    x = np.zeros((8, 3), np.float32)
    y = np.zeros(8, np.int32)
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=4, epochs=1, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path), write_graph=False, write_steps_per_second=True)])
    assert os.listdir(tmp_path) == ["train"]
    train = load(tmp_path / "train")
    assert sorted(train.Tags()["tensors"]) == ["epoch_learning_rate", "epoch_loss", "epoch_steps_per_second"] and not train.Tags()["graph"]
    assert tensor_series(train, "epoch_steps_per_second")[0][1] > 0
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(str(tmp_path), update_freq="sometimes")


def test_image_summaries_and_run_metadata(tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="pillow (a tensorboard dependency) is missing")
    import io
    g = weft.Graph()
    with g.as_default():
        x = tf1.placeholder(tf1.float32, [None, 2, 3, 1])
        s = tf1.summary.image("input", x, max_outputs=2)
        one = tf1.summary.image("first", x, max_outputs=1)
        with tf1.Session(graph=g) as sess, tf1.summary.FileWriter(str(tmp_path)) as writer:
            batch = np.zeros((3, 2, 3, 1), np.float32)
            batch[0, 0, 0, 0], batch[0, 1, 2, 0] = 0.5, 0.25          # all >= 0: the largest becomes 255
            batch[1, 0, 1, 0], batch[1, 1, 1, 0] = -1.0, 0.25         # negatives: 0 -> 127, -1 -> 0
            writer.add_summary(sess.run(s, {x: batch}), 3)
            writer.add_summary(sess.run(one, {x: batch}), 3)
            writer.add_run_metadata(tf1.RunMetadata(), "step003", 3)
    acc = load(tmp_path)
    assert sorted(acc.Tags()["images"]) == ["first/image", "input/image/0", "input/image/1"]
    assert acc.Tags()["run_metadata"] == ["step003"]
    ev = acc.Images("input/image/0")[0]
    assert (ev.step, ev.width, ev.height) == (3, 3, 2)
    px = np.asarray(Image.open(io.BytesIO(ev.encoded_image_string)))
    assert px.shape == (2, 3) and px[0, 0] == 255 and px[1, 2] == 128 and px[0, 1] == 0
    px1 = np.asarray(Image.open(io.BytesIO(acc.Images("input/image/1")[0].encoded_image_string)))
    assert px1[0, 1] == 0 and px1[0, 0] == 127 and px1[1, 1] == 159  # 127 + 0.25 * 127, rounded
