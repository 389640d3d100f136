// UnsortedSegmentMax / Min / Prod: forward against a naive reduction written here, the empty
// segment's identity, dropped negative ids, ids of rank 2, finite-difference gradients (ties
// and zeros included), bad input.
#include <cmath>
#include <limits>

#include "graph/gradients.h"
#include "ops/framework.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

// The naive reduction: data [m] or [m, inner] with ids [m] into [num] or [num, inner].
Tensor Reference(const std::string& op, const Tensor& data, const std::vector<int64_t>& ids, int64_t num) {
  const int64_t m = static_cast<int64_t>(ids.size()), inner = data.num_elements() / m;
  const double init = op == "UnsortedSegmentMax"   ? std::numeric_limits<double>::lowest()
                      : op == "UnsortedSegmentMin" ? std::numeric_limits<double>::max()
                                                   : 1.0;
  std::vector<double> out(num * inner, init);
  std::vector<double> in = V(data);
  for (int64_t j = 0; j < m; ++j) {
    if (ids[j] < 0) continue;
    for (int64_t i = 0; i < inner; ++i) {
      double& o = out[ids[j] * inner + i];
      const double v = in[j * inner + i];
      o = op == "UnsortedSegmentMax" ? std::max(o, v) : op == "UnsortedSegmentMin" ? std::min(o, v) : o * v;
    }
  }
  std::vector<int64_t> dims = data.shape().dims();
  dims[0] = num;
  return Make(DType::kFloat64, out, TensorShape(dims));
}

const char* const kOps[] = {"UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd"};

TEST_CASE("UnsortedSegmentMax/Min/Prod: forward against a naive reduction, empty and dropped segments") {
  const std::vector<int64_t> ids = {0, 3, 0, 2, -1, 3, 0};  // segment 1 is empty, id -1 dropped
  const Tensor data = Rand({7, 3}, -2, 2, 5);
  for (const std::string op : kOps) {
    CAPTURE(op);
    Tensor got = RunOp(op, {data, T<int32_t>({0, 3, 0, 2, -1, 3, 0}), T<int32_t>({5}, {})})[0];
    CHECK(got.shape() == TensorShape({5, 3}));
    ExpectNear(got, Reference(op, data, ids, 5), 0, 1e-15);
    // int64 ids and num_segments, a 1-D float32 input.
    Tensor v = Cast(Rand({7}, -3, 3, 6), DType::kFloat32);
    Tensor got32 = RunOp(op, {v, T<int64_t>({0, 3, 0, 2, -1, 3, 0}), T<int64_t>({4}, {})})[0];
    CHECK(got32.dtype() == DType::kFloat32);
    ExpectNear(got32, Cast(Reference(op, Cast(v, DType::kFloat64), ids, 4), DType::kFloat32), 0, 1e-6);
  }
  // The empty segment holds the dtype's lowest / highest value (TF's rule), integers too.
  Tensor mx = RunOp("UnsortedSegmentMax", {T<int32_t>({4, 9}), T<int32_t>({0, 0}), T<int32_t>({2}, {})})[0];
  ExpectEqual(mx, T<int32_t>({9, static_cast<double>(std::numeric_limits<int32_t>::lowest())}));
  Tensor mn = RunOp("UnsortedSegmentMin", {T<int64_t>({4, 9}), T<int32_t>({1, 1}), T<int32_t>({2}, {})})[0];
  CHECK(mn.data<int64_t>()[0] == std::numeric_limits<int64_t>::max());
  CHECK(mn.data<int64_t>()[1] == 4);
  ExpectEqual(RunOp("UnsortedSegmentProd", {T<int32_t>({4, 9, 2}), T<int32_t>({1, 1, 0}), T<int32_t>({3}, {})})[0],
              T<int32_t>({2, 36, 1}));
}

TEST_CASE("UnsortedSegment reductions: ids of rank 2 over data [2, 3, 4]") {
  const Tensor data = Rand({2, 3, 4}, -1, 1, 7);
  const std::vector<int64_t> ids = {1, 0, 1, 2, 2, 0};
  for (const std::string op : kOps) {
    CAPTURE(op);
    Tensor got = RunOp(op, {data, T<int32_t>({1, 0, 1, 2, 2, 0}, {2, 3}), T<int32_t>({3}, {})})[0];
    CHECK(got.shape() == TensorShape({3, 4}));
    Tensor flat = Make(DType::kFloat64, V(data), TensorShape({6, 4}));
    ExpectNear(got, Reference(op, flat, ids, 3), 0, 1e-15);
  }
}

TEST_CASE("UnsortedSegment reductions: finite-difference gradients, ties and zeros") {
  const Tensor ids = T<int32_t>({0, 1, 0, 2, -1, 1});
  const Tensor num = T<int32_t>({4}, {});
  for (const std::string op : kOps) {
    CAPTURE(op);
    CheckGradient(op, {Rand({6, 2}, -2, 2, 8), ids, num});
  }
  // Prod with one zero in segment 0 and two zeros in segment 1: the finite differences agree
  // (the product is linear in each element).
  CheckGradient("UnsortedSegmentProd", {T<double>({0.0, 1.5, -2.0, 0.0, 0.0, 0.5}), T<int32_t>({0, 0, 0, 1, 1, 1}),
                                        T<int32_t>({2}, {})});
}

TEST_CASE("UnsortedSegmentMax: tied maxima share the gradient equally") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output data = ops::Const(s, T<double>({3, 1, 3, 2}));
  Output y = s.Op("UnsortedSegmentMax",
                  {data, ops::Const(s, T<int32_t>({0, 0, 0, 1})), ops::Const(s, T<int32_t>({2}, {}))});
  Output dx = Gradients(s, {y}, {data})[0];
  Session sess(&g);
  ExpectNear(sess.Run({}, {dx})[0], T<double>({0.5, 0, 0.5, 1}));
}

TEST_CASE("UnsortedSegment reductions: bad input") {
  ExpectOpError("UnsortedSegmentMax", {Rand({3}), T<int32_t>({0, 5, 1}), T<int32_t>({3}, {})}, {},
                Code::kInvalidArgument, "UnsortedSegmentMax: segment_ids[1] = 5 is out of range [0, 3)");
  ExpectOpError("UnsortedSegmentMin", {Rand({3, 2}), T<int32_t>({0, 1}), T<int32_t>({3}, {})}, {},
                Code::kInvalidArgument, "segment_ids of shape [2] must be a prefix of data's shape [3,2]");
  ExpectOpError("UnsortedSegmentProd", {Rand({2}), T<int32_t>({0, 1}), T<int32_t>({-1}, {})}, {},
                Code::kInvalidArgument, "UnsortedSegmentProd: num_segments must be non-negative");
  ExpectOpError("UnsortedSegmentProd", {T<bool>({1, 0}), T<int32_t>({0, 1}), T<int32_t>({2}, {})}, {},
                Code::kInvalidArgument, "bool");
}

}  // namespace
}  // namespace weft::test
