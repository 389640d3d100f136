"""Logistic regression with the graph API: placeholders, a variable, gradients and a Session loop.

    .venv/bin/python examples/python/graph_api.py

Learns to tell two Fashion-MNIST classes apart (T-shirt/top vs trouser) from raw pixels.
"""
import os
import tempfile

import numpy as np
import weft
from weft import keras

(x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()


def two_classes(x, y):
    keep = (y == 0) | (y == 1)
    return (x[keep].reshape(-1, 784) / np.float32(255)), y[keep].astype(np.float32).reshape(-1, 1)


x_train, y_train = two_classes(x_train, y_train)
x_test, y_test = two_classes(x_test, y_test)

graph = weft.Graph()
with graph.as_default():
    x = weft.placeholder(weft.float32, shape=(None, 784), name="x")
    y = weft.placeholder(weft.float32, shape=(None, 1), name="y")
    lr = weft.placeholder(weft.float32, shape=(), name="lr")
    with weft.name_scope("logreg"):
        w = weft.Variable(np.zeros((784, 1), np.float32), name="w")
        b = weft.Variable(np.zeros((1,), np.float32), name="b")
        logits = x @ w + b
        p = weft.sigmoid(logits)
        # Binary cross-entropy, written out: -(y log p + (1 - y) log(1 - p)).
        eps = 1e-7
        loss = -weft.reduce_mean(y * weft.log(p + eps) + (1.0 - y) * weft.log(1.0 - p + eps))
        accuracy = weft.reduce_mean(weft.cast(weft.equal(weft.cast(p > 0.5, weft.float32), y), weft.float32))
    dw, db = weft.gradients(loss, [w, b])
    train = weft.group(w.assign_sub(lr * dw), b.assign_sub(lr * db))
    init = weft.global_variables_initializer()

with weft.Session(graph) as sess:
    sess.run(init)
    rng = np.random.default_rng(0)
    for epoch in range(3):
        order = rng.permutation(len(x_train))
        for i in range(0, len(order), 100):
            batch = order[i:i + 100]
            sess.run(train, feed_dict={x: x_train[batch], y: y_train[batch], lr: 0.5})
        l, a = sess.run([loss, accuracy], feed_dict={x: x_test, y: y_test})
        print("epoch %d: test loss %.4f, test accuracy %.4f" % (epoch + 1, l, a))

# The graph as a file (and back), and as a picture: `dot -Tpng logreg.dot -o logreg.png`.
path = os.path.join(tempfile.gettempdir(), "weft_logreg.weftgraph")
graph.save(path)
print("graph saved to %s: %d nodes, read back: %d nodes, DOT: %d lines" %
      (path, graph.num_nodes, weft.Graph.load(path).num_nodes, len(graph.to_dot().splitlines())))
