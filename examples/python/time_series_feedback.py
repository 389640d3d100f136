"""The autoregressive LSTM of TensorFlow's time-series tutorial (tensorflow.org/tutorials/
structured_data/time_series, "Advanced: Autoregressive model", class FeedBack), as that program
writes it (only the import line names weft): an LSTMCell wrapped in keras.layers.RNN warms up
over the input window, then the same cell (same weights) runs one step at a time on its own
predictions. The weather CSV and pandas are replaced by a synthetic series of noisy sines
(three features, hourly, with daily and yearly periods), split 70/20/10 and normalized as the
tutorial does.

    .venv/bin/python examples/python/time_series_feedback.py [--epochs 4] [--hours 3000]
"""
import argparse

import numpy as np
import weft as tf  # was: import tensorflow as tf


def synthetic_series(hours, seed=0):
    """(hours, 3) float32: a daily and a yearly sine plus their product, with noise."""
    t = np.arange(hours, dtype=np.float64)
    rng = np.random.RandomState(seed)
    day = np.sin(2 * np.pi * t / 24.0)
    year = np.sin(2 * np.pi * t / (24.0 * 365.2425))
    cols = np.stack([10 + 8 * day + 5 * year, 1000 + 3 * np.cos(2 * np.pi * t / 24.0), day * (1 + year)], -1)
    return (cols + 0.3 * rng.randn(hours, 3)).astype(np.float32)


# ---- The tutorial's WindowGenerator (numpy arrays with column names instead of DataFrames) ----
class WindowGenerator():
    def __init__(self, input_width, label_width, shift, train_df, val_df, test_df, columns, label_columns=None):
        # Store the raw data.
        self.train_df = train_df
        self.val_df = val_df
        self.test_df = test_df

        # Work out the label column indices.
        self.label_columns = label_columns
        if label_columns is not None:
            self.label_columns_indices = {name: i for i, name in enumerate(label_columns)}
        self.column_indices = {name: i for i, name in enumerate(columns)}

        # Work out the window parameters.
        self.input_width = input_width
        self.label_width = label_width
        self.shift = shift

        self.total_window_size = input_width + shift

        self.input_slice = slice(0, input_width)
        self.input_indices = np.arange(self.total_window_size)[self.input_slice]

        self.label_start = self.total_window_size - self.label_width
        self.labels_slice = slice(self.label_start, None)
        self.label_indices = np.arange(self.total_window_size)[self.labels_slice]

    def split_window(self, features):
        inputs = features[:, self.input_slice, :]
        labels = features[:, self.labels_slice, :]
        if self.label_columns is not None:
            labels = tf.stack([labels[:, :, self.column_indices[name]] for name in self.label_columns], axis=-1)

        # Slicing doesn't preserve static shape information, so set the shapes
        # manually. This way the `tf.data.Datasets` are easier to inspect.
        inputs.set_shape([None, self.input_width, None])
        labels.set_shape([None, self.label_width, None])

        return inputs, labels

    def make_dataset(self, data):
        data = np.array(data, dtype=np.float32)
        ds = tf.keras.utils.timeseries_dataset_from_array(
            data=data,
            targets=None,
            sequence_length=self.total_window_size,
            sequence_stride=1,
            shuffle=True,
            batch_size=32,)

        ds = ds.map(self.split_window)

        return ds

    @property
    def train(self):
        return self.make_dataset(self.train_df)

    @property
    def val(self):
        return self.make_dataset(self.val_df)

    @property
    def test(self):
        return self.make_dataset(self.test_df)

    @property
    def example(self):
        """Get and cache an example batch of `inputs, labels` for plotting."""
        result = getattr(self, '_example', None)
        if result is None:
            # No example batch was found, so get one from the `.train` dataset
            result = next(iter(self.train))
            # And cache it for next time
            self._example = result
        return result


# ---- The tutorial's FeedBack model, unchanged ---------------------------------------------------
class FeedBack(tf.keras.Model):
    def __init__(self, units, out_steps):
        super().__init__()
        self.out_steps = out_steps
        self.units = units
        self.lstm_cell = tf.keras.layers.LSTMCell(units)
        # Also wrap the LSTMCell in an RNN to simplify the `warmup` method.
        self.lstm_rnn = tf.keras.layers.RNN(self.lstm_cell, return_state=True)
        self.dense = tf.keras.layers.Dense(num_features)

    def warmup(self, inputs):
        # inputs.shape => (batch, time, features)
        # x.shape => (batch, lstm_units)
        x, *state = self.lstm_rnn(inputs)

        # predictions.shape => (batch, features)
        prediction = self.dense(x)
        return prediction, state

    def call(self, inputs, training=None):
        # Use a TensorArray to capture dynamically unrolled outputs.
        predictions = []
        # Initialize the LSTM state.
        prediction, state = self.warmup(inputs)

        # Insert the first prediction.
        predictions.append(prediction)

        # Run the rest of the prediction steps.
        for n in range(1, self.out_steps):
            # Use the last prediction as input.
            x = prediction
            # Execute one lstm step.
            x, state = self.lstm_cell(x, states=state, training=training)
            # Convert the lstm output to a prediction.
            prediction = self.dense(x)
            # Add the prediction to the output.
            predictions.append(prediction)

        # predictions.shape => (time, batch, features)
        predictions = tf.stack(predictions)
        # predictions.shape => (batch, time, features)
        predictions = tf.transpose(predictions, [1, 0, 2])
        return predictions


def compile_and_fit(model, window, patience=2, epochs=20):
    early_stopping = tf.keras.callbacks.EarlyStopping(monitor='val_loss', patience=patience, mode='min')

    model.compile(loss=tf.keras.losses.MeanSquaredError(),
                  optimizer=tf.keras.optimizers.Adam(),
                  metrics=[tf.keras.metrics.MeanAbsoluteError()])

    history = model.fit(window.train, epochs=epochs,
                        validation_data=window.val,
                        callbacks=[early_stopping])
    return history


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--hours", type=int, default=3000)
    args = parser.parse_args()
    tf.keras.utils.set_random_seed(0)

    columns = ["T (degC)", "p (mbar)", "wv"]
    df = synthetic_series(args.hours)
    n = len(df)
    train_df, val_df, test_df = df[0:int(n * 0.7)], df[int(n * 0.7):int(n * 0.9)], df[int(n * 0.9):]
    num_features = df.shape[1]
    train_mean, train_std = train_df.mean(axis=0), train_df.std(axis=0)
    train_df, val_df, test_df = [(d - train_mean) / train_std for d in (train_df, val_df, test_df)]

    OUT_STEPS = 24
    multi_window = WindowGenerator(input_width=24, label_width=OUT_STEPS, shift=OUT_STEPS,
                                   train_df=train_df, val_df=val_df, test_df=test_df, columns=columns)

    feedback_model = FeedBack(units=32, out_steps=OUT_STEPS)
    prediction, state = feedback_model.warmup(multi_window.example[0])
    print("warmup prediction shape:", prediction.shape)
    print('Output shape (batch, time, features): ', feedback_model(multi_window.example[0]).shape)

    history = compile_and_fit(feedback_model, multi_window, epochs=args.epochs)
    losses = history.history["loss"]
    print("train loss per epoch:", " ".join("%.4f" % v for v in losses))
    val = feedback_model.evaluate(multi_window.val, return_dict=True, verbose=0)
    test = feedback_model.evaluate(multi_window.test, return_dict=True, verbose=0)
    print("AR LSTM val:  loss %.4f  mae %.4f" % (val["loss"], val["mean_absolute_error"]))
    print("AR LSTM test: loss %.4f  mae %.4f" % (test["loss"], test["mean_absolute_error"]))
