// core/gpu.h in a build without CUDA (meson option cuda disabled or not found): no devices.
#include "core/gpu.h"

#include "core/status.h"

namespace weft {

const GpuProbe& ProbeGpus() {
  static const GpuProbe probe{0, "weft was built without CUDA (meson option cuda; see docs/cuda.md)", {}, {}};
  return probe;
}

std::vector<std::shared_ptr<GpuContext>> OpenGpus() { return {}; }

Allocator* GpuAllocatorOf(const GpuContext&) {
  throw Error(errors::FailedPrecondition("weft was built without CUDA"));
}

std::string NoGpuMessage() { return "no GPU device: " + ProbeGpus().reason; }

}  // namespace weft
