// Helpers of the GPU tests (tests/cuda/): a case that needs a GPU says so and returns where there
// is none, and an op run on the GPU is compared with the same op on the CPU.
//
//   TEST_CASE("GPU Relu matches the CPU") {
//     if (!HaveGpu()) return;  // MESSAGE "SKIPPED (needs a GPU): ..."
//     Compare("Relu", {R({3, 7}, 1)});
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

// Runs `op` pinned to the GPU and to the CPU; every output must agree. REQUIRES a GPU kernel of op.
inline void Compare(std::string_view op, const std::vector<Tensor>& inputs, const AttrMap& attrs = {},
                    double tol = 1e-4) {
  INFO("op " << op);
  REQUIRE(KernelRegistry::Global().KernelsFor(op).find("GPU") != std::string::npos);
  const std::vector<Tensor> cpu = RunOp(op, inputs, attrs, kCpu);
  const std::vector<Tensor> gpu = RunOp(op, inputs, attrs, kGpu);
  REQUIRE(cpu.size() == gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) ExpectNear(gpu[i], cpu[i], tol, tol);
}

// An int32 vector (shapes, indices).
inline Tensor Ints(std::vector<int64_t> v) {
  std::vector<int32_t> i(v.begin(), v.end());
  return Tensor::FromVector<int32_t>(i);
}

}  // namespace weft::test
