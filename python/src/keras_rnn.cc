// weft.keras.layers' recurrent layers (LSTM, GRU, SimpleRNN) and wrappers (Bidirectional,
// TimeDistributed) with Keras 3's argument names and defaults; the layers are
// train/layers_rnn.h's, each running one fused sequence op (ops/rnn.h).
#include "train/layers_rnn.h"

#include <set>

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

// Keras' keyword arguments of a recurrent layer into RNNOptions. Arguments weft cannot honour are
// InvalidArgument naming them (never silently ignored); unknown names are TypeError, as Python's.
RNNOptions Options(const char* layer, py::kwargs kw, const std::set<std::string>& own) {
  RNNOptions o;
  auto take = [&](const char* key) -> py::object {
    if (!kw.contains(key)) return py::object();
    py::object v = kw[key];
    PyDict_DelItemString(kw.ptr(), key);
    return v;
  };
  auto flag = [&](const char* key, bool& out) {
    if (py::object v = take(key)) out = v.cast<bool>();
  };
  auto number = [&](const char* key, double& out) {
    if (py::object v = take(key)) out = v.cast<double>();
  };
  if (py::object v = take("activation")) o.activation = ActivationName(v);
  if (own.count("recurrent_activation")) {
    if (py::object v = take("recurrent_activation")) o.recurrent_activation = ActivationName(v);
  }
  flag("use_bias", o.use_bias);
  if (py::object v = take("kernel_initializer")) o.kernel_initializer = InitializerArg(v, "kernel_initializer");
  if (py::object v = take("recurrent_initializer")) o.recurrent_initializer = InitializerArg(v, "recurrent_initializer");
  if (py::object v = take("bias_initializer")) o.bias_initializer = InitializerArg(v, "bias_initializer");
  if (own.count("unit_forget_bias")) flag("unit_forget_bias", o.unit_forget_bias);
  if (own.count("reset_after")) flag("reset_after", o.reset_after);
  number("dropout", o.dropout);
  number("recurrent_dropout", o.recurrent_dropout);
  flag("return_sequences", o.return_sequences);
  flag("go_backwards", o.go_backwards);
  flag("time_major", o.time_major);
  if (py::object v = take("seed")) o.seed = v.is_none() ? 0 : v.cast<int64_t>();
  bool stateful = false, unroll = false;
  flag("return_state", o.return_state);
  flag("zero_output_for_mask", o.zero_output_for_mask);
  flag("stateful", stateful);
  flag("unroll", unroll);  // the fused op runs every step in one kernel either way
  take("use_cudnn");       // likewise: weft's kernel is the fused one
  WEFT_REQUIRE(!stateful, "{}: stateful=True is not supported (every batch starts from zero states)", layer);
  for (const char* key : {"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer",
                          "kernel_constraint", "recurrent_constraint", "bias_constraint"}) {
    py::object v = take(key);
    WEFT_REQUIRE(!v || v.is_none(), "{}: {} is not supported by weft's recurrent layers yet; pass None", layer, key);
  }
  for (const auto& item : kw) {
    const std::string key = py::str(item.first);
    if (key == "name" || key == "input_shape" || key == "dtype" || key == "trainable") continue;
    throw py::type_error(fmt::format("{}() got an unexpected keyword argument '{}'", layer, key));
  }
  return o;
}

py::object Named(LayerPtr layer, const py::kwargs& kw) {
  return Finish(std::move(layer), kw.contains("name") ? py::object(kw["name"]) : py::none(),
                kw.contains("input_shape") ? py::object(kw["input_shape"]) : py::none());
}

const char* kRnnArgs =
    "\n\nKeras' arguments: activation ('tanh'), use_bias (True), kernel_initializer ('glorot_uniform'),\n"
    "recurrent_initializer ('orthogonal'), bias_initializer ('zeros'), dropout (0: of the inputs, one\n"
    "mask per example and feature for all steps), return_sequences (False: the last output only),\n"
    "go_backwards (False; with return_sequences the outputs are in run order), time_major (False),\n"
    "seed, name, input_shape, return_state (False: True makes the call return [output, h, c] (LSTM) or\n"
    "[output, h]). Call with initial_state=[h, c] (LSTM) or [h] to start from given states.\n"
    "recurrent_dropout must be 0 and stateful False.\n"
    "Weights: kernel (features, gates * units), recurrent_kernel (units, gates * units), bias.";

}  // namespace

void DefRnnLayers(py::module_& layers) {
  layers.def("LSTM", [](int64_t units, py::kwargs kw) {
    RNNOptions o = Options("LSTM", kw, {"recurrent_activation", "unit_forget_bias"});
    return Named(LSTM(units, o), kw);
  }, py::arg("units"),
     (std::string("Long short-term memory over (batch, time, features): gates i, f, c, o in the weights' columns;\n"
                  "recurrent_activation ('sigmoid'), unit_forget_bias (True: the forget gate's bias starts at 1).") +
      kRnnArgs).c_str());
  layers.def("GRU", [](int64_t units, py::kwargs kw) {
    RNNOptions o = Options("GRU", kw, {"recurrent_activation", "reset_after"});
    return Named(GRU(units, o), kw);
  }, py::arg("units"),
     (std::string("Gated recurrent unit over (batch, time, features): gates z, r, h; recurrent_activation\n"
                  "('sigmoid'), reset_after (True: bias (2, 3 * units), the reset gate after the recurrent product).") +
      kRnnArgs).c_str());
  layers.def("SimpleRNN", [](int64_t units, py::kwargs kw) {
    RNNOptions o = Options("SimpleRNN", kw, {});
    return Named(SimpleRNN(units, o), kw);
  }, py::arg("units"),
     (std::string("Fully connected recurrence h = activation(x @ kernel + h @ recurrent_kernel + bias).") + kRnnArgs)
         .c_str());
  layers.def("_set_rnn_sequence_options", [](Layer& layer, bool return_sequences, bool return_state,
                                              bool go_backwards, bool time_major, bool zero_output_for_mask) {
    RNNOptions o;
    o.return_sequences = return_sequences;
    o.return_state = return_state;
    o.go_backwards = go_backwards;
    o.time_major = time_major;
    o.zero_output_for_mask = zero_output_for_mask;
    SetRnnSequenceOptions(layer, o);
  }, py::arg("layer"), py::arg("return_sequences"), py::arg("return_state"), py::arg("go_backwards"),
     py::arg("time_major"), py::arg("zero_output_for_mask"),
     "keras.layers.RNN(cell, ...) over a built-in cell: the sequence options of the cell's layer.");
  layers.def("Bidirectional", [](std::shared_ptr<Layer> layer, const std::string& merge_mode,
                                  const py::object& weights, const py::object& backward_layer, const py::object& name,
                                  const py::object& input_shape) {
    WEFT_REQUIRE(weights.is_none(), "Bidirectional: weights must be None (set them with set_weights)");
    LayerPtr bwd = backward_layer.is_none() ? LayerPtr() : LayerPtr(backward_layer.cast<std::shared_ptr<Layer>>());
    return Finish(Bidirectional(layer, merge_mode, bwd), name, input_shape);
  }, py::arg("layer"), py::arg("merge_mode") = "concat", py::arg("weights") = py::none(),
     py::arg("backward_layer") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     "Runs an LSTM, GRU or SimpleRNN forwards and a copy of it backwards (or backward_layer) over the\n"
     "same inputs; merge_mode 'concat' (default), 'sum', 'mul' or 'ave' joins them (the backward\n"
     "sequence put back in time order).");
  layers.def("Masking", [](double mask_value, const py::object& name, const py::object& input_shape) {
    return Finish(Masking(mask_value), name, input_shape);
  }, py::arg("mask_value") = 0.0, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     "Masks the steps of (batch, steps, features) whose features all equal mask_value: they become 0, and\n"
     "the recurrent layers (and GlobalAveragePooling1D) after it skip them, as Keras'.");
  layers.def("TimeDistributed", [](std::shared_ptr<Layer> layer, const py::object& name,
                                    const py::object& input_shape) {
    return Finish(TimeDistributed(layer), name, input_shape);
  }, py::arg("layer"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     "Applies `layer` to every time step of (batch, time, ...) inputs with one set of weights.");
}

}  // namespace weft::python
