"""keras.io's "Writing a training loop from scratch" with `import weft as tf`, as its eager
version is written -- no @tf.function: a GradientTape per batch, optimizer.apply_gradients,
a metric updated with the logits, float(loss) -- on Fashion-MNIST (Debian's dataset-fashion-mnist;
6,000 training images to keep it quick), then TF's "Basic training loops" (a tf.Module whose
variables are updated by hand with assign_sub). weft runs each step as an eager step over one
graph recorded at the first steps (docs/python.md, "Without @tf.function: eager steps")."""
import numpy as np

import weft as tf
from weft import keras

(x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
x_train = (x_train[:6000].reshape(-1, 784) / 255.0).astype("float32")
x_val = (x_test[:1000].reshape(-1, 784) / 255.0).astype("float32")
y_train, y_val = y_train[:6000], y_test[:1000]

inputs = keras.Input(shape=(784,), name="digits")
x = keras.layers.Dense(64, activation="relu")(inputs)
x = keras.layers.Dense(64, activation="relu")(x)
outputs = keras.layers.Dense(10, name="predictions")(x)
model = keras.Model(inputs=inputs, outputs=outputs)

optimizer = keras.optimizers.SGD(learning_rate=0.1)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
val_acc_metric = keras.metrics.SparseCategoricalAccuracy()
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024, seed=1).batch(64)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(64)

for epoch in range(2):
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y_batch_train, logits)
        if step % 40 == 0:
            print("epoch %d step %d: training loss %.4f" % (epoch, step, float(loss_value)))
    print("epoch %d: training accuracy %.4f" % (epoch, float(train_acc_metric.result())))
    train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in val_dataset:
        val_acc_metric.update_state(y_batch_val, model(x_batch_val, training=False))
    print("epoch %d: validation accuracy %.4f" % (epoch, float(val_acc_metric.result())))
    val_acc_metric.reset_state()
model.compile(loss=loss_fn, metrics=["accuracy"])  # the model's own API sees what the loop trained
print("eager loop: evaluate accuracy %.4f" % model.evaluate(x_val, y_val, verbose=0)[1])


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


rng = np.random.default_rng(0)
xs = np.linspace(-2, 2, 201).astype(np.float32)
ys = (3.0 * xs + 2.0 + rng.normal(size=201)).astype(np.float32)
linear = MyModel()
for epoch in range(10):
    with tf.GradientTape() as t:
        current_loss = tf.reduce_mean(tf.square(ys - linear(xs)))
    dw, db = t.gradient(current_loss, [linear.w, linear.b])
    linear.w.assign_sub(0.1 * dw)
    linear.b.assign_sub(0.1 * db)
print(f"basic training loop: W = {linear.w.numpy():1.2f}, b = {linear.b.numpy():1.2f}, loss = {current_loss:2.5f}")
