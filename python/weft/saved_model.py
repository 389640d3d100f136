"""``weft.saved_model`` (tf.saved_model) for Keras models: ``save(model, export_dir)`` makes the
directory and writes the whole model into it (weft's model file, ``export_dir/model.keras``;
docs/python.md, "Whole models"); ``load(export_dir)`` returns the model, callable on data, with
``signatures["serving_default"]`` as TensorFlow's loaded object has it (keyword or positional
input; a dict ``{"output_0": array}``). weft does not read TensorFlow's SavedModel protobufs, nor
save graphs other than Keras models (a TF1 graph: ``weft.train.Saver`` and ``Graph.save``).
"""
import os

from .keras import saving as _saving

SERVING_DEFAULT = "serving_default"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = SERVING_DEFAULT


def save(obj, export_dir, signatures=None, options=None):
    from .keras.models import Model
    if not isinstance(obj, Model):
        raise NotImplementedError(
            "weft.saved_model.save saves weft.keras models only; got %r. Save a tf.Module's variables with "
            "tf.train.Checkpoint(model=obj).write(path) (and rebuild the module in Python to restore them), a TF1 "
            "graph's with weft.train.Saver" % (obj,))
    os.makedirs(os.fspath(export_dir), exist_ok=True)
    obj.save(os.path.join(os.fspath(export_dir), _saving.SAVED_MODEL_FILE))


def load(export_dir, tags=None, options=None):
    path = os.path.join(os.fspath(export_dir), _saving.SAVED_MODEL_FILE)
    if not os.path.isfile(path):
        raise OSError("weft.saved_model.load: '%s' holds no %s written by weft.saved_model.save (weft does not read "
                      "TensorFlow's SavedModel format)" % (export_dir, _saving.SAVED_MODEL_FILE))
    model = _saving.load_model(path)

    def serving_default(*args, **kwargs):
        inputs = list(args) + list(kwargs.values())
        if len(inputs) != 1:
            raise TypeError("serving_default takes the model's one input, got %d" % len(inputs))
        return {"output_0": model(inputs[0])}
    model.signatures = {SERVING_DEFAULT: serving_default}
    return model


def contains_saved_model(export_dir):
    return os.path.isfile(os.path.join(os.fspath(export_dir), _saving.SAVED_MODEL_FILE))


__all__ = ["save", "load", "contains_saved_model", "SERVING_DEFAULT", "DEFAULT_SERVING_SIGNATURE_DEF_KEY"]
