"""weft.saved_model.save / load, model.export, and TF 2.x's model.save("dir/name") without an
extension: the loaded model predicts what the saved one did."""
import numpy as np
import pytest

import weft as tf


def _model():
    m = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    m.compile(optimizer="adam", loss="mse")
    m.fit(np.ones((8, 3), np.float32), np.zeros((8, 2), np.float32), epochs=1, verbose=0)
    return m


def test_saved_model_round_trip(tmp_path):
    m, x = _model(), np.arange(6, dtype=np.float32).reshape(2, 3)
    tf.saved_model.save(m, str(tmp_path / "export"))
    assert tf.saved_model.contains_saved_model(str(tmp_path / "export"))
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    np.testing.assert_allclose(loaded(x), m.predict(x), rtol=1e-6)
    np.testing.assert_allclose(loaded.signatures["serving_default"](x)["output_0"], m.predict(x), rtol=1e-6)
    np.testing.assert_allclose(tf.keras.models.load_model(str(tmp_path / "export")).predict(x), m.predict(x))
    m.export(str(tmp_path / "exported"), verbose=False)
    np.testing.assert_allclose(tf.saved_model.load(str(tmp_path / "exported"))(x), m.predict(x), rtol=1e-6)
    with pytest.raises(OSError, match="weft.saved_model.save"):
        tf.saved_model.load(str(tmp_path))
    with pytest.raises(NotImplementedError, match="keras models only.*tf.train.Checkpoint"):
        tf.saved_model.save(object(), str(tmp_path / "x"))


def test_save_to_a_path_in_a_new_directory(tmp_path):
    m, x = _model(), np.ones((1, 3), np.float32)
    path = str(tmp_path / "saved_model" / "my_model")  # TF 2.x's tutorial path, no extension
    m.save(path)
    np.testing.assert_allclose(tf.keras.models.load_model(path).predict(x), m.predict(x))
