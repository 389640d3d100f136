// Range, Where, TopK and TopKGrad against naive references, TopK's finite-difference gradient,
// and the errors bad input must give.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

constexpr Code kInvalid = Code::kInvalidArgument;

TEST_CASE("Range matches numpy.arange, including negative and fractional deltas") {
  ExpectEqual(RunOp("Range", {T<int32_t>({3}, {}), T<int32_t>({18}, {}), T<int32_t>({3}, {})})[0],
              T<int32_t>({3, 6, 9, 12, 15}));
  ExpectEqual(RunOp("Range", {T<int64_t>({3}, {}), T<int64_t>({1}, {}), T<int64_t>({-1}, {})})[0],
              T<int64_t>({3, 2}));
  ExpectEqual(RunOp("Range", {T<int32_t>({0}, {}), T<int32_t>({0}, {}), T<int32_t>({1}, {})})[0],
              T<int32_t>({}, {0}));
  // numpy.arange(0, 1, 0.3) = [0, 0.3, 0.6, 0.9]
  ExpectNear(RunOp("Range", {T<double>({0}, {}), T<double>({1}, {}), T<double>({0.3}, {})})[0],
             T<double>({0, 0.3, 0.6, 0.9}), 1e-12, 1e-12);
  ExpectNear(RunOp("Range", {T<float>({5}, {}), T<float>({2.5}, {}), T<float>({-1}, {})})[0],
             T<float>({5, 4, 3}));
  ExpectOpError("Range", {T<int32_t>({0}, {}), T<int32_t>({5}, {}), T<int32_t>({0}, {})}, {}, kInvalid,
                "delta must not be 0");
  ExpectOpError("Range", {T<int32_t>({5}, {}), T<int32_t>({0}, {}), T<int32_t>({1}, {})}, {}, kInvalid,
                "need a delta of sign -");
  ExpectOpError("Range", {T<int32_t>({0, 1}), T<int32_t>({5}, {}), T<int32_t>({1}, {})}, {}, kInvalid,
                "start must be a scalar");
}

TEST_CASE("Where gives the row-major coordinates of the non-zero elements") {
  const Tensor m = T<bool>({1, 0, 0, 1, 1, 0}, {2, 3});
  ExpectEqual(RunOp("Where", {m})[0], T<int64_t>({0, 0, 1, 0, 1, 1}, {3, 2}));
  ExpectEqual(RunOp("Where", {T<float>({0, 2.5, 0, -1})})[0], T<int64_t>({1, 3}, {2, 1}));
  ExpectEqual(RunOp("Where", {T<int32_t>({0, 0}, {1, 2})})[0], T<int64_t>({}, {0, 2}));
  ExpectEqual(RunOp("Where", {T<bool>({1}, {})})[0], T<int64_t>({}, {1, 0}));
  // float16 is storage only in weft: no Where kernel reads it.
  ExpectOpError("Where", {Tensor(DType::kFloat16, TensorShape({2}))}, {}, kInvalid, "float16");
}

// Naive top-k of each row of x [rows, n]: a stable sort of indices by value, descending.
std::pair<Tensor, Tensor> NaiveTopK(const Tensor& x, int64_t k) {
  const int64_t n = x.dim(x.rank() - 1), rows = x.num_elements() / n;
  std::vector<double> vals;
  std::vector<double> idx;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    const double* v = x.data<double>() + r * n;
    std::stable_sort(order.begin(), order.end(), [v](int64_t a, int64_t b) { return v[a] > v[b]; });
    for (int64_t j = 0; j < k; ++j) vals.push_back(v[order[j]]), idx.push_back(static_cast<double>(order[j]));
  }
  std::vector<int64_t> dims = x.shape().dims();
  dims.back() = k;
  return {T<double>(vals, dims), T<int32_t>(idx, dims)};
}

TEST_CASE("TopK matches a stable sort; k = -1 sorts the whole last dim; ties keep index order") {
  for (const auto& dims : std::vector<std::vector<int64_t>>{{7}, {3, 5}, {2, 2, 6}, {0, 4}}) {
    const Tensor x = Rand(dims, -3, 3, 11);
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{-1}}) {
      const int64_t kk = k < 0 ? dims.back() : std::min(k, dims.back());
      const auto out = RunOp("TopK", {x}, {{"k", k < 0 ? k : kk}});
      const auto [want_v, want_i] = NaiveTopK(x, kk);
      INFO(x.DebugString() << " k=" << k);
      ExpectEqual(out[0], want_v);
      ExpectEqual(out[1], want_i);
    }
  }
  // tf.math.top_k's docstring: ties go to the lower index.
  const auto out = RunOp("TopK", {T<int32_t>({1, 3, 3, 2, 3})}, {{"k", int64_t{3}}});
  ExpectEqual(out[0], T<int32_t>({3, 3, 3}));
  ExpectEqual(out[1], T<int32_t>({1, 2, 4}));
  ExpectEqual(RunOp("TopK", {T<uint8_t>({4, 9, 1})}, {{"k", int64_t{-1}}})[0], T<uint8_t>({9, 4, 1}));
  ExpectOpError("TopK", {T<double>({1, 2})}, {{"k", int64_t{3}}}, kInvalid, "k 3 is more than the last dim");
  ExpectOpError("TopK", {T<double>({1}, {})}, {{"k", int64_t{1}}}, kInvalid, "rank at least 1");
  ExpectOpError("TopK", {T<bool>({1, 0})}, {{"k", int64_t{1}}}, kInvalid, "bool");
}

TEST_CASE("TopK's gradient routes dy to the chosen elements; TopKGrad scatters by index") {
  CheckGradient("TopK", {Rand({3, 5}, -2, 2, 12)}, {{"k", int64_t{2}}});
  CheckGradient("TopK", {Rand({4}, -2, 2, 13)}, {{"k", int64_t{-1}}});
  ExpectEqual(RunOp("TopKGrad", {T<double>({10, 20, 30, 40}, {2, 2}), T<int32_t>({2, 0, 1, 2}, {2, 2}),
                                 T<double>({0, 0, 0, 0, 0, 0}, {2, 3})})[0],
              T<double>({20, 0, 10, 0, 30, 40}, {2, 3}));
  ExpectOpError("TopKGrad", {T<double>({1, 2}), T<int32_t>({0, 5}), T<double>({0, 0, 0})}, {}, kInvalid,
                "index 5 out of range");
  ExpectOpError("TopKGrad", {T<double>({1, 2}), T<int32_t>({0}), T<double>({0, 0, 0})}, {}, kInvalid,
                "must have one shape");
}

TEST_CASE("Cumsum matches running sums along any axis, exclusive and reversed as tf.math.cumsum's docstring") {
  // tf.math.cumsum([a, b, c]) = [a, a + b, a + b + c]; exclusive: [0, a, a + b]; reverse: [a + b + c, b + c, c].
  const Tensor v = T<int32_t>({2, 4, 6, 8});
  ExpectEqual(RunOp("Cumsum", {v})[0], T<int32_t>({2, 6, 12, 20}));
  ExpectEqual(RunOp("Cumsum", {v}, {{"exclusive", true}})[0], T<int32_t>({0, 2, 6, 12}));
  ExpectEqual(RunOp("Cumsum", {v}, {{"reverse", true}})[0], T<int32_t>({20, 18, 14, 8}));
  ExpectEqual(RunOp("Cumsum", {v}, {{"reverse", true}, {"exclusive", true}})[0], T<int32_t>({18, 14, 8, 0}));
  const Tensor x = Rand({2, 3, 4}, -1, 1, 21);
  for (int64_t axis : {0, 1, 2, -1}) {
    const int a = axis < 0 ? 2 : static_cast<int>(axis);
    Tensor want = x.Clone();
    for (int64_t i = 0; i < 24; ++i) {
      int64_t idx[3] = {i / 12, (i / 4) % 3, i % 4};
      double sum = 0;
      const int64_t at = idx[a];
      for (int64_t j = 0; j <= at; ++j) {
        idx[a] = j;
        sum += x.data<double>()[idx[0] * 12 + idx[1] * 4 + idx[2]];
      }
      want.data<double>()[i] = sum;
    }
    ExpectNear(RunOp("Cumsum", {x}, {{"axis", axis}})[0], want, 1e-12, 1e-12);
    CheckGradient("Cumsum", {x}, {{"axis", axis}, {"exclusive", axis == 1}, {"reverse", axis == 0}});
  }
  ExpectOpError("Cumsum", {x}, {{"axis", int64_t{3}}}, kInvalid, "axis");
  ExpectOpError("Cumsum", {T<bool>({1, 0})}, {}, kInvalid, "bool");
}

}  // namespace
}  // namespace weft::test
