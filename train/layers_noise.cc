#include "train/layers_noise.h"

#include <cmath>
#include <numbers>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/random.h"
#include "train/layers_augment.h"
#include "train/layers_traced.h"

namespace weft::train {
namespace {

Output F(const Scope& s, double v) { return ops::ScalarLike(s, DType::kFloat32, v); }

// Standard normal values with x's shape (known only at run time, as the batch dim): Box-Muller
// over two uniform draws, z = sqrt(-2 ln(1 - u1)) cos(2 pi u2). cos has no op of its own here:
// it is its Taylor series about 0 on [-pi, pi) (to theta^24: below float32's resolution there).
Output NormalLike(const Scope& s, Output x, int64_t seed) {
  Output u1 = ops::RandomUniformLike(s, x, seed);
  Output u2 = ops::RandomUniformLike(s, x, seed == 0 ? 0 : seed + 1);
  Output radius = ops::Sqrt(s, ops::Mul(s, F(s, -2.0), ops::Log(s, ops::Sub(s, F(s, 1.0), u1))));
  Output theta = ops::Mul(s, ops::Sub(s, u2, F(s, 0.5)), F(s, 2.0 * std::numbers::pi));  // cos(2 pi u2) = -cos(theta)
  Output t2 = ops::Square(s, theta);
  Output cosine = F(s, 0.0);
  double coef = 1.0;
  std::vector<double> coefs;  // (-1)^k / (2k)!
  for (int k = 0; k <= 12; ++k) {
    coefs.push_back(coef);
    coef *= -1.0 / static_cast<double>((2 * k + 1) * (2 * k + 2));
  }
  for (auto it = coefs.rbegin(); it != coefs.rend(); ++it) cosine = ops::Add(s, ops::Mul(s, cosine, t2), F(s, *it));
  return ops::Neg(s, ops::Mul(s, radius, cosine));
}

void RequireRate(double rate, const char* what) {
  WEFT_REQUIRE(rate >= 0.0 && rate < 1.0, "{}: rate must be in [0, 1), got {}", what, rate);
}

class GaussianNoiseLayer : public Layer {
 public:
  GaussianNoiseLayer(double stddev, int64_t seed) : Layer("GaussianNoise"), stddev_(stddev), seed_(seed) {
    WEFT_REQUIRE(stddev >= 0.0, "GaussianNoise: stddev must be >= 0, got {}", stddev);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training || stddev_ == 0.0) return in[0];
    const Scope& s = ctx.scope;
    return ops::Add(s, in[0], ops::Mul(s, NormalLike(s, in[0], seed_), F(s, stddev_)));
  }

 private:
  double stddev_;
  int64_t seed_;
};

class GaussianDropoutLayer : public Layer {
 public:
  GaussianDropoutLayer(double rate, int64_t seed) : Layer("GaussianDropout"), rate_(rate), seed_(seed) {
    RequireRate(rate, "GaussianDropout");
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training || rate_ == 0.0) return in[0];
    const Scope& s = ctx.scope;
    Output noise = ops::Add(s, F(s, 1.0), ops::Mul(s, NormalLike(s, in[0], seed_), F(s, std::sqrt(rate_ / (1.0 - rate_)))));
    return ops::Mul(s, in[0], noise);
  }

 private:
  double rate_;
  int64_t seed_;
};

// A keep mask (0 or 1) with the shape of `like`: 1 with probability 1 - rate.
Output KeepMask(const Scope& s, Output like, double rate, int64_t seed) {
  return ops::Cast(s, ops::GreaterEqual(s, ops::RandomUniformLike(s, like, seed), F(s, rate)), DType::kFloat32);
}

class SpatialDropoutLayer : public Layer {
 public:
  SpatialDropoutLayer(int rank, double rate, int64_t seed)
      : Layer(rank == 1 ? "SpatialDropout1D" : "SpatialDropout2D"), rank_(rank), rate_(rate), seed_(seed) {
    RequireRate(rate, type().c_str());
  }
  void Build(const std::vector<TensorShape>& in) override {
    WEFT_REQUIRE(in[0].rank() == rank_ + 2, "{}: expects inputs of rank {} ({}), got {}", Describe(), rank_ + 2,
                 rank_ == 1 ? "batch, steps, channels" : "batch, height, width, channels", in[0].ToString());
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training || rate_ == 0.0) return in[0];
    const Scope& s = ctx.scope;
    // The noise shape (batch, 1, [1,] channels): a reduction of x gives it at run time.
    std::vector<int64_t> spatial;
    for (int i = 1; i <= rank_; ++i) spatial.push_back(i);
    Output per_channel = ops::Mean(s, in[0], spatial, /*keep_dims=*/true);
    Output keep = KeepMask(s, per_channel, rate_, seed_);
    return ops::Mul(s, in[0], ops::Mul(s, keep, F(s, 1.0 / (1.0 - rate_))));
  }

 private:
  int rank_;
  double rate_;
  int64_t seed_;
};

class AlphaDropoutLayer : public Layer {
 public:
  AlphaDropoutLayer(double rate, int64_t seed) : Layer("AlphaDropout"), rate_(rate), seed_(seed) {
    RequireRate(rate, "AlphaDropout");
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    if (!ctx.training || rate_ == 0.0) return in[0];
    const Scope& s = ctx.scope;
    constexpr double kAlpha = 1.6732632423543772848170429916717, kScale = 1.0507009873554804934193349852946;
    const double alpha_p = -kAlpha * kScale;
    const double a = std::pow((1.0 - rate_) * (1.0 + rate_ * alpha_p * alpha_p), -0.5);
    const double b = -a * alpha_p * rate_;
    Output keep = KeepMask(s, in[0], rate_, seed_);
    Output x = ops::Add(s, ops::Mul(s, in[0], keep), ops::Mul(s, ops::Sub(s, F(s, 1.0), keep), F(s, alpha_p)));
    return ops::Add(s, ops::Mul(s, x, F(s, a)), F(s, b));
  }

 private:
  double rate_;
  int64_t seed_;
};

class ActivityRegularizationLayer : public Layer {
 public:
  ActivityRegularizationLayer(double l1, double l2) : Layer("ActivityRegularization"), l1_(l1), l2_(l2) {
    WEFT_REQUIRE(l1 >= 0.0 && l2 >= 0.0, "ActivityRegularization: l1 and l2 must be >= 0, got {} and {}", l1, l2);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    AddActivityPenalty(ctx, in[0], l1_, l2_);
    return in[0];
  }

 private:
  double l1_, l2_;
};

class CenterCropLayer : public Layer {
 public:
  CenterCropLayer(int64_t height, int64_t width) : Layer("CenterCrop"), height_(height), width_(width) {
    WEFT_REQUIRE(height > 0 && width > 0, "CenterCrop: height and width must be positive, got {} and {}", height, width);
  }
  void Build(const std::vector<TensorShape>& in) override {
    WEFT_REQUIRE(in[0].rank() == 4 || in[0].rank() == 3, "{}: expects (batch, height, width, channels) inputs, got {}",
                 Describe(), in[0].ToString());
    const int h = in[0].rank() - 3;
    WEFT_REQUIRE((in[0].dim(h) >= height_ && in[0].dim(h + 1) >= width_) || in[0].rank() == 4,
                 "{}: the single image {} is smaller than the crop {}x{} (batched images are resized, as Keras)",
                 Describe(), in[0].ToString(), height_, width_);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    if (shape.rank() == 4 && (shape.dim(1) < height_ || shape.dim(2) < width_)) {
      return ResizeImages(ctx.scope, in[0], height_, width_, "bilinear", /*crop_to_aspect_ratio=*/true);
    }
    const int h = shape.rank() - 3;  // 3: (height, width, channels) of one example given as a batch
    std::vector<int64_t> begin(static_cast<size_t>(shape.rank()), 0), size(static_cast<size_t>(shape.rank()), -1);
    begin[static_cast<size_t>(h)] = (shape.dim(h) - height_) / 2;
    begin[static_cast<size_t>(h + 1)] = (shape.dim(h + 1) - width_) / 2;
    size[static_cast<size_t>(h)] = height_;
    size[static_cast<size_t>(h + 1)] = width_;
    return ops::Slice(ctx.scope, in[0], begin, size);
  }

 private:
  int64_t height_, width_;
};

class LambdaLayer : public Layer {
 public:
  explicit LambdaLayer(std::function<TracedFunction(const TensorShape&)> trace)
      : Layer("Lambda"), trace_(std::move(trace)) {
    WEFT_REQUIRE(trace_ != nullptr, "Lambda: needs a function");
  }
  void Build(const std::vector<TensorShape>& in) override {
    TracedFunction f = trace_(in[0]);
    trace_ = nullptr;  // (it may hold a Python function: released once traced)
    WEFT_REQUIRE(f.graph != nullptr && f.input.valid() && f.output.valid(), "{}: the traced function has no output",
                 Describe());
    WEFT_REQUIRE(f.output.dtype() == DType::kFloat32, "{}: the function must return float32 values, got {}",
                 Describe(), DTypeName(f.output.dtype()));
    traced_.graph = f.graph;
    traced_.inputs = {f.input};
    traced_.output = f.output;
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return CopyTraced(ctx.scope, traced_, in, {}, {traced_.output}, Describe())[0];
  }

 private:
  std::function<TracedFunction(const TensorShape&)> trace_;
  TracedCall traced_;  // no weights: a Variable in the function is an error naming it
};

}  // namespace

LayerPtr GaussianNoise(double stddev, int64_t seed) { return std::make_shared<GaussianNoiseLayer>(stddev, seed); }
LayerPtr GaussianDropout(double rate, int64_t seed) { return std::make_shared<GaussianDropoutLayer>(rate, seed); }
LayerPtr SpatialDropout1D(double rate, int64_t seed) { return std::make_shared<SpatialDropoutLayer>(1, rate, seed); }
LayerPtr SpatialDropout2D(double rate, int64_t seed) { return std::make_shared<SpatialDropoutLayer>(2, rate, seed); }
LayerPtr AlphaDropout(double rate, int64_t seed) { return std::make_shared<AlphaDropoutLayer>(rate, seed); }
LayerPtr ActivityRegularization(double l1, double l2) { return std::make_shared<ActivityRegularizationLayer>(l1, l2); }
LayerPtr CenterCrop(int64_t height, int64_t width) { return std::make_shared<CenterCropLayer>(height, width); }
LayerPtr Lambda(std::function<TracedFunction(const TensorShape&)> trace) {
  return std::make_shared<LambdaLayer>(std::move(trace));
}

}  // namespace weft::train
