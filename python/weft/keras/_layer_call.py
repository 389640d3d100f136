"""Layer.__call__ with Keras' call arguments, installed over the C++ binding's own call when
keras.models is imported: MultiHeadAttention's (query, value, key, attention_mask, ...),
recurrent layers' ``initial_state``, and where a call goes: a custom layer's trace, a Dataset.map
trace, an eager step, plain data (Keras' eager call) or KerasTensors (the functional API).
"""
import numpy as np

from .. import _recorder, _weft
from .. import framework as _fw
from ..data import _trace as _data_trace
from . import _custom, _eager


def _attention_inputs(layer, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
                      attention_mask=None, return_attention_scores=False, use_causal_mask=False):
    """MultiHeadAttention's Keras call arguments (in Keras 3's order) as weft's input list
    [query, value, key(, attention_mask)]."""
    if value is None:
        raise TypeError("MultiHeadAttention '%s': call it as layer(query, value, key=None, attention_mask=None)"
                        % layer.name)
    if query_mask is not None or value_mask is not None or key_mask is not None:
        raise NotImplementedError("MultiHeadAttention '%s': query_mask / value_mask / key_mask (Keras masks) are not "
                                  "supported; pass attention_mask" % layer.name)
    _weft.keras.layers._set_use_causal_mask(layer, bool(use_causal_mask))
    # With it the call returns (output, scores) (two outputs of the call), as Keras.
    _weft.keras.layers._set_return_attention_scores(layer, bool(return_attention_scores))
    inputs = [query, value, value if key is None else key]
    return inputs + ([attention_mask] if attention_mask is not None else [])


_RECURRENT = ("LSTM", "GRU", "SimpleRNN", "Bidirectional")


def _layer_call(layer, inputs=None, *args, training=None, mask=None, initial_state=None, **kwargs):
    """Layer.__call__ with Keras' call arguments. ``training`` needs no value here: the compiled
    graph has a training pass (fit) and an inference pass (evaluate, predict), and each layer
    (Dropout, BatchNormalization) behaves as its pass says; ``mask`` must be None.
    MultiHeadAttention takes Keras' (query, value, key=None, attention_mask=None, ...). A
    recurrent layer takes ``initial_state=[h, c]`` (LSTM) or ``[h]`` (GRU, SimpleRNN; Bidirectional:
    the forward layer's states, then the backward one's); with return_state its call returns a
    list [output, *final states]."""
    if inputs is None:
        if layer.type == "MultiHeadAttention" and "query" in kwargs:  # mha(query=x, value=x, key=x)
            inputs = kwargs.pop("query")
        elif "inputs" in kwargs:
            inputs = kwargs.pop("inputs")
        else:
            raise TypeError("layer '%s' was called without inputs" % layer.name)
    if initial_state is not None:
        if layer.type not in _RECURRENT:
            raise TypeError("layer '%s' (%s) takes no initial_state" % (layer.name, layer.type))
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if not _symbolic([inputs] + states):
            raise NotImplementedError("%s '%s': initial_state on data (not KerasTensors) is not supported; build a "
                                      "model with the states as inputs" % (layer.type, layer.name))
        if _custom.in_trace([inputs] + states):  # inside a custom layer's call (_custom.py)
            return _custom.apply_in_trace(layer, [inputs] + states, training)
        return _custom.keep_layers(_layer_call_cpp(layer, [inputs] + states), [inputs] + states)
    if layer.type == "MultiHeadAttention":
        inputs = _attention_inputs(layer, inputs, *args, **kwargs)
        args, kwargs = (), {}
        if not _symbolic(inputs):
            raise NotImplementedError("MultiHeadAttention '%s': call it on KerasTensors in a model (weft runs layers "
                                      "on data through one-input models)" % layer.name)
        if _custom.in_trace(inputs):  # inside a custom layer's call (_custom.py)
            return _custom.apply_in_trace(layer, inputs, training)
        out = _custom.keep_layers(_layer_call_cpp(layer, inputs), inputs)
        return tuple(out) if isinstance(out, list) else out  # Keras' (output, scores)
    if len(args) > 2:
        raise TypeError("layer '%s' takes (inputs, training, mask), got %d positional arguments" % (
            layer.name, 1 + len(args)))
    if len(args) == 2:  # Keras' positional (inputs, training, mask)
        mask = args[1]
    if mask is not None:
        raise NotImplementedError("layer '%s': masks are not supported by weft" % layer.name)
    if kwargs:
        raise TypeError("layer '%s' got unexpected call arguments: %s" % (layer.name, ", ".join(sorted(kwargs))))
    if _custom.in_trace(inputs):  # inside a custom layer's call (_custom.py)
        return _custom.apply_in_trace(layer, inputs, training)
    if isinstance(inputs, _fw.Tensor) and _data_trace.tracing():  # in a Dataset.map / filter function
        return _eager.call_in_data_trace(layer, inputs, _layer_call_cpp, training)
    if (_recorder.taping() and not isinstance(inputs, (list, tuple, _weft.keras.KerasTensor))) or isinstance(
            inputs, _fw.Tensor):  # a tensor of the eager step, or an eager tensor (tf.ones(...)) outside a tape
        return _eager.call_in_step(layer, inputs, _layer_call_cpp, training)
    if isinstance(inputs, (np.ndarray, np.generic, list, tuple, int, float)) and not _symbolic(inputs):
        return _eager.call_on_data(layer, inputs, _layer_call_cpp)  # layer(x) on data: run it (Keras' eager call)
    return _custom.keep_layers(_layer_call_cpp(layer, inputs), inputs)


def _symbolic(inputs):
    """A KerasTensor or graph tensor, or a list of them (a merge layer's inputs)."""
    items = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    return any(not isinstance(i, (np.ndarray, np.generic, int, float, list, tuple)) for i in items)


# The binding's own call, which the wrappers above end in; models.py and saving.py call it directly.
_layer_call_cpp = _weft.keras.Layer.__call__
_weft.keras.Layer.__call__ = _layer_call
