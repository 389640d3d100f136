// Every op with a GPU kernel, its GPU kernel against its CPU kernel through the harness's
// ExpectGpuMatchesCpu, so that the op-coverage check (tests/ops/op_coverage.h) sees a comparison
// for each. Linked into test_ops. Without a GPU each comparison checks that the GPU kernel is
// registered and skips its run; the cases themselves always run (no early return).
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

Tensor F(std::vector<int64_t> dims, uint64_t seed, double lo = -1, double hi = 1) {
  return Rand(std::move(dims), lo, hi, seed, DType::kFloat32);
}
Tensor I32(std::vector<double> v) { return T<int32_t>(std::move(v)); }

struct GpuCase {
  const char* op;
  std::vector<Tensor> inputs;
  AttrMap attrs;
  double tol = 1e-4;
};

void RunAll(const std::vector<GpuCase>& cases) {
  for (const GpuCase& c : cases) ExpectGpuMatchesCpu(c.op, c.inputs, c.attrs, c.tol);
}

TEST_CASE("GPU vs CPU: elementwise math, comparisons and logic") {
  std::vector<GpuCase> cases;
  for (const char* op : {"Add", "Sub", "Mul", "Maximum", "Minimum"}) cases.push_back({op, {F({4, 1, 3}, 1), F({5, 1}, 2)}});
  cases.push_back({"Div", {F({4, 3}, 3), F({3}, 4, 0.5, 2)}});
  cases.push_back({"Pow", {F({4, 3}, 5, 0.1, 2), F({3}, 6, -2, 3)}});
  for (const char* op : {"Neg", "Abs", "Square", "Exp", "Erf"}) cases.push_back({op, {F({3, 7}, 7)}});
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) cases.push_back({op, {F({3, 7}, 8, 0.1, 3)}});
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    cases.push_back({op, {Rand({4, 1, 3}, -2, 2, 9, DType::kInt32), Rand({5, 1}, -2, 2, 10, DType::kInt32)}, {}, 0});
  }
  const Tensor p = T<bool>({1, 0, 1, 1, 0, 0}, {2, 3}), q = T<bool>({0, 1, 1});
  cases.push_back({"LogicalAnd", {p, q}, {}, 0});
  cases.push_back({"LogicalOr", {p, q}, {}, 0});
  cases.push_back({"LogicalNot", {p}, {}, 0});
  cases.push_back({"Cast", {F({5}, 11, -4, 4)}, {{"DstT", DType::kInt32}}, 0});
  cases.push_back({"AddN", {F({3, 4}, 12), F({3, 4}, 13), F({3, 4}, 14)}});
  cases.push_back({"MatMul", {F({5, 7}, 15), F({3, 7}, 16)}, {{"transpose_b", true}}});
  cases.push_back({"BatchMatMul", {F({2, 1, 6, 5}, 17), F({3, 6, 2}, 18)}, {{"adj_x", true}}});
  RunAll(cases);
}

TEST_CASE("GPU vs CPU: reductions and shape helpers") {
  std::vector<GpuCase> cases;
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    cases.push_back({op, {F({3, 4, 5}, 1)}, {{"axis", std::vector<int64_t>{0, 2}}, {"keep_dims", true}}});
  }
  for (const char* op : {"ArgMax", "ArgMin"}) cases.push_back({op, {F({6, 10, 3}, 2)}, {{"axis", int64_t{1}}}, 0});
  cases.push_back({"SumToShape", {F({4, 3, 5}, 3), I32({3, 1})}});
  cases.push_back({"ReducedShape", {I32({2, 3, 4})}, {{"axis", std::vector<int64_t>{0, -1}}}, 0});
  cases.push_back({"Shape", {F({2, 3, 4}, 4)}, {{"out_type", DType::kInt64}}, 0});
  cases.push_back({"Size", {F({2, 3, 4}, 5)}, {}, 0});
  cases.push_back({"Rank", {F({2, 3, 4}, 6)}, {}, 0});
  RunAll(cases);
}

TEST_CASE("GPU vs CPU: array ops") {
  const std::vector<GpuCase> cases = {
      {"Reshape", {F({2, 6}, 1), I32({3, -1})}, {}, 0},
      {"Transpose", {F({2, 3, 4}, 2)}, {{"perm", std::vector<int64_t>{2, 0, 1}}}, 0},
      {"ExpandDims", {F({3, 4}, 3)}, {{"axis", int64_t{1}}}, 0},
      {"Squeeze", {F({3, 1, 4}, 4)}, {{"axis", std::vector<int64_t>{1}}}, 0},
      {"Concat", {F({2, 1, 4}, 5), F({2, 3, 4}, 6)}, {{"axis", int64_t{1}}}, 0},
      {"Split", {F({2, 6, 4}, 7)}, {{"axis", int64_t{1}}, {"num_split", int64_t{3}}}, 0},
      {"Tile", {F({2, 1, 3}, 8)}, {{"multiples", std::vector<int64_t>{2, 4, 1}}}, 0},
      {"Fill", {I32({2, 3}), T<float>({2.5}, {})}, {}, 0},
      {"ZerosLike", {F({2, 3}, 9)}, {}, 0},
      {"OnesLike", {F({2, 3}, 10)}, {}, 0},
      {"BroadcastTo", {F({3, 1}, 11), I32({2, 3, 4})}, {}, 0},
      {"Gather", {F({4, 5, 3}, 12), I32({4, 0, 0, 2})}, {{"axis", int64_t{1}}}, 0},
      {"GatherGrad", {F({4, 5, 3}, 13), I32({3, 0, 3, 3, 1}), I32({4, 6, 3})}, {{"axis", int64_t{1}}}},
      {"Identity", {F({2, 3}, 14)}, {}, 0},
      {"StopGradient", {F({2, 3}, 15)}, {}, 0},
      {"EnsureShape", {F({2, 3}, 16)}, {{"shape", TensorShape({-1, 3})}}, 0},
      {"Const", {}, {{"value", T<float>({1, 2, 3})}, {"dtype", DType::kFloat32}}, 0},
      {"NoOp", {}, {}, 0},
  };
  RunAll(cases);
}

TEST_CASE("GPU vs CPU: nn ops") {
  const AttrMap conv{{"strides", std::vector<int64_t>{2, 2}}, {"padding", std::string("SAME")}};
  const AttrMap pool{{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                     {"padding", std::string("VALID")}};
  const Tensor x = F({2, 9, 9, 3}, 1), filter = F({3, 3, 3, 4}, 2), dy = F({2, 5, 5, 4}, 3);
  const Tensor px = F({2, 8, 8, 3}, 4), pdy = F({2, 4, 4, 3}, 5);
  const Tensor py = RunOp("MaxPool", {px}, pool)[0];
  const Tensor bx = F({4, 3, 3, 5}, 6), scale = F({5}, 7, 0.5, 2), offset = F({5}, 8), mean = F({5}, 9),
               var = F({5}, 10, 0.5, 2);
  const AttrMap bn{{"epsilon", 1e-3}, {"is_training", true}};
  const std::vector<GpuCase> cases = {
      {"Relu", {F({3, 7}, 11)}}, {"Sigmoid", {F({3, 7}, 12)}}, {"Tanh", {F({3, 7}, 13)}},
      {"ReluGrad", {F({3, 7}, 14), F({3, 7}, 15)}},
      {"SigmoidGrad", {F({3, 7}, 16, 0, 1), F({3, 7}, 17)}},
      {"TanhGrad", {F({3, 7}, 18), F({3, 7}, 19)}},
      {"Gelu", {F({3, 7}, 40, -4, 4)}, {{"approximate", false}}},
      {"Gelu", {F({3, 7}, 41, -4, 4)}, {{"approximate", true}}},
      {"GeluGrad", {F({3, 7}, 42), F({3, 7}, 43, -4, 4)}, {{"approximate", false}}},
      {"GeluGrad", {F({3, 7}, 44), F({3, 7}, 45, -4, 4)}, {{"approximate", true}}},
      {"SoftmaxGrad", {F({6, 10}, 46, 0, 1), F({6, 10}, 47)}},
      {"BiasAdd", {F({2, 4, 3}, 20), F({3}, 21)}},
      {"BiasAddGrad", {F({2, 4, 3}, 22)}},
      {"Softmax", {F({6, 10}, 23, -5, 5)}},
      {"SoftmaxCrossEntropyWithLogits", {F({6, 10}, 24, -5, 5), F({6, 10}, 25, 0, 1)}},
      {"SparseSoftmaxCrossEntropyWithLogits", {F({6, 10}, 26, -5, 5), I32({0, 9, 3, 3, 1, 7})}},
      {"Conv2D", {x, filter}, conv, 1e-3},
      {"Conv2DBackpropInput", {I32({2, 9, 9, 3}), filter, dy}, conv, 1e-3},
      {"Conv2DBackpropFilter", {x, I32({3, 3, 3, 4}), dy}, conv, 1e-3},
      {"MaxPool", {px}, pool}, {"AvgPool", {px}, pool},
      {"MaxPoolGrad", {px, py, pdy}, pool},
      {"AvgPoolGrad", {I32({2, 8, 8, 3}), pdy}, pool},
      {"FusedBatchNorm", {bx, scale, offset, mean, var}, bn},
      {"FusedBatchNormGrad", {F({4, 3, 3, 5}, 27), bx, scale, mean, var, F({5}, 28), F({5}, 29)}, bn},
  };
  RunAll(cases);
}

TEST_CASE("GPU vs CPU: random ops give the CPU's numbers for the same seeds") {
  const AttrMap seeds{{"shape", TensorShape{7, 33}}, {"dtype", DType::kFloat32}, {"seed", int64_t{3}},
                      {"seed2", int64_t{5}}};
  const std::vector<GpuCase> cases = {
      {"RandomUniform", {}, seeds, 1e-6},
      {"RandomUniformLike", {F({7, 33}, 2)}, {{"seed", int64_t{3}}, {"seed2", int64_t{5}}}, 1e-6},
      {"RandomNormal", {}, seeds, 1e-5},
      {"TruncatedNormal", {}, seeds, 1e-5},
      {"Dropout", {F({7, 33}, 1)}, {{"rate", 0.3}, {"seed", int64_t{3}}, {"seed2", int64_t{7}}}, 0},
  };
  RunAll(cases);
}

TEST_CASE("GPU vs CPU: FusedCausalAttention and its gradient") {
  // q [B, T, H, K], k [B, S, H, K], v [B, S, H, V] as {B, T, S, H, K, V}: T == S, T > S, head sizes
  // that fill no vector, and 40 steps (several query blocks). The gradient's out and lse come
  // from the CPU's forward, its dlse is random or the empty [0] tensor (zeros).
  for (const std::vector<int64_t>& d : std::vector<std::vector<int64_t>>{{2, 5, 5, 3, 3, 2}, {1, 7, 4, 2, 5, 3},
                                                                         {2, 40, 40, 2, 16, 8}}) {
    const int64_t B = d[0], Tq = d[1], S = d[2], H = d[3], K = d[4], V = d[5];
    const std::vector<std::vector<int64_t>> shapes = {{B, Tq, H, K}, {B, S, H, K}, {B, S, H, V}};
    std::vector<Tensor> in32, in64;
    for (size_t i = 0; i < shapes.size(); ++i) {
      in32.push_back(F(shapes[i], 60 + i));
      in64.push_back(Rand(shapes[i], -1, 1, 70 + i, DType::kFloat64));
    }
    ExpectGpuMatchesCpu("FusedCausalAttention", in32, {}, 1e-4);
    ExpectGpuMatchesCpu("FusedCausalAttention", in64, {{"scale", 0.6}}, 1e-10);
    const std::vector<Tensor> fwd = RunOp("FusedCausalAttention", in64, {{"scale", 0.6}}, "/device:CPU:0");
    const Tensor dout = Rand({B, Tq, H, V}, -1, 1, 80, DType::kFloat64);
    for (const Tensor& dlse : {Rand({B, H, Tq}, -1, 1, 81, DType::kFloat64), Tensor::Zeros(DType::kFloat64, TensorShape({0}))}) {
      ExpectGpuMatchesCpu("FusedCausalAttentionGrad", {dout, in64[0], in64[1], in64[2], fwd[0], fwd[1], dlse},
                          {{"scale", 0.6}}, 1e-10);
    }
  }
}

TEST_CASE("GPU vs CPU: state and optimizer ops update a variable on the device") {
  const Tensor var = F({3}, 1), grad = F({3}, 2), accum = F({3}, 3), lr = T<float>({0.1}, {});
  const std::vector<GpuCase> cases = {
      {"Assign", {var, grad}, {}, 0},
      {"AssignAdd", {var, grad}},
      {"AssignSub", {var, grad}},
      {"ApplyGradientDescent", {var, lr, grad}},
      {"ApplyMomentum", {var, accum, lr, grad, T<float>({0.9}, {})}, {{"use_nesterov", true}}},
      {"ApplyAdam", {var, accum, F({3}, 4, 0.1, 1), T<float>({0.9}, {}), T<float>({0.999}, {}), lr,
                     T<float>({0.9}, {}), T<float>({0.999}, {}), T<float>({1e-7}, {}), grad}},
  };
  RunAll(cases);
}

}  // namespace
}  // namespace weft::test
