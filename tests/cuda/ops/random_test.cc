// The GPU kernels of the random ops (ops/kernels/cuda/random.cc): the CPU's numbers, and the CPU's
// dropout mask, for the same seed.
// These need a GPU: without one every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("GPU random ops give the CPU's numbers for the same seed") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const AttrMap shape{{"shape", TensorShape{7, 33}}, {"dtype", dt}, {"seed", int64_t{3}}, {"seed2", int64_t{5}}};
    AttrMap uniform = shape, normal = shape;
    uniform["minval"] = -2.0;
    uniform["maxval"] = 3.0;
    normal["mean"] = 1.0;
    normal["stddev"] = 0.5;
    ExpectGpuMatchesCpu("RandomUniform", {}, uniform, 1e-6);
    ExpectGpuMatchesCpu("RandomNormal", {}, normal, 1e-5);
    ExpectGpuMatchesCpu("TruncatedNormal", {}, normal, 1e-5);
  }
}

TEST_CASE("GPU Dropout gives the CPU's mask for the same seed") {
  if (!HaveGpu()) return;
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const AttrMap attrs{{"rate", 0.3}, {"seed", int64_t{3}}, {"seed2", int64_t{7}}};
    ExpectGpuMatchesCpu("Dropout", {Rand({7, 33}, -1, 1, 14, dt)}, attrs, 0);
  }
}
