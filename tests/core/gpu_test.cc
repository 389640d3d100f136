// core/gpu.cc: libweft loads the CUDA backend module (libweft_cuda.so) only when the CUDA driver
// lists a device, so a process without a usable GPU maps no CUDA library, whatever it runs. Read
// from /proc/self/maps after a session's first step, in a suite whose executable links libweft
// alone (test_cuda and test_distributed link the module themselves).
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/gpu_backend.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"

using namespace weft;

namespace {

// The files mapped into this process whose names contain one of `parts`.
std::vector<std::string> MappedFiles(const std::vector<std::string>& parts) {
  std::ifstream maps("/proc/self/maps");
  REQUIRE_MESSAGE(maps.good(), "cannot read /proc/self/maps");
  std::vector<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    for (const std::string& p : parts) {
      if (path.find(p) != std::string::npos && (found.empty() || found.back() != path)) found.push_back(path);
    }
  }
  return found;
}

const std::vector<std::string> kCudaLibraries = {"libcuda.so", "libcudart", "libcublas", "libcublasLt",
                                                 "libcudnn",   "libnccl",   "libweft_cuda"};

}  // namespace

TEST_CASE("a process without a usable GPU maps no CUDA library, also after a session's step") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Const(s.WithOpName("a"), Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}));
  Output b = ops::Const(s.WithOpName("b"), Tensor::FromVector<float>({5, 6, 7, 8}, {2, 2}));
  Output c = ops::MatMul(s.WithOpName("c"), a, b);
  Session sess(&g);  // use_gpus: on, as users run it
  // [[1,2],[3,4]] x [[5,6],[7,8]] in closed form.
  CHECK(sess.Run({}, {c})[0].ToVector<float>() == std::vector<float>{19, 22, 43, 50});

  const GpuBackend* backend = LoadGpuBackend();
  const std::vector<std::string> mapped = MappedFiles(kCudaLibraries);
  if (backend == nullptr) {
    for (const std::string& m : mapped) MESSAGE("mapped: " << m);
    CHECK_MESSAGE(mapped.empty(), mapped.size() << " CUDA libraries mapped without a CUDA backend loaded");
    CHECK(ProbeGpus().count == 0);
    CHECK(OpenGpus().empty());
    REQUIRE(!ProbeGpus().reason.empty());
    MESSAGE("no CUDA backend: " << ProbeGpus().reason);
#if WEFT_CUDA
    // Built with CUDA: the driver was asked first and said why not (no libcuda.so.1 on a machine
    // without the NVIDIA driver; "lists no device" where CUDA_VISIBLE_DEVICES hides them all).
    CHECK_MESSAGE((ProbeGpus().reason.rfind("no CUDA driver (", 0) == 0 ||
                   ProbeGpus().reason.rfind("the CUDA driver", 0) == 0 ||
                   ProbeGpus().reason.rfind("the CUDA backend", 0) == 0),
                  ProbeGpus().reason);
#else
    CHECK(ProbeGpus().reason.find("built without CUDA") != std::string::npos);
#endif
  } else {
    // A GPU machine: the driver listed a device, so the module is loaded from beside libweft.
    MESSAGE("CUDA backend loaded: " << backend->path);
    CHECK(MappedFiles({"libweft_cuda.so"}) == std::vector<std::string>{backend->path});
  }
}
