// A GPU's context (core/cuda/gpu_context.h) on a machine with a GPU: copies to the host that the
// pinned pool cannot hold fall back to pageable memory; a device that cannot be opened fails with
// its reason and leaves nothing behind. CUDA builds only; without a GPU every case says so.
#include <doctest/doctest.h>

#include "core/cuda/gpu_context.h"
#include "tests/cuda/gpu_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("copies to the host beyond the pinned pool's limit use pageable memory") {
  if (!HaveGpu()) return;
  std::shared_ptr<GpuContext> gpu = OpenGpus().at(0);
  // 1.25 GiB: more than the pinned pool (1 GiB) holds, as a large fetch or a checkpoint of a big
  // variable needs.
  const int64_t n = (int64_t{5} << 30) / 4 / 4;
  Tensor host(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; i += 4096) host.data<float>()[i] = static_cast<float>(i % 977);
  const Tensor dev = gpu->CopyToDevice(host);
  const Tensor back = gpu->CopyToHost(dev);
  CHECK(back.memory_kind() == MemoryKind::kHost);
  for (int64_t i = 0; i < n; i += 4096) REQUIRE(back.data<float>()[i] == host.data<float>()[i]);
  // A small copy still takes pinned memory, and the held pinned block does not make later copies fail.
  const Tensor small = gpu->CopyToHost(gpu->CopyToDevice(R({1024}, 1)));
  CHECK(small.memory_kind() == MemoryKind::kPinnedHost);
  CHECK(gpu->CopyToHost(dev).memory_kind() == MemoryKind::kHost);
  // Tensor::ToHost on a device tensor goes through the device store's copy on the compute stream.
  const Tensor via_store = dev.ToHost();
  CHECK(via_store.data<float>()[4096] == host.data<float>()[4096]);
}

TEST_CASE("opening a device that does not exist fails with its reason and the usable list is unchanged") {
  if (!HaveGpu()) return;
  const int count = ProbeGpus().count;
  const int before = static_cast<int>(OpenGpus().size());
  for (int attempt = 0; attempt < 100; ++attempt) {  // a leak per failed open would show as an error later
    try {
      GpuContext bad(count + 7);
      FAIL("opened a device that does not exist");
    } catch (const Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find("cudaSetDevice") != std::string::npos, e.what());
    }
  }
  CHECK(static_cast<int>(OpenGpus().size()) == before);
  ExpectGpuMatchesCpu("Relu", {R({3, 7}, 1)});  // the usable GPUs still work
}
