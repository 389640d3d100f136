// Handles shared by the weft.keras bindings (keras.cc, keras_model.cc).
#pragma once

#include "train/layer.h"
#include "train/optimizers.h"

#include "common.h"

namespace weft::python {

// A symbolic tensor of the functional API.
struct PySym {
  train::Sym sym;
};

// One KerasTensor, or a list of them for a layer call with several outputs (keras.cc).
py::object SymsToPython(const std::vector<train::Sym>& syms);

// A learning-rate schedule (the C++ one is shared and const).
struct PySchedule {
  train::Schedule schedule;
};

// Argument conversions shared by the layer factories (keras.cc, keras_layers.cc).
std::vector<int64_t> Pair(const py::handle& h, const char* what);  // 3 -> {3, 3}; (3, 2) -> {3, 2}
// None -> "", a name -> itself, a callable (weft.keras.activations.relu, weft.nn.relu) -> its __name__.
std::string ActivationName(const py::handle& h);
train::Initializer InitializerArg(const py::handle& h, const char* what);
double L2Arg(const py::handle& h);  // kernel_regularizer: None, a number or regularizers.l2(x)
// kernel_regularizer / bias_regularizer: None, a number (l2) or a weft.keras.regularizers object
// (its l1 and l2); a Python function is NotImplementedError naming what to use instead.
std::pair<double, double> RegularizerArg(const py::handle& h, const char* what);  // (l1, l2)
// kernel_constraint / bias_constraint: None or a weft.keras.constraints object.
train::Constraint ConstraintArg(const py::handle& h, const char* what);
// Sets a layer's name and Sequential input shape and returns the Python object.
py::object Finish(train::LayerPtr layer, const py::object& name, const py::object& input_shape);
extern const char* const kCommonArgs;

// Sets what every layer with a kernel (Dense, Conv1D, Conv2D options) takes from Keras' arguments.
template <typename Options>
void SetKernelOptions(Options& o, const py::object& activation, bool use_bias, const py::object& kernel_initializer,
                      const py::object& bias_initializer, const py::object& kernel_regularizer,
                      const py::object& bias_regularizer = py::none(), const py::object& kernel_constraint = py::none(),
                      const py::object& bias_constraint = py::none(),
                      const py::object& activity_regularizer = py::none()) {
  o.activation = ActivationName(activation);
  o.use_bias = use_bias;
  o.kernel_initializer = InitializerArg(kernel_initializer, "kernel_initializer");
  o.bias_initializer = InitializerArg(bias_initializer, "bias_initializer");
  std::tie(o.kernel_l1, o.kernel_l2) = RegularizerArg(kernel_regularizer, "kernel_regularizer");
  std::tie(o.bias_l1, o.bias_l2) = RegularizerArg(bias_regularizer, "bias_regularizer");
  o.kernel_constraint = ConstraintArg(kernel_constraint, "kernel_constraint");
  o.bias_constraint = ConstraintArg(bias_constraint, "bias_constraint");
  std::tie(o.activity_l1, o.activity_l2) = RegularizerArg(activity_regularizer, "activity_regularizer");
}

// The extra Keras arguments of the layers with a kernel, in the order SetKernelOptions takes them.
#define WEFT_KERNEL_EXTRA_ARGS                                                                        \
  py::arg("bias_regularizer") = py::none(), py::arg("kernel_constraint") = py::none(), \
      py::arg("bias_constraint") = py::none(), py::arg("activity_regularizer") = py::none()  // the docs of `name` and `input_shape`

// keras_layers.cc: the layers added for issue 16 into `layers`, activation helpers into `k`.
void InitKerasLayers(py::module_& k, py::module_& layers);

// keras_custom.cc: the trace recorder of custom layers, and Layer._set_traces.
void InitKerasCustom(py::module_& k);

// Losses, metrics, optimizers and schedules (keras_compile.cc), and the learning-rate accessors
// of the Model class (after InitKerasModel has registered it).
void InitKerasCompile(py::module_& k);

}  // namespace weft::python
