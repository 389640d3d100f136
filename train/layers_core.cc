// The layers that are not convolutional: Dense, Flatten, Activation, ReLU, LeakyReLU, Dropout.
#include "ops/array.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/random.h"
#include "train/layer.h"

namespace weft::train {
namespace {

class DenseLayer : public Layer {
 public:
  DenseLayer(int64_t units, DenseOptions o) : Layer("Dense"), units_(units), o_(std::move(o)) {
    WEFT_REQUIRE(units > 0, "Dense: units must be positive, got {}", units);
    CheckActivation(o_.activation);
  }
  void Build(const std::vector<TensorShape>& in) override {
    const TensorShape& x = in[0];
    bool known = x.rank() >= 2;
    for (int i = 1; known && i < x.rank(); ++i) known = x.dim(i) > 0;
    WEFT_REQUIRE(known, "{}: expects inputs (batch, ..., features) with known non-batch dims, got {}", Describe(),
                 x.ToString());
    AddWeight("kernel", {x.dim(x.rank() - 1), units_}, o_.kernel_initializer, true, o_.kernel_l2);
    if (o_.use_bias) AddWeight("bias", {units_}, o_.bias_initializer);
  }
  // Over the last axis: inputs of rank > 2 are viewed as (rows, features) and reshaped back.
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    Output x = in[0];
    if (shape.rank() > 2) x = ops::Reshape(ctx.scope, x, std::vector<int64_t>{-1, shape.dim(shape.rank() - 1)});
    Output y = ops::MatMul(ctx.scope, x, ctx.weights[0]);
    if (o_.use_bias) y = ops::BiasAdd(ctx.scope, y, ctx.weights[1]);
    if (shape.rank() > 2) {
      std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end() - 1);
      dims[0] = -1;
      dims.push_back(units_);
      y = ops::Reshape(ctx.scope, y, dims);
    }
    return ApplyActivation(ctx.scope, o_.activation, y);
  }

 private:
  int64_t units_;
  DenseOptions o_;
};

class FlattenLayer : public Layer {
 public:
  FlattenLayer() : Layer("Flatten") {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    WEFT_REQUIRE(shape.rank() >= 1, "{}: needs inputs of known rank, got {}", Describe(), shape.ToString());
    int64_t features = 1;
    for (int i = 1; i < shape.rank(); ++i) {
      WEFT_REQUIRE(shape.dim(i) >= 0, "{}: needs known non-batch dims, got {}", Describe(), shape.ToString());
      features *= shape.dim(i);
    }
    return ops::Reshape(ctx.scope, in[0], std::vector<int64_t>{-1, features});
  }
};

class ActivationLayer : public Layer {
 public:
  explicit ActivationLayer(std::string a, std::string type = "Activation") : Layer(std::move(type)), a_(std::move(a)) {
    CheckActivation(a_);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return ApplyActivation(ctx.scope, a_, in[0]);
  }

 private:
  std::string a_;
};

class DropoutLayer : public Layer {
 public:
  DropoutLayer(double rate, int64_t seed) : Layer("Dropout"), rate_(rate), seed_(seed) {
    WEFT_REQUIRE(rate >= 0.0 && rate < 1.0, "Dropout: rate must be in [0, 1), got {}", rate);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training || rate_ == 0.0) return in[0];
    return ops::Dropout(ctx.scope, in[0], rate_, seed_);
  }

 private:
  double rate_;
  int64_t seed_;
};

class LeakyReLULayer : public Layer {
 public:
  explicit LeakyReLULayer(double slope) : Layer("LeakyReLU"), slope_(slope) {
    WEFT_REQUIRE(slope >= 0.0, "LeakyReLU: negative_slope must be non-negative, got {}", slope);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return ops::LeakyRelu(ctx.scope, in[0], slope_);
  }

 private:
  double slope_;
};

}  // namespace

LayerPtr Dense(int64_t units, DenseOptions options) { return std::make_shared<DenseLayer>(units, std::move(options)); }
LayerPtr Flatten() { return std::make_shared<FlattenLayer>(); }
LayerPtr Activation(std::string activation) { return std::make_shared<ActivationLayer>(std::move(activation)); }
LayerPtr ReLU() { return std::make_shared<ActivationLayer>("relu", "ReLU"); }
LayerPtr Dropout(double rate, int64_t seed) { return std::make_shared<DropoutLayer>(rate, seed); }
LayerPtr LeakyReLU(double negative_slope) { return std::make_shared<LeakyReLULayer>(negative_slope); }

}  // namespace weft::train
