"""tf.nn.conv3d / max_pool3d / avg_pool3d / separable_conv2d / conv1d_transpose and the Keras
volumetric layers against naive numpy loops of TF's definitions (SAME: total padding
max((out - 1) * stride + (k - 1) * dilation + 1 - in, 0), the smaller half before; pools ignore
the padding); gradients against finite differences of those loops."""
import numpy as np
import pytest

import weft as tf


def same_plan(n, k, s, d):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return out, total // 2


def conv3d_ref(x, w, strides, padding, dil=(1, 1, 1)):
    """Cross-correlation of x [N, D, H, W, C] with w [kd, kh, kw, C, F]."""
    n = x.shape[0]
    outs, befores = [], []
    for axis in range(3):
        size, k, s, d = x.shape[1 + axis], w.shape[axis], strides[axis], dil[axis]
        if padding == "SAME":
            o, b = same_plan(size, k, s, d)
        else:
            o, b = (size - (k - 1) * d - 1) // s + 1, 0
        outs.append(o)
        befores.append(b)
    y = np.zeros((n,) + tuple(outs) + (w.shape[4],))
    for z in range(outs[0]):
        for i in range(outs[1]):
            for j in range(outs[2]):
                acc = np.zeros((n, w.shape[4]))
                for a in range(w.shape[0]):
                    for b in range(w.shape[1]):
                        for c in range(w.shape[2]):
                            p = (z * strides[0] + a * dil[0] - befores[0], i * strides[1] + b * dil[1] - befores[1],
                                 j * strides[2] + c * dil[2] - befores[2])
                            if all(0 <= p[t] < x.shape[1 + t] for t in range(3)):
                                acc += x[:, p[0], p[1], p[2], :] @ w[a, b, c]
                y[:, z, i, j, :] = acc
    return y


def pool3d_ref(x, k, s, padding, is_max):
    outs, befores = [], []
    for axis in range(3):
        size = x.shape[1 + axis]
        if padding == "SAME":
            o, b = same_plan(size, k[axis], s[axis], 1)
        else:
            o, b = (size - k[axis]) // s[axis] + 1, 0
        outs.append(o)
        befores.append(b)
    y = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[4],))
    for z in range(outs[0]):
        for i in range(outs[1]):
            for j in range(outs[2]):
                lo = [(z, i, j)[t] * s[t] - befores[t] for t in range(3)]
                win = x[:, max(lo[0], 0):lo[0] + k[0], max(lo[1], 0):lo[1] + k[1], max(lo[2], 0):lo[2] + k[2], :]
                y[:, z, i, j, :] = win.max(axis=(1, 2, 3)) if is_max else win.mean(axis=(1, 2, 3))
    return y


RS = np.random.RandomState(0)
X = RS.rand(2, 5, 6, 7, 3)
W = RS.rand(3, 2, 3, 3, 4) - 0.5


@pytest.mark.parametrize("strides,padding,dil", [((1, 1, 1), "VALID", (1, 1, 1)), ((2, 2, 2), "SAME", (1, 1, 1)),
                                                 ((1, 2, 1), "SAME", (1, 1, 1)), ((1, 1, 1), "VALID", (2, 1, 1)),
                                                 ((3, 1, 2), "VALID", (1, 1, 1))])
def test_conv3d_against_loops(graph, sess, strides, padding, dil):
    got = sess.run(tf.nn.conv3d(X, W, strides=[1, *strides, 1], padding=padding, dilations=[1, *dil, 1]))
    np.testing.assert_allclose(got, conv3d_ref(X, W, strides, padding, dil), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("k,s,padding", [((2, 2, 2), (2, 2, 2), "VALID"), ((3, 3, 3), (2, 2, 2), "SAME"),
                                         ((2, 3, 1), (1, 2, 3), "SAME"), ((3, 2, 2), (1, 1, 1), "VALID")])
def test_pool3d_against_loops(graph, sess, k, s, padding):
    mx, av = sess.run([tf.nn.max_pool3d(X, [1, *k, 1], [1, *s, 1], padding),
                       tf.nn.avg_pool3d(X, [1, *k, 1], [1, *s, 1], padding)])
    np.testing.assert_allclose(mx, pool3d_ref(X, k, s, padding, True), rtol=1e-12)
    np.testing.assert_allclose(av, pool3d_ref(X, k, s, padding, False), rtol=1e-10)


def test_conv3d_and_pool_gradients_by_finite_differences(graph, sess):
    x0 = RS.rand(1, 3, 3, 4, 2)
    w0 = RS.rand(2, 2, 2, 2, 1) - 0.5
    x, w = tf.constant(x0), tf.constant(w0)
    y = tf.nn.conv3d(x, w, [1, 2, 1, 1, 1], "SAME")
    weights = RS.rand(*sess.run(y).shape)
    loss = tf.reduce_sum(y * weights) + tf.reduce_sum(tf.nn.avg_pool3d(x, 2, 1, "SAME") * 1.5) + \
        tf.reduce_sum(tf.nn.max_pool3d(x, 2, 2, "VALID") * 0.5)
    gx, gw = sess.run(tf.gradients(loss, [x, w]))

    def f(xv, wv):
        return (conv3d_ref(xv, wv, (2, 1, 1), "SAME") * weights).sum() + \
            1.5 * pool3d_ref(xv, (2, 2, 2), (1, 1, 1), "SAME", False).sum() + \
            0.5 * pool3d_ref(xv, (2, 2, 2), (2, 2, 2), "VALID", True).sum()
    eps = 1e-6
    for idx in [(0, 0, 0, 0, 0), (0, 1, 2, 3, 1), (0, 2, 1, 0, 0), (0, 1, 1, 1, 1)]:
        d = np.zeros_like(x0)
        d[idx] = eps
        assert abs((f(x0 + d, w0) - f(x0 - d, w0)) / (2 * eps) - gx[idx]) < 1e-6
    for idx in [(0, 0, 0, 0, 0), (1, 1, 1, 1, 0), (1, 0, 1, 0, 0)]:
        d = np.zeros_like(w0)
        d[idx] = eps
        assert abs((f(x0, w0 + d) - f(x0, w0 - d)) / (2 * eps) - gw[idx]) < 1e-6


def test_conv3d_errors(graph):
    with pytest.raises(ValueError, match="needs an input \\[batch, depth, height, width, channels\\]"):
        tf.nn.conv3d(np.zeros((2, 3, 3, 3)), W, [1, 1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="expect 3 input channels, the input .* has 2"):
        tf.nn.conv3d(np.zeros((1, 4, 4, 4, 2)), W, [1, 1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="depth window 3 .* larger than the input depth 2"):
        tf.nn.conv3d(np.zeros((1, 2, 4, 4, 3)), W, [1, 1, 1, 1, 1], "VALID")
    with pytest.raises(NotImplementedError, match="NDHWC only"):
        tf.nn.conv3d(X, W, [1, 1, 1, 1, 1], "VALID", data_format="NCDHW")


def test_separable_conv2d_and_conv1d_transpose(graph, sess):
    x = RS.rand(2, 5, 6, 3)
    dw = RS.rand(3, 3, 3, 2)
    pw = RS.rand(1, 1, 6, 4)
    got = sess.run(tf.nn.separable_conv2d(x, dw, pw, strides=[1, 1, 1, 1], padding="VALID"))
    depth = np.zeros((2, 3, 4, 6))
    for i in range(3):
        for j in range(4):
            win = x[:, i:i + 3, j:j + 3, :]  # [2, 3, 3, 3]
            depth[:, i, j, :] = np.einsum("bhwc,hwcm->bcm", win, dw).reshape(2, 6)
    np.testing.assert_allclose(got, depth @ pw[0, 0], rtol=1e-10)
    # conv1d_transpose: out[t * s + k - before] += x[t] @ w[k]^T, w [K, C_out, C_in].
    xs, w = RS.rand(2, 4, 3), RS.rand(3, 5, 3)
    for padding in ("VALID", "SAME"):
        out_len = 4 * 2 if padding == "SAME" else (4 - 1) * 2 + 3
        before = max((4 - 1) * 2 + 3 - out_len, 0) // 2 if padding == "SAME" else 0
        ref = np.zeros((2, out_len, 5))
        for t in range(4):
            for k in range(3):
                o = t * 2 + k - before
                if 0 <= o < out_len:
                    ref[:, o, :] += xs[:, t, :] @ w[k].T
        got = sess.run(tf.nn.conv1d_transpose(xs, w, [2, out_len, 5], strides=2, padding=padding))
        np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_keras_volumetric_layers():
    x = RS.rand(2, 4, 5, 6, 3).astype(np.float32)
    conv = tf.keras.layers.Conv3D(4, (3, 2, 2), padding="same", activation="relu")
    model = tf.keras.Sequential([tf.keras.Input((4, 5, 6, 3)), conv])
    got = model.predict(x, verbose=0)
    kernel, bias = conv.get_weights()
    assert kernel.shape == (3, 2, 2, 3, 4) and bias.shape == (4,)
    np.testing.assert_allclose(got,
                               np.maximum(conv3d_ref(x.astype(np.float64), kernel, (1, 1, 1), "SAME") + bias, 0),
                               rtol=1e-4, atol=1e-5)
    for layer, ref in [(tf.keras.layers.MaxPooling3D(2), pool3d_ref(x, (2, 2, 2), (2, 2, 2), "VALID", True)),
                       (tf.keras.layers.AveragePooling3D((2, 3, 2), strides=1, padding="same"),
                        pool3d_ref(x, (2, 3, 2), (1, 1, 1), "SAME", False)),
                       (tf.keras.layers.GlobalAveragePooling3D(), x.mean(axis=(1, 2, 3))),
                       (tf.keras.layers.GlobalMaxPool3D(keepdims=True), x.max(axis=(1, 2, 3), keepdims=True)),
                       (tf.keras.layers.UpSampling3D((1, 2, 3)), x.repeat(2, axis=2).repeat(3, axis=3)),
                       (tf.keras.layers.ZeroPadding3D(((1, 0), 2, (0, 1))),
                        np.pad(x, ((0, 0), (1, 0), (2, 2), (0, 1), (0, 0))))]:
        m = tf.keras.Sequential([tf.keras.Input((4, 5, 6, 3)), layer])
        np.testing.assert_allclose(m.predict(x, verbose=0), ref, rtol=1e-5, atol=1e-6)
    # A small volumetric model trains: the loss falls.
    model = tf.keras.Sequential([tf.keras.Input((4, 5, 6, 3)), tf.keras.layers.Conv3D(4, 3, activation="relu"),
                                 tf.keras.layers.GlobalAveragePooling3D(), tf.keras.layers.Dense(1)])
    model.compile(tf.keras.optimizers.SGD(0.05), "mse")
    hist = model.fit(x, np.ones((2, 1), np.float32), epochs=20, verbose=0).history["loss"]
    assert hist[-1] < hist[0] * 0.5
    t = tf.keras.layers.Conv1DTranspose(5, 3, strides=2, padding="same")
    m1 = tf.keras.Sequential([tf.keras.Input((4, 3)), t])
    xt = RS.rand(2, 4, 3).astype(np.float32)
    assert m1.predict(xt, verbose=0).shape == (2, 8, 5)
    assert t.get_weights()[0].shape == (3, 5, 3)
    with pytest.raises(NotImplementedError, match="channels_last only"):
        tf.keras.layers.Conv3D(2, 3, data_format="channels_first")
