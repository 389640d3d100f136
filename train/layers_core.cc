// The layers that are not convolutional: Dense, Flatten, Activation, ReLU, LeakyReLU, ELU, PReLU,
// Dropout.
#include "ops/array.h"
#include "ops/framework.h"
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
    WEFT_REQUIRE(x.rank() >= 2 && x.dim(x.rank() - 1) > 0,
                 "{}: expects inputs (batch, ..., features) with known features, got {}", Describe(), x.ToString());
    AddWeight("kernel", {x.dim(x.rank() - 1), units_}, o_.kernel_initializer, true, o_.kernel_l2, o_.kernel_l1,
              o_.kernel_constraint);
    if (o_.use_bias) AddWeight("bias", {units_}, o_.bias_initializer, true, o_.bias_l2, o_.bias_l1, o_.bias_constraint);
  }
  // Over the last axis: inputs of rank > 2 are viewed as (rows, features) and reshaped back.
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    Output x = in[0];
    int unknown = 0;
    for (int i = 1; i < shape.rank(); ++i) unknown += shape.dim(i) < 0 ? 1 : 0;
    Output y;
    if (unknown > 0) {
      // Unknown steps (a sequence of any length): a BatchMatMul broadcasting the kernel keeps the
      // static shape (batch, ?, units), which a reshape to run-time dims would lose.
      y = ops::BatchMatMul(ctx.scope, x, ctx.weights[0]);
      if (o_.use_bias) y = ops::BiasAdd(ctx.scope, y, ctx.weights[1]);
    } else {
      if (shape.rank() > 2) x = ops::Reshape(ctx.scope, x, std::vector<int64_t>{-1, shape.dim(shape.rank() - 1)});
      y = ops::MatMul(ctx.scope, x, ctx.weights[0]);
      if (o_.use_bias) y = ops::BiasAdd(ctx.scope, y, ctx.weights[1]);
      if (shape.rank() > 2) {
        std::vector<int64_t> dims(shape.dims().begin(), shape.dims().end() - 1);
        dims[0] = -1;
        dims.push_back(units_);
        y = ops::Reshape(ctx.scope, y, dims);
      }
    }
    Output out = ApplyActivation(ctx.scope, o_.activation, y);
    AddActivityPenalty(ctx, out, o_.activity_l1, o_.activity_l2);
    return out;
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

// Keras 3's relu with arguments: x where x > threshold (else 0), at most max_value, minus
// negative_slope * relu(threshold - x). The common cases are the single ops Relu, Relu6, LeakyRelu.
class ReLULayer : public Layer {
 public:
  ReLULayer(std::string type, ReLUOptions o) : Layer(std::move(type)), o_(o) {
    WEFT_REQUIRE(o_.negative_slope >= 0.0 && o_.threshold >= 0.0 && (!o_.max_value || *o_.max_value >= 0.0),
                 "{}: max_value, negative_slope and threshold must be non-negative, got {}, {}, {}", this->type(),
                 o_.max_value ? std::to_string(*o_.max_value) : "None", o_.negative_slope, o_.threshold);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const Output x = in[0];
    if (o_.threshold == 0.0 && !o_.max_value) {
      return o_.negative_slope == 0.0 ? ops::Relu(s, x) : ops::LeakyRelu(s, x, o_.negative_slope);
    }
    if (o_.threshold == 0.0 && o_.negative_slope == 0.0 && *o_.max_value == 6.0) return ops::Relu6(s, x);
    auto scalar = [&](double v) { return ops::ScalarLike(s, x.dtype(), v); };
    Output y = o_.threshold == 0.0 ? ops::Relu(s, x)
                                   : ops::Select(s, ops::Greater(s, x, scalar(o_.threshold)), x, ops::ZerosLike(s, x));
    if (o_.max_value) y = ops::Minimum(s, y, scalar(*o_.max_value));
    if (o_.negative_slope != 0.0) {
      y = ops::Sub(s, y, ops::Mul(s, scalar(o_.negative_slope), ops::Relu(s, ops::Sub(s, scalar(o_.threshold), x))));
    }
    return y;
  }

 private:
  ReLUOptions o_;
};

// x if x > 0 else alpha * (e^x - 1) = relu(x) + alpha * (elu(x) - relu(x)).
class ELULayer : public Layer {
 public:
  explicit ELULayer(double alpha) : Layer("ELU"), alpha_(alpha) {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    if (alpha_ == 1.0) return ops::Elu(s, in[0]);
    const Output r = ops::Relu(s, in[0]);
    const Output alpha = ops::ScalarLike(s, in[0].dtype(), alpha_);
    return ops::Add(s, r, ops::Mul(s, alpha, ops::Sub(s, ops::Elu(s, in[0]), r)));
  }

 private:
  double alpha_;
};

class PReLULayer : public Layer {
 public:
  PReLULayer(Initializer init, std::vector<int64_t> shared) : Layer("PReLU"), init_(init), shared_(std::move(shared)) {}
  void Build(const std::vector<TensorShape>& in) override {
    std::vector<int64_t> dims;
    for (int i = 1; i < in[0].rank(); ++i) {
      const bool shared = std::find(shared_.begin(), shared_.end(), i) != shared_.end();
      WEFT_REQUIRE(shared || in[0].dim(i) > 0, "{}: needs known non-batch dims (or shared_axes), got {}", Describe(),
                   in[0].ToString());
      dims.push_back(shared ? 1 : in[0].dim(i));
    }
    for (int64_t a : shared_) {
      WEFT_REQUIRE(a >= 1 && a < in[0].rank(), "{}: shared_axes {} is not a non-batch axis of {}", Describe(), a,
                   in[0].ToString());
    }
    AddWeight("alpha", TensorShape(dims), init_);
  }
  // relu(x) - alpha * relu(-x)
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    return ops::Sub(s, ops::Relu(s, in[0]), ops::Mul(s, ctx.weights[0], ops::Relu(s, ops::Neg(s, in[0]))));
  }

 private:
  Initializer init_;
  std::vector<int64_t> shared_;
};

}  // namespace

LayerPtr Dense(int64_t units, DenseOptions options) { return std::make_shared<DenseLayer>(units, std::move(options)); }
LayerPtr Flatten() { return std::make_shared<FlattenLayer>(); }
LayerPtr Activation(std::string activation) { return std::make_shared<ActivationLayer>(std::move(activation)); }
LayerPtr ReLU(ReLUOptions options) { return std::make_shared<ReLULayer>("ReLU", options); }
LayerPtr Dropout(double rate, int64_t seed) { return std::make_shared<DropoutLayer>(rate, seed); }
LayerPtr LeakyReLU(double negative_slope) {
  return std::make_shared<ReLULayer>("LeakyReLU", ReLUOptions{.negative_slope = negative_slope});
}
LayerPtr ELU(double alpha) { return std::make_shared<ELULayer>(alpha); }
LayerPtr PReLU(Initializer alpha_initializer, std::vector<int64_t> shared_axes) {
  return std::make_shared<PReLULayer>(alpha_initializer, std::move(shared_axes));
}

}  // namespace weft::train
