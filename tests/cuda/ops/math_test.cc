// The GPU kernels of the math ops (ops/kernels/cuda/{math,reduce,matmul}.cc) against the CPU
// kernels on random inputs.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include <limits>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("GPU MatMul and BatchMatMul (cuBLAS) match the CPU, every transpose") {
  if (!HaveGpu()) return;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      ExpectGpuMatchesCpu("MatMul", {R(ta ? std::vector<int64_t>{7, 5} : std::vector<int64_t>{5, 7}, 1),
                         R(tb ? std::vector<int64_t>{3, 7} : std::vector<int64_t>{7, 3}, 2)},
              {{"transpose_a", ta}, {"transpose_b", tb}});
    }
  }
  ExpectGpuMatchesCpu("BatchMatMul", {R({4, 5, 6}, 3), R({4, 6, 2}, 4)});
  ExpectGpuMatchesCpu("BatchMatMul", {R({4, 5, 6}, 3), R({6, 2}, 4)}, {{"adj_x", false}, {"adj_y", false}});
  ExpectGpuMatchesCpu("BatchMatMul", {R({2, 1, 6, 5}, 5), R({3, 6, 2}, 6)}, {{"adj_x", true}});
}

TEST_CASE("GPU elementwise math ops with broadcasting, AddN and Cast match the CPU") {
  if (!HaveGpu()) return;
  for (const char* op : {"Add", "Sub", "Mul", "Maximum", "Minimum"}) {
    ExpectGpuMatchesCpu(op, {R({4, 1, 3}, 1), R({5, 1}, 2)});
    ExpectGpuMatchesCpu(op, {R({2, 3}, 3), R({}, 4)});
  }
  ExpectGpuMatchesCpu("Div", {R({4, 3}, 5), R({3}, 6, 0.5, 2)});
  ExpectGpuMatchesCpu("Pow", {R({4, 3}, 28, 0.1, 2), R({3}, 29, -2, 3)});
  ExpectGpuMatchesCpu("Pow", {R({}, 30, 0.8, 1), R({5}, 31, 1, 100)});  // Adam's beta^t
  for (const char* op : {"Neg", "Abs", "Square", "Exp", "Erf"}) ExpectGpuMatchesCpu(op, {R({3, 7}, 7)});
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) ExpectGpuMatchesCpu(op, {R({3, 7}, 8, 0.1, 3)});
  ExpectGpuMatchesCpu("AddN", {R({3, 4}, 22), R({3, 4}, 23), R({3, 4}, 24)});
  ExpectGpuMatchesCpu("Cast", {R({5}, 18, -4, 4)}, {{"SrcT", DType::kFloat32}, {"DstT", DType::kInt32}});
}

TEST_CASE("GPU comparisons, logical ops and ArgMax/ArgMin (the accuracy metric) match the CPU") {
  if (!HaveGpu()) return;
  // Ties and equal elements included: values on a coarse grid.
  const Tensor a = Rand({4, 1, 3}, -2, 2, 1, DType::kInt32), b = Rand({5, 1}, -2, 2, 2, DType::kInt32);
  const Tensor fa = Rand({4, 1, 3}, -2, 2, 3, DType::kInt64), fb = Rand({5, 1}, -2, 2, 4, DType::kInt64);
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    ExpectGpuMatchesCpu(op, {a, b}, {}, 0);
    ExpectGpuMatchesCpu(op, {fa, fb}, {}, 0);
    ExpectGpuMatchesCpu(op, {R({4, 1, 3}, 5), R({5, 1}, 6)}, {}, 0);
    ExpectGpuMatchesCpu(op, {R({2, 3}, 7), R({}, 8)}, {}, 0);
  }
  const Tensor p = RunOp("Less", {R({4, 6}, 9), R({6}, 10)}, {}, kCpu)[0];
  const Tensor q = RunOp("Less", {R({6}, 11), R({4, 6}, 12)}, {}, kCpu)[0];
  ExpectGpuMatchesCpu("LogicalAnd", {p, q}, {}, 0);
  ExpectGpuMatchesCpu("LogicalOr", {p, q}, {}, 0);
  ExpectGpuMatchesCpu("LogicalNot", {p}, {}, 0);
  ExpectGpuMatchesCpu("Cast", {p}, {{"SrcT", DType::kBool}, {"DstT", DType::kFloat32}}, 0);  // accuracy's mean of hits
  ExpectGpuMatchesCpu("Cast", {a}, {{"SrcT", DType::kInt32}, {"DstT", DType::kBool}}, 0);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, -1}) {
      ExpectGpuMatchesCpu(op, {R({6, 10, 3}, 13)}, {{"axis", axis}, {"output_type", DType::kInt64}}, 0);
      ExpectGpuMatchesCpu(op, {a}, {{"axis", axis}, {"output_type", DType::kInt32}}, 0);  // ties: the first index
    }
  }
}

TEST_CASE("GPU reductions, SumToShape and ReducedShape match the CPU") {
  if (!HaveGpu()) return;
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    ExpectGpuMatchesCpu(op, {R({3, 4, 5}, 1)}, {{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}});
    ExpectGpuMatchesCpu(op, {R({3, 4, 5}, 2)}, {{"axis", std::vector<int64_t>{0, 2}}, {"keep_dims", true}});
    ExpectGpuMatchesCpu(op, {R({300, 7}, 3)}, {{"axis", std::vector<int64_t>{}}, {"keep_dims", false}});
  }
  ExpectGpuMatchesCpu("SumToShape", {R({4, 3, 5}, 4), Ints({3, 1})});
  ExpectGpuMatchesCpu("ReducedShape", {Ints({2, 3, 4})}, {{"axis", std::vector<int64_t>{0, -1}}}, 0);
}

TEST_CASE("GPU Max, Min, Maximum, Minimum, ArgMax, ArgMin, Relu and MaxPool propagate NaN as the CPU does") {
  if (!HaveGpu()) return;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int p = 0; p < 6; ++p) {  // a NaN at every position of a [2, 3] input
    std::vector<double> v = {1, 3, -2, 3, 0.5, -7};
    v[p] = nan;
    const Tensor x = T<float>(v, {2, 3});
    for (const char* op : {"Max", "Min"}) ExpectGpuMatchesCpu(op, {x}, {{"axis", std::vector<int64_t>{1}}});
    for (const char* op : {"ArgMax", "ArgMin"}) ExpectGpuMatchesCpu(op, {x}, {{"axis", int64_t{1}}});
    for (const char* op : {"Maximum", "Minimum"}) ExpectGpuMatchesCpu(op, {x, T<float>({0, nan, 1, 2, 3, 4}, {2, 3})});
    ExpectGpuMatchesCpu("Relu", {x});
    ExpectGpuMatchesCpu("MaxPool", {T<float>(v, {1, 2, 3, 1})},
                        {{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{1, 1}}});
  }
}

// Max and Min start from -inf and +inf: over values that are all -inf (or +inf) the result is that
// infinity, as on the CPU, not the largest finite value.
TEST_CASE("GPU Max over all -inf is -inf, Min over all +inf is +inf") {
  if (!HaveGpu()) return;
  const double inf = std::numeric_limits<double>::infinity();
  auto filled = [](DType dt, double v) {
    Tensor t(dt, {2, 3});
    for (int i = 0; i < 6; ++i) {
      if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(v);
      else t.data<double>()[i] = v;
    }
    return t;
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    const Tensor neg = filled(dt, -inf), pos = filled(dt, inf);
    for (const AttrMap& attrs : {AttrMap{{"axis", std::vector<int64_t>{}}, {"keep_dims", false}},
                                 AttrMap{{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}}}) {
      const Tensor mx = RunOp("Max", {neg}, attrs, kGpu)[0], mn = RunOp("Min", {pos}, attrs, kGpu)[0];
      for (int64_t i = 0; i < mx.num_elements(); ++i) CHECK(mx.ElementAsDouble(i) == -inf);
      for (int64_t i = 0; i < mn.num_elements(); ++i) CHECK(mn.ElementAsDouble(i) == inf);
      ExpectGpuMatchesCpu("Max", {neg}, attrs);
      ExpectGpuMatchesCpu("Min", {pos}, attrs);
    }
  }
}

// Large shapes against the CPU: a global reduction of 3M elements (split over many blocks:
// ReduceSplits, launch.h), more than 4096 rows with 1 and 257 columns, and one tensor of more than
// 2^31 elements (64-bit indexing in the grid-stride loops and the reduction's offsets).
TEST_CASE("GPU reductions and elementwise ops over large shapes match the CPU") {
  if (!HaveGpu()) return;
  const AttrMap all{{"axis", std::vector<int64_t>{}}, {"keep_dims", false}};
  const AttrMap rows{{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}};
  const AttrMap cols{{"axis", std::vector<int64_t>{0}}, {"keep_dims", false}};
  const Tensor big = R({3 << 20}, 1, 0, 1);
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) ExpectGpuMatchesCpu(op, {big}, all, 1e-3);
  for (int64_t c : {1, 257}) {
    const Tensor x = R({5000, c}, 2);
    for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
      ExpectGpuMatchesCpu(op, {x}, rows, 1e-4);
      ExpectGpuMatchesCpu(op, {x}, cols, 1e-3);
    }
    ExpectGpuMatchesCpu("Add", {x, R({c}, 3)});
  }
  const int64_t huge = (int64_t{1} << 31) + 4099;
  Tensor h(DType::kFloat32, {huge});
  for (int64_t i = 0; i < huge; ++i) h.data<float>()[i] = static_cast<float>((i * 2654435761u) % 1000003) * 1e-6f;
  h.data<float>()[huge - 2] = 5.0f;  // the maximum sits past 2^31
  const Tensor mx = RunOp("Max", {h}, all, kGpu)[0];
  CHECK(mx.ElementAsDouble(0) == 5.0);
  ExpectGpuMatchesCpu("Neg", {h}, {}, 0);
}
