"""TensorFlow peer of `weft-zoo bench`: steady-state training images/s of every zoo model.

    bench/.venv/bin/python bench/peers_zoo_tf.py resnet20 --batch-size 64 --threads 2 --json

Prints one JSON object {"model", "batch_size", "threads", "images_per_second"} with --json, a
line of text without. TensorFlow 2.21 CPU (PyPI tensorflow-cpu, oneDNN) from the bench-only venv
bench/.venv (setup_peers.sh makes it); never needed by the tests.

The models are the Keras definitions weft-zoo builds (zoo/models.cc), float32, NHWC:
  mlp:       Flatten -> Dense 512 relu -> Dense 512 relu -> Dense 10
  mnist_cnn: Conv2D 32 3x3 VALID relu -> MaxPool 2x2 -> Flatten -> Dense 64 relu -> Dense 10
  lenet5:    Conv2D 6 5x5 SAME relu -> AvgPool 2 -> Conv2D 16 5x5 relu -> AvgPool 2 -> Flatten ->
             Dense 120 relu -> Dense 84 relu -> Dense 10
  resnet20:  ResNet-20 v1, CIFAR layout (32x32x3): conv-BN(-ReLU) blocks of 16-32-64 filters, 1x1
             projection shortcuts without BN, L2 1e-4 on the conv kernels, global average pool, Dense 10
  vgg_small: 2x Conv 32, MaxPool, 2x Conv 64, MaxPool, 2x Conv 128, MaxPool (3x3 SAME relu),
             Flatten, Dense 128 relu, Dropout 0.5, Dense 10
  gpt_small: 128 character ids -> Embedding 97x128 + learned positions (128x128) -> 4 pre-norm
             blocks (LayerNormalization eps 1e-5, causal MultiHeadAttention 4 heads x 32, residual;
             LayerNormalization, Dense 512 gelu, Dense 128, residual) -> LayerNormalization ->
             Dense 97; its "images" are sequences of 128 characters, labels one id per position
  lstm_text: 128 character ids in [0, 98) -> Embedding 32 -> LSTM 64 -> Dense 10 (Keras 3's LSTM:
             a while_loop over the cell on the CPU)
Loss: mean sparse softmax cross-entropy on the logits. Optimizer: SGD lr 0.05 momentum 0.9. One
step is a `tf.function` (graph mode, as weft's compiled step) over a fixed random batch.

Method, as weft-zoo bench: intra- and inter-op threads set to N, --warmup seconds of steps, then
--windows windows of --window seconds; images/s is the median over the windows.
"""
import argparse
import json
import os
import statistics
import sys
import time

SHAPES = {"mlp": (28, 28, 1), "mnist_cnn": (28, 28, 1), "lenet5": (28, 28, 1), "resnet20": (32, 32, 3),
          "vgg_small": (28, 28, 1), "gpt_small": (128,), "lstm_text": (128,)}
VOCAB = 97  # weft's data::CharVocab


def gpt_small(tf, inp):
    """gpt_small as zoo/models.cc builds it (keras_hub's PositionEmbedding written out)."""
    L = tf.keras.layers

    class PositionEmbedding(L.Layer):
        def build(self, shape):
            self.table = self.add_weight(shape=(128, shape[-1]), initializer=tf.keras.initializers.RandomNormal(0, 0.02))

        def call(self, x):
            return tf.broadcast_to(self.table[:x.shape[1]], tf.shape(x))

    tok = L.Embedding(VOCAB, 128, embeddings_initializer=tf.keras.initializers.RandomNormal(0, 0.02))(inp)
    x = L.Add()([tok, PositionEmbedding()(tok)])
    for _ in range(4):
        h = L.LayerNormalization(epsilon=1e-5)(x)
        h = L.MultiHeadAttention(num_heads=4, key_dim=32)(h, h, use_causal_mask=True)
        x = L.Add()([x, h])
        h = L.LayerNormalization(epsilon=1e-5)(x)
        h = L.Dense(512, activation="gelu")(h)
        x = L.Add()([x, L.Dense(128)(h)])
    return L.Dense(VOCAB)(L.LayerNormalization(epsilon=1e-5)(x))


def build(tf, name):
    L = tf.keras.layers
    inp = tf.keras.Input(SHAPES[name], dtype="int32" if name == "gpt_small" else "float32")
    if name == "gpt_small":
        out = gpt_small(tf, inp)
    elif name == "mlp":
        x = L.Flatten()(inp)
        x = L.Dense(512, activation="relu")(x)
        x = L.Dense(512, activation="relu")(x)
        out = L.Dense(10)(x)
    elif name == "mnist_cnn":
        x = L.Conv2D(32, 3, activation="relu")(inp)
        x = L.MaxPool2D(2)(x)
        x = L.Flatten()(x)
        x = L.Dense(64, activation="relu")(x)
        out = L.Dense(10)(x)
    elif name == "lenet5":
        x = L.Conv2D(6, 5, padding="same", activation="relu")(inp)
        x = L.AveragePooling2D(2)(x)
        x = L.Conv2D(16, 5, activation="relu")(x)
        x = L.AveragePooling2D(2)(x)
        x = L.Flatten()(x)
        x = L.Dense(120, activation="relu")(x)
        x = L.Dense(84, activation="relu")(x)
        out = L.Dense(10)(x)
    elif name == "resnet20":
        def conv_bn(x, filters, kernel, stride, relu, bn=True):
            x = L.Conv2D(filters, kernel, strides=stride, padding="same", kernel_initializer="he_normal",
                         kernel_regularizer=tf.keras.regularizers.l2(1e-4))(x)
            if bn:
                x = L.BatchNormalization()(x)
            return L.ReLU()(x) if relu else x

        x = conv_bn(inp, 16, 3, 1, True)
        filters = 16
        for stage in range(3):
            for block in range(3):
                stride = 2 if stage > 0 and block == 0 else 1
                y = conv_bn(x, filters, 3, stride, True)
                y = conv_bn(y, filters, 3, 1, False)
                if stride != 1:
                    x = conv_bn(x, filters, 1, stride, False, bn=False)
                x = L.ReLU()(L.Add()([x, y]))
            filters *= 2
        x = L.GlobalAveragePooling2D()(x)
        out = L.Dense(10, kernel_initializer="he_normal")(x)
    elif name == "vgg_small":
        x = inp
        for filters in (32, 64, 128):
            for _ in range(2):
                x = L.Conv2D(filters, 3, padding="same", activation="relu", kernel_initializer="he_normal")(x)
            x = L.MaxPool2D(2)(x)
        x = L.Flatten()(x)
        x = L.Dense(128, activation="relu")(x)
        x = L.Dropout(0.5)(x)
        out = L.Dense(10)(x)
    elif name == "lstm_text":
        x = L.Embedding(98, 32)(inp)
        x = L.LSTM(64)(x)
        out = L.Dense(10)(x)
    else:
        raise SystemExit(f"unknown model {name!r} (expected one of {', '.join(SHAPES)})")
    return tf.keras.Model(inp, out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", choices=sorted(SHAPES))
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up steps")
    p.add_argument("--windows", type=int, default=5)
    p.add_argument("--window", type=float, default=1.0, help="seconds per timed window")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    tf.random.set_seed(1)
    model = build(tf, args.model)
    opt = tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    b = args.batch_size
    if args.model == "gpt_small":  # random ids in, random next ids out: only the shapes matter for speed
        x = tf.random.uniform((b,) + SHAPES[args.model], maxval=VOCAB, dtype=tf.int32)
        y = tf.random.uniform((b,) + SHAPES[args.model], maxval=VOCAB, dtype=tf.int32)
    elif args.model == "lstm_text":  # character ids, as weft-zoo's fortunes rows
        x = tf.cast(tf.random.uniform((b,) + SHAPES[args.model], maxval=98, dtype=tf.int32), tf.float32)
        y = tf.random.uniform((b,), maxval=10, dtype=tf.int32)
    else:
        x = tf.random.uniform((b,) + SHAPES[args.model])
        y = tf.random.uniform((b,), maxval=10, dtype=tf.int32)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
            if model.losses:
                loss += tf.add_n(model.losses)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def timed(seconds):
        """Images per second of wall time and per CPU-second of this process (every thread's)."""
        steps, t0, c0 = 0, time.perf_counter(), time.process_time()
        while True:
            step().numpy()  # waits for the step: the loss is fetched to the host
            steps += 1
            t = time.perf_counter() - t0
            if t >= seconds:
                return steps * b / t, steps * b / max(time.process_time() - c0, 1e-9)

    timed(args.warmup)
    rates = [timed(args.window) for _ in range(args.windows)]
    ips = statistics.median(r[0] for r in rates)
    if args.json:
        print(json.dumps({"model": args.model, "batch_size": b, "threads": args.threads,
                          "images_per_second": ips,
                          "cpu_images_per_second": statistics.median(r[1] for r in rates)}))
    else:
        print(f"{args.model} batch {b} threads {args.threads}: {ips:.0f} images/s (TensorFlow {tf.__version__})")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
