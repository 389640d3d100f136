"""keras.io's "Text classification with Transformer" as written there (custom layers subclassing
keras.layers.Layer: TransformerBlock with MultiHeadAttention, a Sequential feed-forward block,
LayerNormalization and Dropout; TokenAndPositionEmbedding with tf.shape / tf.range), with only the
import line naming weft. The task is lstm_text's (which fortunes file a quote came from; the same
data, loaded by examples/python/lstm_text.py), on each quote's first 64 characters.

    .venv/bin/python examples/python/keras_transformer_text.py [--epochs 3] [--steps 40]
"""
import argparse

import weft as tf  # was: import tensorflow as tf
from weft import keras
from weft.keras import layers

from lstm_text import FILES, PAD, load


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=False):
        attn_output = self.att(inputs, inputs)
        attn_output = self.dropout1(attn_output, training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.ffn(out1)
        ffn_output = self.dropout2(ffn_output, training=training)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = tf.shape(x)[-1]
        positions = tf.range(start=0, limit=maxlen, delta=1)
        positions = self.pos_emb(positions)
        x = self.token_emb(x)
        return x + positions


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--steps", type=int, default=40, help="steps per epoch (0: the whole training split)")
    args = p.parse_args()
    maxlen, vocab_size, embed_dim, num_heads, ff_dim = 64, PAD + 1, 32, 2, 32
    (x_train, y_train), (x_test, y_test) = load()
    x_train, x_test = x_train[:, :maxlen], x_test[:, :maxlen]

    inputs = layers.Input(shape=(maxlen,))
    x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
    x = TransformerBlock(embed_dim, num_heads, ff_dim)(x)
    x = layers.GlobalAveragePooling1D()(x)
    x = layers.Dropout(0.1)(x)
    x = layers.Dense(20, activation="relu")(x)
    x = layers.Dropout(0.1)(x)
    outputs = layers.Dense(len(FILES), activation="softmax")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.summary()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=args.epochs, steps_per_epoch=args.steps or None)
    loss, acc = model.evaluate(x_test, y_test, verbose=0)
    print("test loss %.4f, test accuracy %.4f (chance %.2f)" % (loss, acc, 1 / len(FILES)))


if __name__ == "__main__":
    main()
