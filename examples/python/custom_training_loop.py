"""TensorFlow 2's "advanced" quickstart with `import weft as tf`: a subclassed Keras model trained by
a custom loop -- a tf.function step with tf.GradientTape and optimizer.apply_gradients, Keras
metrics accumulated per epoch -- on Fashion-MNIST (Debian's dataset-fashion-mnist; 6,000 training
images to keep it quick). See docs/python.md, "Custom training loops"."""
import weft as tf
from weft.keras import Model
from weft.keras.layers import Conv2D, Dense, Flatten

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.fashion_mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0
x_train = x_train[..., tf.newaxis].astype("float32")[:6000]
x_test = x_test[..., tf.newaxis].astype("float32")[:2000]
y_train, y_test = y_train[:6000], y_test[:2000]

train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(32)
test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(32)


class MyModel(Model):
    def __init__(self):
        super().__init__()
        self.conv1 = Conv2D(32, 3, activation="relu")
        self.flatten = Flatten()
        self.d1 = Dense(128, activation="relu")
        self.d2 = Dense(10)

    def call(self, x):
        return self.d2(self.d1(self.flatten(self.conv1(x))))


model = MyModel()
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam()
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
test_loss = tf.keras.metrics.Mean(name="test_loss")
test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(labels, predictions)


@tf.function
def test_step(images, labels):
    predictions = model(images, training=False)
    test_loss(loss_object(labels, predictions))
    test_accuracy(labels, predictions)


for epoch in range(2):
    for m in (train_loss, train_accuracy, test_loss, test_accuracy):
        m.reset_state()
    for images, labels in train_ds:
        train_step(images, labels)
    for test_images, test_labels in test_ds:
        test_step(test_images, test_labels)
    print(f"Epoch {epoch + 1}, Loss: {train_loss.result():0.2f}, Accuracy: {train_accuracy.result() * 100:0.2f}, "
          f"Test Loss: {test_loss.result():0.2f}, Test Accuracy: {test_accuracy.result() * 100:0.2f}")
# The model's own API sees what the loop trained.
model.compile(loss=loss_object, metrics=["accuracy"])
print("evaluate: test accuracy %.4f" % model.evaluate(x_test, y_test, verbose=0)[1])
