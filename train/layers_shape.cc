// The layers that reshape or rescale each example: Reshape, Permute, RepeatVector, Identity,
// Rescaling, Normalization,
// LayerNormalization and Softmax (over any non-batch axis). Shapes given by the user are per example (no batch dim).
#include <algorithm>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "train/layer.h"

namespace weft::train {
namespace {

std::string List(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t x : v) out += (out.empty() ? "" : ", ") + std::to_string(x);
  return "(" + out + ")";
}

class ReshapeLayer : public Layer {
 public:
  explicit ReshapeLayer(std::vector<int64_t> target) : Layer("Reshape"), target_(std::move(target)) {
    int unknown = 0;
    for (int64_t d : target_) {
      WEFT_REQUIRE(d > 0 || d == -1, "Reshape: target_shape {} has a dim {}: each must be positive or -1",
                   List(target_), d);
      unknown += d == -1;
    }
    WEFT_REQUIRE(unknown <= 1, "Reshape: target_shape {} may have at most one -1", List(target_));
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    WEFT_REQUIRE(shape.rank() >= 1, "{}: needs inputs of known rank, got {}", Describe(), shape.ToString());
    // The per-example size, when every non-batch dim is known, fixes the -1 (and is checked).
    int64_t size = 1;
    for (int i = 1; i < shape.rank() && size >= 0; ++i) size = shape.dim(i) < 0 ? -1 : size * shape.dim(i);
    int64_t known = 1;
    for (int64_t d : target_) known *= d == -1 ? 1 : d;
    std::vector<int64_t> dims = {-1};
    for (int64_t d : target_) dims.push_back(d);
    const bool has_unknown = std::find(target_.begin(), target_.end(), -1) != target_.end();
    if (size >= 0) {
      WEFT_REQUIRE(has_unknown ? size % known == 0 : size == known,
                   "{}: cannot reshape examples of shape {} ({} values) to target_shape {}", Describe(),
                   shape.ToString(), size, List(target_));
      for (size_t i = 1; i < dims.size(); ++i) {
        if (dims[i] == -1) dims[i] = size / known;
      }
    } else {
      WEFT_REQUIRE(!has_unknown, "{}: target_shape {} has a -1 but the input {} has unknown dims", Describe(),
                   List(target_), shape.ToString());
    }
    return ops::Reshape(ctx.scope, in[0], dims);
  }

 private:
  std::vector<int64_t> target_;
};

class PermuteLayer : public Layer {
 public:
  explicit PermuteLayer(std::vector<int64_t> dims) : Layer("Permute"), dims_(std::move(dims)) {
    std::vector<int64_t> sorted = dims_;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      WEFT_REQUIRE(sorted[i] == static_cast<int64_t>(i) + 1,
                   "Permute: dims {} must be a permutation of 1..{} (axis 0 is the batch)", List(dims_),
                   dims_.size());
    }
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& shape = in[0].shape();
    WEFT_REQUIRE(shape.rank() == static_cast<int>(dims_.size()) + 1, "{}: dims {} need inputs of rank {}, got {}",
                 Describe(), List(dims_), dims_.size() + 1, shape.ToString());
    std::vector<int64_t> perm = {0};
    perm.insert(perm.end(), dims_.begin(), dims_.end());
    return ops::Transpose(ctx.scope, in[0], perm);
  }

 private:
  std::vector<int64_t> dims_;
};

class RepeatVectorLayer : public Layer {
 public:
  explicit RepeatVectorLayer(int64_t n) : Layer("RepeatVector"), n_(n) {
    WEFT_REQUIRE(n > 0, "RepeatVector: n must be positive, got {}", n);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    WEFT_REQUIRE(in[0].shape().rank() == 2, "{}: expects inputs (batch, features), got {}", Describe(),
                 in[0].shape().ToString());
    return ops::Tile(ctx.scope, ops::ExpandDims(ctx.scope, in[0], 1), {1, n_, 1});
  }

 private:
  int64_t n_;
};

class IdentityLayer : public Layer {
 public:
  IdentityLayer() : Layer("Identity") {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    return ops::Identity(ctx.scope, in[0]);
  }
};

class RescalingLayer : public Layer {
 public:
  RescalingLayer(double scale, double offset) : Layer("Rescaling"), scale_(scale), offset_(offset) {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    Output y = ops::Mul(s, in[0], ops::ScalarLike(s, in[0].dtype(), scale_));
    return offset_ == 0.0 ? y : ops::Add(s, y, ops::ScalarLike(s, in[0].dtype(), offset_));
  }

 private:
  double scale_, offset_;
};

class NormalizationLayer : public Layer {
 public:
  explicit NormalizationLayer(NormalizationOptions o) : Layer("Normalization"), o_(std::move(o)) {
    WEFT_REQUIRE(o_.mean.IsInitialized() == o_.variance.IsInitialized(),
                 "Normalization: pass both mean and variance, or neither (and call adapt)");
    for (const Tensor* t : {&o_.mean, &o_.variance}) {
      WEFT_REQUIRE(!t->IsInitialized() || t->dtype() == DType::kFloat32, "Normalization: mean and variance must be "
                   "float32, got {}", DTypeName(t->dtype()));
    }
  }
  void Adapt(const Tensor& data) {
    WEFT_REQUIRE(!built(), "{}: adapt must come before the layer is used in a model", Describe());
    WEFT_REQUIRE(data.dtype() == DType::kFloat32 && data.shape().rank() >= 1 && data.num_elements() > 0,
                 "{}: adapt needs non-empty float32 data [N, ...], got {} {}", Describe(), DTypeName(data.dtype()),
                 data.shape().ToString());
    // Viewed as [outer, c, inner] around the axis (c = 1 without one).
    const TensorShape& shape = data.shape();
    int64_t axis = 0, c = 1, outer = data.num_elements(), inner = 1;
    if (o_.has_axis) {
      axis = o_.axis < 0 ? o_.axis + shape.rank() : o_.axis;
      WEFT_REQUIRE(axis >= 1 && axis < shape.rank(), "{}: axis {} is out of range for data of shape {} (not the "
                   "batch axis)", Describe(), o_.axis, shape.ToString());
      c = shape.dim(axis);
      outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= shape.dim(i);
      inner = data.num_elements() / (outer * c);
    }
    std::vector<double> sum(c, 0.0), sq(c, 0.0);
    const float* x = data.data<float>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < c; ++k) {
        for (int64_t i = 0; i < inner; ++i) sum[k] += x[(o * c + k) * inner + i];
      }
    }
    const double n = static_cast<double>(outer * inner);
    for (int64_t k = 0; k < c; ++k) sum[k] /= n;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < c; ++k) {
        for (int64_t i = 0; i < inner; ++i) {
          const double d = x[(o * c + k) * inner + i] - sum[k];
          sq[k] += d * d;
        }
      }
    }
    const TensorShape stat_shape = o_.has_axis ? TensorShape({c}) : TensorShape({});
    o_.mean = Tensor::Zeros(DType::kFloat32, stat_shape);
    o_.variance = Tensor::Zeros(DType::kFloat32, stat_shape);
    for (int64_t k = 0; k < c; ++k) {
      o_.mean.data<float>()[k] = static_cast<float>(sum[k]);
      o_.variance.data<float>()[k] = static_cast<float>(sq[k] / n);
    }
    count_ = shape.dim(0);
  }
  // Adapted statistics are the non-trainable weights mean, variance and count (as Keras 3 keeps
  // them, so they count as parameters and are saved with the weights); given ones are constants.
  void Build(const std::vector<TensorShape>& in) override {
    WEFT_REQUIRE(o_.mean.IsInitialized(), "{}: call adapt(data) or pass mean= and variance= before using it",
                 Describe());
    const TensorShape shape = StatShape(in[0]);
    mean_ = Broadcast(o_.mean, shape, "mean");
    variance_ = Broadcast(o_.variance, shape, "variance");
    if (count_ > 0) {
      AddWeight("mean", shape, FromTensor(mean_), /*trainable=*/false);
      AddWeight("variance", shape, FromTensor(variance_), /*trainable=*/false);
      AddWeight("count", {}, Constant(static_cast<double>(count_)), /*trainable=*/false);
    }
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    Output mean = count_ > 0 ? ctx.weights[0] : ops::Const(s, mean_);
    Output variance = count_ > 0 ? ctx.weights[1] : ops::Const(s, variance_);
    const TensorShape& x = in[0].shape();
    if (o_.has_axis) {
      // Per-index statistics broadcast along `axis`: shape (1, ..., c, ..., 1).
      std::vector<int64_t> dims(x.rank(), 1);
      const int64_t axis = o_.axis < 0 ? o_.axis + x.rank() : o_.axis;
      dims[axis] = FeatureDim(x);
      mean = ops::Reshape(s, mean, dims);
      variance = ops::Reshape(s, variance, dims);
    }
    Output scale = ops::Maximum(s, ops::Sqrt(s, variance), ops::ScalarLike(s, DType::kFloat32, 1e-7));
    if (o_.invert) return ops::Add(s, ops::Mul(s, in[0], scale), mean);
    return ops::Div(s, ops::Sub(s, in[0], mean), scale);
  }

 private:
  TensorShape StatShape(const TensorShape& x) const {
    return o_.has_axis ? TensorShape({FeatureDim(x)}) : TensorShape({});
  }
  int64_t FeatureDim(const TensorShape& x) const {
    const int64_t axis = o_.axis < 0 ? o_.axis + x.rank() : o_.axis;
    WEFT_REQUIRE(axis >= 1 && axis < x.rank() && x.dim(axis) > 0, "{}: axis {} needs a known non-batch dim of the "
                 "input, got {}", Describe(), o_.axis, x.ToString());
    return x.dim(axis);
  }
  // A statistic of one value, or of exactly one per index.
  Tensor Broadcast(const Tensor& t, const TensorShape& shape, const char* what) const {
    if (t.num_elements() == shape.num_elements()) return t.Reshaped(shape);
    WEFT_REQUIRE(t.num_elements() == 1, "{}: {} has {} values, the input needs 1 or {}", Describe(), what,
                 t.num_elements(), shape.num_elements());
    Tensor out = Tensor::Zeros(DType::kFloat32, shape);
    for (int64_t i = 0; i < out.num_elements(); ++i) out.data<float>()[i] = t.data<float>()[0];
    return out;
  }

  NormalizationOptions o_;
  Tensor mean_, variance_;  // broadcast to the input's statistics shape at Build
  int64_t count_ = 0;       // examples adapt saw; 0: the statistics were given
};

class LayerNormalizationLayer : public Layer {
 public:
  explicit LayerNormalizationLayer(LayerNormalizationOptions o) : Layer("LayerNormalization"), o_(std::move(o)) {
    WEFT_REQUIRE(o_.epsilon > 0, "LayerNormalization: epsilon must be positive, got {}", o_.epsilon);
  }
  void Build(const std::vector<TensorShape>& in) override {
    const int64_t c = in[0].dim(Axis(in[0]));
    if (o_.scale) AddWeight("gamma", {c}, o_.gamma_initializer);
    if (o_.center) AddWeight("beta", {c}, o_.beta_initializer);
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const Scope& s = ctx.scope;
    const TensorShape& x = in[0].shape();
    const int64_t axis = Axis(x);
    if (axis == x.rank() - 1) {  // the usual case: the fused op (ops/kernels/cpu/layernorm.cc)
      const int64_t c = x.dim(axis);
      size_t w = 0;
      auto filled = [&](double v) {
        return ops::Fill(s, ops::Const(s, std::vector<int64_t>{c}, TensorShape({1})), ops::ScalarLike(s, in[0].dtype(), v));
      };
      Output gamma = o_.scale ? ctx.weights[w++] : filled(1.0);
      Output beta = o_.center ? ctx.weights[w] : filled(0.0);
      return ops::LayerNorm(s, in[0], gamma, beta, o_.epsilon)[0];
    }
    Output d = ops::Sub(s, in[0], ops::Mean(s, in[0], {axis}, /*keep_dims=*/true));
    Output variance = ops::Mean(s, ops::Square(s, d), {axis}, /*keep_dims=*/true);
    Output y = ops::Mul(s, d, ops::Rsqrt(s, ops::Add(s, variance, ops::ScalarLike(s, in[0].dtype(), o_.epsilon))));
    // gamma and beta (c,) broadcast along `axis`: shape (1, ..., c, ..., 1).
    std::vector<int64_t> dims(x.rank(), 1);
    dims[axis] = x.dim(axis);
    size_t w = 0;
    if (o_.scale) y = ops::Mul(s, y, ops::Reshape(s, ctx.weights[w++], dims));
    if (o_.center) y = ops::Add(s, y, ops::Reshape(s, ctx.weights[w], dims));
    return y;
  }

 private:
  int64_t Axis(const TensorShape& x) const {
    const int64_t axis = o_.axis < 0 ? o_.axis + x.rank() : o_.axis;
    WEFT_REQUIRE(axis >= 1 && axis < x.rank() && x.dim(axis) > 0, "{}: axis {} needs a known non-batch dim of the "
                 "input, got {}", Describe(), o_.axis, x.ToString());
    return axis;
  }

  LayerNormalizationOptions o_;
};

class SoftmaxLayer : public Layer {
 public:
  explicit SoftmaxLayer(int64_t axis) : Layer("Softmax"), axis_(axis) {}
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const int64_t rank = in[0].shape().rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    WEFT_REQUIRE(axis >= 1 && axis < rank, "{}: axis {} is out of range for inputs of rank {} (not the batch axis)",
                 Describe(), axis_, rank);
    if (axis == rank - 1) return ops::Softmax(ctx.scope, in[0]);
    // The op works over the last axis: swap `axis` to the end and back (a swap is its own inverse).
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    std::swap(perm[axis], perm[rank - 1]);
    return ops::Transpose(ctx.scope, ops::Softmax(ctx.scope, ops::Transpose(ctx.scope, in[0], perm)), perm);
  }

 private:
  int64_t axis_;
};

}  // namespace

LayerPtr Reshape(std::vector<int64_t> target_shape) { return std::make_shared<ReshapeLayer>(std::move(target_shape)); }
LayerPtr Permute(std::vector<int64_t> dims) { return std::make_shared<PermuteLayer>(std::move(dims)); }
LayerPtr RepeatVector(int64_t n) { return std::make_shared<RepeatVectorLayer>(n); }
LayerPtr Identity() { return std::make_shared<IdentityLayer>(); }
LayerPtr Rescaling(double scale, double offset) { return std::make_shared<RescalingLayer>(scale, offset); }
LayerPtr Normalization(NormalizationOptions options) {
  return std::make_shared<NormalizationLayer>(std::move(options));
}
void AdaptNormalization(Layer& layer, const Tensor& data) {
  auto* norm = dynamic_cast<NormalizationLayer*>(&layer);
  WEFT_REQUIRE(norm != nullptr, "adapt: {} '{}' is not a Normalization layer", layer.type(), layer.name());
  norm->Adapt(data);
}
LayerPtr LayerNormalization(LayerNormalizationOptions options) {
  return std::make_shared<LayerNormalizationLayer>(std::move(options));
}
LayerPtr Softmax(int64_t axis) { return std::make_shared<SoftmaxLayer>(axis); }

}  // namespace weft::train
