// GPUs of this process, as the rest of weft sees them (no CUDA headers here).
//
//   const GpuProbe& p = ProbeGpus();
//   if (p.count == 0) std::cerr << "no GPU device: " << p.reason << "\n";
//   std::vector<std::shared_ptr<GpuContext>> gpus = OpenGpus();   // one context per device
//
// ProbeGpus asks CUDA once per process. Zero devices is normal (a CPU-only machine, a build
// without CUDA): the first probe says so once on stderr with CUDA's own reason, and every later
// call returns the same answer. Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/allocator.h"

namespace weft {

struct GpuProbe {
  int count = 0;
  std::string reason;              // why there are none: CUDA's message, or "built without CUDA"
  std::vector<std::string> names;  // "NVIDIA A100-SXM4-80GB (sm_80, 79 GiB)" per device
};
const GpuProbe& ProbeGpus();

// A GPU's streams, library handles and allocators (core/cuda/gpu_context.h; complete only in
// CUDA builds). Owned by shared_ptr: devices, kernels' contexts and copies share it.
class GpuContext;

// One context per probed device, opened once per process and shared by every session.
std::vector<std::shared_ptr<GpuContext>> OpenGpus();
// The device's caching allocator (device memory).
Allocator* GpuAllocatorOf(const GpuContext& gpu);

// "no GPU device: <reason>" as a FailedPrecondition, for --device gpu and explicit placements.
std::string NoGpuMessage();

}  // namespace weft
