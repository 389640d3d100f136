// The merge layers: Add, Multiply, Average, Maximum, Minimum, Subtract and Concatenate. Each takes
// a list of symbolic inputs (`Concatenate()({a, b})`) from one model input's branches.
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "train/layer.h"

namespace weft::train {
namespace {

// Dims agree when equal or when either is unknown (the batch dim).
bool SameDim(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }

std::string Shapes(const std::vector<Output>& in) {
  std::string out;
  for (const Output& x : in) out += (out.empty() ? "" : ", ") + x.shape().ToString();
  return out;
}

// Element-wise merges: the inputs must have one shape (Keras' merge layers also broadcast a
// missing batch dim; weft's inputs always have one).
class ElementwiseMerge : public Layer {
 public:
  enum Kind { kAdd, kMultiply, kAverage, kMaximum, kMinimum, kSubtract };
  ElementwiseMerge(std::string type, Kind kind) : Layer(std::move(type)), kind_(kind) {}
  int num_inputs() const override { return kind_ == kSubtract ? 2 : -1; }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& a = in[0].shape();
    for (size_t i = 1; i < in.size(); ++i) {
      const TensorShape& b = in[i].shape();
      bool same = a.rank() == b.rank();
      for (int d = 0; same && d < a.rank(); ++d) same = SameDim(a.dim(d), b.dim(d));
      WEFT_REQUIRE(same, "{}: inputs must have the same shape, got {}", Describe(), Shapes(in));
    }
    const Scope& s = ctx.scope;
    switch (kind_) {
      case kSubtract:
        return ops::Sub(s, in[0], in[1]);
      case kAdd:
        return in.size() == 2 ? ops::Add(s, in[0], in[1]) : ops::AddN(s, in);
      case kAverage:
        return ops::Mul(s, in.size() == 2 ? ops::Add(s, in[0], in[1]) : ops::AddN(s, in),
                        ops::ScalarLike(s, in[0].dtype(), 1.0 / static_cast<double>(in.size())));
      default:
        break;
    }
    Output y = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      y = kind_ == kMultiply ? ops::Mul(s, y, in[i])
          : kind_ == kMaximum ? ops::Maximum(s, y, in[i])
                              : ops::Minimum(s, y, in[i]);
    }
    return y;
  }

 private:
  Kind kind_;
};

class ConcatenateLayer : public Layer {
 public:
  explicit ConcatenateLayer(int64_t axis) : Layer("Concatenate"), axis_(axis) {}
  int num_inputs() const override { return -1; }
  Output Call(CallContext& ctx, const std::vector<Output>& in) const override {
    const TensorShape& a = in[0].shape();
    const int64_t rank = a.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    WEFT_REQUIRE(axis >= 1 && axis < rank, "{}: axis {} is out of range for inputs of rank {} (the batch axis 0 "
                 "cannot be joined)", Describe(), axis_, rank);
    for (size_t i = 1; i < in.size(); ++i) {
      const TensorShape& b = in[i].shape();
      bool same = b.rank() == rank;
      for (int d = 0; same && d < rank; ++d) same = d == axis || SameDim(a.dim(d), b.dim(d));
      WEFT_REQUIRE(same, "{}: inputs must have the same shape except on axis {}, got {}", Describe(), axis_,
                   Shapes(in));
    }
    return ops::Concat(ctx.scope, in, axis);
  }

 private:
  int64_t axis_;
};

LayerPtr Merge(const char* type, ElementwiseMerge::Kind kind) { return std::make_shared<ElementwiseMerge>(type, kind); }

}  // namespace

LayerPtr Add() { return Merge("Add", ElementwiseMerge::kAdd); }
LayerPtr Multiply() { return Merge("Multiply", ElementwiseMerge::kMultiply); }
LayerPtr Average() { return Merge("Average", ElementwiseMerge::kAverage); }
LayerPtr Maximum() { return Merge("Maximum", ElementwiseMerge::kMaximum); }
LayerPtr Minimum() { return Merge("Minimum", ElementwiseMerge::kMinimum); }
LayerPtr Subtract() { return Merge("Subtract", ElementwiseMerge::kSubtract); }
LayerPtr Concatenate(int64_t axis) { return std::make_shared<ConcatenateLayer>(axis); }

}  // namespace weft::train
