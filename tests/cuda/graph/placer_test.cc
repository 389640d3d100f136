// The placer with a GPU in the device set: a DeviceSet holding a GPU entry without a context (a
// device the placer may choose; nothing runs), so the choice is checked on a machine without one.
#include <doctest/doctest.h>

#include "graph/placer.h"
#include "graph/scope.h"
#include "ops/framework.h"
#include "ops/kernel.h"
#include "ops/math.h"

using namespace weft;

namespace {

const char* kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const char* kGpu0 = "/job:localhost/replica:0/task:0/device:GPU:0";

DeviceSet CpuAndFakeGpu() {
  DeviceSet set = DeviceSet::LocalCpus(1, 1);
  set.Add(std::make_unique<Device>(DeviceName::Parse(kGpu0), 1));
  return set;
}

}  // namespace

TEST_CASE("placer: ops with a GPU kernel go to the GPU, the rest stay on the CPU") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {2, 3});
  Output w = ops::Placeholder(s.WithOpName("w"), DType::kFloat32, {3, 4});
  Output y = ops::MatMul(s.WithOpName("y"), x, w);
  DeviceSet devices = CpuAndFakeGpu();
  Place(&g, devices);
  CHECK(x.node->assigned_device() == kCpu0);  // placeholders are fed on the host
  const bool gpu_kernel = KernelRegistry::Global().HasKernel(*y.node, "GPU");
#if defined(WEFT_CUDA)
  CHECK(gpu_kernel);
  CHECK(y.node->assigned_device() == kGpu0);
#else
  CHECK(!gpu_kernel);  // no CUDA in this build: no GPU kernels, so the GPU entry gets nothing
  CHECK(y.node->assigned_device() == kCpu0);
#endif
}

TEST_CASE("placer: asking the GPU for an op it has no kernel for") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:GPU:0"), DType::kFloat32, {2});
  DeviceSet devices = CpuAndFakeGpu();
  try {
    Place(&g, devices, {.soft_placement = false});
    FAIL("expected InvalidArgument");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kInvalidArgument);
    const std::string m = e.what();
    CHECK(m.find("has no kernel for it") != std::string::npos);
    CHECK(m.find("CPU:0, GPU:0") != std::string::npos);
  }
  Place(&g, devices, {.soft_placement = true});
  CHECK(x.node->assigned_device() == kCpu0);
}

TEST_CASE("placer: asking for a GPU the machine does not have") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {2, 2});
  Output y = ops::MatMul(s.WithOpName("y").WithDevice("/device:GPU:0"), x, x);
  DeviceSet cpus = DeviceSet::LocalCpus(1, 1);
  CHECK_THROWS_AS(Place(&g, cpus, {.soft_placement = false}), Error);
  Place(&g, cpus, {.soft_placement = true});
  CHECK(y.node->assigned_device() == kCpu0);
}
