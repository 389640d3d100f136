// Helpers of the GPU tests (tests/cuda/): a case that needs a GPU says so and returns where there
// is none; an op run on the GPU is compared with the same op on the CPU by the op harness's
// ExpectGpuMatchesCpu (tests/ops/op_test_util.h), which also records the comparison for test_ops.
//
//   TEST_CASE("GPU Relu matches the CPU") {
//     if (!HaveGpu()) return;  // MESSAGE "SKIPPED (needs a GPU): ..."
//     ExpectGpuMatchesCpu("Relu", {R({3, 7}, 1)});
//   }
#pragma once

#include <doctest/doctest.h>

#include <string_view>
#include <vector>

#include "core/gpu.h"
#include "ops/kernel.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {

inline constexpr const char* kGpu = "/device:GPU:0";
inline constexpr const char* kCpu = "/device:CPU:0";

// True when this process sees a GPU; otherwise the case is reported as skipped.
inline bool HaveGpu() {
  if (ProbeGpus().count > 0) return true;
  MESSAGE("SKIPPED (needs a GPU): " << NoGpuMessage());
  return false;
}

// Uniform float32 values in [lo, hi) of shape `dims`.
inline Tensor R(std::vector<int64_t> dims, uint64_t seed, double lo = -1, double hi = 1) {
  return Rand(std::move(dims), lo, hi, seed, DType::kFloat32);
}

// An int32 vector (shapes, indices).
inline Tensor Ints(std::vector<int64_t> v) {
  std::vector<int32_t> i(v.begin(), v.end());
  return Tensor::FromVector<int32_t>(i);
}

}  // namespace weft::test
