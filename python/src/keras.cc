// weft.keras building blocks: layers (the C++ train::Layer objects, made by their factory
// functions with Keras' argument names), symbolic inputs, initializers and the MNIST-format data
// loaders. Losses, metrics, optimizers and schedules: keras_compile.cc.
#include "data/datasets.h"
#include "data/idx.h"
#include "train/initializers.h"
#include "train/layer.h"
#include "train/layers_traced.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;
using data::MnistSplit;

py::object ShapeTuple(const TensorShape& s) {
  if (s.unknown_rank()) return py::none();
  py::tuple t(s.rank());
  for (int i = 0; i < s.rank(); ++i) t[i] = s.dim(i) < 0 ? py::object(py::none()) : py::object(py::int_(s.dim(i)));
  return t;
}

py::list WeightSpecs(const Layer& l) {
  py::list out;
  for (const Weight& w : l.weights()) out.append(py::make_tuple(w.name, ShapeTuple(w.shape), w.trainable));
  return out;
}

}  // namespace

// The argument conversions every layer factory shares (declared in keras_common.h).
// Keras accepts an int or a pair for sizes: 3 -> {3, 3}.
std::vector<int64_t> Pair(const py::handle& h, const char* what) {
  if (py::isinstance<py::int_>(h)) return {h.cast<int64_t>(), h.cast<int64_t>()};
  std::vector<int64_t> v;
  for (const py::handle& x : h) v.push_back(x.cast<int64_t>());
  WEFT_REQUIRE(v.size() == 2, "{} must be an int or a pair of ints, got {}", what, std::string(py::repr(h)));
  return v;
}

// None, a name ("relu"), or a callable with a known __name__ (weft.nn.relu, tf.nn.relu).
std::string ActivationName(const py::handle& h) {
  if (h.is_none()) return "";
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (py::hasattr(h, "__name__")) {
    // A Keras function (keras.activations.gelu) or tf.nn's (weft.nn.relu) by its name; any other
    // Python function cannot run inside the C++ graph.
    const std::string name = py::str(h.attr("__name__")).cast<std::string>();
    try {
      CheckActivation(name);
    } catch (const Error&) {
      throw Error(errors::InvalidArgument("activation {}: weft's layers take Keras' activations by name or as "
                                          "weft.keras.activations functions (known: {}); other Python functions "
                                          "are not run inside the graph", std::string(py::repr(h)), KnownActivations()));
    }
    return name;
  }
  throw Error(errors::InvalidArgument("activation must be None, a name such as 'relu', or a function such as "
                                      "weft.keras.activations.relu; got {}",
                                      std::string(py::repr(h))));
}

Initializer InitializerArg(const py::handle& h, const char* what) {
  // None: what Keras' add_weight uses for a float weight given no initializer (glorot_uniform),
  // e.g. Dense(bias_initializer=None).
  if (h.is_none()) return InitializerByName("glorot_uniform");
  if (py::isinstance<py::str>(h)) return InitializerByName(h.cast<std::string>());
  if (py::isinstance<Initializer>(h)) return h.cast<Initializer>();
  throw Error(errors::InvalidArgument("{} must be a name ('glorot_uniform', 'zeros', ...) or a "
                                      "weft.keras.initializers object; got {}", what, std::string(py::repr(h))));
}

// kernel_regularizer: None, a number, or weft.keras.regularizers.l2(x) (anything with an `l2`).
double L2Arg(const py::handle& h) {
  if (h.is_none()) return 0.0;
  if (py::hasattr(h, "l2")) return h.attr("l2").cast<double>();
  return h.cast<double>();
}

std::pair<double, double> RegularizerArg(const py::handle& h, const char* what) {
  if (h.is_none()) return {0.0, 0.0};
  if (py::hasattr(h, "l1") || py::hasattr(h, "l2")) {
    const double l1 = py::hasattr(h, "l1") ? py::getattr(h, "l1").cast<double>() : 0.0;
    const double l2 = py::hasattr(h, "l2") ? py::getattr(h, "l2").cast<double>() : 0.0;
    WEFT_REQUIRE(l1 >= 0.0 && l2 >= 0.0, "{}: l1 and l2 must be >= 0, got {} and {}", what, l1, l2);
    return {l1, l2};
  }
  if (py::isinstance<py::float_>(h) || py::isinstance<py::int_>(h)) return {0.0, h.cast<double>()};
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    if (name == "l1") return {0.01, 0.0};
    if (name == "l2") return {0.0, 0.01};
    if (name == "l1_l2") return {0.01, 0.01};
    throw Error(errors::InvalidArgument("{}: unknown regularizer '{}' (known: l1, l2, l1_l2)", what, name));
  }
  throw py::type_error(fmt::format(
      "{}: weft takes weft.keras.regularizers objects (L1, L2, L1L2, l1, l2, l1_l2) or None, got {}; a custom "
      "regularizer function is not supported (add its term to the loss of a subclassed model instead)",
      what, std::string(py::repr(h))));
}

Constraint ConstraintArg(const py::handle& h, const char* what) {
  if (h.is_none()) return {};
  if (py::isinstance<Constraint>(h)) return h.cast<Constraint>();
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    Constraint c;
    if (name == "max_norm") c.kind = Constraint::Kind::kMaxNorm;
    else if (name == "non_neg") c.kind = Constraint::Kind::kNonNeg;
    else if (name == "unit_norm") c.kind = Constraint::Kind::kUnitNorm;
    else if (name == "min_max_norm") c = {Constraint::Kind::kMinMaxNorm, 0.0, 1.0};
    else throw Error(errors::InvalidArgument("{}: unknown constraint '{}' (known: max_norm, min_max_norm, non_neg, unit_norm)", what, name));
    return c;
  }
  throw py::type_error(fmt::format(
      "{}: weft takes weft.keras.constraints objects (MaxNorm, MinMaxNorm, NonNeg, UnitNorm) or None, got {}; a "
      "custom constraint function is not supported", what, std::string(py::repr(h))));
}

// Sets the Keras extras every layer factory takes: a name and the Sequential input shape.
// Returns the Python object (which carries `_input_shape`).
py::object Finish(LayerPtr layer, const py::object& name, const py::object& input_shape) {
  if (!name.is_none()) layer->set_name(name.cast<std::string>());
  py::object obj = py::cast(std::shared_ptr<Layer>(layer));
  if (!input_shape.is_none()) obj.attr("_input_shape") = py::tuple(input_shape);
  return obj;
}

namespace {

py::tuple MnistSplitToNumpy(const std::string& dir, bool train) {
  MnistSplit s = data::LoadMnist(dir, train);
  return py::make_tuple(TensorToNumpy(std::exchange(s.images, Tensor())), TensorToNumpy(std::exchange(s.labels, Tensor())));
}

}  // namespace

// One KerasTensor, or a list for a call with several outputs (Keras' [output, state_h, state_c]).
py::object SymsToPython(const std::vector<Sym>& syms) {
  if (syms.size() == 1) return py::cast(PySym{syms[0]});
  py::list out;
  for (const Sym& s : syms) out.append(PySym{s});
  return out;
}

const char* const kCommonArgs =
    "\n\nname: the layer's name (default: Keras' scheme, e.g. 'conv2d', 'conv2d_1').\n"
    "input_shape: per-example input shape (no batch dim) when this is the first layer of a Sequential.";

void InitKeras(py::module_& k) {
  // ---- symbolic tensors and layers -----------------------------------------------------------
  // dynamic_attr: a KerasTensor keeps the Python custom layers it was computed by alive
  // (python/weft/keras/_custom.py, keep_layers).
  py::class_<PySym>(k, "KerasTensor", py::dynamic_attr(),
                    "A symbolic tensor of the functional API: a layer call's output or an Input.")
      .def_property_readonly("shape", [](const PySym& s) { return ShapeTuple(s.sym->shape); },
                             "Shape with the batch dim (None).")
      .def_property_readonly("name", [](const PySym& s) { return s.sym->name; })
      .def_property_readonly("dtype", [](const PySym& s) { return std::string(DTypeName(s.sym->dtype)); })
      .def("__repr__", [](const PySym& s) {
        return "<KerasTensor shape=" + s.sym->shape.ToString() +
               (s.sym->dtype == DType::kFloat32 ? "" : " dtype=" + std::string(DTypeName(s.sym->dtype))) + " name='" +
               s.sym->name + "'>";
      });
  k.def("Input", [](const py::object& shape, const std::string& name, const std::string& dtype) {
    std::vector<int64_t> dims;
    for (const py::handle& d : shape) dims.push_back(d.is_none() ? TensorShape::kUnknownDim : d.cast<int64_t>());
    return PySym{train::Input(TensorShape(dims), name, ParseDType(dtype))};
  }, py::arg("shape"), py::arg("name") = "input", py::arg("dtype") = "float32",
     "A model input of per-example `shape` (the batch dim is added in front), for the functional API:\n"
     "    x = keras.Input(shape=(28, 28, 1)); y = layers.Dense(10)(layers.Flatten()(x)); keras.Model(x, y)");

  // A Python subclass (Keras' custom layers, python/weft/keras/_custom.py) makes a TracedLayer.
  py::class_<Layer, TracedLayer, std::shared_ptr<Layer>>(k, "Layer", py::dynamic_attr(),
                                                         "A layer (train/layer.h); call it on KerasTensors to build a model.")
      .def(py::init<std::string>(), py::arg("type"))
      .def("__call__", [](Layer& l, const PySym& x) { return SymsToPython(l.Outputs({x.sym})); }, py::arg("inputs"))
      .def("__call__", [](Layer& l, const std::vector<PySym>& xs) {
        std::vector<Sym> syms;
        for (const PySym& s : xs) syms.push_back(s.sym);
        return SymsToPython(l.Outputs(syms));
      }, py::arg("inputs"), "A call's output, or the list of its outputs when it has several (return_state).")
      .def_property("name", &Layer::name, &Layer::set_name)
      .def_property_readonly("type", &Layer::type, "The layer class's Keras name (\"Conv2D\").")
      .def_property_readonly("built", &Layer::built)
      .def_property("trainable", &Layer::trainable, &Layer::set_trainable,
                    "Keras' trainable: False freezes the layer's weights (from the next compile) and runs a "
                    "BatchNormalization on its moving statistics.")
      .def_property_readonly("weights", &WeightSpecs, "(name, shape, trainable) of each declared weight (after the layer is built).")
      .def_property_readonly("_weight_specs", &WeightSpecs, "`weights` of the C++ layer (a custom layer's `weights` are Keras').")
      .def("count_params", [](const Layer& l) { return l.CountParams(true) + l.CountParams(false); })
      .def("__repr__", [](const Layer& l) {
        return "<weft.keras.layers." + l.type() + " '" + (l.name().empty() ? std::string("(unnamed)") : l.name()) + "'>";
      });

  py::module_ layers = k.def_submodule("layers", "Keras layers.");
  layers.def("Dense", [](int64_t units, const py::object& activation, bool use_bias, const py::object& kernel_initializer,
                         const py::object& bias_initializer, const py::object& kernel_regularizer, const py::object& name,
                         const py::object& input_shape, const py::object& bias_regularizer,
                         const py::object& kernel_constraint, const py::object& bias_constraint,
                         const py::object& activity_regularizer) {
    DenseOptions o;
    SetKernelOptions(o, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                     kernel_constraint, bias_constraint, activity_regularizer);
    return Finish(Dense(units, o), name, input_shape);
  }, py::arg("units"), py::arg("activation") = py::none(), py::arg("use_bias") = true,
     py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros",
     py::arg("kernel_regularizer") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     WEFT_KERNEL_EXTRA_ARGS,
     (std::string("Densely connected layer: activation(inputs @ kernel + bias) over the last axis (inputs of any rank >= 2).\n\n"
                  "units: output size. activation: None (linear), 'relu', 'softmax', 'sigmoid', 'tanh' or weft.nn.relu...\n"
                  "kernel_initializer / bias_initializer: a name or weft.keras.initializers object.\n"
                  "kernel_regularizer / bias_regularizer: weft.keras.regularizers.l2(x), l1(x), l1_l2(l1, l2)\n"
                  "(add l1 * sum(|w|) + l2 * sum(w**2) to the loss).\n"
                  "kernel_constraint / bias_constraint: weft.keras.constraints.MaxNorm(...), NonNeg(), ... (applied\n"
                  "after each optimizer update).\n"
                  "activity_regularizer: a regularizer of the output (its penalty / batch size joins the loss).")
      + kCommonArgs).c_str());
  layers.def("Conv2D", [](int64_t filters, const py::object& kernel_size, const py::object& strides,
                          const std::string& padding, const py::object& activation, bool use_bias,
                          const py::object& kernel_initializer, const py::object& bias_initializer,
                          const py::object& kernel_regularizer, const py::object& name, const py::object& input_shape,
                          const py::object& bias_regularizer, const py::object& kernel_constraint,
                          const py::object& bias_constraint, const py::object& activity_regularizer) {
    Conv2DOptions o;
    o.strides = Pair(strides, "Conv2D strides");
    o.padding = padding;
    SetKernelOptions(o, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                     kernel_constraint, bias_constraint, activity_regularizer);
    return Finish(Conv2D(filters, Pair(kernel_size, "Conv2D kernel_size"), o), name, input_shape);
  }, py::arg("filters"), py::arg("kernel_size"), py::arg("strides") = py::make_tuple(1, 1), py::arg("padding") = "valid",
     py::arg("activation") = py::none(), py::arg("use_bias") = true, py::arg("kernel_initializer") = "glorot_uniform",
     py::arg("bias_initializer") = "zeros", py::arg("kernel_regularizer") = py::none(), py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(), WEFT_KERNEL_EXTRA_ARGS,
     (std::string("2-D convolution over NHWC inputs (batch, height, width, channels) with a\n"
                  "(kh, kw, in_channels, filters) kernel.\n\n"
                  "filters: number of output channels.\n"
                  "kernel_size: an int (square) or (kh, kw).\n"
                  "strides: an int or (sh, sw). padding: 'valid' (no padding) or 'same'.\n"
                  "activation: None (linear), 'relu', 'softmax', 'sigmoid', 'tanh' or weft.nn.relu...\n"
                  "use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,\n"
                  "kernel_constraint, bias_constraint: as for Dense.\n\n"
                  "Example: Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1))") + kCommonArgs).c_str());
  auto pool = [&](const char* keras_name, const char* alias, LayerPtr (*make)(std::vector<int64_t>, std::vector<int64_t>, std::string),
                  const char* doc) {
    auto f = [make](const py::object& pool_size, const py::object& strides, const std::string& padding,
                    const py::object& name, const py::object& input_shape) {
      std::vector<int64_t> s = strides.is_none() ? std::vector<int64_t>{} : Pair(strides, "pooling strides");
      return Finish(make(Pair(pool_size, "pool_size"), s, padding), name, input_shape);
    };
    const std::string d = std::string(doc) +
        "\n\npool_size: an int or (ph, pw), default (2, 2).\nstrides: an int or a pair; None = pool_size.\n"
        "padding: 'valid' or 'same'." + kCommonArgs;
    for (const char* n : {keras_name, alias}) {
      layers.def(n, f, py::arg("pool_size") = py::make_tuple(2, 2), py::arg("strides") = py::none(),
                 py::arg("padding") = "valid", py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
                 d.c_str());
    }
  };
  pool("MaxPooling2D", "MaxPool2D", &MaxPool2D, "Max over pool_size windows of NHWC inputs.");
  pool("AveragePooling2D", "AvgPool2D", &AvgPool2D, "Mean over pool_size windows of NHWC inputs.");
  layers.def("Flatten", [](const py::object& name, const py::object& input_shape) {
    return Finish(Flatten(), name, input_shape);
  }, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     (std::string("Flattens each example: (batch, d1, d2, ...) -> (batch, d1 * d2 * ...).") + kCommonArgs).c_str());
  layers.def("Dropout", [](double rate, int64_t seed, const py::object& name, const py::object& input_shape) {
    return Finish(Dropout(rate, seed), name, input_shape);
  }, py::arg("rate"), py::arg("seed") = 0, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     (std::string("Zeroes a fraction `rate` of the inputs while training (scaling the rest by 1/(1-rate));\n"
                  "identity in evaluate/predict. seed: 0 = from the graph seed.") + kCommonArgs).c_str());
  layers.def("BatchNormalization", [](double momentum, double epsilon, const py::object& name, const py::object& input_shape) {
    return Finish(BatchNormalization(momentum, epsilon), name, input_shape);
  }, py::arg("momentum") = 0.99, py::arg("epsilon") = 1e-3, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     (std::string("Per-channel (last axis) normalization: batch statistics while training, moving averages\n"
                  "otherwise; moving = momentum * moving + (1 - momentum) * batch.") + kCommonArgs).c_str());
  layers.def("Activation", [](const py::object& activation, const py::object& name, const py::object& input_shape) {
    return Finish(Activation(ActivationName(activation)), name, input_shape);
  }, py::arg("activation"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     (std::string("Applies an activation by Keras name or function: ") + KnownActivations() + "." + kCommonArgs).c_str());
  layers.def("Add", [](const py::object& name) { return Finish(Add(), name, py::none()); },
             py::arg("name") = py::none(),
             "Element-wise sum of two or more inputs of one shape: layers.Add()([a, b]) (residual connections).");
  InitKerasLayers(k, layers);
  InitKerasCustom(k);

  // ---- initializers -----------------------------------------------------------------------------
  py::class_<Initializer>(k, "Initializer", "A weight initializer (train/initializers.h).")
      .def("__repr__", &Initializer::ToString)
      // The ops computing its float32 value for `shape` in `graph` (keras/initializers.py calls it).
      .def("_value", [](const Initializer& i, const py::object& graph, const std::vector<int64_t>& shape) {
        return PyTensor{graph, i.Build(Scope::Root(graph.cast<GraphPtr>().get()), TensorShape(shape))};
      }, py::arg("graph"), py::arg("shape"));
  py::module_ init = k.def_submodule("initializers", "Keras initializers.");
  init.def("Zeros", [] { return Zeros(); });
  init.def("Ones", [] { return Ones(); });
  // A number, or an array of one element (np.log([pos / neg]) in Keras' imbalanced-data example).
  init.def("Constant", [](const py::object& value) {
    py::object a = py::module_::import("numpy").attr("asarray")(value, "float64");
    WEFT_REQUIRE(a.attr("size").cast<int64_t>() == 1, "initializers.Constant: weft fills a weight with one number; "
                 "got a value of shape {} (set whole arrays with layer.set_weights)", std::string(py::str(a.attr("shape"))));
    return Constant(a.attr("item")().cast<double>());
  }, py::arg("value") = 0.0);
  // Keras' seed: None (a fresh draw per weight; the graph's seed when set) or an int.
  auto seed_arg = [](const py::object& seed) { return seed.is_none() ? int64_t{0} : seed.cast<int64_t>(); };
  for (const auto& [cls, factory] : {std::pair{"GlorotUniform", &GlorotUniform}, std::pair{"GlorotNormal", &GlorotNormal},
                                     std::pair{"HeNormal", &HeNormal}, std::pair{"HeUniform", &HeUniform},
                                     std::pair{"LecunNormal", &LecunNormal}, std::pair{"LecunUniform", &LecunUniform}}) {
    init.def(cls, [factory, seed_arg](const py::object& seed) { return factory(seed_arg(seed)); }, py::arg("seed") = py::none());
  }
  init.def("VarianceScaling", [seed_arg](double scale, const std::string& mode, const std::string& distribution,
                                         const py::object& seed) {
    return VarianceScaling(scale, mode, distribution, seed_arg(seed));
  }, py::arg("scale") = 1.0, py::arg("mode") = "fan_in", py::arg("distribution") = "truncated_normal",
     py::arg("seed") = py::none());
  init.def("RandomNormal", [seed_arg](double mean, double stddev, const py::object& seed) {
    return RandomNormal(mean, stddev, seed_arg(seed));
  }, py::arg("mean") = 0.0, py::arg("stddev") = 0.05, py::arg("seed") = py::none());
  init.def("TruncatedNormal", [seed_arg](double mean, double stddev, const py::object& seed) {
    return TruncatedNormal(mean, stddev, seed_arg(seed));
  }, py::arg("mean") = 0.0, py::arg("stddev") = 0.05, py::arg("seed") = py::none());
  init.def("RandomUniform", [seed_arg](double minval, double maxval, const py::object& seed) {
    return RandomUniform(minval, maxval, seed_arg(seed));
  }, py::arg("minval") = -0.05, py::arg("maxval") = 0.05, py::arg("seed") = py::none());
  init.def("Orthogonal", [seed_arg](double gain, const py::object& seed) { return Orthogonal(gain, seed_arg(seed)); },
           py::arg("gain") = 1.0, py::arg("seed") = py::none());
  init.def("Identity", [](double gain) { return IdentityInitializer(gain); }, py::arg("gain") = 1.0);
  init.def("get", [](const std::string& name) { return InitializerByName(name); }, py::arg("name"));

  // ---- constraints ------------------------------------------------------------------------------
  py::class_<Constraint>(k, "Constraint", "A weight constraint (train/layer.h), applied after each optimizer update.")
      .def_readonly("max_value", &Constraint::max_value)
      .def_readonly("min_value", &Constraint::min_value)
      .def_readonly("rate", &Constraint::rate)
      .def_readonly("axis", &Constraint::axis)
      .def("__repr__", &Constraint::ToString);
  py::module_ cons = k.def_submodule("constraints", "Keras weight constraints.");
  auto axes = [](const py::object& axis) {
    if (py::isinstance<py::int_>(axis)) return std::vector<int64_t>{axis.cast<int64_t>()};
    return axis.cast<std::vector<int64_t>>();
  };
  cons.def("MaxNorm", [axes](double max_value, const py::object& axis) {
    WEFT_REQUIRE(max_value >= 0.0, "MaxNorm: max_value must be >= 0, got {}", max_value);
    return Constraint{Constraint::Kind::kMaxNorm, 0.0, max_value, 1.0, axes(axis)};
  }, py::arg("max_value") = 2.0, py::arg("axis") = 0);
  cons.def("MinMaxNorm", [axes](double min_value, double max_value, double rate, const py::object& axis) {
    WEFT_REQUIRE(0.0 <= min_value && min_value <= max_value, "MinMaxNorm: needs 0 <= min_value <= max_value, got {} and {}",
                 min_value, max_value);
    return Constraint{Constraint::Kind::kMinMaxNorm, min_value, max_value, rate, axes(axis)};
  }, py::arg("min_value") = 0.0, py::arg("max_value") = 1.0, py::arg("rate") = 1.0, py::arg("axis") = 0);
  cons.def("UnitNorm", [axes](const py::object& axis) {
    return Constraint{Constraint::Kind::kUnitNorm, 0.0, 0.0, 1.0, axes(axis)};
  }, py::arg("axis") = 0);
  cons.def("NonNeg", [] { return Constraint{Constraint::Kind::kNonNeg}; });

  // ---- data -------------------------------------------------------------------------------------
  k.def("_load_mnist_dir", &MnistSplitToNumpy, py::arg("directory"), py::arg("train"),
        "(images uint8 [N, rows, cols], labels uint8 [N]) from MNIST-format IDX files in `directory`.");
  k.attr("FASHION_MNIST_DIR") = data::kFashionMnistDir;
}

}  // namespace weft::python
