// Index and order ops: Range (a sequence), Where (coordinates of true elements, whose count is
// known only at run time), TopK (the k largest along the last dim, a sort when k = -1), TopK's
// gradient TopKGrad, and Cumsum (a running sum along an axis). Kernels: ops/kernels/cpu/search.cc (CPU only: the placer runs
// these on the CPU, as it does Erf).
#include <fmt/format.h>

#include <cmath>

#include "ops/all_ops.h"
#include "ops/framework.h"
#include "ops/search.h"

namespace weft {
namespace {

const std::vector<DType> kRangeTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
const std::vector<DType> kNumberTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                                         DType::kUInt8};
const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                      DType::kInt64,   DType::kUInt8,   DType::kBool};

// Range's length, as TF: ceil(|limit - start| / |delta|) for integers, ceil(|(limit - start) /
// delta|) for floats. Throws on delta == 0 or a delta pointing away from limit.
void RangeLengthCheck(double start, double limit, double delta) {
  WEFT_REQUIRE(delta != 0, "Range: delta must not be 0 (start {}, limit {})", start, limit);
  WEFT_REQUIRE(delta > 0 ? start <= limit : start >= limit,
               "Range: start {} and limit {} need a delta of sign {} (got delta {})", start, limit,
               start <= limit ? "+" : "-", delta);
}

void RangeShape(InferenceContext& c) {
  for (int i = 0; i < 3; ++i) {
    WEFT_REQUIRE(c.input(i).unknown_rank() || c.input(i).rank() == 0, "Range: {} must be a scalar, got shape {}",
                 i == 0 ? "start" : i == 1 ? "limit" : "delta", c.input(i).ToString());
  }
  const Tensor *a = c.input_tensor(0), *b = c.input_tensor(1), *d = c.input_tensor(2);
  if (!a || !b || !d) return c.set_output(0, TensorShape({-1}));
  const double start = a->ElementAsDouble(0), limit = b->ElementAsDouble(0), delta = d->ElementAsDouble(0);
  RangeLengthCheck(start, limit, delta);
  c.set_output(0, TensorShape({RangeLength(start, limit, delta, !IsFloating(c.input_dtype(0)))}));
}

void WhereShape(InferenceContext& c) {
  const TensorShape& x = c.input(0);
  c.set_output(0, TensorShape({-1, x.unknown_rank() ? -1 : int64_t{x.rank()}}));
}

void TopKShape(InferenceContext& c) {
  const TensorShape x = c.WithRankAtLeast(c.input(0), 1, "TopK: input");
  const int64_t k = c.attr<int64_t>("k");
  WEFT_REQUIRE(k >= -1, "TopK: k must be >= 0 (or -1: all), got {}", k);
  if (x.unknown_rank()) {
    c.set_output(0, TensorShape::Unknown());
    c.set_output(1, TensorShape::Unknown());
    return;
  }
  const int64_t n = x.dim(x.rank() - 1);
  WEFT_REQUIRE(n < 0 || k <= n, "TopK: k {} is more than the last dim of input {}", k, x.ToString());
  std::vector<int64_t> dims = x.dims();
  dims.back() = k < 0 ? n : k;
  c.set_output(0, TensorShape(dims));
  c.set_output(1, TensorShape(dims));
}

// values, indices = top_k(x):  dx = zeros(x) with dvalues added at indices along the last dim
std::vector<Output> TopKGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("TopKGrad", {dy[0], Output(const_cast<Node*>(&op), 1), op.input(0)})};
}

// y = cumsum(x) along axis:  dx = cumsum(dy) in the other direction (same exclusive)
std::vector<Output> CumsumGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("Cumsum", {dy[0]}, {{"axis", op.attr<int64_t>("axis")}, {"exclusive", op.attr<bool>("exclusive")},
                                   {"reverse", !op.attr<bool>("reverse")}})};
}

void CumsumShape(InferenceContext& c) {
  const TensorShape& x = c.input(0);
  if (!x.unknown_rank()) x.CanonicalAxis(c.attr<int64_t>("axis"), "Cumsum: axis");
  c.set_output(0, x);
}

}  // namespace

int64_t RangeLength(double start, double limit, double delta, bool integer) {
  RangeLengthCheck(start, limit, delta);
  const double n = integer ? std::ceil(std::abs(limit - start) / std::abs(delta)) : std::ceil(std::abs((limit - start) / delta));
  // Checked before the conversion: a NaN, an infinity or a length past int64 has no int64 value.
  WEFT_REQUIRE(n <= static_cast<double>(TensorShape::kMaxElements),
               "Range: start {}, limit {} and delta {} give {} elements (limit 2^50)", start, limit, delta, n);
  return static_cast<int64_t>(n);
}

void RegisterSearchOps(OpRegistry& r) {
  r.Register("Range").Input("start", "Tidx").Input("limit", "Tidx").Input("delta", "Tidx").Output("output", "Tidx")
      .TypeAttr("Tidx", kRangeTypes, DType::kInt32).Shape(RangeShape).NoGradient()
      .Doc("The sequence start, start + delta, ... up to but not including limit (scalars of one dtype); "
           "delta must be non-zero and point from start towards limit.");
  r.Register("Where").Input("condition", "T").Output("index", "int64").TypeAttr("T", kAllTypes, DType::kBool)
      .Shape(WhereShape).NoGradient()
      .Doc("The coordinates of the non-zero (true) elements of condition, in row-major order: [count, rank].");
  r.Register("TopK").Input("input", "T").Output("values", "T").Output("indices", "int32")
      .TypeAttr("T", kNumberTypes).Attr("k", AttrType::kInt).Shape(TopKShape).Grad(TopKGrad)
      .Doc("The k largest entries along the last dim, largest first, and their indices; equal values keep "
           "their index order. k = -1 takes the whole dim (a descending sort).");
  r.Register("TopKGrad").Input("dy", "T").Input("indices", "int32").Input("input", "T").Output("output", "T")
      .TypeAttr("T", {DType::kFloat32, DType::kFloat64}).Shape([](InferenceContext& c) { c.set_output(0, c.input(2)); })
      .NoGradient()
      .Doc("TopK's gradient: zeros shaped like input with dy added at indices along the last dim.");
  r.Register("Cumsum").Input("x", "T").Output("y", "T").TypeAttr("T", kNumberTypes).Attr("axis", 0)
      .Attr("exclusive", false).Attr("reverse", false).Shape(CumsumShape).Grad(CumsumGrad)
      .Doc("Running sums along axis: y[i] = x[0] + ... + x[i] (exclusive: up to x[i-1]; reverse: from the end).");
}

}  // namespace weft
