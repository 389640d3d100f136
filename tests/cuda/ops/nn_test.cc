// The GPU kernels of the nn ops (ops/kernels/cuda/{nn,conv,pool,batchnorm}.cc) against the CPU
// kernels on random inputs.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include <cstring>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("GPU activations and their gradients, BiasAdd and BiasAddGrad match the CPU") {
  if (!HaveGpu()) return;
  for (const char* op : {"Relu", "Sigmoid", "Tanh"}) ExpectGpuMatchesCpu(op, {R({3, 7}, 7)});
  ExpectGpuMatchesCpu("ReluGrad", {R({3, 7}, 9), R({3, 7}, 10)});
  ExpectGpuMatchesCpu("SigmoidGrad", {R({3, 7}, 11, 0, 1), R({3, 7}, 12)});
  ExpectGpuMatchesCpu("TanhGrad", {R({3, 7}, 13), R({3, 7}, 14)});
  ExpectGpuMatchesCpu("BiasAdd", {R({2, 4, 4, 3}, 15), R({3}, 16)});
  ExpectGpuMatchesCpu("BiasAddGrad", {R({2, 4, 4, 3}, 17)});
}

TEST_CASE("GPU softmax and the cross-entropy losses match the CPU") {
  if (!HaveGpu()) return;
  ExpectGpuMatchesCpu("Softmax", {R({6, 10}, 5, -5, 5)});
  Tensor labels = Rand({6, 10}, 0, 1, 6, DType::kFloat32);
  ExpectGpuMatchesCpu("SoftmaxCrossEntropyWithLogits", {R({6, 10}, 7, -5, 5), labels});
  ExpectGpuMatchesCpu("SparseSoftmaxCrossEntropyWithLogits", {R({6, 10}, 8, -5, 5), Ints({0, 9, 3, 3, 1, 7})},
          {{"Tlabels", DType::kInt32}});
}

TEST_CASE("GPU batch norm and its gradient, training and inference") {
  if (!HaveGpu()) return;
  for (bool training : {true, false}) {
    const AttrMap attrs{{"epsilon", 1e-3}, {"is_training", training}};
    const Tensor x = R({4, 3, 3, 5}, 1), scale = R({5}, 2, 0.5, 2), offset = R({5}, 3), mean = R({5}, 4),
                 var = R({5}, 5, 0.5, 2);
    ExpectGpuMatchesCpu("FusedBatchNorm", {x, scale, offset, mean, var}, attrs);
    ExpectGpuMatchesCpu("FusedBatchNormGrad", {R({4, 3, 3, 5}, 6), x, scale, mean, var, R({5}, 7), R({5}, 8)}, attrs);
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
    ExpectGpuMatchesCpu("Conv2D", {x, f}, attrs, 1e-3);
    const Tensor y = RunOp("Conv2D", {x, f}, attrs, kCpu)[0];
    const Tensor dy = R(y.shape().dims(), 3);
    ExpectGpuMatchesCpu("Conv2DBackpropInput", {Ints(c.in), f, dy}, attrs, 1e-3);
    ExpectGpuMatchesCpu("Conv2DBackpropFilter", {x, Ints(c.filter), dy}, attrs, 1e-3);
  }
  const AttrMap pool{{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                     {"padding", std::string("VALID")}};
  const Tensor x = R({2, 8, 8, 3}, 4);
  ExpectGpuMatchesCpu("MaxPool", {x}, pool);
  ExpectGpuMatchesCpu("AvgPool", {x}, pool);
  const Tensor y = RunOp("MaxPool", {x}, pool, kCpu)[0];
  ExpectGpuMatchesCpu("MaxPoolGrad", {x, y, R({2, 4, 4, 3}, 5)}, pool);
  ExpectGpuMatchesCpu("AvgPoolGrad", {Ints({2, 8, 8, 3}), R({2, 4, 4, 3}, 6)}, pool);
}

// The three convolution passes against the CPU over input channels 0, 1, 3, 32, 64, an empty
// batch and zero output channels (a pass whose output is not empty but whose sum has no terms must
// give zeros, not cuDNN's BAD_PARAM), in float32 and float64 (NCHW inside), with TF32 off (FMA:
// within 1e-4 of the CPU) and on (within the TF32 tolerance docs/cuda.md states).
TEST_CASE("GPU convolutions over empty and wide channel counts, float32 and float64, TF32 off and on") {
  if (!HaveGpu()) return;
  const AttrMap attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::string("SAME")}};
  struct Case {
    int64_t n, c, k;
  };
  std::vector<Case> cases;
  for (int64_t c : {0, 1, 3, 32, 64}) cases.push_back({2, c, 8});
  cases.push_back({0, 3, 8});  // empty batch: the filter gradient is zeros
  cases.push_back({2, 3, 0});  // no output channels: the input gradient is zeros
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    for (bool tf32 : {false, true}) {
      if (tf32 && dt == DType::kFloat64) continue;  // TF32 is a float32 matter
      const GpuOptions options{.allow_tf32 = tf32};
      const double tol = dt == DType::kFloat64 ? 1e-10 : tf32 ? 1e-2 : 1e-4;
      for (const Case& c : cases) {
        CAPTURE(DTypeName(dt));
        CAPTURE(tf32);
        CAPTURE(c.n);
        CAPTURE(c.c);
        CAPTURE(c.k);
        const Tensor x = Rand({c.n, 6, 5, c.c}, -1, 1, 1, dt), f = Rand({3, 3, c.c, c.k}, -1, 1, 2, dt);
        const Tensor dy = Rand({c.n, 6, 5, c.k}, -1, 1, 3, dt);
        ExpectGpuMatchesCpu("Conv2D", {x, f}, attrs, tol, options);
        ExpectGpuMatchesCpu("Conv2DBackpropInput", {Ints({c.n, 6, 5, c.c}), f, dy}, attrs, tol, options);
        ExpectGpuMatchesCpu("Conv2DBackpropFilter", {x, Ints({3, 3, c.c, c.k}), dy}, attrs, tol, options);
      }
    }
  }
}

// Deterministic algorithms (SessionOptions::gpu.deterministic): the same inputs give the same bits.
TEST_CASE("GPU convolution gradients with deterministic algorithms give the same bits every run") {
  if (!HaveGpu()) return;
  const AttrMap attrs{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::string("SAME")}};
  const GpuOptions det{.deterministic = true};
  const Tensor x = R({16, 12, 12, 32}, 1), dy = R({16, 12, 12, 32}, 2), f = R({3, 3, 32, 32}, 3);
  const Tensor a = RunOp("Conv2DBackpropFilter", {x, Ints({3, 3, 32, 32}), dy}, attrs, kGpu, det)[0];
  const Tensor b = RunOp("Conv2DBackpropFilter", {x, Ints({3, 3, 32, 32}), dy}, attrs, kGpu, det)[0];
  CHECK(std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0);
  const Tensor c = RunOp("Conv2DBackpropInput", {Ints({16, 12, 12, 32}), f, dy}, attrs, kGpu, det)[0];
  const Tensor d = RunOp("Conv2DBackpropInput", {Ints({16, 12, 12, 32}), f, dy}, attrs, kGpu, det)[0];
  CHECK(std::memcmp(c.raw_data(), d.raw_data(), c.bytes()) == 0);
}

TEST_CASE("GPU pooling in float64 matches the CPU") {
  if (!HaveGpu()) return;
  const AttrMap pool{{"ksize", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                     {"padding", std::string("VALID")}};
  const Tensor x = Rand({2, 8, 8, 3}, -1, 1, 4, DType::kFloat64);
  ExpectGpuMatchesCpu("MaxPool", {x}, pool, 1e-12);
  ExpectGpuMatchesCpu("AvgPool", {x}, pool, 1e-12);
  const Tensor y = RunOp("MaxPool", {x}, pool, kCpu)[0];
  const Tensor dy = Rand({2, 4, 4, 3}, -1, 1, 5, DType::kFloat64);
  ExpectGpuMatchesCpu("MaxPoolGrad", {x, y, dy}, pool, 1e-12);
  ExpectGpuMatchesCpu("AvgPoolGrad", {Ints({2, 8, 8, 3}), dy}, pool, 1e-12);
}
