// The GPU kernels of the nn ops (ops/kernels/cuda/{nn,conv,pool,batchnorm}.cc) against the CPU
// kernels on random inputs.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

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
