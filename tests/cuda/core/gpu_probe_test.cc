// The usable-GPU list (core/gpu.h): one answer for ProbeGpus and OpenGpus, with the reason for each
// device CUDA lists that could not be opened. OpenUsableGpus is the code OpenGpus runs; here its
// `open` is given failures, injected (no GPU needed). Runs in builds with and without CUDA.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "core/gpu.h"
#include "core/gpu_backend.h"
#include "core/status.h"
#include "ops/kernel.h"

using namespace weft;

namespace {

// Stands in for GpuContext: OpenUsableGpus keeps whatever `open` returns.
struct FakeContext {
  int ordinal;
};

bool Has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// Opens devices as CUDA would, except those in `failing`, whose open throws what a GpuContext
// constructor throws when cuDNN or memory is missing part-way.
auto OpenExcept(std::vector<int> failing) {
  return [failing](int i) {
    for (int f : failing) {
      if (f == i) throw Error(errors::ResourceExhausted("GPU:{}: cudnnCreate: injected failure", i));
    }
    return std::make_pair(fmt::format("Fake GPU {}", i), std::make_shared<FakeContext>(FakeContext{i}));
  };
}

}  // namespace

TEST_CASE("usable GPUs: a device whose context fails to open is listed as not usable, with its reason") {
  const UsableGpus<FakeContext> u = OpenUsableGpus<FakeContext>(3, "unused", OpenExcept({1}));
  CHECK(u.probe.count == 2);
  REQUIRE(u.contexts.size() == 2);
  CHECK(u.contexts[0]->ordinal == 0);
  CHECK(u.contexts[1]->ordinal == 2);  // GPU:1 of the session is CUDA's ordinal 2
  CHECK(u.probe.names == std::vector<std::string>{"Fake GPU 0", "Fake GPU 2"});
  REQUIRE(u.probe.unusable.size() == 1);
  CHECK_MESSAGE(u.probe.unusable[0].rfind("GPU ordinal 1: ", 0) == 0, u.probe.unusable[0]);
  CHECK_MESSAGE(Has(u.probe.unusable[0], "GPU:1: cudnnCreate: injected failure"), u.probe.unusable[0]);
  CHECK(u.probe.reason.empty());
}

TEST_CASE("usable GPUs: when every listed device fails, the count is 0 and the reason names each failure") {
  const UsableGpus<FakeContext> u = OpenUsableGpus<FakeContext>(2, "unused", OpenExcept({0, 1}));
  CHECK(u.probe.count == 0);
  CHECK(u.contexts.empty());
  CHECK(u.probe.names.empty());
  CHECK(u.probe.unusable.size() == 2);
  CHECK_MESSAGE(Has(u.probe.reason, "CUDA lists 2 device(s) and none could be opened"), u.probe.reason);
  CHECK_MESSAGE((Has(u.probe.reason, "GPU:0: cudnnCreate") && Has(u.probe.reason, "GPU:1: cudnnCreate")),
                u.probe.reason);
}

TEST_CASE("usable GPUs: no device listed gives CUDA's reason") {
  const UsableGpus<FakeContext> u = OpenUsableGpus<FakeContext>(0, "CUDA reports no devices", OpenExcept({}));
  CHECK(u.probe.count == 0);
  CHECK(u.probe.reason == "CUDA reports no devices");
  CHECK(u.probe.unusable.empty());
}

TEST_CASE("this process: ProbeGpus and OpenGpus agree, and no usable GPU always comes with a reason") {
  const GpuProbe& p = ProbeGpus();
  CHECK(p.count == static_cast<int>(OpenGpus().size()));
  CHECK(p.count == static_cast<int>(p.names.size()));
  for (const std::string& u : p.unusable) MESSAGE("not usable: " << u);
  if (p.count == 0) {
    CHECK(!p.reason.empty());
    CHECK(NoGpuMessage() == "no GPU device: " + p.reason);
  } else {
    CHECK(p.reason.empty());
  }
}

TEST_CASE("the CUDA backend module: loaded by test_cuda's main even without a GPU, with its GPU kernels") {
  const GpuBackend* b = LoadGpuBackend();
#if WEFT_CUDA
  // cuda_main.cc asked for it before anything else (LoadGpuBackend(true)); libweft found it beside
  // itself and every entry point by name.
  REQUIRE(b != nullptr);
  CHECK_MESSAGE(b->path.size() > 16, b->path);
  CHECK(b->path.substr(b->path.find_last_of('/') + 1) == "libweft_cuda.so");
  CHECK(b->usable() != nullptr);
  CHECK(&b->usable()->probe == &ProbeGpus());  // libweft answers with the module's one list
  CHECK(KernelRegistry::Global().KernelsFor("MatMul").find("GPU") != std::string::npos);
  CHECK(KernelRegistry::Global().KernelsFor("Conv2D").find("GPU") != std::string::npos);
#else
  CHECK(b == nullptr);
  CHECK(KernelRegistry::Global().KernelsFor("MatMul").find("GPU") == std::string::npos);
#endif
}
