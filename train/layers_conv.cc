// The convolutional layers: Conv2D, Conv2DTranspose, DepthwiseConv2D, SeparableConv2D, Conv1D,
// the 1-D and 2-D pooling layers, the global poolings and BatchNormalization (NHWC / NWC
// throughout, as Keras' default channels_last). The 1-D layers run the 2-D ops on
// (batch, 1, steps, channels) views.
#include <algorithm>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/state.h"
#include "train/layer.h"

namespace weft::train {
namespace {

// Keras spells padding "valid" / "same"; the ops take "VALID" / "SAME".
std::string OpPadding(const std::string& padding, const std::string& layer) {
  WEFT_REQUIRE(padding == "valid" || padding == "same", "{}: padding must be \"valid\" or \"same\", got \"{}\"",
               layer, padding);
  return padding == "valid" ? "VALID" : "SAME";
}

void RequireImages(const TensorShape& shape, const std::string& layer) {
  WEFT_REQUIRE(shape.rank() == 4, "{}: expects NHWC inputs (batch, height, width, channels), got {}", layer,
               shape.ToString());
}

void RequireSteps(const TensorShape& shape, const std::string& layer) {
  WEFT_REQUIRE(shape.rank() == 3, "{}: expects inputs (batch, steps, channels), got {}", layer, shape.ToString());
}

void RequirePair(const std::vector<int64_t>& v, const char* what, const std::string& layer) {
  WEFT_REQUIRE(v.size() == 2 && v[0] > 0 && v[1] > 0, "{}: {} must be two positive numbers, got {} values", layer,
               what, v.size());
}

// Conv2D, and Keras' Conv2DTranspose (transpose = true): the gradient of a Conv2D for its input,
// with a (kh, kw, filters, in_channels) kernel; its output size per spatial dim is in * stride
// ("same") or in * stride + max(kernel - stride, 0) ("valid").
// Checks the arguments every windowed layer takes; returns the op's padding ("VALID" / "SAME").
std::string CheckWindow(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                        const std::string& padding, const std::string& activation, const std::string& layer) {
  RequirePair(kernel, "kernel_size", layer);
  RequirePair(strides, "strides", layer);
  CheckActivation(activation);
  return OpPadding(padding, layer);
}

// The channel count of NHWC inputs (known, or an error naming the layer).
int64_t ImageChannels(const TensorShape& in, const std::string& layer) {
  RequireImages(in, layer);
  WEFT_REQUIRE(in.dim(3) > 0, "{}: the channel dim must be known, got {}", layer, in.ToString());
  return in.dim(3);
}

class Conv2DLayer : public Layer {
 public:
  Conv2DLayer(int64_t filters, std::vector<int64_t> kernel, Conv2DOptions o, bool transpose)
      : Layer(transpose ? "Conv2DTranspose" : "Conv2D"), filters_(filters), kernel_(std::move(kernel)),
        o_(std::move(o)), transpose_(transpose) {
    WEFT_REQUIRE(filters > 0, "{}: filters must be positive, got {}", type(), filters);
    padding_ = CheckWindow(kernel_, o_.strides, o_.padding, o_.activation, type());
  }
  void Build(const std::vector<TensorShape>& in) override {
    const int64_t c = ImageChannels(in[0], Describe());
    AddWeight("kernel", {kernel_[0], kernel_[1], transpose_ ? filters_ : c, transpose_ ? c : filters_},
              o_.kernel_initializer, true, o_.kernel_l2, o_.kernel_l1, o_.kernel_constraint);
    if (o_.use_bias) AddWeight("bias", {filters_}, o_.bias_initializer, true, o_.bias_l2, o_.bias_l1, o_.bias_constraint);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    Output y = transpose_ ? Transposed(ctx.scope, in[0], ctx.weights[0])
                          : ops::Conv2D(ctx.scope, in[0], ctx.weights[0], o_.strides, padding_);
    if (o_.use_bias) y = ops::BiasAdd(ctx.scope, y, ctx.weights[1]);
    Output out = ApplyActivation(ctx.scope, o_.activation, y);
    AddActivityPenalty(ctx, out, o_.activity_l1, o_.activity_l2);
    return out;
  }

 private:
  Output Transposed(const Scope& s, Output x, Output kernel) const {
    const TensorShape& shape = x.shape();
    RequireImages(shape, Describe());
    std::vector<int32_t> rest;
    for (int d = 0; d < 2; ++d) {
      WEFT_REQUIRE(shape.dim(d + 1) > 0, "{}: needs known height and width, got {}", Describe(), shape.ToString());
      const int64_t extra = padding_ == "SAME" ? 0 : std::max<int64_t>(kernel_[d] - o_.strides[d], 0);
      rest.push_back(static_cast<int32_t>(shape.dim(d + 1) * o_.strides[d] + extra));
    }
    rest.push_back(static_cast<int32_t>(filters_));
    // The output's shape: the run-time batch size, then the sizes above.
    Output batch = ops::StridedSlice(s, ops::Shape(s, x), {0}, {1}, {1});
    Output sizes = ops::Concat(s, {batch, ops::Const(s, Tensor::FromVector<int32_t>(rest))}, 0);
    Output y = ops::Conv2DBackpropInput(s, sizes, kernel, x, o_.strides, padding_);
    // Its static shape, for the layers after it (the batch too where x's is known, as in an eager call).
    return ops::Reshape(s, y, std::vector<int64_t>{shape.dim(0) > 0 ? shape.dim(0) : -1, rest[0], rest[1], filters_});
  }

  int64_t filters_;
  std::vector<int64_t> kernel_;
  Conv2DOptions o_;
  bool transpose_;
  std::string padding_;
};

// DepthwiseConv2D (filters 0) and SeparableConv2D (its depthwise output through a 1x1 Conv2D).
class DepthwiseLayer : public Layer {
 public:
  DepthwiseLayer(int64_t filters, std::vector<int64_t> kernel, SeparableConv2DOptions o)
      : Layer(filters > 0 ? "SeparableConv2D" : "DepthwiseConv2D"), filters_(filters), kernel_(std::move(kernel)),
        o_(std::move(o)) {
    WEFT_REQUIRE(filters >= 0, "SeparableConv2D: filters must be positive, got {}", filters);
    WEFT_REQUIRE(o_.depth_multiplier > 0, "{}: depth_multiplier must be positive, got {}", type(),
                 o_.depth_multiplier);
    padding_ = CheckWindow(kernel_, o_.strides, o_.padding, o_.activation, type());
  }
  void Build(const std::vector<TensorShape>& in) override {
    const int64_t c = ImageChannels(in[0], Describe());
    // Keras 3's weight names: a DepthwiseConv2D's is "kernel".
    AddWeight(filters_ > 0 ? "depthwise_kernel" : "kernel", {kernel_[0], kernel_[1], c, o_.depth_multiplier},
              o_.depthwise_initializer);
    if (filters_ > 0) {
      AddWeight("pointwise_kernel", {1, 1, c * o_.depth_multiplier, filters_}, o_.pointwise_initializer);
    }
    if (o_.use_bias) AddWeight("bias", {filters_ > 0 ? filters_ : c * o_.depth_multiplier}, o_.bias_initializer);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    Output y = ops::DepthwiseConv2D(s, in[0], ctx.weights[0], o_.strides, padding_);
    if (filters_ > 0) y = ops::Conv2D(s, y, ctx.weights[1]);
    if (o_.use_bias) y = ops::BiasAdd(s, y, ctx.weights.back());
    return ApplyActivation(s, o_.activation, y);
  }

 private:
  int64_t filters_;
  std::vector<int64_t> kernel_;
  SeparableConv2DOptions o_;
  std::string padding_;
};

class Conv1DLayer : public Layer {
 public:
  Conv1DLayer(int64_t filters, int64_t kernel, Conv1DOptions o)
      : Layer("Conv1D"), filters_(filters), kernel_(kernel), o_(std::move(o)) {
    WEFT_REQUIRE(filters > 0, "Conv1D: filters must be positive, got {}", filters);
    WEFT_REQUIRE(kernel > 0 && o_.strides > 0 && o_.dilation_rate > 0,
                 "Conv1D: kernel_size ({}), strides ({}) and dilation_rate ({}) must be positive", kernel, o_.strides,
                 o_.dilation_rate);
    WEFT_REQUIRE(o_.strides == 1 || o_.dilation_rate == 1, "Conv1D: strides {} and dilation_rate {} cannot both "
                 "exceed 1 (as in Keras)", o_.strides, o_.dilation_rate);
    padding_ = o_.padding == "causal" ? "VALID" : OpPadding(o_.padding, "Conv1D (or \"causal\")");
    CheckActivation(o_.activation);
  }
  void Build(const std::vector<TensorShape>& in) override {
    RequireSteps(in[0], Describe());
    WEFT_REQUIRE(in[0].dim(2) > 0, "{}: the channel dim must be known, got {}", Describe(), in[0].ToString());
    AddWeight("kernel", {kernel_, in[0].dim(2), filters_}, o_.kernel_initializer, true, o_.kernel_l2, o_.kernel_l1,
              o_.kernel_constraint);
    if (o_.use_bias) AddWeight("bias", {filters_}, o_.bias_initializer, true, o_.bias_l2, o_.bias_l1, o_.bias_constraint);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    Output x = in[0];
    // causal: (kernel - 1) * dilation zeros before the first step, none after.
    if (o_.padding == "causal") x = ops::Pad(s, x, {0, 0, (kernel_ - 1) * o_.dilation_rate, 0, 0, 0});
    const TensorShape& k = ctx.weights[0].shape();
    Output filter = ops::Reshape(s, ctx.weights[0], std::vector<int64_t>{1, k.dim(0), k.dim(1), k.dim(2)});
    Output y = ops::Conv2D(s, ops::ExpandDims(s, x, 1), filter, {1, o_.strides}, padding_, {1, o_.dilation_rate});
    y = ops::Squeeze(s, y, {1});
    if (o_.use_bias) y = ops::BiasAdd(s, y, ctx.weights[1]);
    Output out = ApplyActivation(s, o_.activation, y);
    AddActivityPenalty(ctx, out, o_.activity_l1, o_.activity_l2);
    return out;
  }

 private:
  int64_t filters_, kernel_;
  Conv1DOptions o_;
  std::string padding_;
};

// Max or average pooling over 2-D windows, or over 1-D windows as 2-D ones of height 1.
class PoolLayer : public Layer {
 public:
  PoolLayer(std::string type, bool max, int rank, std::vector<int64_t> pool, std::vector<int64_t> strides,
            std::string padding)
      : Layer(std::move(type)), max_(max), rank_(rank), pool_(std::move(pool)),
        strides_(strides.empty() ? pool_ : std::move(strides)) {
    RequirePair(pool_, "pool_size", this->type());
    RequirePair(strides_, "strides", this->type());
    padding_ = OpPadding(padding, this->type());
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    rank_ == 1 ? RequireSteps(in[0].shape(), Describe()) : RequireImages(in[0].shape(), Describe());
    Output x = rank_ == 1 ? ops::ExpandDims(s, in[0], 1) : in[0];
    Output y = max_ ? ops::MaxPool(s, x, pool_, strides_, padding_) : ops::AvgPool(s, x, pool_, strides_, padding_);
    return rank_ == 1 ? ops::Squeeze(s, y, {1}) : y;
  }

 private:
  bool max_;
  int rank_;
  std::vector<int64_t> pool_, strides_;
  std::string padding_;
};

// Mean or max over the steps (rank 1) or over height and width (rank 2).
class GlobalPoolLayer : public Layer {
 public:
  GlobalPoolLayer(std::string type, bool max, int rank, bool keepdims)
      : Layer(std::move(type)), max_(max), rank_(rank), keepdims_(keepdims) {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    rank_ == 1 ? RequireSteps(in[0].shape(), Describe()) : RequireImages(in[0].shape(), Describe());
    std::vector<int64_t> axes = rank_ == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 2};
    const Output mask = ctx.mask(0);
    if (rank_ == 1 && !max_ && mask.valid()) {  // Keras: sum(x * mask) / sum(mask) over the steps
      const Scope& s = ctx.scope;
      Output m = ops::ExpandDims(s, mask, -1);
      return ops::Div(s, ops::Sum(s, ops::Mul(s, in[0], m), axes, keepdims_), ops::Sum(s, m, axes, keepdims_));
    }
    return max_ ? ops::Max(ctx.scope, in[0], axes, keepdims_) : ops::Mean(ctx.scope, in[0], axes, keepdims_);
  }

 private:
  bool max_;
  int rank_;
  bool keepdims_;
};

class BatchNormLayer : public Layer {
 public:
  BatchNormLayer(double momentum, double epsilon) : Layer("BatchNormalization"), momentum_(momentum), eps_(epsilon) {
    WEFT_REQUIRE(momentum >= 0.0 && momentum <= 1.0, "BatchNormalization: momentum must be in [0, 1], got {}",
                 momentum);
    WEFT_REQUIRE(epsilon > 0.0, "BatchNormalization: epsilon must be positive, got {}", epsilon);
  }
  void Build(const std::vector<TensorShape>& in) override {
    const TensorShape& x = in[0];
    WEFT_REQUIRE(x.rank() >= 2 && x.dim(x.rank() - 1) > 0, "{}: needs a known last (channel) dim, got {}",
                 Describe(), x.ToString());
    const int64_t c = x.dim(x.rank() - 1);
    AddWeight("gamma", {c}, Ones());
    AddWeight("beta", {c}, Zeros());
    AddWeight("moving_mean", {c}, Zeros(), /*trainable=*/false);
    AddWeight("moving_variance", {c}, Ones(), /*trainable=*/false);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const std::vector<Output>& w = ctx.weights;  // gamma, beta, moving_mean, moving_variance
    // FusedBatchNorm normalizes over every axis but the last: inputs of another rank (Dense
    // outputs, Conv1D sequences) are viewed as (rows, 1, 1, channels) and reshaped back.
    Output x = in[0];
    const TensorShape& shape = x.shape();
    const bool flat = shape.rank() != 4;
    WEFT_REQUIRE(shape.rank() >= 2, "{}: expects inputs (batch, ..., channels), got {}", Describe(), shape.ToString());
    for (int i = 1; flat && i < shape.rank(); ++i) {
      WEFT_REQUIRE(shape.dim(i) >= 0, "{}: needs known non-batch dims, got {}", Describe(), shape.ToString());
    }
    if (flat) x = ops::Reshape(s, x, std::vector<int64_t>{-1, 1, 1, shape.dim(shape.rank() - 1)});
    std::vector<Output> bn = ops::FusedBatchNorm(s, x, w[0], w[1], w[2], w[3], eps_, ctx.training);
    if (ctx.training && ctx.updates != nullptr) {
      // moving -= (1 - momentum) * (moving - batch)
      Output decay = ops::ScalarLike(s, DType::kFloat32, 1.0 - momentum_);
      ctx.updates->push_back(ops::AssignSub(s, w[2], ops::Mul(s, ops::Sub(s, w[2], bn[1]), decay)));
      ctx.updates->push_back(ops::AssignSub(s, w[3], ops::Mul(s, ops::Sub(s, w[3], bn[2]), decay)));
    }
    Output y = bn[0];
    if (flat) {
      std::vector<int64_t> dims = shape.dims();
      dims[0] = -1;
      y = ops::Reshape(s, y, dims);
    }
    return y;
  }

 private:
  double momentum_, eps_;
};

}  // namespace

LayerPtr Conv2D(int64_t filters, std::vector<int64_t> kernel_size, Conv2DOptions options) {
  return std::make_shared<Conv2DLayer>(filters, std::move(kernel_size), std::move(options), /*transpose=*/false);
}
LayerPtr Conv2DTranspose(int64_t filters, std::vector<int64_t> kernel_size, Conv2DOptions options) {
  return std::make_shared<Conv2DLayer>(filters, std::move(kernel_size), std::move(options), /*transpose=*/true);
}
LayerPtr DepthwiseConv2D(std::vector<int64_t> kernel_size, SeparableConv2DOptions options) {
  return std::make_shared<DepthwiseLayer>(0, std::move(kernel_size), std::move(options));
}
LayerPtr SeparableConv2D(int64_t filters, std::vector<int64_t> kernel_size, SeparableConv2DOptions options) {
  WEFT_REQUIRE(filters > 0, "SeparableConv2D: filters must be positive, got {}", filters);
  return std::make_shared<DepthwiseLayer>(filters, std::move(kernel_size), std::move(options));
}
LayerPtr Conv1D(int64_t filters, int64_t kernel_size, Conv1DOptions options) {
  return std::make_shared<Conv1DLayer>(filters, kernel_size, std::move(options));
}
LayerPtr MaxPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides, std::string padding) {
  return std::make_shared<PoolLayer>("MaxPool2D", true, 2, std::move(pool_size), std::move(strides),
                                     std::move(padding));
}
LayerPtr AvgPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides, std::string padding) {
  return std::make_shared<PoolLayer>("AvgPool2D", false, 2, std::move(pool_size), std::move(strides),
                                     std::move(padding));
}
LayerPtr MaxPool1D(int64_t pool_size, int64_t strides, std::string padding) {
  return std::make_shared<PoolLayer>("MaxPooling1D", true, 1, std::vector<int64_t>{1, pool_size},
                                     std::vector<int64_t>{1, strides > 0 ? strides : pool_size}, std::move(padding));
}
LayerPtr AvgPool1D(int64_t pool_size, int64_t strides, std::string padding) {
  return std::make_shared<PoolLayer>("AveragePooling1D", false, 1, std::vector<int64_t>{1, pool_size},
                                     std::vector<int64_t>{1, strides > 0 ? strides : pool_size}, std::move(padding));
}
LayerPtr GlobalAveragePooling2D(bool keepdims) {
  return std::make_shared<GlobalPoolLayer>("GlobalAveragePooling2D", false, 2, keepdims);
}
LayerPtr GlobalMaxPooling2D(bool keepdims) {
  return std::make_shared<GlobalPoolLayer>("GlobalMaxPooling2D", true, 2, keepdims);
}
LayerPtr GlobalAveragePooling1D(bool keepdims) {
  return std::make_shared<GlobalPoolLayer>("GlobalAveragePooling1D", false, 1, keepdims);
}
LayerPtr GlobalMaxPooling1D(bool keepdims) {
  return std::make_shared<GlobalPoolLayer>("GlobalMaxPooling1D", true, 1, keepdims);
}
LayerPtr BatchNormalization(double momentum, double epsilon) {
  return std::make_shared<BatchNormLayer>(momentum, epsilon);
}

}  // namespace weft::train
