// GPU kernels against the CPU kernels on random inputs, and mnist_cnn trained on the GPU vs the
// CPU. These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "core/gpu.h"
#include "graph/scope.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "ops/kernel.h"
#include "tests/ops/op_test_util.h"
#include "zoo/models.h"

using namespace weft;
using namespace weft::test;

namespace {

constexpr const char* kGpu = "/device:GPU:0";
constexpr const char* kCpu = "/device:CPU:0";

bool HaveGpu() {
  if (ProbeGpus().count > 0) return true;
  MESSAGE("SKIPPED (needs a GPU): " << NoGpuMessage());
  return false;
}

Tensor R(std::vector<int64_t> dims, uint64_t seed, double lo = -1, double hi = 1) {
  return Rand(std::move(dims), lo, hi, seed, DType::kFloat32);
}

// Runs `op` pinned to the GPU and to the CPU; every output must agree.
void Compare(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {}, double tol = 1e-4) {
  INFO("op " << op);
  REQUIRE(KernelRegistry::Global().KernelsFor(op).find("GPU") != std::string::npos);
  const std::vector<Tensor> cpu = RunOp(op, inputs, attrs, kCpu);
  const std::vector<Tensor> gpu = RunOp(op, inputs, attrs, kGpu);
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) ExpectNear(gpu[i], cpu[i], tol, tol);
}

Tensor Ints(std::vector<int64_t> v) {
  std::vector<int32_t> i(v.begin(), v.end());
  return Tensor::FromVector<int32_t>(i);
}

}  // namespace

TEST_CASE("GPU MatMul and BatchMatMul (cuBLAS) match the CPU, every transpose") {
  if (!HaveGpu()) return;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Compare("MatMul", {R(ta ? std::vector<int64_t>{7, 5} : std::vector<int64_t>{5, 7}, 1),
                         R(tb ? std::vector<int64_t>{3, 7} : std::vector<int64_t>{7, 3}, 2)},
              {{"transpose_a", ta}, {"transpose_b", tb}});
    }
  }
  Compare("BatchMatMul", {R({4, 5, 6}, 3), R({4, 6, 2}, 4)});
  Compare("BatchMatMul", {R({4, 5, 6}, 3), R({6, 2}, 4)}, {{"adj_x", false}, {"adj_y", false}});
  Compare("BatchMatMul", {R({2, 1, 6, 5}, 5), R({3, 6, 2}, 6)}, {{"adj_x", true}});
}

TEST_CASE("GPU elementwise ops with broadcasting, activations and their gradients") {
  if (!HaveGpu()) return;
  for (const char* op : {"Add", "Sub", "Mul", "Maximum", "Minimum"}) {
    Compare(op, {R({4, 1, 3}, 1), R({5, 1}, 2)});
    Compare(op, {R({2, 3}, 3), R({}, 4)});
  }
  Compare("Div", {R({4, 3}, 5), R({3}, 6, 0.5, 2)});
  Compare("Pow", {R({4, 3}, 28, 0.1, 2), R({3}, 29, -2, 3)});
  Compare("Pow", {R({}, 30, 0.8, 1), R({5}, 31, 1, 100)});  // Adam's beta^t
  for (const char* op : {"Neg", "Abs", "Square", "Exp", "Relu", "Sigmoid", "Tanh"}) Compare(op, {R({3, 7}, 7)});
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) Compare(op, {R({3, 7}, 8, 0.1, 3)});
  Compare("ReluGrad", {R({3, 7}, 9), R({3, 7}, 10)});
  Compare("SigmoidGrad", {R({3, 7}, 11, 0, 1), R({3, 7}, 12)});
  Compare("TanhGrad", {R({3, 7}, 13), R({3, 7}, 14)});
  Compare("BiasAdd", {R({2, 4, 4, 3}, 15), R({3}, 16)});
  Compare("AddN", {R({3, 4}, 22), R({3, 4}, 23), R({3, 4}, 24)});
  Compare("BroadcastTo", {R({3, 1}, 25), Ints({2, 3, 4})}, {{"Tidx", DType::kInt32}});
  Compare("ExpandDims", {R({3, 4}, 26)}, {{"axis", int64_t{1}}});
  Compare("Squeeze", {R({3, 1, 4}, 27)}, {{"axis", std::vector<int64_t>{1}}});
  Compare("BiasAddGrad", {R({2, 4, 4, 3}, 17)});
  Compare("Cast", {R({5}, 18, -4, 4)}, {{"SrcT", DType::kFloat32}, {"DstT", DType::kInt32}});
  Compare("ZerosLike", {R({2, 3}, 19)});
  Compare("OnesLike", {R({2, 3}, 20)});
  Compare("Fill", {Ints({2, 3}), Tensor::Scalar<float>(2.5f)});
  Compare("Gather", {R({4, 5, 3}, 21), Ints({4, 0, 0, 2})}, {{"axis", int64_t{1}}, {"Tindices", DType::kInt32}});
}

TEST_CASE("GPU comparisons, logical ops and ArgMax/ArgMin (the accuracy metric) match the CPU") {
  if (!HaveGpu()) return;
  // Ties and equal elements included: values on a coarse grid.
  const Tensor a = Rand({4, 1, 3}, -2, 2, 1, DType::kInt32), b = Rand({5, 1}, -2, 2, 2, DType::kInt32);
  const Tensor fa = Rand({4, 1, 3}, -2, 2, 3, DType::kInt64), fb = Rand({5, 1}, -2, 2, 4, DType::kInt64);
  for (const char* op : {"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"}) {
    Compare(op, {a, b}, {}, 0);
    Compare(op, {fa, fb}, {}, 0);
    Compare(op, {R({4, 1, 3}, 5), R({5, 1}, 6)}, {}, 0);
    Compare(op, {R({2, 3}, 7), R({}, 8)}, {}, 0);
  }
  const Tensor p = RunOp("Less", {R({4, 6}, 9), R({6}, 10)}, {}, kCpu)[0];
  const Tensor q = RunOp("Less", {R({6}, 11), R({4, 6}, 12)}, {}, kCpu)[0];
  Compare("LogicalAnd", {p, q}, {}, 0);
  Compare("LogicalOr", {p, q}, {}, 0);
  Compare("LogicalNot", {p}, {}, 0);
  Compare("Cast", {p}, {{"SrcT", DType::kBool}, {"DstT", DType::kFloat32}}, 0);  // accuracy's mean of hits
  Compare("Cast", {a}, {{"SrcT", DType::kInt32}, {"DstT", DType::kBool}}, 0);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int64_t axis : {0, 1, -1}) {
      Compare(op, {R({6, 10, 3}, 13)}, {{"axis", axis}, {"output_type", DType::kInt64}}, 0);
      Compare(op, {a}, {{"axis", axis}, {"output_type", DType::kInt32}}, 0);  // ties: the first index
    }
  }
}

TEST_CASE("GPU Dropout gives the CPU's mask for the same seed, GatherGrad matches the CPU") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const AttrMap attrs{{"rate", 0.3}, {"seed", int64_t{3}}, {"seed2", int64_t{7}}};
    Compare("Dropout", {Rand({7, 33}, -1, 1, 14, dt)}, attrs, 0);
  }
  // Repeated indices accumulate (atomic adds on the GPU, in any order: a float tolerance).
  Compare("GatherGrad", {R({4, 5, 3}, 15), Ints({3, 0, 3, 3, 1}), Ints({4, 6, 3})},
          {{"axis", int64_t{1}}, {"Tindices", DType::kInt32}});
  Compare("GatherGrad", {R({7, 2}, 16), Ints({0, 6, 6, 2, 0, 1, 5}), Ints({9, 2})},
          {{"axis", int64_t{0}}, {"Tindices", DType::kInt32}});
}

TEST_CASE("GPU Concat, Split, Tile, Transpose, Size, Rank and ReducedShape match the CPU") {
  if (!HaveGpu()) return;
  for (int64_t axis : {0, 1, 2, -1}) {
    Compare("Concat", {R({2, 3, 4}, 1), R({2, 3, 4}, 2), R({2, 3, 4}, 3)}, {{"axis", axis}}, 0);
    Compare("Split", {R({2, 6, 4}, 4)}, {{"axis", axis}, {"num_split", int64_t{2}}}, 0);
  }
  Compare("Concat", {R({2, 1, 4}, 5), R({2, 3, 4}, 6)}, {{"axis", int64_t{1}}}, 0);  // uneven widths
  Compare("Tile", {R({2, 1, 3}, 7)}, {{"multiples", std::vector<int64_t>{2, 4, 1}}}, 0);
  Compare("Tile", {Ints({1, 2, 3})}, {{"multiples", std::vector<int64_t>{3}}}, 0);
  Compare("Transpose", {R({2, 3, 4}, 8)}, {{"perm", std::vector<int64_t>{2, 0, 1}}}, 0);
  Compare("Transpose", {R({2, 3, 4, 5, 2}, 9)}, {{"perm", std::vector<int64_t>{4, 1, 3, 0, 2}}}, 0);
  Compare("Transpose", {Ints({1, 2, 3, 4, 5, 6})}, {{"perm", std::vector<int64_t>{0}}}, 0);
  Compare("Size", {R({2, 3, 4}, 10)}, {{"out_type", DType::kInt64}}, 0);
  Compare("Rank", {R({2, 3, 4}, 11)}, {}, 0);
  Compare("ReducedShape", {Ints({2, 3, 4})}, {{"axis", std::vector<int64_t>{0, -1}}}, 0);
}

TEST_CASE("GPU AssignAdd / AssignSub update a device variable as the CPU does") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kInt64}) {
    std::vector<double> got[2];
    for (int gpu = 0; gpu < 2; ++gpu) {
      Graph g;
      Scope s = Scope::Root(&g).WithDevice(gpu == 1 ? kGpu : kCpu);
      Output v = ops::Variable(s.WithOpName("v"), {3}, dt);
      auto value = [&](std::vector<int64_t> x) {
        Tensor t(dt, TensorShape{3});
        for (size_t i = 0; i < 3; ++i) {
          if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(x[i]);
          else t.data<int64_t>()[i] = x[i];
        }
        return ops::Const(s, t);
      };
      Output init = ops::Assign(s, v, value({1, 2, 3}));
      Output add = ops::AssignAdd(s, v, value({10, 20, 30}));
      Output sub = ops::AssignSub(s, v, value({1, 1, 5}));
      Output read = ops::Identity(s, v);
      SessionOptions o;
      o.soft_placement = false;
      Session sess(&g, o);
      for (const Output& step : {init, add, add, sub}) sess.Run({}, {}, {step.node});
      const Tensor t = sess.Run({}, {read})[0];
      for (int64_t i = 0; i < t.num_elements(); ++i) got[gpu].push_back(t.ElementAsDouble(i));
    }
    CHECK(got[1] == got[0]);
    CHECK(got[1] == std::vector<double>{20, 41, 58});
  }
}

TEST_CASE("GPU random ops give the CPU's numbers for the same seed") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const AttrMap shape{{"shape", TensorShape{7, 33}}, {"dtype", dt}, {"seed", int64_t{3}}, {"seed2", int64_t{5}}};
    AttrMap uniform = shape, normal = shape;
    uniform["minval"] = -2.0;
    uniform["maxval"] = 3.0;
    normal["mean"] = 1.0;
    normal["stddev"] = 0.5;
    Compare("RandomUniform", {}, uniform, 1e-6);
    Compare("RandomNormal", {}, normal, 1e-5);
    Compare("TruncatedNormal", {}, normal, 1e-5);
  }
}

TEST_CASE("GPU reductions, softmax and the cross-entropy losses") {
  if (!HaveGpu()) return;
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    Compare(op, {R({3, 4, 5}, 1)}, {{"axis", std::vector<int64_t>{1}}, {"keep_dims", false}});
    Compare(op, {R({3, 4, 5}, 2)}, {{"axis", std::vector<int64_t>{0, 2}}, {"keep_dims", true}});
    Compare(op, {R({300, 7}, 3)}, {{"axis", std::vector<int64_t>{}}, {"keep_dims", false}});
  }
  Compare("SumToShape", {R({4, 3, 5}, 4), Ints({3, 1})});
  Compare("Softmax", {R({6, 10}, 5, -5, 5)});
  Tensor labels = Rand({6, 10}, 0, 1, 6, DType::kFloat32);
  Compare("SoftmaxCrossEntropyWithLogits", {R({6, 10}, 7, -5, 5), labels});
  Compare("SparseSoftmaxCrossEntropyWithLogits", {R({6, 10}, 8, -5, 5), Ints({0, 9, 3, 3, 1, 7})},
          {{"Tlabels", DType::kInt32}});
}

TEST_CASE("GPU batch norm and its gradient, training and inference") {
  if (!HaveGpu()) return;
  for (bool training : {true, false}) {
    const AttrMap attrs{{"epsilon", 1e-3}, {"is_training", training}};
    const Tensor x = R({4, 3, 3, 5}, 1), scale = R({5}, 2, 0.5, 2), offset = R({5}, 3), mean = R({5}, 4),
                 var = R({5}, 5, 0.5, 2);
    Compare("FusedBatchNorm", {x, scale, offset, mean, var}, attrs);
    Compare("FusedBatchNormGrad", {R({4, 3, 3, 5}, 6), x, scale, mean, var, R({5}, 7), R({5}, 8)}, attrs);
  }
}

TEST_CASE("GPU convolutions and pooling (cuDNN) match the CPU, SAME padding with the odd pixel included") {
  if (!HaveGpu()) return;
  struct Case {
    std::vector<int64_t> in, filter;
    std::vector<int64_t> strides;
    const char* padding;
  };
  for (const Case& c : {Case{{2, 8, 8, 3}, {3, 3, 3, 4}, {1, 1}, "SAME"}, Case{{2, 9, 9, 3}, {3, 3, 3, 4}, {2, 2}, "SAME"},
                        Case{{2, 8, 7, 2}, {2, 2, 2, 5}, {1, 2}, "SAME"}, Case{{1, 7, 7, 1}, {5, 5, 1, 2}, {1, 1}, "VALID"}}) {
    const AttrMap attrs{{"strides", c.strides}, {"padding", std::string(c.padding)}};
    const Tensor x = R(c.in, 1), f = R(c.filter, 2);
    Compare("Conv2D", {x, f}, attrs, 1e-3);
    const Tensor y = RunOp("Conv2D", {x, f}, attrs, kCpu)[0];
    const Tensor dy = R(y.shape().dims(), 3);
    Compare("Conv2DBackpropInput", {Ints(c.in), f, dy}, attrs, 1e-3);
    Compare("Conv2DBackpropFilter", {x, Ints(c.filter), dy}, attrs, 1e-3);
  }
  const AttrMap pool{{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                     {"padding", std::string("VALID")}};
  const Tensor x = R({2, 8, 8, 3}, 4);
  Compare("MaxPool", {x}, pool);
  Compare("AvgPool", {x}, pool);
  const Tensor y = RunOp("MaxPool", {x}, pool, kCpu)[0];
  Compare("MaxPoolGrad", {x, y, R({2, 4, 4, 3}, 5)}, pool);
  Compare("AvgPoolGrad", {Ints({2, 8, 8, 3}), R({2, 4, 4, 3}, 6)}, pool);
}

TEST_CASE("mnist_cnn: 50 training steps on the GPU track the CPU with the same seed") {
  if (!HaveGpu()) return;
  const zoo::ZooModel& zm = zoo::FindZooModel("mnist_cnn");
  const Tensor x = Rand({32, 28, 28, 1}, 0, 1, 7, DType::kFloat32);
  Tensor y(DType::kInt32, TensorShape{32});
  for (int i = 0; i < 32; ++i) y.data<int32_t>()[i] = (i * 7) % 10;
  std::vector<double> losses[2];
  for (int gpu = 0; gpu < 2; ++gpu) {
    std::unique_ptr<train::Model> m = zm.build(TensorShape{28, 28, 1}, 10);
    train::CompileOptions co;
    co.loss = train::SparseCategoricalCrossentropy(/*from_logits=*/true);
    co.optimizer = train::SGD(0.05, 0.9);
    co.seed = 1;
    co.session.use_gpus = gpu == 1;
    co.session.inter_op_threads = co.session.intra_op_threads = 2;
    m->Compile(co);
    if (gpu == 1) CHECK(m->session()->devices().ShortNames().find("GPU:0") != std::string::npos);
    for (int step = 0; step < 50; ++step) losses[gpu].push_back(m->TrainOnBatch(x, y).at("loss"));
  }
  CHECK(losses[1].back() < losses[1].front());  // it learns on the GPU
  for (int step = 0; step < 50; step += 7) {
    INFO("step " << step);
    CHECK(losses[1][step] == doctest::Approx(losses[0][step]).epsilon(0.02));
  }
}
