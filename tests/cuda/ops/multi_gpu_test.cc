// Two GPUs in one process: kernels on GPU:1 make their device current on the executor's thread
// (GpuOf, ops/kernels/cuda/gpu_kernel.h), so launches and cuBLAS/cuDNN calls go to GPU:1's context
// and streams (the staging copier's two-GPU case is in tests/distributed/staging_test.cc). These
// need two GPUs: with fewer every case says so (MESSAGE "SKIPPED ...") and returns.
#include <doctest/doctest.h>

#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

namespace {

bool HaveTwoGpus() {
  if (ProbeGpus().count >= 2) return true;
  MESSAGE("SKIPPED (needs two GPUs): " << ProbeGpus().count << " usable; " << NoGpuMessage());
  return false;
}

}  // namespace

TEST_CASE("kernels on GPU:1 match the CPU, alternating with GPU:0 in one process") {
  if (!HaveTwoGpus()) return;
  const Tensor a = R({64, 96}, 1), b = R({96, 32}, 2), x = R({2, 8, 8, 3}, 3), f = R({3, 3, 3, 4}, 4);
  const AttrMap conv{{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::string("SAME")}};
  const Tensor mm = RunOp("MatMul", {a, b}, {}, kCpu)[0], cv = RunOp("Conv2D", {x, f}, conv, kCpu)[0];
  for (int round = 0; round < 3; ++round) {
    for (const char* gpu : {"/device:GPU:1", "/device:GPU:0"}) {
      CAPTURE(gpu);
      ExpectNear(RunOp("MatMul", {a, b}, {}, gpu)[0], mm, 1e-4, 1e-4);
      ExpectNear(RunOp("Conv2D", {x, f}, conv, gpu)[0], cv, 1e-4, 1e-4);
    }
  }
}
