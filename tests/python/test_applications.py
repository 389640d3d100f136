"""keras.applications (python/weft/keras/applications/): the architectures against TF 2.21's
(data/applications_keras.json, gen_applications_keras.py: model name, parameter counts, layer
names, output shape), the transfer-learning idiom (a frozen base, a new head, fit), weights files,
preprocess_input (closed forms) and decode_predictions. Builds that take seconds only: VGG16/19 with
their 4096-wide top (138M parameters) are checked by the file's VGG16 entry without the top.
The tests never import TensorFlow."""
import json
import os

import numpy as np
import pytest

import weft as tf

A = tf.keras.applications
REF = json.load(open(os.path.join(os.path.dirname(__file__), "data", "applications_keras.json")))

BUILDS = {
    "MobileNetV2(alpha=0.35,input_shape=(32,32,3),classes=10)":
        lambda: A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), classes=10, weights=None),
    "MobileNetV2(alpha=0.35,input_shape=(32,32,3),include_top=False,pooling='avg')":
        lambda: A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), include_top=False, pooling="avg", weights=None),
    "MobileNetV2()": lambda: A.MobileNetV2(weights=None),
    "MobileNetV2(alpha=1.4)": lambda: A.MobileNetV2(alpha=1.4, weights=None),
    "ResNet50()": lambda: A.ResNet50(weights=None),
    "ResNet50(include_top=False,input_shape=(32,32,3),pooling='max')":
        lambda: A.resnet50.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="max"),
    "ResNet101()": lambda: A.ResNet101(weights=None),
    "ResNet152()": lambda: A.resnet.ResNet152(weights=None),
    "ResNet50V2()": lambda: A.resnet_v2.ResNet50V2(weights=None),
    "VGG16(include_top=False,input_shape=(32,32,3))":
        lambda: A.vgg16.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3)),
    "DenseNet121()": lambda: A.DenseNet121(weights=None),
}


def check_against_keras(key):
    model, ref = BUILDS[key](), REF[key]
    assert model.name == ref["name"]
    assert model.count_params() == ref["params"]
    # The same layers (Keras lists its InputLayer first, and orders the others by graph depth where
    # weft keeps the order they were called in: a shortcut branch's conv may come earlier).
    assert sorted(layer.name for layer in model.layers) == sorted(ref["layers"][1:])
    assert list(model.output_shape) == ref["output_shape"]
    trainable = sum(int(np.prod(shape)) for layer in model.layers for _, shape, t in layer.weights if t)
    assert trainable == ref["trainable"]
    return model


@pytest.mark.parametrize("key", sorted(BUILDS))
def test_architecture_as_keras(key):
    check_against_keras(key)


def test_transfer_learning_freezes_the_base():
    base = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=None)
    base.trainable = False
    assert base.trainable_weights == [] and len(base.non_trainable_weights) == len(base.weights)
    inputs = tf.keras.Input(shape=(32, 32, 3))
    x = A.mobilenet_v2.preprocess_input(inputs)
    x = base(x, training=False)
    x = tf.keras.layers.GlobalAveragePooling2D()(x)
    outputs = tf.keras.layers.Dense(1)(x)
    model = tf.keras.Model(inputs, outputs)
    assert [w.name for w in model.trainable_weights] == ["dense/kernel", "dense/bias"]
    before = {w.name: np.array(w.numpy()) for w in model.weights}
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss=tf.keras.losses.BinaryCrossentropy(from_logits=True))
    rng = np.random.RandomState(0)
    model.fit(rng.uniform(0, 255, (8, 32, 32, 3)).astype(np.float32), np.ones((8, 1), np.float32),  # bias gradient < 0
              batch_size=8, epochs=1, verbose=0)
    after = {w.name: np.array(w.numpy()) for w in model.weights}
    changed = sorted(k for k in before if not np.array_equal(before[k], after[k]))
    assert changed == ["dense/bias", "dense/kernel"]  # the base's kernels and BN statistics are untouched
    base.trainable = True  # unfreezing restores the declared flags (moving statistics stay non-trainable)
    assert sum(int(np.prod(w.shape)) for w in base.trainable_weights) == 396128


def test_weights_argument(tmp_path):
    with pytest.raises(ValueError, match="weft cannot download pretrained weights"):
        A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False)
    with pytest.raises(ValueError, match="`weights` argument should be either"):
        A.VGG16(weights=str(tmp_path / "missing.h5"))
    h5 = tmp_path / "model.h5"
    h5.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)
    with pytest.raises(NotImplementedError, match="HDF5"):
        A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, include_top=False, weights=str(h5))
    first = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, classes=4, weights=None)
    path = str(tmp_path / "mnv2.weights.h5")
    first.save_weights(path)
    again = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, classes=4, weights=path)
    for a, b in zip(first.weights, again.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="classes` should be 1000"):
        A.ResNet50(classes=10)


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="alpah"):
        A.MobileNetV2(alpah=0.5, weights=None)
    with pytest.raises(ValueError, match="pooling"):
        A.VGG16(include_top=False, weights=None, input_shape=(32, 32, 3), pooling="mean")
    with pytest.raises(ValueError, match="at least 32x32"):
        A.ResNet50(include_top=False, weights=None, input_shape=(16, 16, 3))
    with pytest.raises(ValueError, match="static `input_shape`"):
        A.VGG16(weights=None, input_shape=(None, None, 3))
    with pytest.raises(ValueError, match="classifier_activation"):
        A.imagenet_utils.validate_activation("relu", "imagenet")
    m = A.MobileNetV2(include_top=False, weights=None, alpha=0.35)
    assert m.name == "mobilenetv2_0.35_None" and list(m.output_shape) == [None, None, None, 1280]


def test_preprocess_input_closed_forms():
    x = np.array([[[[0.0, 127.5, 255.0]]]], np.float32)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    np.testing.assert_allclose(A.resnet_v2.preprocess_input(x.copy()), [[[[-1.0, 0.0, 1.0]]]])
    caffe = [[[[255.0 - 103.939, 127.5 - 116.779, 0.0 - 123.68]]]]  # RGB -> BGR, minus the BGR means
    np.testing.assert_allclose(A.vgg16.preprocess_input(x.copy()), caffe, rtol=1e-5)
    np.testing.assert_allclose(A.resnet50.preprocess_input(x.copy()), caffe, rtol=1e-5)
    torch = (x / 255.0 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    np.testing.assert_allclose(A.imagenet_utils.preprocess_input(x.copy(), mode="torch"), torch, rtol=1e-5)
    np.testing.assert_allclose(A.densenet.preprocess_input(x.copy()), torch, rtol=1e-5)
    np.testing.assert_allclose(A.vgg19.preprocess_input(tf.constant(x)).numpy(), caffe, rtol=1e-5)
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(np.array([[0, 255]], np.uint8)), [[-1.0, 1.0]])
    with pytest.raises(ValueError, match="mode"):
        A.imagenet_utils.preprocess_input(x, mode="keras")


def test_decode_predictions(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setattr(A.imagenet_utils, "CLASS_INDEX", None)
    preds = np.linspace(0, 1, 2000, dtype=np.float32).reshape(2, 1000)
    preds[1] = preds[1][::-1]
    with pytest.raises(FileNotFoundError, match="imagenet_class_index.json"):
        A.vgg16.decode_predictions(preds)
    os.makedirs(tmp_path / "models")
    index = {str(i): ["n%08d" % i, "class_%d" % i] for i in range(1000)}
    (tmp_path / "models" / "imagenet_class_index.json").write_text(json.dumps(index))
    top = A.resnet50.decode_predictions(preds, top=3)
    assert [[(c, n) for c, n, _ in row] for row in top] == [
        [("n%08d" % i, "class_%d" % i) for i in (999, 998, 997)], [("n%08d" % i, "class_%d" % i) for i in (0, 1, 2)]]
    assert top[0][0][2] == preds[0, 999] and top[1][0][2] == preds[1, 0]
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        A.mobilenet_v2.decode_predictions(preds[:, :10])
