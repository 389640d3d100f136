"""A TensorFlow 1 graph-mode program, run by weft with its import line changed.

    .venv/bin/python examples/python/tf1_graph_mode.py [--optimizer adam|sgd|momentum|rmsprop|adagrad]
    tensorboard --logdir logs/tf1_graph_mode        # (PyPI tensorboard) the loss curves and the graph

A two-layer network on Fashion-MNIST with placeholders, tf.layers.dense, a TF1 optimizer stepping
the global step, summaries written with FileWriter, and a Saver that checkpoints every epoch; at
the end a fresh session restores the latest checkpoint and scores the test set with it.
"""
import argparse
import os

import numpy as np
import weft.compat.v1 as tf          # was: import tensorflow.compat.v1 as tf
from weft import keras               # for the data only: was tf.keras

parser = argparse.ArgumentParser()
parser.add_argument("--optimizer", default="adam", choices=["adam", "sgd", "momentum", "rmsprop", "adagrad"])
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--logdir", default=os.path.join("logs", "tf1_graph_mode"))
args = parser.parse_args()

tf.disable_eager_execution()
tf.disable_v2_behavior()
tf.logging.set_verbosity(tf.logging.ERROR)

(x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
x_train = x_train[:12000].reshape(-1, 784).astype(np.float32) / 255.0
y_train = y_train[:12000].astype(np.int32)
x_test = x_test.reshape(-1, 784).astype(np.float32) / 255.0
y_test = y_test.astype(np.int32)

tf.reset_default_graph()
tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [None, 784], name="images")
y = tf.placeholder(tf.int32, [None], name="labels")
hidden = tf.layers.dense(x, 128, activation=tf.nn.relu, name="hidden")
logits = tf.layers.dense(hidden, 10, name="logits")
with tf.name_scope("metrics"):
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    correct = tf.equal(tf.cast(tf.argmax(logits, 1), tf.int32), y)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)

global_step = tf.train.get_or_create_global_step()
optimizer = {
    "adam": lambda: tf.train.AdamOptimizer(learning_rate=1e-3),
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.5),
    "momentum": lambda: tf.train.MomentumOptimizer(0.05, momentum=0.9, use_nesterov=True),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(1e-3),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
}[args.optimizer]()
train_op = optimizer.minimize(loss, global_step=global_step)
summaries = tf.summary.merge_all()
saver = tf.train.Saver(max_to_keep=3)
checkpoint_dir = os.path.join(args.logdir, "checkpoints")
os.makedirs(checkpoint_dir, exist_ok=True)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(os.path.join(args.logdir, "train"), sess.graph)
    rng = np.random.default_rng(0)
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))
        for i in range(0, len(order), 100):
            batch = order[i:i + 100]
            summary, step, _ = sess.run([summaries, global_step, train_op], {x: x_train[batch], y: y_train[batch]})
            if step % 20 == 0:
                writer.add_summary(summary, step)
        test_loss, test_acc = sess.run([loss, accuracy], {x: x_test, y: y_test})
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="test_accuracy", simple_value=test_acc)]), step)
        path = saver.save(sess, os.path.join(checkpoint_dir, "model.ckpt"), global_step=global_step)
        print("epoch %d: step %d, test loss %.4f, test accuracy %.4f, saved %s" %
              (epoch + 1, sess.run(global_step), test_loss, test_acc, path))
    writer.close()

# A new session starts with uninitialized variables: restoring the checkpoint is all it needs.
with tf.Session() as sess:
    latest = tf.train.latest_checkpoint(checkpoint_dir)
    saver.restore(sess, latest)
    print("restored %s at step %d: test accuracy %.4f" %
          (os.path.basename(latest), sess.run(global_step), sess.run(accuracy, {x: x_test, y: y_test})))
print("TensorBoard logs in %s (tensorboard --logdir %s)" % (args.logdir, args.logdir))
