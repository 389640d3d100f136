"""Ctrl-C: SIGINT during fit (or Session.run) stops the step promptly with KeyboardInterrupt, and
the model / session stays usable. Runs the training in a subprocess and signals it."""
import signal
import subprocess
import sys
import time

import pytest

FIT_SCRIPT = r"""
import sys, time
import numpy as np
from weft import keras
from weft.keras import layers

rng = np.random.default_rng(0)
x = rng.random((4096, 28, 28, 1), dtype=np.float32)
y = rng.integers(0, 10, 4096).astype(np.int32)
model = keras.Sequential([layers.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)),
                          layers.MaxPooling2D(), layers.Flatten(), layers.Dense(10)])
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd",
              metrics=["accuracy"])

class Slow(keras.callbacks.Callback):  # Python code runs between steps: the signal may land in it
    def on_train_batch_end(self, batch, logs=None):
        time.sleep(0.002)

callbacks = [Slow()] if "--with-callback" in sys.argv else []
print("READY", flush=True)
start = time.time()
try:
    model.fit(x, y, batch_size=64, epochs=1000, verbose=0, callbacks=callbacks)
    print("fit ended without an interrupt", flush=True)
    sys.exit(3)
except KeyboardInterrupt:
    print("INTERRUPTED after %.2fs, step %d" % (time.time() - start, model.step), flush=True)
logs = model.evaluate(x[:256], y[:256], verbose=0)
print("EVALUATED loss=%.4f" % logs[0], flush=True)
model.fit(x[:128], y[:128], epochs=1, verbose=0)
print("FIT AGAIN ok", flush=True)
"""

RUN_SCRIPT = r"""
import sys, time
import numpy as np
import weft

x = weft.placeholder(weft.float32, shape=(1024, 1024))
y = x
for _ in range(300):
    y = weft.matmul(y, x) * 0.001
with weft.Session(inter_op_threads=1, intra_op_threads=1) as sess:
    a = np.ones((1024, 1024), np.float32)
    print("READY", flush=True)
    start = time.time()
    try:
        sess.run(y, feed_dict={x: a})
        print("run ended without an interrupt", flush=True)
        sys.exit(3)
    except KeyboardInterrupt:
        print("INTERRUPTED after %.2fs" % (time.time() - start), flush=True)
    print("AGAIN", sess.run(x[0, 0] + 1.0, feed_dict={x: a}), flush=True)
"""


def run_and_interrupt(script, delay, *args):
    # SIGINT back to its default in the child: a test run started in the background of a
    # non-interactive shell (a CI runner's `cmd &`) inherits SIGINT ignored, and Python then never
    # installs its KeyboardInterrupt handler.
    p = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = p.stdout.readline()
        assert line.strip() == "READY", line + p.stderr.read()
        time.sleep(delay)
        sent = time.time()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err, time.time() - sent


@pytest.mark.parametrize("args", [(), ("--with-callback",)], ids=["cpp", "python_callback"])
def test_sigint_during_fit_leaves_the_model_usable(args):
    code, out, err, _ = run_and_interrupt(FIT_SCRIPT, 1.0, *args)
    assert code == 0, out + err
    assert "INTERRUPTED" in out and "EVALUATED" in out and "FIT AGAIN ok" in out, out + err
    secs = float(out.split("INTERRUPTED after ")[1].split("s")[0])
    assert secs < 10


def test_sigint_during_session_run_cancels_the_step():
    code, out, err, _ = run_and_interrupt(RUN_SCRIPT, 0.5)
    assert code == 0, out + err
    assert "INTERRUPTED" in out and "AGAIN 2.0" in out, out + err
    # 300 chained 1024^3 products take far longer than the time to notice and cancel.
    secs = float(out.split("INTERRUPTED after ")[1].split("s")[0])
    assert secs < 5, out
