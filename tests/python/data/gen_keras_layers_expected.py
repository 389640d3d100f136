"""Computes the expected values that tests/python/test_keras_layers.py keeps as data, with
TensorFlow 2.21 (Keras 3). Not a test (it imports TensorFlow): run it with the peers' venv,
    /work/peers-venv/bin/python tests/python/data/gen_keras_layers_expected.py
and paste the printed numbers (rounded to 7 significant digits) into the tests: the first part's
into tests/python/test_keras_layers.py (activations, 1-D pooling, softmax, Conv1D), the second's
(Normalization, ReLU / ELU) there too, and the Conv1D, Conv2DTranspose, DepthwiseConv2D /
SeparableConv2D and LayerNormalization numbers into tests/train/layers_keras_test.cc."""
import tensorflow as tf, numpy as np, json
k = tf.keras
out = {}
x = np.array([-3., -1., -0.5, 0., 0.5, 1., 3.], np.float32)
acts = {}
for n in ['relu','sigmoid','tanh','softmax','gelu','elu','selu','swish','silu','softplus','linear','softsign','relu6',
          'hard_sigmoid','exponential','leaky_relu','mish','hard_silu','log_softmax']:
    acts[n] = [float(v) for v in np.asarray(k.activations.get(n)(tf.constant(x.reshape(1, -1)))).ravel()]
out['activations'] = acts
r = np.arange(24, dtype=np.float32).reshape(2, 12) / 10.0 - 1.0
seq = np.array([[[0.5, -1.0], [2.0, 0.0], [-1.5, 1.0], [1.0, 3.0], [0.25, -0.5]]], np.float32)  # (1,5,2)
kern = np.array([[[1.0, -1.0, 0.5]], [[0.0, 2.0, -0.5]]], np.float32)  # placeholder shape fixed below
kern = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3) / 6.0 - 1.0  # (k=2, in=2, f=3)
bias = np.array([0.1, -0.2, 0.3], np.float32)
res = {}
for pad in ['valid', 'same', 'causal']:
    for stride, dil in [(1, 1), (2, 1), (1, 2)]:
        l = k.layers.Conv1D(3, 2, strides=stride, padding=pad, dilation_rate=dil)
        l.build((None, 5, 2)); l.set_weights([kern, bias])
        res['%s_%d_%d' % (pad, stride, dil)] = l(seq).numpy().tolist()
out['conv1d'] = {'x': seq.tolist(), 'kernel': kern.tolist(), 'bias': bias.tolist(), 'y': res}
pools = {}
for pad in ['valid', 'same']:
    pools['max_' + pad] = k.layers.MaxPooling1D(2, padding=pad)(seq).numpy().tolist()
    pools['avg_' + pad] = k.layers.AveragePooling1D(3, strides=2, padding=pad)(seq).numpy().tolist()
pools['gap1'] = k.layers.GlobalAveragePooling1D()(seq).numpy().tolist()
pools['gmp1'] = k.layers.GlobalMaxPooling1D()(seq).numpy().tolist()
img = (np.arange(2 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 2) % 7) - 3.0
pools['img'] = img.tolist()
pools['gmp2'] = k.layers.GlobalMaxPooling2D()(img).numpy().tolist()
pools['gmp2_keep_shape'] = list(k.layers.GlobalMaxPooling2D(keepdims=True)(img).shape)
pools['zp_1'] = k.layers.ZeroPadding2D(1)(img).numpy().tolist()
pools['zp_pairs'] = k.layers.ZeroPadding2D(((1, 0), (2, 1)))(img).numpy().tolist()
out['pool'] = pools
sm = np.array([[[1., 2., 3.], [0.5, 0.5, -1.], [2., -2., 0.]]], np.float32)
out['softmax'] = {'x': sm.tolist(), 'axis_-1': k.layers.Softmax()(sm).numpy().tolist(),
                  'axis_1': k.layers.Softmax(axis=1)(sm).numpy().tolist()}
out['leaky'] = {'default': k.layers.LeakyReLU()(x).numpy().tolist(),
                'slope_0.1': k.layers.LeakyReLU(negative_slope=0.1)(x).numpy().tolist()}
print(json.dumps(out))


# ---- second part: the values of the later layers ----------------------------------------------
def show(name, y):
    print(name, list(np.shape(y)), ", ".join("%.7g" % v for v in np.ravel(y)))


d = np.array([[1., 10., 0.5], [2., 20., 0.5], [4., 30., 2.5], [5., 60., 0.5]], np.float32)
n = k.layers.Normalization(axis=-1); n.adapt(d); show("normalization axis=-1", n(d))
n = k.layers.Normalization(axis=None); n.adapt(d); show("normalization axis=None", n(d))
show("normalization invert", k.layers.Normalization(mean=3.0, variance=4.0, invert=True)(d))
x8 = np.array([[-3., -1., -0.5, 0., 0.5, 1., 3., 7.]], np.float32)
for kw in [dict(max_value=6.0), dict(max_value=2.0, negative_slope=0.1, threshold=0.5), dict(threshold=1.0),
           dict(negative_slope=0.2, threshold=0.75)]:
    show("relu %s" % kw, k.layers.ReLU(**kw)(x8))
show("elu 0.5", k.layers.ELU(alpha=0.5)(x8))

x = (np.arange(24, dtype=np.float32).reshape(2, 2, 3, 2) % 5) / 2.0 - 1.0
kern = np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2) / 10.0 - 1.0
l = k.layers.Conv2DTranspose(2, 3, strides=2, padding="same"); l.build((None, 2, 3, 2))
l.set_weights([kern, np.array([0.5, -0.5], np.float32)]); show("conv2d_transpose same 2", l(x))

x = (np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2) % 7) / 3.0 - 1.0
dw = np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2) / 18.0 - 0.5
pw = np.array([[[[1.0, -1.0, 0.5], [0.5, 0.25, -1.0], [-0.5, 1.0, 1.0], [2.0, 0.0, -0.25]]]], np.float32)
l = k.layers.SeparableConv2D(3, 3, strides=2, padding="same", depth_multiplier=2); l.build((None, 4, 4, 2))
l.set_weights([dw, pw, np.array([0.1, -0.1, 0.2], np.float32)]); show("separable", l(x))
l = k.layers.DepthwiseConv2D(3, depth_multiplier=2); l.build((None, 4, 4, 2))
l.set_weights([dw, np.array([0.1, -0.1, 0.2, 0.3], np.float32)]); show("depthwise", l(x))

x = np.array([[[1., 2., 4.], [0.5, -1., 3.]], [[2., 2., 2.], [-3., 0., 1.]]], np.float32)
show("layer_norm", k.layers.LayerNormalization()(x))
show("layer_norm axis=1 eps=0.5", k.layers.LayerNormalization(axis=1, epsilon=0.5)(x))
