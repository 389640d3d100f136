// Layers and symbolic tensors: the pieces models are made of (Keras' functional API in C++).
//
//   using namespace weft::train;
//   Sym x = Input({28, 28, 1});                              // shape without the batch dim
//   Sym h = Conv2D(32, 3, {.activation = "relu"})(x);        // shape (None, 26, 26, 32)
//   Sym y = Dense(10)(Flatten()(MaxPool2D(2)(h)));
//   Model model({x}, {y});                                   // train/model.h
//
// Applying a layer to symbolic tensors records the call and computes the output shape at
// once (a mismatch is reported there, naming the layer and the shapes); the first call also
// declares the layer's weights. The graph is built later, when the model compiles: each
// layer's Call adds ordinary graph nodes. A layer applied twice shares its weights.
//
// Thread-safety: layers and models are built from one thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/scope.h"
#include "train/initializers.h"

namespace weft::train {

class Layer;
struct SymNode;
using Sym = std::shared_ptr<const SymNode>;

// A symbolic tensor: an output of a layer call (or an Input) before any graph exists. A layer
// call may have several outputs (an LSTM with return_state: output, h, c); each is a SymNode with
// the call's layer and inputs, its `index`, and `first` pointing at the call's output 0 (null on
// output 0 itself), which identifies the call: the model builds each call once.
struct SymNode {
  std::shared_ptr<Layer> layer;  // null for an Input
  std::vector<Sym> inputs;  // the call's arguments
  TensorShape shape;        // with the batch dim (-1)
  std::string name;         // the Input's name, or the layer's name
  DType dtype = DType::kFloat32;  // int32 / int64 for integer Inputs and what layers pass on from them
  int index = 0;            // which output of the call
  Sym first;                // the call's output 0, for index > 0
  const SymNode* call() const { return first ? first.get() : this; }
};

// Keras' default name of a layer of class `type`: its class name in snake case ("conv2d",
// "max_pooling1d", "leaky_re_lu"); a model adds "_1", "_2", ... to later ones.
std::string DefaultLayerName(const std::string& type);

// A model input of per-example shape `shape` (the batch dim is added in front). dtype float32,
// or int32 / int64 for ids (Embedding takes them as they are; other layers cast them to float32,
// as Keras' layers do).
Sym Input(TensorShape shape, std::string name = "input", DType dtype = DType::kFloat32);

// Keras' weight constraints (kernel_constraint / bias_constraint): a projection the training step
// applies to the weight after each optimizer update, w = Project(w). Norms are over `axis` (Keras'
// default 0: a Dense kernel's column per unit), eps = 1e-7 as Keras' backend epsilon:
//   max_norm      w * clip(norm, 0, max_value) / (eps + norm)
//   min_max_norm  w * (rate * clip(norm, min_value, max_value) + (1 - rate) * norm) / (eps + norm)
//   unit_norm     w / (eps + norm)
//   non_neg       w * (w >= 0)
struct Constraint {
  enum class Kind { kNone, kMaxNorm, kMinMaxNorm, kUnitNorm, kNonNeg };
  Kind kind = Kind::kNone;
  double min_value = 0.0, max_value = 2.0, rate = 1.0;
  std::vector<int64_t> axis = {0};  // negative: from the end
  explicit operator bool() const { return kind != Kind::kNone; }
  Output Project(const Scope& s, Output w) const;
  std::string ToString() const;  // "max_norm(max_value=2, axis=[0])"
};

// A weight a layer declares; the model creates the variable.
struct Weight {
  std::string name;  // within the layer: "kernel", "bias", "moving_mean", ...
  TensorShape shape;
  Initializer init;
  bool trainable = true;
  double l2 = 0.0;  // kernel_regularizer / bias_regularizer: adds l1 * sum(|w|) + l2 * sum(w^2) to the loss
  double l1 = 0.0;
  Constraint constraint;  // applied after each update
};

// What a layer's Call sees: where to add nodes, the variables of its weights, the mode, and
// where to put state updates that the training step must run (batch-norm moving averages).
struct CallContext {
  Scope scope;                      // names "layer_name/..."
  bool training = false;
  std::vector<Output> weights;      // one per declared weight, in declaration order
  std::vector<Output>* updates = nullptr;  // training only
  // Scalar terms the layer adds to the loss (Keras' add_loss: activity regularization), in the
  // training and the inference pass; null where no loss is computed.
  std::vector<Output>* losses = nullptr;
  // Keras' masks of the inputs: float32 (batch, steps), 1 where a step is kept; an invalid
  // Output where an input has none (or the vector is empty). Recurrent layers and
  // GlobalAveragePooling1D read them (masked steps keep the state; the mean skips them).
  std::vector<Output> masks;
  Output mask(size_t i) const { return i < masks.size() ? masks[i] : Output(); }
};

// Keras' activity regularization of a layer's output y: adds (l1 * sum(|y|) + l2 * sum(y^2)) /
// batch size to ctx.losses (when the pass collects losses and a coefficient is nonzero).
void AddActivityPenalty(CallContext& ctx, Output y, double l1, double l2);

// x cast to float32 when it is an integer tensor and `layer` does not take integers (what the
// model does to each input of a layer call).
Output CastForLayer(const Scope& s, const Layer& layer, Output x);

class Layer : public std::enable_shared_from_this<Layer> {
 public:
  explicit Layer(std::string type) : type_(std::move(type)) {}
  virtual ~Layer() = default;

  // Records a call on symbolic inputs: builds the weights on the first call, checks the
  // shapes and returns the symbolic output. Throws InvalidArgument naming the layer, and for a
  // call with several outputs (use Outputs).
  Sym operator()(const Sym& x);
  Sym operator()(const std::vector<Sym>& xs);
  // The same, returning every output of the call (an RNN with return_state: output and states).
  std::vector<Sym> Outputs(const std::vector<Sym>& xs);

  const std::string& type() const { return type_; }  // "Conv2D"
  const std::string& name() const { return name_; }  // "conv2d_1" (unique within a model)
  void set_name(std::string n) { name_ = std::move(n); }
  const std::vector<Weight>& weights() const { return weights_; }
  // Pins the layer (its weights and its computation) to a device, e.g. "/device:CPU:1" (model
  // parallelism; the partitioner inserts the Send/Recv pairs between the layers' devices).
  Layer& set_device(std::string device) {
    device_ = std::move(device);
    return *this;
  }
  const std::string& device() const { return device_; }
  bool built() const { return built_; }
  int64_t CountParams(bool trainable) const;
  // Keras' layer.trainable: false freezes the layer. Every weight then reads as non-trainable
  // (the optimizer skips it from the next compile on; set it back and the declared flags return),
  // and a BatchNormalization normalizes with its moving statistics in training too (Keras 3).
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable);

  // Adds this layer's forward computation to the graph.
  virtual Output Call(CallContext& ctx, const std::vector<Output>& inputs) const = 0;
  // Every output of the call (layers with several outputs override this; Call is then output 0).
  virtual std::vector<Output> CallOutputs(CallContext& ctx, const std::vector<Output>& inputs) const {
    return {Call(ctx, inputs)};
  }
  // Keras' compute_mask: the mask of each output (invalid: none), from the inputs' masks in
  // ctx.masks. The default passes input 0's mask on for the layers Keras marks supports_masking
  // that keep the steps (Dense, Dropout, activations, normalizations), joins them for the
  // element-wise merge layers (a step any mask keeps), and drops them otherwise.
  virtual std::vector<Output> OutputMasks(CallContext& ctx, const std::vector<Output>& inputs,
                                          const std::vector<Output>& outputs) const;
  // True for layers that take integer ids as they are (Embedding); the model casts an integer
  // input of any other layer to float32 first (Keras' layers compute in float32).
  virtual bool takes_integers() const { return false; }

 protected:
  // Declares the weights for these input shapes (called once; shapes include the batch dim).
  // Output shapes need no code of their own: they come from the ops' shape functions, by
  // running Call on placeholders in a scratch graph.
  virtual void Build(const std::vector<TensorShape>& input_shapes) {}
  virtual int num_inputs() const { return 1; }  // -1: two or more
  // Whether a call may take n inputs, and the counts accepted for messages ("1 or 3"); the
  // defaults follow num_inputs. Layers with optional inputs (an RNN's initial_state) override both.
  virtual bool accepts_inputs(size_t n) const {
    return num_inputs() < 0 ? n >= 2 : static_cast<int>(n) == num_inputs();
  }
  virtual std::string expected_inputs() const {
    return num_inputs() < 0 ? "two or more" : std::to_string(num_inputs());
  }
  void AddWeight(std::string name, TensorShape shape, Initializer init, bool trainable = true, double l2 = 0.0,
                 double l1 = 0.0, Constraint constraint = {});
  // "Conv2D 'conv2d': " for messages.
  std::string Describe() const;

 private:
  std::string type_, name_, device_;
  std::vector<Weight> weights_;
  std::vector<bool> declared_trainable_;  // per weight: its AddWeight flag, before any freezing
  bool built_ = false;
  bool trainable_ = true;
};

// A shared layer that can be called like Keras' layers: `Dense(10)(x)`.
class LayerPtr : public std::shared_ptr<Layer> {
 public:
  LayerPtr() = default;
  template <typename L>
  LayerPtr(std::shared_ptr<L> p) : std::shared_ptr<Layer>(std::move(p)) {}  // NOLINT: implicit on purpose
  Sym operator()(const Sym& x) const { return (**this)(x); }
  Sym operator()(const std::vector<Sym>& xs) const { return (**this)(xs); }
  // Pins the layer to a device: Dense(64).OnDevice("/device:CPU:1").
  LayerPtr OnDevice(std::string device) const {
    (*this)->set_device(std::move(device));
    return *this;
  }
};

// Keras' named activations (train/activations.cc): "relu", "gelu" (exact, erf), "swish"/"silu",
// "softmax" (last axis), ...; "" or "linear" is the identity. Unknown names are InvalidArgument
// listing KnownActivations().
Output ApplyActivation(const Scope& s, const std::string& activation, Output x);
void CheckActivation(const std::string& activation);
std::string KnownActivations();  // "elu, exponential, gelu, ..." for messages and docs

// ---- The layers -------------------------------------------------------------------------

struct DenseOptions {
  std::string activation;  // "" = linear
  bool use_bias = true;
  Initializer kernel_initializer = GlorotUniform();
  Initializer bias_initializer = Zeros();
  double kernel_l2 = 0.0;
  double kernel_l1 = 0.0, bias_l1 = 0.0, bias_l2 = 0.0;  // Keras' kernel_regularizer / bias_regularizer
  Constraint kernel_constraint, bias_constraint;
  double activity_l1 = 0.0, activity_l2 = 0.0;  // Keras' activity_regularizer (AddActivityPenalty)
};
// y = activation(x @ kernel + bias) over the last axis (inputs of rank 2 or more).
LayerPtr Dense(int64_t units, DenseOptions options = {});

struct Conv2DOptions {
  std::vector<int64_t> strides = {1, 1};
  std::string padding = "valid";  // "valid" or "same"
  std::string activation;
  bool use_bias = true;
  Initializer kernel_initializer = GlorotUniform();
  Initializer bias_initializer = Zeros();
  double kernel_l2 = 0.0;
  double kernel_l1 = 0.0, bias_l1 = 0.0, bias_l2 = 0.0;  // Keras' kernel_regularizer / bias_regularizer
  Constraint kernel_constraint, bias_constraint;
  double activity_l1 = 0.0, activity_l2 = 0.0;  // Keras' activity_regularizer (AddActivityPenalty)
};
// NHWC convolution with a (kh, kw, in_channels, filters) kernel.
LayerPtr Conv2D(int64_t filters, std::vector<int64_t> kernel_size, Conv2DOptions options = {});
inline LayerPtr Conv2D(int64_t filters, int64_t kernel_size, Conv2DOptions options = {}) {
  return Conv2D(filters, std::vector<int64_t>{kernel_size, kernel_size}, std::move(options));
}

// Pools over (pool, pool) windows; strides default to the pool size.
LayerPtr MaxPool2D(std::vector<int64_t> pool_size = {2, 2}, std::vector<int64_t> strides = {},
                   std::string padding = "valid");
inline LayerPtr MaxPool2D(int64_t pool) { return MaxPool2D({pool, pool}); }
LayerPtr AvgPool2D(std::vector<int64_t> pool_size = {2, 2}, std::vector<int64_t> strides = {},
                   std::string padding = "valid");
inline LayerPtr AvgPool2D(int64_t pool) { return AvgPool2D({pool, pool}); }
// The transposed convolution (Keras' Conv2DTranspose, "deconvolution"): kernel (kh, kw, filters,
// in_channels); output height in * stride ("same") or in * stride + max(kh - stride, 0) ("valid").
LayerPtr Conv2DTranspose(int64_t filters, std::vector<int64_t> kernel_size, Conv2DOptions options = {});

// Depthwise convolution: each input channel convolved with its own depth_multiplier filters
// (kernel (kh, kw, in, depth_multiplier); output channels in * depth_multiplier). Separable:
// that, then a 1x1 convolution to `filters` channels (pointwise kernel (1, 1, in * dm, filters)).
struct SeparableConv2DOptions {
  std::vector<int64_t> strides = {1, 1};
  std::string padding = "valid";
  int64_t depth_multiplier = 1;
  std::string activation;
  bool use_bias = true;
  Initializer depthwise_initializer = GlorotUniform();
  Initializer pointwise_initializer = GlorotUniform();  // SeparableConv2D only
  Initializer bias_initializer = Zeros();
};
LayerPtr DepthwiseConv2D(std::vector<int64_t> kernel_size, SeparableConv2DOptions options = {});
LayerPtr SeparableConv2D(int64_t filters, std::vector<int64_t> kernel_size, SeparableConv2DOptions options = {});

// Conv1D over (batch, steps, channels) with a (kernel_size, in_channels, filters) kernel.
struct Conv1DOptions {
  int64_t strides = 1;
  std::string padding = "valid";  // "valid", "same" or "causal" (left-padded: output t sees inputs <= t)
  int64_t dilation_rate = 1;
  std::string activation;
  bool use_bias = true;
  Initializer kernel_initializer = GlorotUniform();
  Initializer bias_initializer = Zeros();
  double kernel_l2 = 0.0;
  double kernel_l1 = 0.0, bias_l1 = 0.0, bias_l2 = 0.0;  // Keras' kernel_regularizer / bias_regularizer
  Constraint kernel_constraint, bias_constraint;
  double activity_l1 = 0.0, activity_l2 = 0.0;  // Keras' activity_regularizer (AddActivityPenalty)
};
LayerPtr Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options = {});
// Pools (batch, steps, channels) over pool_size steps; strides <= 0 means pool_size.
LayerPtr MaxPool1D(int64_t pool_size = 2, int64_t strides = 0, std::string padding = "valid");
LayerPtr AvgPool1D(int64_t pool_size = 2, int64_t strides = 0, std::string padding = "valid");
// Mean or max over the steps (1D: (batch, steps, c)) or height and width (2D: (batch, h, w, c));
// keepdims keeps those axes with size 1.
LayerPtr GlobalAveragePooling2D(bool keepdims = false);
LayerPtr GlobalMaxPooling2D(bool keepdims = false);
LayerPtr GlobalAveragePooling1D(bool keepdims = false);
LayerPtr GlobalMaxPooling1D(bool keepdims = false);
LayerPtr Flatten();
// Zeroes a fraction `rate` of the inputs in training (scaling the rest); identity otherwise.
LayerPtr Dropout(double rate, int64_t seed = 0);
// Per-channel (last axis) normalization: batch statistics in training, moving averages
// otherwise; moving = momentum * moving + (1 - momentum) * batch.
LayerPtr BatchNormalization(double momentum = 0.99, double epsilon = 1e-3);
LayerPtr Activation(std::string activation);
// Keras' ReLU layer: x where x > threshold (else 0), at most max_value, minus
// negative_slope * relu(threshold - x); the defaults are max(x, 0).
struct ReLUOptions {
  std::optional<double> max_value;
  double negative_slope = 0.0;
  double threshold = 0.0;
};
LayerPtr ReLU(ReLUOptions options = {});
// x if x > 0 else negative_slope * x (Keras 3's default slope).
LayerPtr LeakyReLU(double negative_slope = 0.3);
// x if x > 0 else alpha * (e^x - 1).
LayerPtr ELU(double alpha = 1.0);
// x if x > 0 else alpha * x with a learned alpha per input value (weight "alpha" of the example
// shape, its dims in shared_axes (1-based, as Keras) of size 1 and shared).
LayerPtr PReLU(Initializer alpha_initializer = Zeros(), std::vector<int64_t> shared_axes = {});

// ---- Sequence layers -----------------------------------------------------------------------
// Keras' Embedding (train/layers_embedding.cc): ids (batch, ...) -> (batch, ..., output_dim), rows of
// the weight "embeddings" (input_dim, output_dim). Ids must be whole numbers in [0, input_dim): an
// id outside is InvalidArgument at run time naming its position, its value and the range.
// Keras' input_length is not needed (shapes come from the input). mask_zero=true: id 0 is padding,
// and Keras' mask (id != 0) goes with the output to the layers that read it (LSTM, GRU,
// SimpleRNN, Bidirectional, GlobalAveragePooling1D) through those that pass it on (Dense,
// Dropout, activations, normalizations); other layers drop it, as Keras' layers without
// supports_masking do.
struct EmbeddingOptions {
  Initializer embeddings_initializer = RandomUniform();  // Keras' "uniform": U(-0.05, 0.05)
  double embeddings_l1 = 0.0, embeddings_l2 = 0.0;       // Keras' embeddings_regularizer
  Constraint embeddings_constraint;
  bool mask_zero = false;
};
LayerPtr Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
// Keras' Masking over (batch, steps, features): steps whose features all equal mask_value are
// zeroed and masked (the mask goes on as Embedding's mask_zero does).
LayerPtr Masking(double mask_value = 0.0);
// keras_hub's PositionEmbedding: for (batch, T, D) inputs, rows 0..T-1 of a learned
// (sequence_length, D) table "embeddings", broadcast to (batch, T, D); add it to the token
// embeddings. T > sequence_length is InvalidArgument (no wraparound). Keras' default initializer.
LayerPtr PositionEmbedding(int64_t sequence_length, Initializer initializer = GlorotUniform());

// Keras' MultiHeadAttention (train/layers_attention.cc) on (batch, steps, features) inputs, called on
// {query, value}, {query, value, key} or {query, value, key, attention_mask}: attention along the
// steps (Keras' attention_axes=None for rank 3), output (batch, query steps, output_dim). The
// attention_mask (batch, T, S) keeps positions > 0.5; use_causal_mask also hides key steps after
// each query step. Weights as Keras': query/kernel (D, H, key_dim), query/bias (H, key_dim), key/...,
// value/..., attention_output/kernel (H, value_dim, O), attention_output/bias (O).
struct MultiHeadAttentionOptions {
  int64_t value_dim = 0;   // 0: key_dim
  double dropout = 0.0;    // on the attention weights, in training
  bool use_bias = true;
  int64_t output_dim = 0;  // Keras' output_shape (the last dim); 0: the query's features
  bool use_causal_mask = false;
  Initializer kernel_initializer = GlorotUniform();
  Initializer bias_initializer = Zeros();
  double kernel_l1 = 0.0, kernel_l2 = 0.0;
  int64_t seed = 0;  // the dropout's
  // Keras' return_attention_scores: the call's second output is the attention weights
  // (batch, heads, query steps, key steps), after the softmax and before the dropout.
  bool return_attention_scores = false;
};
LayerPtr MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});
// Keras passes use_causal_mask per call; a weft layer fixes it before its first call (a later call
// asking otherwise is InvalidArgument). InvalidArgument for another layer type.
void SetUseCausalMask(Layer& layer, bool use_causal_mask);
// Likewise return_attention_scores (Keras passes it per call; weft fixes it per layer).
void SetReturnAttentionScores(Layer& layer, bool return_attention_scores);

// ---- Shape layers (train/layers_shape.cc); shapes are per example (no batch dim) ----------
// Reshapes each example to target_shape; one entry may be -1 (inferred from the input).
LayerPtr Reshape(std::vector<int64_t> target_shape);
// Permutes the non-batch axes: dims is a permutation of 1..rank-1 (Keras' 1-based indexing).
LayerPtr Permute(std::vector<int64_t> dims);
// (batch, features) -> (batch, n, features): each example repeated n times.
LayerPtr RepeatVector(int64_t n);
// The input unchanged (Keras' Identity, a placeholder in model code).
LayerPtr Identity();
// y = x * scale + offset.
LayerPtr Rescaling(double scale, double offset = 0.0);
// Keras' Normalization: (x - mean) / max(sqrt(variance), 1e-7) with one mean and variance per
// index of `axis` (has_axis false: one for all), or x * max(sqrt(variance), 1e-7) + mean when
// inverted. The statistics are given (float32, one value or one per index) or set from data by
// AdaptNormalization; they become the non-trainable weights "mean" and "variance".
struct NormalizationOptions {
  bool has_axis = true;
  int64_t axis = -1;
  Tensor mean, variance;  // empty: from AdaptNormalization
  bool invert = false;
};
LayerPtr Normalization(NormalizationOptions options = {});
// Keras' LayerNormalization over `axis` of each example: (x - mean) / sqrt(variance + epsilon),
// times gamma plus beta (per index of axis; left out by scale / center false).
struct LayerNormalizationOptions {
  int64_t axis = -1;
  double epsilon = 1e-3;
  bool center = true, scale = true;
  Initializer beta_initializer = Zeros();
  Initializer gamma_initializer = Ones();
};
LayerPtr LayerNormalization(LayerNormalizationOptions options = {});
// Sets a Normalization layer's statistics from data [N, ...] (population variance, as Keras'
// adapt), before the model is compiled. InvalidArgument for another layer or a bad shape.
void AdaptNormalization(Layer& layer, const Tensor& data);
// Softmax over `axis` (negative counts from the end; the batch axis 0 is refused).
LayerPtr Softmax(int64_t axis = -1);

// ---- Spatial resizing (train/layers_spatial.cc) of sequences (batch, steps, channels) and NHWC
// images. Amounts are {before, after} per spatial dim: {left, right}, {top, bottom, left, right}.
LayerPtr ZeroPadding1D(std::vector<int64_t> padding);
LayerPtr ZeroPadding2D(std::vector<int64_t> padding);
LayerPtr Cropping1D(std::vector<int64_t> cropping);
LayerPtr Cropping2D(std::vector<int64_t> cropping);
// Nearest-neighbour upsampling: each step (pixel) repeated size times per spatial dim.
LayerPtr UpSampling1D(int64_t size = 2);
LayerPtr UpSampling2D(std::vector<int64_t> size = {2, 2});

// ---- Merge layers (train/layers_merge.cc): take a list of inputs ---------------------------
// Element-wise over two or more inputs of the same shape: sum (residual connections), product,
// mean, max, min; Subtract takes exactly two (a - b).
LayerPtr Add();
LayerPtr Multiply();
LayerPtr Average();
LayerPtr Maximum();
LayerPtr Minimum();
LayerPtr Subtract();
// Joins two or more inputs along `axis` (negative counts from the end; not the batch axis);
// the other dims must agree.
LayerPtr Concatenate(int64_t axis = -1);

}  // namespace weft::train
