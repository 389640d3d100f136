# Generates applications_keras.json with TF 2.21 (bench/.venv): for each keras.applications build, its
# name, parameter counts, layer names and output shape. Run: bench/.venv/bin/python tests/python/data/gen_applications_keras.py
import json, os
os.environ["CUDA_VISIBLE_DEVICES"] = ""
import tensorflow as tf
from tensorflow import keras
A = keras.applications
configs = {
  "MobileNetV2(alpha=0.35,input_shape=(32,32,3),classes=10)": lambda: A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), classes=10, weights=None),
  "MobileNetV2(alpha=0.35,input_shape=(32,32,3),include_top=False,pooling='avg')": lambda: A.MobileNetV2(alpha=0.35, input_shape=(32, 32, 3), include_top=False, pooling="avg", weights=None),
  "MobileNetV2()": lambda: A.MobileNetV2(weights=None),
  "MobileNetV2(alpha=1.4)": lambda: A.MobileNetV2(alpha=1.4, weights=None),
  "ResNet50()": lambda: A.ResNet50(weights=None),
  "ResNet50(include_top=False,input_shape=(32,32,3),pooling='max')": lambda: A.ResNet50(weights=None, include_top=False, input_shape=(32, 32, 3), pooling="max"),
  "ResNet101()": lambda: A.ResNet101(weights=None),
  "ResNet152()": lambda: A.ResNet152(weights=None),
  "ResNet50V2()": lambda: A.ResNet50V2(weights=None),
  "VGG16()": lambda: A.VGG16(weights=None),
  "VGG16(include_top=False,input_shape=(32,32,3))": lambda: A.VGG16(weights=None, include_top=False, input_shape=(32, 32, 3)),
  "VGG19()": lambda: A.VGG19(weights=None),
  "EfficientNetB0()": lambda: A.EfficientNetB0(weights=None),
  "DenseNet121()": lambda: A.DenseNet121(weights=None),
  "InceptionV3()": lambda: A.InceptionV3(weights=None),
}
out = {}
for k, f in configs.items():
    m = f()
    tr = sum(int(tf.size(w)) for w in m.trainable_weights)
    out[k] = {"name": m.name, "params": m.count_params(), "trainable": tr,
              "layers": [l.name for l in m.layers], "output_shape": list(m.output_shape)}
    print(k, m.name, m.count_params(), tr, len(m.layers), flush=True)
    keras.backend.clear_session()
json.dump(out, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "applications_keras.json"), "w"), indent=0)
