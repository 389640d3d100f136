"""TF1 graph mode: the TF1 optimizers (against TF1's documented update rules and against numbers
TensorFlow 2.21 computed), Saver / latest_checkpoint / import_meta_graph, Session(target, graph,
config) in TF's order, a graph with variables on a ps task trained through Session(server.target),
MonitoredTrainingSession and its hooks, and TF1's between-graph program across processes.
The weft.compat.v1 namespace's other names: test_tf1_compat.py."""
import os
import subprocess
import sys

import numpy as np
import pytest

import weft
import weft.compat.v1 as tf

# ---- optimizers against TF1's update rules --------------------------------------------------------
# loss = 0.5 * sum((w - t)^2), so grad = w - t: each rule below is TF1's documented formula.

W0 = np.array([1.0, -2.0, 0.5], np.float64)
T = np.array([0.0, 1.0, 2.0], np.float64)


def sgd(steps, lr=0.1):
    w = W0.copy()
    for _ in range(steps):
        w -= lr * (w - T)
    return w


def momentum(steps, lr=0.1, mu=0.9, nesterov=False):
    w, a = W0.copy(), np.zeros(3)
    for _ in range(steps):
        g = w - T
        a = mu * a + g
        w -= lr * (g + mu * a) if nesterov else lr * a
    return w


def adam(steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    w, m, v = W0.copy(), np.zeros(3), np.zeros(3)
    for t in range(1, steps + 1):
        g = w - T
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)  # TF1's "epsilon hat" form
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w -= lr_t * m / (np.sqrt(v) + eps)
    return w


def rmsprop(steps, lr=0.1, decay=0.9, mu=0.0, eps=1e-10, centered=False):
    w, ms, mom, mg = W0.copy(), np.ones(3), np.zeros(3), np.zeros(3)  # TF1 starts ms at ones
    for _ in range(steps):
        g = w - T
        ms = decay * ms + (1 - decay) * g * g
        mg = decay * mg + (1 - decay) * g
        denom = ms - mg * mg if centered else ms
        mom = mu * mom + lr * g / np.sqrt(denom + eps)
        w -= mom
    return w


def adagrad(steps, lr=0.1, init=0.1):
    w, acc = W0.copy(), np.full(3, init)
    for _ in range(steps):
        g = w - T
        acc += g * g
        w -= lr * g / np.sqrt(acc)
    return w


CASES = [
    ("sgd", lambda: tf.train.GradientDescentOptimizer(0.1), sgd),
    ("momentum", lambda: tf.train.MomentumOptimizer(0.1, 0.9), momentum),
    ("nesterov", lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
     lambda s: momentum(s, nesterov=True)),
    ("adam", lambda: tf.train.AdamOptimizer(0.1), adam),
    ("rmsprop", lambda: tf.train.RMSPropOptimizer(0.1), rmsprop),
    ("rmsprop_momentum_centered", lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
     lambda s: rmsprop(s, mu=0.5, centered=True)),
    ("adagrad", lambda: tf.train.AdagradOptimizer(0.1), adagrad),
]


@pytest.mark.parametrize("name,make,rule", CASES, ids=[c[0] for c in CASES])
def test_optimizer_follows_tf1_update_rule(name, make, rule):
    g = weft.Graph()
    with g.as_default():
        w = tf.Variable(W0, name="w")
        loss = 0.5 * tf.reduce_sum(tf.square(w - T))
        step = tf.train.get_or_create_global_step()
        train_op = make().minimize(loss, global_step=step)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            for k in range(1, 4):
                sess.run(train_op)
                np.testing.assert_allclose(sess.run(w), rule(k), rtol=1e-9, atol=1e-12, err_msg="step %d" % k)
            assert sess.run(step) == 3


# TensorFlow 2.21 (tensorflow.compat.v1, CPU, graph mode) ran this very program (linear regression,
# three steps) and printed these values of w and b; kept here as data.
TF_RESULTS = {
    "GradientDescent": ([0.6126111745834351, -0.09616667777299881], 0.1380000114440918),
    "Momentum": ([0.7146111130714417, 0.29083332419395447], 0.27300000190734863),
    "Nesterov": ([0.6086945533752441, 0.26446783542633057], 0.16057200729846954),
    "Adam": ([0.6839251518249512, -0.20490916073322296], 0.25349682569503784),
    "RMSProp": ([0.6092981696128845, -0.130037322640419], 0.14599502086639404),
    "RMSPropCentered": ([0.6410221457481384, 0.041200339794158936], 0.2000374048948288),
    "Adagrad": ([0.6019589900970459, -0.29259181022644043], 0.15489080548286438),
}
MAKERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "Nesterov": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "RMSPropCentered": lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.5, centered=True),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
}


@pytest.mark.parametrize("name", sorted(TF_RESULTS))
def test_tf1_program_matches_tensorflow(name):
    X = np.array([[1., 2.], [3., -1.], [0.5, 0.5]], np.float32)
    Y = np.array([[1.], [2.], [0.]], np.float32)
    tf.reset_default_graph()
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.Variable(np.array([[0.5], [-0.5]], np.float32), name="w")
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.losses.mean_squared_error(y, tf.matmul(x, w) + b)
    gs = tf.train.get_or_create_global_step()
    op = MAKERS[name]().minimize(loss, global_step=gs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(op, {x: X, y: Y})
        want_w, want_b = TF_RESULTS[name]
        np.testing.assert_allclose(sess.run(w).ravel(), want_w, rtol=2e-6)
        np.testing.assert_allclose(sess.run(b), [want_b], rtol=2e-6)
        assert sess.run(gs) == 3


def test_replica_device_setter_round_robins_variables_over_ps_tasks():
    g = weft.Graph()
    cluster = {"ps": ["h:1", "h:2"], "worker": ["h:3", "h:4"]}
    assert tf.train.replica_device_setter(cluster={"worker": ["h:3"]}) is None  # no ps task: no function
    with g.as_default(), tf.device(tf.train.replica_device_setter(cluster=cluster, worker_device="/job:worker/task:1")):
        a = tf.Variable(np.zeros(2, np.float32), name="a")
        b = tf.get_variable("b", [2])
        c = tf.Variable(np.zeros(2, np.float32), name="c")
        with tf.device("/job:ps/task:1"):
            pinned = tf.Variable(np.zeros(2, np.float32), name="pinned")
        with tf.device("/device:CPU:0"):
            y = tf.add(a, b, name="y")
        slots = tf.train.MomentumOptimizer(0.1, 0.9)
        slots.minimize(tf.reduce_sum(y * c))
    assert [v.op.device for v in (a, b, c)] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]
    assert pinned.op.device == "/job:ps/task:1"                       # an inner block wins
    assert a.initializer.device == "/job:ps/task:0"                  # initializers stay with their variable
    assert y.op.device == "/job:worker/task:1/device:CPU:0"
    assert slots.get_slot(b, "momentum").op.device == "/job:ps/task:1"


def test_compute_and_apply_gradients_and_slots():
    g = weft.Graph()
    with g.as_default():
        w = tf.Variable(np.array([1.0, 2.0], np.float32), name="w")
        unused = tf.Variable(np.zeros(2, np.float32), name="unused")
        loss = tf.reduce_sum(w * w)
        opt = tf.train.AdamOptimizer(0.01)
        gv = opt.compute_gradients(loss)
        assert [v.op.name for _, v in gv] == ["w", "unused"]
        assert gv[1][0] is None  # the loss does not depend on it
        train_op = opt.apply_gradients(gv)
        assert opt.get_slot(w, "m").op.name == "w/Adam" and opt.get_slot(w, "v").op.name == "w/Adam_1"
        assert opt.get_slot(unused, "m") is None
        names = {v.op.name for v in tf.global_variables()}
        assert {"w", "unused", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power"} <= names
        assert {v.op.name for v in tf.trainable_variables()} == {"w", "unused"}
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            grads = sess.run(gv[0][0])
            np.testing.assert_allclose(grads, [2.0, 4.0])
            sess.run(train_op)
            np.testing.assert_allclose(sess.run(opt._beta1_power), 0.9 ** 2, rtol=1e-6)
        with pytest.raises(ValueError, match="No gradients provided"):
            tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(tf.constant([1.0])), var_list=[unused])


def test_minimize_and_saver_work_outside_the_variables_default_block(tmp_path):
    g = weft.Graph()
    with g.as_default():
        w = tf.Variable(np.array([1.0, -1.0], np.float32), name="w")
        loss = tf.reduce_sum(w * w)
    train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss)  # built into w's graph
    saver = tf.train.Saver([w])
    assert train_op.graph is g and tf.get_default_graph() is not g
    with tf.Session(graph=g) as sess:
        sess.run(w.initializer)
        sess.run(train_op)
        np.testing.assert_allclose(sess.run(w), [0.5, -0.5])        # w - 0.25 * 2w
        saver.restore(sess, saver.save(sess, str(tmp_path / "m")))


def test_exponential_decay_follows_the_global_step():
    g = weft.Graph()
    with g.as_default():
        step = tf.train.get_or_create_global_step()
        assert tf.train.get_global_step() is not None and step.op.name == "global_step"
        with pytest.raises(ValueError, match="already exists"):
            tf.train.create_global_step()
        lr = tf.train.exponential_decay(0.1, step, decay_steps=2, decay_rate=0.5, staircase=True)
        smooth = tf.train.exponential_decay(0.1, step, decay_steps=2, decay_rate=0.5)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(step.assign(3))
            np.testing.assert_allclose(sess.run(lr), 0.1 * 0.5 ** 1, rtol=1e-6)
            np.testing.assert_allclose(sess.run(smooth), 0.1 * 0.5 ** 1.5, rtol=1e-6)


# ---- Saver ---------------------------------------------------------------------------------------

def test_saver_round_trip_latest_checkpoint_and_max_to_keep(tmp_path):
    g = weft.Graph()
    with g.as_default():
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
        with tf.variable_scope("layer"):
            b = tf.get_variable("b", [3], initializer=tf.constant_initializer(0.5))
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w) + tf.reduce_sum(b), global_step=step)
        saver = tf.train.Saver(max_to_keep=2)
        assert tf.train.latest_checkpoint(str(tmp_path)) is None
        prefix = str(tmp_path / "model.ckpt")
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            saved = {}
            for i in range(3):
                sess.run(train_op)
                path = saver.save(sess, prefix, global_step=step)
                assert path == "%s-%d" % (prefix, i + 1)
                saved[path] = sess.run([w, b, step])
            assert tf.train.latest_checkpoint(str(tmp_path)) == prefix + "-3"
            assert saver.last_checkpoints == [prefix + "-2", prefix + "-3"]
            assert not tf.train.checkpoint_exists(prefix + "-1")  # deleted: max_to_keep=2
            state = tf.train.get_checkpoint_state(str(tmp_path))
            assert state.all_model_checkpoint_paths == [prefix + "-2", prefix + "-3"]
            with open(tmp_path / "checkpoint") as f:
                assert f.readline().strip() == 'model_checkpoint_path: "model.ckpt-3"'
            names = dict(tf.train.list_variables(str(tmp_path)))
            assert names["w"] == [2, 3] and names["layer/b"] == [3] and "w/Momentum" in names
            sess.run(train_op)
            saver.restore(sess, prefix + "-2")
            for got, want in zip(sess.run([w, b, step]), saved[prefix + "-2"]):
                np.testing.assert_array_equal(got, want)
        # A fresh session restores without running the initializers (the slots come back too).
        with tf.Session(graph=g) as sess:
            saver.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
            np.testing.assert_array_equal(sess.run(w), saved[prefix + "-3"][0])
            sess.run(train_op)


def test_saver_errors_name_what_is_wrong(tmp_path):
    g = weft.Graph()
    with g.as_default():
        w = tf.Variable(np.zeros((2, 2), np.float32), name="w")
        saver = tf.train.Saver([w])
        other = tf.Variable(np.zeros(3, np.float32), name="other")
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "a"))
            assert path == str(tmp_path / "a")
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                saver.restore(sess, str(tmp_path / "missing"))
            with pytest.raises(weft.errors.NotFoundError, match="Key other not found"):
                tf.train.Saver([other]).restore(sess, path)
            with pytest.raises(weft.errors.InvalidArgumentError, match=r"variable other has shape \(3,\) .* shape \(2, 2\) under 'w'"):
                tf.train.Saver({"w": other}).restore(sess, path)
            with pytest.raises(ValueError, match="Parent directory"):
                saver.save(sess, str(tmp_path / "no" / "such" / "dir" / "m"))
            data = bytearray(open(path + ".weft", "rb").read())
            data[-6] ^= 0xFF
            open(path + ".weft", "wb").write(bytes(data))
            with pytest.raises(weft.errors.DataLossError, match="a.weft"):
                saver.restore(sess, path)


# ---- sessions -------------------------------------------------------------------------------------

def test_session_argument_order_and_config():
    g = weft.Graph()
    with g.as_default():
        c = tf.constant(3.0) * 2.0
    cfg = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False, intra_op_parallelism_threads=1,
                         inter_op_parallelism_threads=1)
    cfg.gpu_options.allow_growth = True
    with tf.Session("", g, cfg) as s1, tf.Session(graph=g, config=cfg) as s2, tf.Session(g) as s3:
        assert s1.run(c) == s2.run(c) == s3.run(c) == 6.0
        assert s1.graph is g and s3.graph is g
    with pytest.raises(TypeError, match="target string"):
        tf.Session(42)
    with pytest.raises(TypeError, match="two graphs"):
        tf.Session(g, graph=g)
    with pytest.raises(NotImplementedError, match="no eager execution"):
        tf.enable_eager_execution()
    assert tf.executing_eagerly() is False
    sess = tf.InteractiveSession(graph=g)
    try:
        assert c.eval() == 6.0
    finally:
        sess.close()


def test_log_device_placement_prints_each_node():
    script = ("import weft.compat.v1 as tf\nx = tf.placeholder(tf.float32, name='x')\ny = tf.add(x, x, name='y')\n"
              "with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as s: s.run(y, {x: 1.0})\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 0, r.stderr
    assert "y: (Add): " in r.stderr and "CPU:0" in r.stderr


# ---- distributed ---------------------------------------------------------------------------------

from test_distribute_server import cluster  # noqa: E402,F401 - the ps-task fixture (a child process)


@pytest.mark.skipif(not hasattr(weft._weft.distribute, "Server"), reason="built without UCX")
def test_optimizer_updates_variables_on_a_ps_task_through_session_target(cluster):
    spec, _ = cluster
    server = weft.distribute.Server(spec, job_name="worker", task_index=0, threads=1)
    xv = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    yv = np.array([[1.0], [0.0]], np.float32)

    def build(device):
        g = weft.Graph()
        with g.as_default(), tf.device(device):  # TF1's between-graph pattern: variables to ps, the rest here
            x = tf.placeholder(tf.float32, [None, 2])
            w = tf.Variable(np.array([[0.5], [-0.5]], np.float32), name="w")
            step = tf.train.get_or_create_global_step()
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - yv))
            train_op = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
            init = tf.global_variables_initializer()
        return g, x, w, step, train_op, init

    g, x, w, step, train_op, init = build(tf.train.replica_device_setter(
        cluster=tf.train.ClusterSpec(spec), worker_device="/job:worker/task:0"))
    gl, xl, wl, stepl, train_opl, initl = build(None)
    assert w.op.device == step.op.device == "/job:ps/task:0"
    assert g.get_operation_by_name("MatMul").device == "/job:worker/task:0"
    updates = [op for op in g.get_operations() if op.type in ("ApplyAdam", "AssignAdd")]
    assert updates and all(op.device.startswith("/job:ps/task:0") for op in updates)
    assert g.get_operation_by_name("w/Adam").device.startswith("/job:ps/task:0")
    with tf.Session(server.target, g) as remote, tf.Session(graph=gl) as local:
        remote.run(init)
        local.run(initl)
        for _ in range(3):
            remote.run(train_op, {x: xv})
            local.run(train_opl, {xl: xv})
        np.testing.assert_allclose(remote.run(w), local.run(wl), rtol=1e-6)
        assert remote.run(step) == 3


# ---- MonitoredTrainingSession and hooks ------------------------------------------------------------

def regression_graph():
    g = weft.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(np.zeros((2, 1), np.float32), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        tf.summary.scalar("loss", loss)
        step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    xv = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    return g, {x: xv, y: xv @ np.array([[1.0], [2.0]], np.float32)}, loss, step, train_op


def test_monitored_training_session_stops_saves_and_resumes(tmp_path, caplog):
    g, feed, loss, step, train_op = regression_graph()

    class Count(tf.train.SessionRunHook):
        def begin(self):
            self.calls, self.seen = 0, []

        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"step": step})

        def after_run(self, run_context, run_values):
            self.calls += 1
            self.seen.append(int(run_values.results["step"]))

    count = Count()
    ckpt = str(tmp_path / "run")
    with g.as_default():
        hooks = [tf.train.StopAtStepHook(last_step=12), tf.train.NanTensorHook(loss), count,
                 tf.train.LoggingTensorHook({"loss": loss}, every_n_iter=5)]
        with caplog.at_level("INFO", logger="weft"):
            with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, save_checkpoint_steps=5,
                                                   save_summaries_steps=4, hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run(train_op, feed)
        assert count.calls == 12 and count.seen == list(range(12))
        assert sum("loss = " in r.getMessage() for r in caplog.records) == 3  # iterations 0, 5, 10
        names = os.listdir(ckpt)
        assert {"model.ckpt-0.weft", "model.ckpt-5.weft", "model.ckpt-10.weft", "model.ckpt-12.weft"} <= set(names)
        assert any(n.startswith("events.out.tfevents.") for n in names)
        assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-12")
        # A second session restores step 12 and the trained w; running out of input ends it cleanly.
        with tf.train.MonitoredTrainingSession(checkpoint_dir=ckpt, hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
            assert sess.run(step, feed) == 12
            while not sess.should_stop():
                sess.run(train_op, feed)
            assert sess.run(step, feed) == 15
            raise weft.errors.OutOfRangeError("end of input", "OutOfRange")
        assert tf.train.latest_checkpoint(ckpt).endswith("model.ckpt-15")  # saved by the hook's end()


def test_nan_tensor_hook_stops_training():
    g, feed, loss, step, train_op = regression_graph()
    with g.as_default():
        bad = loss * np.float32(np.nan)
        with pytest.raises(tf.train.NanLossDuringTrainingError):
            with tf.train.MonitoredTrainingSession(hooks=[tf.train.NanTensorHook(bad)]) as sess:
                sess.run(train_op, feed)
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.NanTensorHook(bad, fail_on_nan_loss=False)]) as sess:
            sess.run(train_op, feed)
            assert sess.should_stop()
        with pytest.raises(ValueError, match="num_steps or last_step"):
            tf.train.StopAtStepHook()


DIST_SCRIPT = """
import numpy as np
import weft.compat.v1 as tf
flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", ""); flags.DEFINE_string("worker_hosts", "", "")
flags.DEFINE_string("job_name", "", ""); flags.DEFINE_integer("task_index", 0, "")
flags.DEFINE_string("ckpt", "", "")
FLAGS = flags.FLAGS
def main(_):
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        print("ready", flush=True)
        server.join()
        return
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % FLAGS.task_index,
                                                  cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 2])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([2, 1]))
        b = tf.Variable(tf.zeros([1]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)
    X = np.random.default_rng(FLAGS.task_index).random((32, 2))
    Y = X @ [[1.0], [2.0]] + 0.5
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=FLAGS.task_index == 0,
                                           checkpoint_dir=FLAGS.ckpt if FLAGS.task_index == 0 else None,
                                           hooks=[tf.train.StopAtStepHook(last_step=100)]) as sess:
        first = None
        while not sess.should_stop():
            _, l = sess.run([train_op, loss], {x: X, y: Y})
            first = l if first is None else first
    print("done %.6f %.6f" % (first, l), flush=True)
if __name__ == "__main__":
    tf.app.run()
"""


@pytest.mark.skipif(not hasattr(weft._weft.distribute, "Server"), reason="built without UCX")
def test_tf1_between_graph_replication_with_monitored_training_sessions(tmp_path):
    """TF1's published between-graph pattern, unchanged but for the import: a ps task and two
    workers (processes), replica_device_setter, MonitoredTrainingSession(master=server.target)."""
    from conftest import free_ports
    ps, w0, w1 = free_ports(3)
    hosts = ["--ps_hosts=127.0.0.1:%d" % ps,
             "--worker_hosts=127.0.0.1:%d,127.0.0.1:%d" % (w0, w1), "--ckpt=%s" % (tmp_path / "c")]
    script = tmp_path / "dist.py"
    script.write_text(DIST_SCRIPT)
    env = dict(os.environ, UCX_TLS="tcp,self", PYTHONPATH=os.pathsep.join(sys.path))
    ps = subprocess.Popen([sys.executable, str(script), "--job_name=ps"] + hosts, env=env, stdout=subprocess.PIPE,
                          text=True)
    workers = []
    try:
        assert ps.stdout.readline().strip() == "ready"
        workers = [subprocess.Popen([sys.executable, str(script), "--job_name=worker", "--task_index=%d" % i] + hosts,
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                   for i in (1, 0)]  # the non-chief first: it waits for the chief to initialize
        outs = [w.communicate(timeout=120)[0] for w in workers]
    finally:
        for p in workers + [ps]:
            p.kill()
            p.wait(timeout=20)
    losses = []
    for w, out in zip(workers, outs):
        assert w.returncode == 0, out
        losses.append([float(v) for v in out.strip().splitlines()[-1].split()[1:]])
    # Whichever worker steps first starts from zeros (loss about 6); both end on the shared, trained weights.
    assert max(losses[0][0], losses[1][0]) > 1.0 and losses[0][1] < 0.05 and losses[1][1] < 0.05, losses
    assert tf.train.latest_checkpoint(str(tmp_path / "c")) is not None
    assert tf.train.load_variable(str(tmp_path / "c"), "global_step") >= 100


def test_import_meta_graph_restores_into_a_fresh_default_graph(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.get_variable("w", [2, 1], initializer=tf.constant_initializer([[1.0], [2.0]]))
    y = tf.identity(tf.matmul(x, w), name="y")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(y), global_step=step)
    saver = tf.train.Saver()
    xv = np.array([[1.0, 1.0]], np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, {x: xv})
        want = sess.run(y, {x: xv})
        path = saver.save(sess, prefix, global_step=step)
    assert os.path.isfile(path + ".meta")
    with pytest.raises(ValueError, match="must be empty"):
        tf.train.import_meta_graph(path + ".meta")
    tf.reset_default_graph()
    loaded = tf.train.import_meta_graph(path + ".meta")
    g = tf.get_default_graph()
    with tf.Session() as sess:
        loaded.restore(sess, tf.train.latest_checkpoint(str(tmp_path)))
        got = sess.run(g.get_tensor_by_name("y:0"), {g.get_tensor_by_name("x:0"): xv})
        np.testing.assert_array_equal(got, want)
        assert sess.run("global_step:0") == 1
        sess.run(g.get_operation_by_name(train_op.name), {"x:0": xv})   # training goes on
        assert sess.run("global_step:0") == 2
    tf.reset_default_graph()
