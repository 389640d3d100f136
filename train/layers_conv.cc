// The convolutional layers: Conv2D, MaxPool2D, AvgPool2D, GlobalAveragePooling2D and
// BatchNormalization (NHWC throughout, as Keras' default channels_last).
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

void RequirePair(const std::vector<int64_t>& v, const char* what, const std::string& layer) {
  WEFT_REQUIRE(v.size() == 2 && v[0] > 0 && v[1] > 0, "{}: {} must be two positive numbers, got {} values", layer,
               what, v.size());
}

class Conv2DLayer : public Layer {
 public:
  Conv2DLayer(int64_t filters, std::vector<int64_t> kernel, Conv2DOptions o)
      : Layer("Conv2D"), filters_(filters), kernel_(std::move(kernel)), o_(std::move(o)) {
    WEFT_REQUIRE(filters > 0, "Conv2D: filters must be positive, got {}", filters);
    RequirePair(kernel_, "kernel_size", "Conv2D");
    RequirePair(o_.strides, "strides", "Conv2D");
    padding_ = OpPadding(o_.padding, "Conv2D");
    CheckActivation(o_.activation);
  }
  void Build(const std::vector<TensorShape>& in) override {
    RequireImages(in[0], Describe());
    WEFT_REQUIRE(in[0].dim(3) > 0, "{}: the channel dim must be known, got {}", Describe(), in[0].ToString());
    AddWeight("kernel", {kernel_[0], kernel_[1], in[0].dim(3), filters_}, o_.kernel_initializer, true, o_.kernel_l2);
    if (o_.use_bias) AddWeight("bias", {filters_}, o_.bias_initializer);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    Output y = ops::Conv2D(ctx.scope, in[0], ctx.weights[0], o_.strides, padding_);
    if (o_.use_bias) y = ops::BiasAdd(ctx.scope, y, ctx.weights[1]);
    return ApplyActivation(ctx.scope, o_.activation, y);
  }

 private:
  int64_t filters_;
  std::vector<int64_t> kernel_;
  Conv2DOptions o_;
  std::string padding_;
};

class Pool2DLayer : public Layer {
 public:
  Pool2DLayer(std::string type, std::vector<int64_t> pool, std::vector<int64_t> strides, std::string padding)
      : Layer(std::move(type)), pool_(std::move(pool)), strides_(strides.empty() ? pool_ : std::move(strides)) {
    RequirePair(pool_, "pool_size", this->type());
    RequirePair(strides_, "strides", this->type());
    padding_ = OpPadding(padding, this->type());
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    RequireImages(in[0].shape(), Describe());
    return type() == "MaxPool2D" ? ops::MaxPool(ctx.scope, in[0], pool_, strides_, padding_)
                                 : ops::AvgPool(ctx.scope, in[0], pool_, strides_, padding_);
  }

 private:
  std::vector<int64_t> pool_, strides_;
  std::string padding_;
};

class GlobalAveragePoolingLayer : public Layer {
 public:
  GlobalAveragePoolingLayer() : Layer("GlobalAveragePooling2D") {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    RequireImages(in[0].shape(), Describe());
    return ops::Mean(ctx.scope, in[0], {1, 2});
  }
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
    // FusedBatchNorm normalizes over every axis but the last: a rank-2 input is viewed as NHWC.
    Output x = in[0];
    const bool flat = x.shape().rank() == 2;
    if (flat) x = ops::Reshape(s, x, std::vector<int64_t>{-1, 1, 1, x.shape().dim(1)});
    RequireImages(x.shape(), Describe());
    std::vector<Output> bn = ops::FusedBatchNorm(s, x, w[0], w[1], w[2], w[3], eps_, ctx.training);
    if (ctx.training && ctx.updates != nullptr) {
      // moving -= (1 - momentum) * (moving - batch)
      Output decay = ops::ScalarLike(s, DType::kFloat32, 1.0 - momentum_);
      ctx.updates->push_back(ops::AssignSub(s, w[2], ops::Mul(s, ops::Sub(s, w[2], bn[1]), decay)));
      ctx.updates->push_back(ops::AssignSub(s, w[3], ops::Mul(s, ops::Sub(s, w[3], bn[2]), decay)));
    }
    Output y = bn[0];
    if (flat) y = ops::Reshape(s, y, std::vector<int64_t>{-1, in[0].shape().dim(1)});
    return y;
  }

 private:
  double momentum_, eps_;
};

}  // namespace

LayerPtr Conv2D(int64_t filters, std::vector<int64_t> kernel_size, Conv2DOptions options) {
  return std::make_shared<Conv2DLayer>(filters, std::move(kernel_size), std::move(options));
}
LayerPtr MaxPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides, std::string padding) {
  return std::make_shared<Pool2DLayer>("MaxPool2D", std::move(pool_size), std::move(strides), std::move(padding));
}
LayerPtr AvgPool2D(std::vector<int64_t> pool_size, std::vector<int64_t> strides, std::string padding) {
  return std::make_shared<Pool2DLayer>("AvgPool2D", std::move(pool_size), std::move(strides), std::move(padding));
}
LayerPtr GlobalAveragePooling2D() { return std::make_shared<GlobalAveragePoolingLayer>(); }
LayerPtr BatchNormalization(double momentum, double epsilon) {
  return std::make_shared<BatchNormLayer>(momentum, epsilon);
}

}  // namespace weft::train
