// The layers that reshape or rescale each example: Reshape, Permute, Rescaling, ZeroPadding2D and
// Softmax (over any non-batch axis). Shapes given by the user are per example (no batch dim).
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

class ZeroPadding2DLayer : public Layer {
 public:
  explicit ZeroPadding2DLayer(std::vector<int64_t> padding) : Layer("ZeroPadding2D"), padding_(std::move(padding)) {
    bool ok = padding_.size() == 4;
    for (int64_t p : padding_) ok = ok && p >= 0;
    WEFT_REQUIRE(ok, "ZeroPadding2D: padding must be 4 non-negative values (top, bottom, left, right), got {}",
                 List(padding_));
  }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    WEFT_REQUIRE(in[0].shape().rank() == 4, "{}: expects NHWC inputs (batch, height, width, channels), got {}",
                 Describe(), in[0].shape().ToString());
    return ops::Pad(ctx.scope, in[0], {0, 0, padding_[0], padding_[1], padding_[2], padding_[3], 0, 0});
  }

 private:
  std::vector<int64_t> padding_;
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
LayerPtr Rescaling(double scale, double offset) { return std::make_shared<RescalingLayer>(scale, offset); }
LayerPtr ZeroPadding2D(std::vector<int64_t> padding) { return std::make_shared<ZeroPadding2DLayer>(std::move(padding)); }
LayerPtr Softmax(int64_t axis) { return std::make_shared<SoftmaxLayer>(axis); }

}  // namespace weft::train
