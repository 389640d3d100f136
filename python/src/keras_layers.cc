// weft.keras.layers added for TensorFlow programs (issue 16): shape layers (Reshape, Permute,
// Rescaling, ZeroPadding2D, Softmax), merge layers (Concatenate, Multiply, Average, Subtract,
// Maximum, Minimum), the 1-D layers (Conv1D, pooling), global poolings and LeakyReLU, each with
// Keras' argument names and defaults; and the activation functions applied to graph tensors.
// Every factory is callable with keyword arguments only, so its call is its config.
#include "train/layer.h"

#include "train/layers_noise.h"

#include "keras_common.h"

namespace weft::python {
namespace {

using namespace weft::train;

// Keras accepts an int or a one-element tuple for 1-D sizes.
int64_t Single(const py::handle& h, const char* what) {
  if (py::isinstance<py::int_>(h)) return h.cast<int64_t>();
  std::vector<int64_t> v;
  for (const py::handle& x : h) v.push_back(x.cast<int64_t>());
  WEFT_REQUIRE(v.size() == 1, "{} must be an int or a 1-tuple, got {}", what, std::string(py::repr(h)));
  return v[0];
}

std::vector<int64_t> Ints(const py::handle& h, const char* what) {
  std::vector<int64_t> v;
  try {
    for (const py::handle& x : h) v.push_back(x.cast<int64_t>());
  } catch (const py::error_already_set&) {
    throw Error(errors::InvalidArgument("{} must be a tuple of ints, got {}", what, std::string(py::repr(h))));
  } catch (const py::cast_error&) {
    throw Error(errors::InvalidArgument("{} must be a tuple of ints, got {}", what, std::string(py::repr(h))));
  }
  return v;
}

// weft's layers are channels_last only (Keras' default).
void ChannelsLast(const py::object& data_format, const char* layer) {
  WEFT_REQUIRE(data_format.is_none() || data_format.cast<std::string>() == "channels_last",
               "{}: data_format must be 'channels_last' (weft's layout), got '{}'", layer,
               std::string(py::str(data_format)));
}

// ZeroPadding1D / Cropping1D amounts: p or (left, right).
std::vector<int64_t> Amounts1D(const py::handle& h, const char* what) {
  if (py::isinstance<py::int_>(h)) return std::vector<int64_t>(2, h.cast<int64_t>());
  std::vector<int64_t> v = Ints(h, what);
  WEFT_REQUIRE(v.size() == 2, "{} must be an int or a pair, got {}", what, std::string(py::repr(h)));
  return v;
}

// ZeroPadding2D / Cropping2D amounts: p, (sym_h, sym_w) or ((top, bottom), (left, right)).
std::vector<int64_t> Amounts2D(const py::handle& h, const char* what) {
  if (py::isinstance<py::int_>(h)) return std::vector<int64_t>(4, h.cast<int64_t>());
  std::vector<int64_t> out;
  py::sequence seq = py::reinterpret_borrow<py::sequence>(h);
  WEFT_REQUIRE(py::len(seq) == 2, "{} must be an int, 2 ints or 2 pairs, got {}", what, std::string(py::repr(h)));
  for (const py::handle& p : seq) {
    std::vector<int64_t> pair = Amounts1D(p, what);
    out.insert(out.end(), pair.begin(), pair.end());
  }
  return out;
}

std::string Doc(const std::string& text) { return text + kCommonArgs; }

void DefShapeLayers(py::module_& layers) {
  layers.def("Reshape", [](const py::object& target_shape, const py::object& name, const py::object& input_shape) {
    return Finish(Reshape(Ints(target_shape, "Reshape target_shape")), name, input_shape);
  }, py::arg("target_shape"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Reshapes each example to target_shape (no batch dim); one entry may be -1, inferred:\n"
         "    Reshape((3, 4)) maps (None, 12) to (None, 3, 4);\n"
         "    Reshape((-1, 2, 2)) maps it to (None, 3, 2, 2).").c_str());
  layers.def("Permute", [](const py::object& dims, const py::object& name, const py::object& input_shape) {
    return Finish(Permute(Ints(dims, "Permute dims")), name, input_shape);
  }, py::arg("dims"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Permutes the non-batch axes; dims counts from 1: Permute((2, 1)) maps (None, 10, 64) to\n"
         "(None, 64, 10).").c_str());
  layers.def("Rescaling", [](double scale, double offset, const py::object& name, const py::object& input_shape) {
    return Finish(Rescaling(scale, offset), name, input_shape);
  }, py::arg("scale"), py::arg("offset") = 0.0, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("inputs * scale + offset: Rescaling(1. / 255) maps [0, 255] to [0, 1]; Rescaling(1. / 127.5,\n"
         "offset=-1) to [-1, 1].").c_str());
  layers.def("Normalization", [](const py::object& axis, const py::object& mean, const py::object& variance,
                                 bool invert, const py::object& name, const py::object& input_shape) {
    NormalizationOptions o;
    o.has_axis = !axis.is_none();
    if (o.has_axis) {
      WEFT_REQUIRE(py::isinstance<py::int_>(axis), "Normalization: axis must be an int or None (weft takes one "
                   "axis), got {}", std::string(py::repr(axis)));
      o.axis = axis.cast<int64_t>();
    }
    auto stat = [](const py::object& v) {
      return v.is_none() ? Tensor() : NumpyToTensor(py::module_::import("numpy").attr("asarray")(v, "float32"));
    };
    o.mean = stat(mean);
    o.variance = stat(variance);
    o.invert = invert;
    LayerPtr layer = Normalization(o);
    py::object obj = Finish(layer, name, input_shape);
    // Keras' adapt(data): the statistics of a numpy array (or anything np.asarray takes) [N, ...].
    // The per-example shape adapt saw is kept on the Python object (`_adapt_shape`), so the
    // adapted weights can be read (`layer.mean`) before any model is built (keras/_eager.py).
    // A weak reference: the method is an attribute of the object it refers to.
    obj.attr("adapt") = py::cpp_function([layer, self = py::weakref(obj)](const py::object& data,
                                                                        const py::object& batch_size,
                                                                        const py::object& steps) {
      WEFT_REQUIRE(!py::hasattr(data, "element_spec"), "Normalization.adapt: weft adapts from an array "
                   "(np.asarray(data)), not from a Dataset");
      py::object array = py::module_::import("numpy").attr("asarray")(data, "float32");
      AdaptNormalization(*layer, NumpyToTensor(array));
      py::object owner = self();
      if (!owner.is_none()) owner.attr("_adapt_shape") = array.attr("shape")[py::slice(1, std::nullopt, std::nullopt)];
    }, py::arg("data"), py::arg("batch_size") = py::none(), py::arg("steps") = py::none());
    return obj;
  }, py::arg("axis") = -1, py::arg("mean") = py::none(), py::arg("variance") = py::none(), py::arg("invert") = false,
     py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("(x - mean) / sqrt(variance) per index of axis (None: one mean and variance for all); invert=True\n"
         "maps back. mean / variance: given, or set by layer.adapt(data) from an array [N, ...] before the\n"
         "model is built (they become the non-trainable weights 'mean' and 'variance').").c_str());
  // ZeroPadding / Cropping 1D and 2D: (factory, Keras argument, default, the argument's forms).
  struct Resize {
    const char* name;
    LayerPtr (*make)(std::vector<int64_t>);
    const char* arg;
    py::object fallback;
    bool two_d;
    const char* doc;
  };
  const py::object pair_of_pairs = py::make_tuple(py::make_tuple(0, 0), py::make_tuple(0, 0));
  for (const Resize& r :
       {Resize{"ZeroPadding1D", &ZeroPadding1D, "padding", py::int_(1), false,
               "Adds zero steps to (batch, steps, channels). padding: an int (both sides) or (left, right)."},
        Resize{"ZeroPadding2D", &ZeroPadding2D, "padding", py::make_tuple(1, 1), true,
               "Adds zero rows and columns around NHWC images. padding: an int (all sides), (h, w)\n"
               "(symmetric) or ((top, bottom), (left, right))."},
        Resize{"Cropping1D", &Cropping1D, "cropping", py::make_tuple(1, 1), false,
               "Removes steps from (batch, steps, channels). cropping: an int (both sides) or (left, right)."},
        Resize{"Cropping2D", &Cropping2D, "cropping", pair_of_pairs, true,
               "Removes rows and columns of NHWC images. cropping: an int (all sides), (h, w) (symmetric)\n"
               "or ((top, bottom), (left, right))."}}) {
    layers.def(r.name, [r](const py::object& amounts, const py::object& data_format, const py::object& name,
                           const py::object& input_shape) {
      ChannelsLast(data_format, r.name);
      const std::string what = std::string(r.name) + " " + r.arg;
      return Finish(r.make(r.two_d ? Amounts2D(amounts, what.c_str()) : Amounts1D(amounts, what.c_str())), name,
                    input_shape);
    }, py::arg(r.arg) = r.fallback, py::arg("data_format") = py::none(), py::arg("name") = py::none(),
       py::arg("input_shape") = py::none(), Doc(r.doc).c_str());
  }
  layers.def("LayerNormalization", [](const py::object& axis, double epsilon, bool center, bool scale,
                                      const py::object& beta_initializer, const py::object& gamma_initializer,
                                      const py::object& name, const py::object& input_shape) {
    LayerNormalizationOptions o;
    WEFT_REQUIRE(py::isinstance<py::int_>(axis), "LayerNormalization: axis must be an int (weft normalizes over one "
                 "axis), got {}", std::string(py::repr(axis)));
    o.axis = axis.cast<int64_t>();
    o.epsilon = epsilon;
    o.center = center;
    o.scale = scale;
    o.beta_initializer = InitializerArg(beta_initializer, "beta_initializer");
    o.gamma_initializer = InitializerArg(gamma_initializer, "gamma_initializer");
    return Finish(LayerNormalization(o), name, input_shape);
  }, py::arg("axis") = -1, py::arg("epsilon") = 1e-3, py::arg("center") = true, py::arg("scale") = true,
     py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones", py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(),
     Doc("Normalizes each example over `axis`: (x - mean) / sqrt(variance + epsilon) * gamma + beta.").c_str());
  layers.def("Embedding", [](int64_t input_dim, int64_t output_dim, const py::object& embeddings_initializer,
                             const py::object& embeddings_regularizer, const py::object& embeddings_constraint,
                             bool mask_zero, const py::object& weights, const py::object& lora_rank,
                             const py::object& input_length, const py::object& name, const py::object& input_shape) {
    WEFT_REQUIRE(weights.is_none(), "Embedding: weights= (an initial table) is not supported; use "
                 "embeddings_initializer=weft.keras.initializers.Constant(...) or set_weights after building");
    WEFT_REQUIRE(lora_rank.is_none(), "Embedding: lora_rank is not supported by weft");
    (void)input_length;  // Keras 2's input_length: the shape comes from the input
    EmbeddingOptions o;
    o.embeddings_initializer = InitializerArg(embeddings_initializer, "embeddings_initializer");
    std::tie(o.embeddings_l1, o.embeddings_l2) = RegularizerArg(embeddings_regularizer, "embeddings_regularizer");
    o.embeddings_constraint = ConstraintArg(embeddings_constraint, "embeddings_constraint");
    o.mask_zero = mask_zero;
    return Finish(Embedding(input_dim, output_dim, o), name, input_shape);
  }, py::arg("input_dim"), py::arg("output_dim"), py::arg("embeddings_initializer") = "uniform",
     py::arg("embeddings_regularizer") = py::none(), py::arg("embeddings_constraint") = py::none(),
     py::arg("mask_zero") = false, py::arg("weights") = py::none(), py::arg("lora_rank") = py::none(),
     py::arg("input_length") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Turns integer ids (batch, ...) into rows of a learned (input_dim, output_dim) table: (batch, ..., "
         "output_dim).\nIds must be whole numbers in [0, input_dim): another is an InvalidArgumentError naming it. "
         "input_length is ignored\n(Keras 2's; shapes come from the input). mask_zero=True: id 0 is padding; its "
         "mask reaches LSTM / GRU / SimpleRNN /\nBidirectional / GlobalAveragePooling1D (through Dense, Dropout, "
         "activations), which skip the masked steps as Keras.").c_str());
  layers.def("MultiHeadAttention", [](int64_t num_heads, int64_t key_dim, const py::object& value_dim, double dropout,
                                      bool use_bias, const py::object& output_shape, const py::object& attention_axes,
                                      const py::object& flash_attention, const py::object& kernel_initializer,
                                      const py::object& bias_initializer, const py::object& kernel_regularizer,
                                      const py::object& seed, const py::object& name) {
    MultiHeadAttentionOptions o;
    o.value_dim = value_dim.is_none() ? 0 : value_dim.cast<int64_t>();
    WEFT_REQUIRE(value_dim.is_none() || o.value_dim > 0, "MultiHeadAttention: value_dim must be positive, got {}",
                 o.value_dim);
    o.dropout = dropout;
    o.use_bias = use_bias;
    if (!output_shape.is_none()) {
      o.output_dim = Single(output_shape, "MultiHeadAttention output_shape");
      WEFT_REQUIRE(o.output_dim > 0, "MultiHeadAttention: output_shape must be positive, got {}", o.output_dim);
    }
    // weft attends over the steps of (batch, steps, features) inputs: Keras' default for rank 3.
    WEFT_REQUIRE(attention_axes.is_none() || Single(attention_axes, "MultiHeadAttention attention_axes") == 1,
                 "MultiHeadAttention: attention_axes must be None or (1,) (weft attends over axis 1 of rank-3 "
                 "inputs), got {}", std::string(py::repr(attention_axes)));
    (void)flash_attention;  // a kernel choice, not a different result
    o.kernel_initializer = InitializerArg(kernel_initializer, "kernel_initializer");
    o.bias_initializer = InitializerArg(bias_initializer, "bias_initializer");
    std::tie(o.kernel_l1, o.kernel_l2) = RegularizerArg(kernel_regularizer, "kernel_regularizer");
    o.seed = seed.is_none() ? 0 : seed.cast<int64_t>();
    return Finish(MultiHeadAttention(num_heads, key_dim, o), name, py::none());
  }, py::arg("num_heads"), py::arg("key_dim"), py::arg("value_dim") = py::none(), py::arg("dropout") = 0.0,
     py::arg("use_bias") = true, py::arg("output_shape") = py::none(), py::arg("attention_axes") = py::none(),
     py::arg("flash_attention") = py::none(), py::arg("kernel_initializer") = "glorot_uniform",
     py::arg("bias_initializer") = "zeros", py::arg("kernel_regularizer") = py::none(), py::arg("seed") = py::none(),
     py::arg("name") = py::none(),
     Doc("Multi-head scaled dot-product attention over (batch, steps, features) inputs; call it as Keras':\n"
         "layer(query, value, key=None, attention_mask=None, use_causal_mask=False). Output (batch, query steps,\n"
         "output_shape or the query's features). attention_mask (batch, T, S) keeps positions > 0.5.").c_str());
  layers.def("_set_use_causal_mask", [](Layer& layer, bool causal) { SetUseCausalMask(layer, causal); });
  layers.def("_set_return_attention_scores", [](Layer& layer, bool scores) { SetReturnAttentionScores(layer, scores); });
  layers.def("UpSampling1D", [](int64_t size, const py::object& name, const py::object& input_shape) {
    return Finish(UpSampling1D(size), name, input_shape);
  }, py::arg("size") = 2, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Repeats each step `size` times: (batch, steps, c) -> (batch, steps * size, c).").c_str());
  layers.def("UpSampling2D", [](const py::object& size, const py::object& data_format,
                                const std::string& interpolation, const py::object& name,
                                const py::object& input_shape) {
    ChannelsLast(data_format, "UpSampling2D");
    WEFT_REQUIRE(interpolation == "nearest", "UpSampling2D: weft supports interpolation='nearest' only, got '{}'",
                 interpolation);
    return Finish(UpSampling2D(Pair(size, "UpSampling2D size")), name, input_shape);
  }, py::arg("size") = py::make_tuple(2, 2), py::arg("data_format") = py::none(), py::arg("interpolation") = "nearest",
     py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Repeats each row and column of NHWC images (nearest neighbour). size: an int or (sh, sw).").c_str());
  layers.def("Softmax", [](int64_t axis, const py::object& name, const py::object& input_shape) {
    return Finish(Softmax(axis), name, input_shape);
  }, py::arg("axis") = -1, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("exp(x) / sum(exp(x)) along axis (default the last).").c_str());
  layers.def("ReLU", [](const py::object& max_value, double negative_slope, double threshold, const py::object& name,
                        const py::object& input_shape) {
    ReLUOptions o;
    if (!max_value.is_none()) o.max_value = max_value.cast<double>();
    o.negative_slope = negative_slope;
    o.threshold = threshold;
    return Finish(ReLU(o), name, input_shape);
  }, py::arg("max_value") = py::none(), py::arg("negative_slope") = 0.0, py::arg("threshold") = 0.0,
     py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("x where x > threshold (else 0), at most max_value, minus negative_slope * relu(threshold - x);\n"
         "the defaults are max(x, 0). ReLU(max_value=6) is relu6.").c_str());
  layers.def("LeakyReLU", [](double negative_slope, const py::object& alpha, const py::object& name,
                             const py::object& input_shape) {
    return Finish(LeakyReLU(alpha.is_none() ? negative_slope : alpha.cast<double>()), name, input_shape);
  }, py::arg("negative_slope") = 0.3, py::arg("alpha") = py::none(), py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(),
     Doc("x if x > 0 else negative_slope * x. alpha: tf.keras 2's name for negative_slope.").c_str());
  layers.def("PReLU", [](const py::object& alpha_initializer, const py::object& alpha_regularizer,
                         const py::object& alpha_constraint, const py::object& shared_axes, const py::object& name,
                         const py::object& input_shape) {
    WEFT_REQUIRE(alpha_regularizer.is_none() && alpha_constraint.is_none(),
                 "PReLU: alpha_regularizer and alpha_constraint are not supported by weft");
    std::vector<int64_t> shared;
    if (py::isinstance<py::int_>(shared_axes)) shared.push_back(shared_axes.cast<int64_t>());
    else if (!shared_axes.is_none()) shared = Ints(shared_axes, "PReLU shared_axes");
    return Finish(PReLU(InitializerArg(alpha_initializer, "alpha_initializer"), shared), name, input_shape);
  }, py::arg("alpha_initializer") = "zeros", py::arg("alpha_regularizer") = py::none(),
     py::arg("alpha_constraint") = py::none(), py::arg("shared_axes") = py::none(), py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(),
     Doc("x if x > 0 else alpha * x, alpha learned per input value (weight of the example shape; the axes\n"
         "in shared_axes, counted from 1, share one alpha).").c_str());
  layers.def("RepeatVector", [](int64_t n, const py::object& name, const py::object& input_shape) {
    return Finish(RepeatVector(n), name, input_shape);
  }, py::arg("n"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("(batch, features) -> (batch, n, features): each example repeated n times.").c_str());
  layers.def("Identity", [](const py::object& name, const py::object& input_shape) {
    return Finish(Identity(), name, input_shape);
  }, py::arg("name") = py::none(), py::arg("input_shape") = py::none(), Doc("The input unchanged.").c_str());
  layers.def("ELU", [](double alpha, const py::object& name, const py::object& input_shape) {
    return Finish(ELU(alpha), name, input_shape);
  }, py::arg("alpha") = 1.0, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("x if x > 0 else alpha * (exp(x) - 1).").c_str());
}

void DefMergeLayers(py::module_& layers) {
  struct Merge {
    const char* name;
    LayerPtr (*make)();
    const char* doc;
  };
  for (const Merge& m : {Merge{"Multiply", &Multiply, "Element-wise product of two or more inputs of one shape."},
                         Merge{"Average", &Average, "Element-wise mean of two or more inputs of one shape."},
                         Merge{"Maximum", &Maximum, "Element-wise max of two or more inputs of one shape."},
                         Merge{"Minimum", &Minimum, "Element-wise min of two or more inputs of one shape."},
                         Merge{"Subtract", &Subtract, "inputs[0] - inputs[1] (exactly two inputs of one shape)."}}) {
    layers.def(m.name, [make = m.make](const py::object& name) { return Finish(make(), name, py::none()); },
               py::arg("name") = py::none(),
               (std::string(m.doc) + "\nCalled on a list: layers." + m.name + "()([a, b]).").c_str());
  }
  layers.def("Concatenate", [](int64_t axis, const py::object& name) {
    return Finish(Concatenate(axis), name, py::none());
  }, py::arg("axis") = -1, py::arg("name") = py::none(),
     "Joins a list of inputs along axis (default the last); the other dims must agree:\n"
     "    layers.Concatenate()([a, b]) with a (None, 4), b (None, 6) gives (None, 10).");
}

void DefConvLayers(py::module_& layers) {
  layers.def("Conv1D", [](int64_t filters, const py::object& kernel_size, const py::object& strides,
                          const std::string& padding, const py::object& data_format, const py::object& dilation_rate,
                          const py::object& activation, bool use_bias, const py::object& kernel_initializer,
                          const py::object& bias_initializer, const py::object& kernel_regularizer,
                          const py::object& name, const py::object& input_shape, const py::object& bias_regularizer,
                          const py::object& kernel_constraint, const py::object& bias_constraint,
                         const py::object& activity_regularizer) {
    ChannelsLast(data_format, "Conv1D");
    Conv1DOptions o;
    o.strides = Single(strides, "Conv1D strides");
    o.padding = padding;
    o.dilation_rate = Single(dilation_rate, "Conv1D dilation_rate");
    SetKernelOptions(o, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                     kernel_constraint, bias_constraint, activity_regularizer);
    return Finish(Conv1D(filters, Single(kernel_size, "Conv1D kernel_size"), o), name, input_shape);
  }, py::arg("filters"), py::arg("kernel_size"), py::arg("strides") = 1, py::arg("padding") = "valid",
     py::arg("data_format") = py::none(), py::arg("dilation_rate") = 1, py::arg("activation") = py::none(),
     py::arg("use_bias") = true, py::arg("kernel_initializer") = "glorot_uniform",
     py::arg("bias_initializer") = "zeros", py::arg("kernel_regularizer") = py::none(), py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(), WEFT_KERNEL_EXTRA_ARGS,
     Doc("1-D convolution over (batch, steps, channels) with a (kernel_size, in_channels, filters) kernel.\n\n"
         "padding: 'valid', 'same' or 'causal' (output step t sees input steps <= t).\n"
         "strides, dilation_rate: ints (not both above 1). activation, use_bias, initializers,\n"
         "regularizers, constraints: as for Conv2D.").c_str());
  layers.def("Conv2DTranspose", [](int64_t filters, const py::object& kernel_size, const py::object& strides,
                                   const std::string& padding, const py::object& output_padding,
                                   const py::object& data_format, const py::object& dilation_rate,
                                   const py::object& activation, bool use_bias, const py::object& kernel_initializer,
                                   const py::object& bias_initializer, const py::object& kernel_regularizer,
                                   const py::object& name, const py::object& input_shape,
                                   const py::object& bias_regularizer, const py::object& kernel_constraint,
                                   const py::object& bias_constraint, const py::object& activity_regularizer) {
    ChannelsLast(data_format, "Conv2DTranspose");
    WEFT_REQUIRE(output_padding.is_none(), "Conv2DTranspose: output_padding is not supported by weft");
    WEFT_REQUIRE(Pair(dilation_rate, "Conv2DTranspose dilation_rate") == std::vector<int64_t>({1, 1}),
                 "Conv2DTranspose: dilation_rate other than 1 is not supported by weft");
    Conv2DOptions o;
    o.strides = Pair(strides, "Conv2DTranspose strides");
    o.padding = padding;
    SetKernelOptions(o, activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                     kernel_constraint, bias_constraint, activity_regularizer);
    return Finish(Conv2DTranspose(filters, Pair(kernel_size, "Conv2DTranspose kernel_size"), o), name, input_shape);
  }, py::arg("filters"), py::arg("kernel_size"), py::arg("strides") = py::make_tuple(1, 1),
     py::arg("padding") = "valid", py::arg("output_padding") = py::none(), py::arg("data_format") = py::none(),
     py::arg("dilation_rate") = py::make_tuple(1, 1), py::arg("activation") = py::none(), py::arg("use_bias") = true,
     py::arg("kernel_initializer") = "glorot_uniform", py::arg("bias_initializer") = "zeros",
     py::arg("kernel_regularizer") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     WEFT_KERNEL_EXTRA_ARGS,
     Doc("Transposed 2-D convolution (upsampling; the gradient of Conv2D for its input) over NHWC inputs,\n"
         "with a (kh, kw, filters, in_channels) kernel. Output height: in * strides with padding='same',\n"
         "in * strides + max(kh - strides, 0) with 'valid'. activation, use_bias, initializers: as Conv2D.").c_str());
  // DepthwiseConv2D (filters None) and SeparableConv2D share their arguments.
  auto separable = [](const char* layer, const py::object& strides, const std::string& padding,
                      int64_t depth_multiplier, const py::object& data_format, const py::object& dilation_rate,
                      const py::object& activation, bool use_bias, const py::object& depthwise_initializer,
                      const py::object& pointwise_initializer, const py::object& bias_initializer) {
    ChannelsLast(data_format, layer);
    WEFT_REQUIRE(Pair(dilation_rate, "dilation_rate") == std::vector<int64_t>({1, 1}),
                 "{}: dilation_rate other than 1 is not supported by weft", layer);
    SeparableConv2DOptions o;
    o.strides = Pair(strides, "strides");
    o.padding = padding;
    o.depth_multiplier = depth_multiplier;
    o.activation = ActivationName(activation);
    o.use_bias = use_bias;
    o.depthwise_initializer = InitializerArg(depthwise_initializer, "depthwise_initializer");
    o.pointwise_initializer = InitializerArg(pointwise_initializer, "pointwise_initializer");
    o.bias_initializer = InitializerArg(bias_initializer, "bias_initializer");
    return o;
  };
  layers.def("DepthwiseConv2D", [separable](const py::object& kernel_size, const py::object& strides,
                                            const std::string& padding, int64_t depth_multiplier,
                                            const py::object& data_format, const py::object& dilation_rate,
                                            const py::object& activation, bool use_bias,
                                            const py::object& depthwise_initializer,
                                            const py::object& bias_initializer, const py::object& name,
                                            const py::object& input_shape) {
    SeparableConv2DOptions o = separable("DepthwiseConv2D", strides, padding, depth_multiplier, data_format,
                                         dilation_rate, activation, use_bias, depthwise_initializer,
                                         py::str("glorot_uniform"), bias_initializer);
    return Finish(DepthwiseConv2D(Pair(kernel_size, "DepthwiseConv2D kernel_size"), o), name, input_shape);
  }, py::arg("kernel_size"), py::arg("strides") = py::make_tuple(1, 1), py::arg("padding") = "valid",
     py::arg("depth_multiplier") = 1, py::arg("data_format") = py::none(),
     py::arg("dilation_rate") = py::make_tuple(1, 1), py::arg("activation") = py::none(), py::arg("use_bias") = true,
     py::arg("depthwise_initializer") = "glorot_uniform",
     py::arg("bias_initializer") = "zeros", py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Each input channel convolved with its own depth_multiplier filters: kernel (kh, kw, in,\n"
         "depth_multiplier), output channels in * depth_multiplier.").c_str());
  layers.def("SeparableConv2D", [separable](int64_t filters, const py::object& kernel_size, const py::object& strides,
                                            const std::string& padding, const py::object& data_format,
                                            const py::object& dilation_rate, int64_t depth_multiplier,
                                            const py::object& activation, bool use_bias,
                                            const py::object& depthwise_initializer,
                                            const py::object& pointwise_initializer,
                                            const py::object& bias_initializer, const py::object& name,
                                            const py::object& input_shape) {
    SeparableConv2DOptions o = separable("SeparableConv2D", strides, padding, depth_multiplier, data_format,
                                         dilation_rate, activation, use_bias, depthwise_initializer,
                                         pointwise_initializer, bias_initializer);
    return Finish(SeparableConv2D(filters, Pair(kernel_size, "SeparableConv2D kernel_size"), o), name, input_shape);
  }, py::arg("filters"), py::arg("kernel_size"), py::arg("strides") = py::make_tuple(1, 1),
     py::arg("padding") = "valid", py::arg("data_format") = py::none(), py::arg("dilation_rate") = py::make_tuple(1, 1),
     py::arg("depth_multiplier") = 1, py::arg("activation") = py::none(), py::arg("use_bias") = true,
     py::arg("depthwise_initializer") = "glorot_uniform", py::arg("pointwise_initializer") = "glorot_uniform",
     py::arg("bias_initializer") = "zeros", py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("A depthwise convolution (kernel (kh, kw, in, depth_multiplier)) followed by a 1x1 convolution\n"
         "to `filters` channels (pointwise kernel (1, 1, in * depth_multiplier, filters)), then bias.").c_str());
  auto pool = [&](std::initializer_list<const char*> names, LayerPtr (*make)(int64_t, int64_t, std::string),
                  const char* doc) {
    for (const char* n : names) {
      layers.def(n, [make, n](const py::object& pool_size, const py::object& strides, const std::string& padding,
                              const py::object& data_format, const py::object& name, const py::object& input_shape) {
        ChannelsLast(data_format, n);
        const int64_t s = strides.is_none() ? 0 : Single(strides, "pooling strides");
        return Finish(make(Single(pool_size, "pool_size"), s, padding), name, input_shape);
      }, py::arg("pool_size") = 2, py::arg("strides") = py::none(), py::arg("padding") = "valid",
         py::arg("data_format") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
         Doc(std::string(doc) + "\n\npool_size: an int (default 2). strides: an int; None = pool_size.\n"
             "padding: 'valid' or 'same'.").c_str());
    }
  };
  pool({"MaxPooling1D", "MaxPool1D"}, &MaxPool1D, "Max over pool_size steps of (batch, steps, channels) inputs.");
  pool({"AveragePooling1D", "AvgPool1D"}, &AvgPool1D, "Mean over pool_size steps of (batch, steps, channels) inputs.");
  auto global = [&](std::initializer_list<const char*> names, LayerPtr (*make)(bool), const char* doc) {
    for (const char* n : names) {
      layers.def(n, [make, n](const py::object& data_format, bool keepdims, const py::object& name,
                              const py::object& input_shape) {
        ChannelsLast(data_format, n);
        return Finish(make(keepdims), name, input_shape);
      }, py::arg("data_format") = py::none(), py::arg("keepdims") = false, py::arg("name") = py::none(),
         py::arg("input_shape") = py::none(),
         Doc(std::string(doc) + "\nkeepdims: keep the pooled axes with size 1.").c_str());
    }
  };
  global({"GlobalAveragePooling2D", "GlobalAvgPool2D"}, &GlobalAveragePooling2D,
         "Mean over height and width: (batch, h, w, c) -> (batch, c).");
  global({"GlobalMaxPooling2D", "GlobalMaxPool2D"}, &GlobalMaxPooling2D,
         "Max over height and width: (batch, h, w, c) -> (batch, c).");
  global({"GlobalAveragePooling1D", "GlobalAvgPool1D"}, &GlobalAveragePooling1D,
         "Mean over the steps: (batch, steps, c) -> (batch, c).");
  global({"GlobalMaxPooling1D", "GlobalMaxPool1D"}, &GlobalMaxPooling1D,
         "Max over the steps: (batch, steps, c) -> (batch, c).");
}

}  // namespace

// Keras' seed argument: None (0: the graph's seed when set, else fresh) or an int.
int64_t SeedArg(const py::object& seed) { return seed.is_none() ? 0 : seed.cast<int64_t>(); }

void DefNoiseLayers(py::module_& layers) {
  layers.def("GaussianNoise", [](double stddev, const py::object& seed, const py::object& name, const py::object& input_shape) {
    return Finish(GaussianNoise(stddev, SeedArg(seed)), name, input_shape);
  }, py::arg("stddev"), py::arg("seed") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("Adds N(0, stddev**2) noise while training; the identity at inference.").c_str());
  struct Rated {
    const char* name;
    LayerPtr (*make)(double, int64_t);
    const char* doc;
  };
  for (const Rated& r : {Rated{"GaussianDropout", &GaussianDropout,
                               "Multiplies by N(1, rate / (1 - rate)) noise while training; the identity at inference."},
                         Rated{"SpatialDropout1D", &SpatialDropout1D,
                               "Drops whole channels of (batch, steps, channels) inputs while training (kept ones\n"
                               "scaled by 1 / (1 - rate)); the identity at inference."},
                         Rated{"SpatialDropout2D", &SpatialDropout2D,
                               "Drops whole channels of NHWC inputs while training (kept ones scaled by\n"
                               "1 / (1 - rate)); the identity at inference."},
                         Rated{"AlphaDropout", &AlphaDropout,
                               "Dropout that keeps SELU's mean and variance (dropped units set to SELU's\n"
                               "saturation, then an affine correction) while training; the identity at inference."}}) {
    layers.def(r.name, [make = r.make, what = r.name](double rate, const py::object& noise_shape, const py::object& seed,
                                                       const py::object& data_format, const py::object& name,
                                                       const py::object& input_shape) {
      WEFT_REQUIRE(noise_shape.is_none(), "{}: noise_shape is not supported by weft", what);
      ChannelsLast(data_format, what);
      return Finish(make(rate, SeedArg(seed)), name, input_shape);
    }, py::arg("rate"), py::arg("noise_shape") = py::none(), py::arg("seed") = py::none(),
       py::arg("data_format") = py::none(), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
       Doc(r.doc).c_str());
  }
  layers.def("ActivityRegularization", [](double l1, double l2, const py::object& name, const py::object& input_shape) {
    return Finish(ActivityRegularization(l1, l2), name, input_shape);
  }, py::arg("l1") = 0.0, py::arg("l2") = 0.0, py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     Doc("The identity; adds (l1 * sum(|x|) + l2 * sum(x**2)) / batch_size to the loss (training and evaluation).").c_str());
  layers.def("CenterCrop", [](int64_t height, int64_t width, const py::object& data_format, const py::object& name,
                              const py::object& input_shape) {
    ChannelsLast(data_format, "CenterCrop");
    return Finish(CenterCrop(height, width), name, input_shape);
  }, py::arg("height"), py::arg("width"), py::arg("data_format") = py::none(), py::arg("name") = py::none(),
     py::arg("input_shape") = py::none(),
     Doc("The central (height, width) window of NHWC images (in training and at inference).").c_str());
  layers.def("_Lambda", [](const py::object& tracer, const py::object& name, const py::object& input_shape) {
    // Released with the GIL held (the layer may be destroyed on a thread without it).
    std::shared_ptr<py::object> fn(new py::object(tracer), [](py::object* p) {
      py::gil_scoped_acquire gil;
      delete p;
    });
    return Finish(Lambda([fn](const TensorShape& shape) {
      py::gil_scoped_acquire gil;
      py::list dims;
      for (int i = 0; i < shape.rank(); ++i) dims.append(shape.dim(i) < 0 ? py::object(py::none()) : py::int_(shape.dim(i)));
      py::tuple r = (*fn)(py::tuple(dims));
      const PyTensor in = r[1].cast<PyTensor>(), out = r[2].cast<PyTensor>();
      return TracedFunction{r[0].cast<GraphPtr>(), in.out, out.out};
    }), name, input_shape);
  }, py::arg("tracer"), py::arg("name") = py::none(), py::arg("input_shape") = py::none(),
     "A Lambda layer: tracer(shape) returns (graph, input tensor, output tensor), called once.");
}

void DefAugmentLayers(py::module_& layers);  // keras_augment.cc
void DefRnnLayers(py::module_& layers);      // keras_rnn.cc

void InitKerasLayers(py::module_& k, py::module_& layers) {
  DefNoiseLayers(layers);
  DefAugmentLayers(layers);
  DefShapeLayers(layers);
  DefMergeLayers(layers);
  DefConvLayers(layers);
  DefRnnLayers(layers);
  k.def("_is_input", [](const PySym& t) { return t.sym->layer == nullptr; }, py::arg("tensor"),
        "Whether a KerasTensor is a model input (keras.Input), not a layer's output.");
  k.def("_known_activations", &KnownActivations);
  k.def("_check_activation", &CheckActivation, py::arg("name"),
        "Raises InvalidArgument listing the known names when `name` is not a Keras activation.");
  k.def("_apply_activation", [](const PyTensor& x, const std::string& activation) {
    Scope s = Scope::Root(x.graph.cast<Graph*>());
    return PyTensor{x.graph, ApplyActivation(s, activation, x.out)};
  }, py::arg("x"), py::arg("activation"), "The named activation of a graph tensor, as new nodes in its graph.");
}

}  // namespace weft::python
