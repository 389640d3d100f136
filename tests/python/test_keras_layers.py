"""Keras layers and activations as TensorFlow programs use them: keras.Input / InputLayer as a
Sequential's first entry, Reshape, Rescaling, Permute, the merge layers, ZeroPadding2D, the global
and 1-D poolings, Conv1D, Softmax, LeakyReLU, every activation by name and as a
keras.activations function. Expected values come from TensorFlow 2.21 (kept as data below,
computed by tests/python/data/gen_keras_layers_expected.py), Keras' docstrings or closed forms."""
import numpy as np
import pytest

import weft as tf
from weft import keras
from weft.keras import layers

X7 = np.array([[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0]], np.float32)

# keras.activations.get(name)(X7), computed by TensorFlow 2.21.
TF_ACTIVATIONS = {
    "relu": [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0],
    "sigmoid": [0.04742587, 0.2689414, 0.3775407, 0.5, 0.6224594, 0.7310586, 0.9525741],
    "tanh": [-0.9950547, -0.7615942, -0.4621171, 0.0, 0.4621171, 0.7615942, 0.9950547],
    "softmax": [0.001880408, 0.01389444, 0.02290806, 0.037769, 0.06227057, 0.1026668, 0.7586107],
    "gelu": [-0.004049696, -0.1586553, -0.1542688, 0.0, 0.3457312, 0.8413447, 2.99595],
    "elu": [-0.950213, -0.6321205, -0.3934693, 0.0, 0.5, 1.0, 3.0],
    "selu": [-1.670569, -1.111331, -0.6917582, 0.0, 0.5253505, 1.050701, 3.152103],
    "swish": [-0.1422776, -0.2689414, -0.1887703, 0.0, 0.3112297, 0.7310586, 2.857722],
    "silu": [-0.1422776, -0.2689414, -0.1887703, 0.0, 0.3112297, 0.7310586, 2.857722],
    "softplus": [0.04858735, 0.3132617, 0.474077, 0.6931472, 0.974077, 1.313262, 3.048587],
    "linear": [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0],
    "softsign": [-0.75, -0.5, -0.3333333, 0.0, 0.3333333, 0.5, 0.75],
    "relu6": [0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 3.0],
    "hard_sigmoid": [0.0, 0.3333333, 0.4166667, 0.5, 0.5833333, 0.6666667, 1.0],
    "exponential": [0.04978707, 0.3678795, 0.6065307, 1.0, 1.648721, 2.718282, 20.08554],
    "leaky_relu": [-0.6, -0.2, -0.1, 0.0, 0.5, 1.0, 3.0],
    "mish": [-0.1456475, -0.3034015, -0.2207438, 0.0, 0.3752452, 0.8650984, 2.986535],
    "hard_silu": [-0.0, -0.3333333, -0.2083333, 0.0, 0.2916667, 0.6666667, 3.0],
    "log_softmax": [-6.276267, -4.276267, -3.776267, -3.276267, -2.776267, -2.276267, -0.2762665],
}

# A (1, 5, 2) sequence and what TensorFlow 2.21's 1-D layers make of it.
SEQ = np.array([[[0.5, -1.0], [2.0, 0.0], [-1.5, 1.0], [1.0, 3.0], [0.25, -0.5]]], np.float32)
TF_SEQ = {
    "MaxPooling1D(2)": [[[2.0, 0.0], [1.0, 3.0]]],
    "MaxPooling1D(2, padding='same')": [[[2.0, 0.0], [1.0, 3.0], [0.25, -0.5]]],
    "AveragePooling1D(3, strides=2)": [[[0.3333333, 0.0], [-0.08333334, 1.166667]]],
    "AveragePooling1D(3, strides=2, padding='same')": [[[1.25, -0.5], [0.5, 1.333333], [0.625, 1.25]]],
    "GlobalAveragePooling1D()": [[0.45, 0.5]],
    "GlobalMaxPooling1D()": [[2.0, 3.0]],
}
SM = np.array([[[1.0, 2.0, 3.0], [0.5, 0.5, -1.0], [2.0, -2.0, 0.0]]], np.float32)
TF_SOFTMAX = {
    -1: [[[0.09003057, 0.2447285, 0.6652409], [0.4498162, 0.4498162, 0.1003676], [0.8668133, 0.01587624, 0.1173104]]],
    1: [[[0.2312239, 0.8055124, 0.9362395], [0.1402444, 0.1797341, 0.01714782], [0.6285317, 0.01475347, 0.04661262]]],
}


def run(layer_list, x, input_shape=None):
    """The Sequential([keras.Input(shape), *layer_list]) prediction on x (compiled with a loss, as
    weft's predict requires)."""
    model = keras.Sequential([keras.Input(shape=input_shape or x.shape[1:])] + list(layer_list))
    model.compile(loss="mse")
    return model.predict(x)


# ---- inputs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("first", [
    lambda: keras.Input(shape=(6,)),
    lambda: keras.Input((6,)),
    lambda: keras.Input(batch_shape=(None, 6)),
    lambda: layers.InputLayer(shape=(6,)),
    lambda: layers.InputLayer(input_shape=(6,)),
    lambda: layers.InputLayer(batch_shape=(32, 6)),
])
def test_input_as_the_first_entry_of_a_sequential(first):
    model = keras.Sequential([first(), layers.Dense(3)])
    assert model.input_shape == (None, 6)
    assert model.output_shape == (None, 3)
    assert model.count_params() == 6 * 3 + 3
    # Sequential() + add(keras.Input(...)) is the same model.
    added = keras.Sequential()
    added.add(first())
    added.add(layers.Dense(3))
    assert added.input_shape == (None, 6)


def test_input_shape_on_the_first_layer_keeps_working():
    assert keras.Sequential([layers.Dense(3, input_shape=(6,))]).input_shape == (None, 6)
    assert keras.Sequential([layers.Conv1D(2, 3, input_shape=(10, 4))]).output_shape == (None, 8, 2)


def test_input_misuse_is_a_clear_error():
    model = keras.Sequential([layers.Dense(3, input_shape=(6,))])
    with pytest.raises(ValueError, match="must come before every layer"):
        model.add(keras.Input(shape=(6,)))
    x = keras.Input(shape=(6,))
    with pytest.raises(ValueError, match="not the output of a layer call"):
        keras.Sequential([layers.Dense(2)(x)])
    with pytest.raises(ValueError, match="needs shape"):
        keras.Input()
    with pytest.raises(ValueError, match="float32"):
        keras.Input(shape=(3,), dtype="float16")  # float32, int32 and int64 are taken


# ---- activations ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TF_ACTIVATIONS))
def test_activation_names_match_tensorflow(name):
    want = np.array([TF_ACTIVATIONS[name]], np.float32)
    np.testing.assert_allclose(run([layers.Activation(name)], X7), want, rtol=2e-6, atol=2e-6)
    # The same function from keras.activations, as a layer's activation= and through get().
    fn = getattr(keras.activations, name)
    assert keras.activations.get(name) is fn
    dense = layers.Dense(7, activation=fn)
    model = keras.Sequential([keras.Input(shape=(7,)), dense])
    model.compile(loss="mse")
    # With an identity kernel and a zero bias, Dense(activation=f)(x) is f(x). (Not the random
    # kernel's inverse: an ill-conditioned draw amplified float32 rounding past the tolerance.)
    model.set_weights([np.eye(7, dtype=np.float32), np.zeros(7, np.float32)])
    np.testing.assert_allclose(model.predict(X7), want, rtol=2e-6, atol=2e-6)


def test_activation_functions_on_keras_and_graph_tensors(graph, sess):
    x = keras.Input(shape=(7,))
    y = keras.activations.gelu(x)
    model = keras.Model(x, y)
    model.compile(loss="mse")
    np.testing.assert_allclose(model.predict(X7), [TF_ACTIVATIONS["gelu"]], rtol=2e-6, atol=2e-6)
    p = tf.placeholder(tf.float32, shape=(None, 7))
    np.testing.assert_allclose(sess.run(keras.activations.swish(p), {p: X7}), [TF_ACTIVATIONS["swish"]], rtol=2e-6,
                               atol=2e-6)
    assert keras.activations.get(None) is keras.activations.linear
    assert keras.activations.get(keras.activations.relu) is keras.activations.relu


def test_unknown_activations_list_the_known_ones():
    for make in (lambda: layers.Dense(3, activation="gelux"), lambda: layers.Activation("gelux"),
                 lambda: keras.activations.get("gelux"), lambda: layers.Conv1D(2, 3, activation="gelux")):
        with pytest.raises(ValueError, match=r"unknown activation 'gelux' \(known: .*gelu.*swish"):
            make()
    with pytest.raises(ValueError, match="other Python functions are not run inside the graph"):
        layers.Dense(3, activation=lambda t: t)


# ---- layers: values -------------------------------------------------------------------------


def test_reshape_as_keras_docstring():
    x = keras.Input(shape=(12,))
    assert layers.Reshape((3, 4))(x).shape == (None, 3, 4)
    assert layers.Reshape((-1, 2, 2))(x).shape == (None, 3, 2, 2)
    v = np.arange(24, dtype=np.float32).reshape(2, 12)
    np.testing.assert_array_equal(run([layers.Reshape((-1, 2, 2))], v), v.reshape(2, 3, 2, 2))
    with pytest.raises(ValueError, match=r"cannot reshape examples of shape \[\?,12\] \(12 values\) to "
                                         r"target_shape \(5, 3\)"):
        layers.Reshape((5, 3))(x)


def test_permute_and_rescaling():
    x = keras.Input(shape=(10, 64))
    assert layers.Permute((2, 1))(x).shape == (None, 64, 10)  # Keras' docstring
    v = np.random.RandomState(0).rand(2, 3, 4, 5).astype(np.float32)
    np.testing.assert_array_equal(run([layers.Permute((3, 1, 2))], v), v.transpose(0, 3, 1, 2))
    pixels = np.array([[0, 51, 255]], np.float32)
    np.testing.assert_allclose(run([layers.Rescaling(1.0 / 255)], pixels), [[0, 0.2, 1]], rtol=1e-6)
    np.testing.assert_allclose(run([layers.Rescaling(scale=1.0 / 127.5, offset=-1)], pixels), [[-1, -0.6, 1]],
                               rtol=1e-6, atol=1e-6)


def functional(merge, inputs_shape=(3,)):
    """A model whose branches a = 2x and b = 0.5 - x meet in `merge`."""
    x = keras.Input(shape=inputs_shape)
    a = layers.Rescaling(2.0)(x)
    b = layers.Rescaling(-1.0, offset=0.5)(x)
    model = keras.Model(x, merge([a, b]))
    model.compile(loss="mse")
    return model


def test_merge_layers_called_on_lists_of_keras_tensors():
    v = np.array([[1.0, -2.0, 0.25]], np.float32)
    a, b = 2 * v, 0.5 - v
    np.testing.assert_allclose(functional(layers.Concatenate()).predict(v), np.concatenate([a, b], -1))
    np.testing.assert_allclose(functional(layers.Multiply()).predict(v), a * b)
    np.testing.assert_allclose(functional(layers.Average()).predict(v), (a + b) / 2)
    np.testing.assert_allclose(functional(layers.Subtract()).predict(v), a - b)
    np.testing.assert_allclose(functional(layers.Maximum()).predict(v), np.maximum(a, b))
    np.testing.assert_allclose(functional(layers.Minimum()).predict(v), np.minimum(a, b))
    np.testing.assert_allclose(functional(layers.Add()).predict(v), a + b)
    # Keras' functional forms.
    np.testing.assert_allclose(functional(layers.concatenate).predict(v), np.concatenate([a, b], -1))
    np.testing.assert_allclose(functional(layers.add).predict(v), a + b)
    np.testing.assert_allclose(functional(layers.subtract).predict(v), a - b)
    np.testing.assert_allclose(functional(layers.multiply).predict(v), a * b)
    np.testing.assert_allclose(functional(layers.average).predict(v), (a + b) / 2)
    np.testing.assert_allclose(functional(layers.maximum).predict(v), np.maximum(a, b))
    np.testing.assert_allclose(functional(layers.minimum).predict(v), np.minimum(a, b))
    # Concatenate's axis, and more than two inputs.
    m = functional(layers.Concatenate(axis=1), inputs_shape=(2, 2))
    w = np.arange(4, dtype=np.float32).reshape(1, 2, 2)
    np.testing.assert_allclose(m.predict(w), np.concatenate([2 * w, 0.5 - w], axis=1))
    x = keras.Input(shape=(4,))
    assert layers.Concatenate()([x, x, layers.Dense(2)(x)]).shape == (None, 10)
    with pytest.raises(ValueError, match=r"same shape except on axis -1"):
        layers.Concatenate()([keras.Input(shape=(2, 3)), layers.Reshape((3, 2))(keras.Input(shape=(6,)))])
    with pytest.raises(ValueError, match=r"Subtract.*takes 2 input\(s\), got 3"):
        layers.Subtract()([x, x, x])


def test_zero_padding_and_global_max_pooling_2d():
    img = ((np.arange(36, dtype=np.float32).reshape(2, 3, 3, 2) % 7) - 3.0)
    np.testing.assert_array_equal(run([layers.ZeroPadding2D(1)], img), np.pad(img, ((0, 0), (1, 1), (1, 1), (0, 0))))
    np.testing.assert_array_equal(run([layers.ZeroPadding2D((2, 1))], img),
                                  np.pad(img, ((0, 0), (2, 2), (1, 1), (0, 0))))
    np.testing.assert_array_equal(run([layers.ZeroPadding2D(padding=((1, 0), (2, 1)))], img),
                                  np.pad(img, ((0, 0), (1, 0), (2, 1), (0, 0))))
    np.testing.assert_array_equal(run([layers.GlobalMaxPooling2D()], img), img.max(axis=(1, 2)))
    assert run([layers.GlobalMaxPooling2D(keepdims=True)], img).shape == (2, 1, 1, 2)
    np.testing.assert_allclose(run([layers.GlobalAveragePooling2D(keepdims=True)], img),
                               img.mean(axis=(1, 2), keepdims=True), rtol=1e-6)
    with pytest.raises(ValueError, match="channels_last"):
        layers.GlobalMaxPooling2D(data_format="channels_first")


def test_padding_cropping_and_upsampling():
    # Keras' docstrings: Cropping2D(((2, 2), (4, 4))) on (28, 28, 3) is (24, 20, 3); UpSampling2D
    # size (1, 2) on (2, 1, 3) repeats each column twice.
    assert layers.Cropping2D(cropping=((2, 2), (4, 4)))(keras.Input(shape=(28, 28, 3))).shape == (None, 24, 20, 3)
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 1, 3)
    np.testing.assert_array_equal(run([layers.UpSampling2D(size=(1, 2))], x), x.repeat(2, axis=2))
    np.testing.assert_array_equal(run([layers.UpSampling2D()], x), x.repeat(2, axis=1).repeat(2, axis=2))
    np.testing.assert_array_equal(run([layers.UpSampling1D(size=3)], SEQ), SEQ.repeat(3, axis=1))
    np.testing.assert_array_equal(run([layers.Cropping1D(cropping=(1, 2))], SEQ), SEQ[:, 1:3])
    np.testing.assert_array_equal(run([layers.Cropping1D(1)], SEQ), SEQ[:, 1:4])
    img = np.arange(2 * 5 * 6 * 1, dtype=np.float32).reshape(2, 5, 6, 1)
    np.testing.assert_array_equal(run([layers.Cropping2D(((1, 0), (2, 1)))], img), img[:, 1:, 2:5])
    np.testing.assert_array_equal(run([layers.Cropping2D(1)], img), img[:, 1:4, 1:5])
    np.testing.assert_array_equal(run([layers.ZeroPadding1D(padding=(2, 1))], SEQ),
                                  np.pad(SEQ, ((0, 0), (2, 1), (0, 0))))
    with pytest.raises(ValueError, match="interpolation='nearest' only"):
        layers.UpSampling2D(interpolation="bilinear")


@pytest.mark.parametrize("spec", sorted(TF_SEQ))
def test_1d_pooling_matches_tensorflow(spec):
    layer = eval("layers." + spec)  # the spec is the Keras call TensorFlow ran
    np.testing.assert_allclose(run([layer], SEQ), TF_SEQ[spec], rtol=1e-6, atol=1e-6)


def test_conv1d_with_constant_kernel_is_a_windowed_sum():
    # Every kernel weight 0.5, bias 1: y[t, f] = 1 + 0.5 * sum of the window's inputs (all channels).
    conv = layers.Conv1D(filters=2, kernel_size=3, kernel_initializer=keras.initializers.Constant(0.5),
                         bias_initializer="ones")
    out = run([conv], SEQ)
    s = SEQ[0].sum(axis=1)
    want = 1 + 0.5 * np.array([s[0:3].sum(), s[1:4].sum(), s[2:5].sum()])
    np.testing.assert_allclose(out[0], np.stack([want, want], axis=1), rtol=1e-6)
    causal = layers.Conv1D(1, 2, padding="causal", kernel_initializer="ones", use_bias=False)
    np.testing.assert_allclose(run([causal], SEQ)[0, :, 0], s + np.concatenate([[0], s[:-1]]), rtol=1e-6)
    assert conv.weights == [("kernel", (3, 2, 2), True), ("bias", (2,), True)]  # Keras' kernel layout


@pytest.mark.parametrize("axis", sorted(TF_SOFTMAX))
def test_softmax_layer_matches_tensorflow(axis):
    np.testing.assert_allclose(run([layers.Softmax(axis=axis)], SM), TF_SOFTMAX[axis], rtol=2e-6, atol=1e-7)


def test_leaky_relu_defaults_match_tensorflow():
    # keras.layers.LeakyReLU()(X7) and LeakyReLU(negative_slope=0.1)(X7) in TensorFlow 2.21.
    np.testing.assert_allclose(run([layers.LeakyReLU()], X7), [[-0.9, -0.3, -0.15, 0, 0.5, 1, 3]], rtol=1e-6)
    np.testing.assert_allclose(run([layers.LeakyReLU(negative_slope=0.1)], X7), [[-0.3, -0.1, -0.05, 0, 0.5, 1, 3]],
                               rtol=1e-6)
    np.testing.assert_allclose(run([layers.LeakyReLU(alpha=0.1)], X7), [[-0.3, -0.1, -0.05, 0, 0.5, 1, 3]], rtol=1e-6)


X8 = np.array([[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 7.0]], np.float32)
# keras.layers.ReLU(**kwargs)(X8) and ELU(alpha=0.5)(X8), by TensorFlow 2.21.
TF_RELU = [
    (dict(max_value=6.0), [0, 0, 0, 0, 0.5, 1, 3, 6]),
    (dict(max_value=2.0, negative_slope=0.1, threshold=0.5), [-0.35, -0.15, -0.1, -0.05, 0, 1, 2, 2]),
    (dict(threshold=1.0), [0, 0, 0, 0, 0, 0, 3, 7]),
    (dict(negative_slope=0.2, threshold=0.75), [-0.75, -0.35, -0.25, -0.15, -0.05, 1, 3, 7]),
    (dict(), [0, 0, 0, 0, 0.5, 1, 3, 7]),
]


@pytest.mark.parametrize("kwargs,want", TF_RELU)
def test_relu_arguments_match_tensorflow(kwargs, want):
    np.testing.assert_allclose(run([layers.ReLU(**kwargs)], X8), [want], rtol=1e-6, atol=1e-7)


def test_elu_layer_matches_tensorflow():
    np.testing.assert_allclose(run([layers.ELU(alpha=0.5)], X8),
                               [[-0.4751065, -0.3160603, -0.1967347, 0, 0.5, 1, 3, 7]], rtol=1e-6)
    np.testing.assert_allclose(run([layers.ELU()], X8), [np.where(X8[0] > 0, X8[0], np.expm1(X8[0]))], rtol=1e-6)
    with pytest.raises(ValueError, match="must be non-negative"):
        layers.ReLU(max_value=-1)


def test_prelu_repeat_vector_identity():
    # PReLU starts at alpha 0 (Keras' default initializer): relu; with alpha 0.25 everywhere:
    np.testing.assert_allclose(run([layers.PReLU()], X8), np.maximum(X8, 0))
    np.testing.assert_allclose(run([layers.PReLU(alpha_initializer=keras.initializers.Constant(0.25))], X8),
                               np.where(X8 > 0, X8, 0.25 * X8))
    model = keras.Sequential([keras.Input(shape=(4, 5, 3)), layers.PReLU(shared_axes=[1, 2])])
    assert model.count_params() == 3
    assert layers.RepeatVector(3)(keras.Input(shape=(32,))).shape == (None, 3, 32)  # Keras' docstring
    np.testing.assert_array_equal(run([layers.RepeatVector(2)], X7), np.stack([X7, X7], axis=1))
    np.testing.assert_array_equal(run([layers.Identity()], X7), X7)


# Normalization of NORM_DATA, adapted on it (and given mean=3, variance=4, inverted), by
# TensorFlow 2.21.
NORM_DATA = np.array([[1.0, 10.0, 0.5], [2.0, 20.0, 0.5], [4.0, 30.0, 2.5], [5.0, 60.0, 0.5]], np.float32)
TF_NORMALIZATION = {
    "axis=-1": [[-1.264911, -1.069045, -0.5773503], [-0.6324555, -0.5345225, -0.5773503],
                [0.6324555, 0.0, 1.732051], [1.264911, 1.603567, -0.5773503]],
    "axis=None": [[-0.6040521, -0.07794219, -0.6332805], [-0.5455955, 0.5066244, -0.6332805],
                  [-0.4286821, 1.091191, -0.5163671], [-0.3702255, 2.844891, -0.6332805]],
    "invert": [[5.0, 23.0, 4.0], [7.0, 43.0, 4.0], [11.0, 63.0, 8.0], [13.0, 123.0, 4.0]],
}


def test_normalization_adapt_matches_tensorflow():
    per_feature = layers.Normalization(axis=-1)
    per_feature.adapt(NORM_DATA)
    model = keras.Sequential([keras.Input(shape=(3,)), per_feature])
    model.compile(loss="mse")
    np.testing.assert_allclose(model.predict(NORM_DATA), TF_NORMALIZATION["axis=-1"], rtol=1e-5, atol=1e-6)
    # Keras 3 keeps mean (3), variance (3) and count (1) as non-trainable weights.
    assert [w[0] for w in per_feature.weights] == ["mean", "variance", "count"]
    assert model.count_params() == 7
    whole = layers.Normalization(axis=None, input_shape=(3,))
    whole.adapt(NORM_DATA)
    np.testing.assert_allclose(run([whole], NORM_DATA), TF_NORMALIZATION["axis=None"], rtol=1e-5, atol=1e-6)
    given = layers.Normalization(mean=3.0, variance=4.0, invert=True)
    np.testing.assert_allclose(run([given], NORM_DATA), TF_NORMALIZATION["invert"], rtol=1e-6)
    assert given.count_params() == 0  # given statistics are constants, as in Keras
    with pytest.raises(ValueError, match="call adapt"):
        keras.Sequential([keras.Input(shape=(3,)), layers.Normalization()]).count_params()
    with pytest.raises(ValueError, match="mean has 2 values, the input needs 1 or 3"):
        keras.Sequential([keras.Input(shape=(3,)), layers.Normalization(mean=[1, 2], variance=[1, 1])]).count_params()


# ---- summary ----------------------------------------------------------------------------------


def test_summary_reports_keras_names_and_output_shapes():
    model = keras.Sequential([keras.Input(shape=(12,)), layers.Reshape((4, 3)), layers.Conv1D(8, 2, padding="same"),
                              layers.MaxPooling1D(), layers.GlobalMaxPooling1D(), layers.Dense(2)])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    for row in ["reshape (Reshape)           (None, 4, 3)              0",
                "conv1d (Conv1D)             (None, 4, 8)              56",
                "max_pooling1d (MaxPooling1D (None, 2, 8)              0",
                "global_max_pooling1d (Globa (None, 8)                 0",
                "dense (Dense)               (None, 2)                 18"]:
        assert row in text, text
    assert "Total params: 74" in text


# ---- training through every new layer ----------------------------------------------------------


def fit_loss(model, x, y, loss, epochs=8):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=loss, seed=1)
    hist = model.fit(x, y, batch_size=32, epochs=epochs, verbose=0, shuffle_seed=1).history["loss"]
    return hist[0], hist[-1]


def test_training_through_the_sequence_and_shape_layers():
    rng = np.random.RandomState(0)
    x = rng.rand(256, 24).astype(np.float32) * 255
    # The label: whether the sequence's mean is above the median (the pooled model can see it).
    m = x.mean(1)
    y = (m > np.median(m)).astype(np.int32)
    normalize = layers.Normalization(axis=None)
    normalize.adapt(x)
    model = keras.Sequential([
        keras.Input(shape=(24,)),
        normalize,
        layers.Rescaling(0.5, offset=0.1),
        layers.Reshape((-1, 2)),
        layers.Conv1D(8, 3, padding="causal", activation="gelu"),
        layers.BatchNormalization(),
        layers.LeakyReLU(),
        layers.LayerNormalization(),
        layers.ELU(alpha=0.5),
        layers.ReLU(max_value=6.0, negative_slope=0.1),
        layers.MaxPooling1D(2),
        layers.Conv1D(8, 2, activation=keras.activations.swish),
        layers.AveragePooling1D(1),
        layers.UpSampling1D(2),
        layers.ZeroPadding1D(1),
        layers.Cropping1D((0, 2)),
        layers.Permute((2, 1)),
        layers.Permute((2, 1)),
        layers.GlobalAveragePooling1D(),
        layers.RepeatVector(2),
        layers.Flatten(),
        layers.Dense(2),
        layers.Softmax(),
    ])
    first, last = fit_loss(model, x, y, "sparse_categorical_crossentropy")
    assert last < 0.8 * first, (first, last)


def test_training_through_merge_and_2d_layers():
    rng = np.random.RandomState(1)
    x = rng.rand(256, 6, 6, 1).astype(np.float32)
    y = (x[:, :3].mean((1, 2, 3)) > x[:, 3:].mean((1, 2, 3))).astype(np.float32).reshape(-1, 1)
    inp = keras.Input(shape=(6, 6, 1))
    h = layers.Cropping2D(1)(layers.UpSampling2D()(inp))  # (10, 10, 1)
    h = layers.ZeroPadding2D(1)(h)
    h = layers.Conv2D(4, 3, activation="selu")(h)
    h = layers.SeparableConv2D(4, 3, padding="same", depth_multiplier=2)(layers.DepthwiseConv2D(1)(h))
    h = layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(h)
    assert h.shape == (None, 20, 20, 4)
    a = layers.GlobalMaxPooling2D()(h)
    b = layers.GlobalAveragePooling2D()(h)
    c = layers.Flatten()(layers.Conv2D(4, 6, activation="elu")(inp))
    assert layers.Conv2DTranspose(3, (2, 3))(inp).shape == (None, 7, 8, 3)  # valid: in + kernel - 1
    merged = layers.Concatenate()([layers.Multiply()([a, b]), layers.Average()([a, c]), layers.Subtract()([b, c]),
                                   layers.Maximum()([a, c]), layers.Minimum()([b, c])])
    merged = layers.PReLU()(layers.Identity()(merged))
    out = layers.Dense(1, activation="sigmoid")(layers.Dense(8, activation="softplus")(merged))
    first, last = fit_loss(keras.Model(inp, out), x, y, "mse")
    assert last < 0.8 * first, (first, last)
