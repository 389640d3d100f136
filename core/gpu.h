// GPUs of this process, as the rest of weft sees them (no CUDA headers here).
//
//   const GpuProbe& p = ProbeGpus();
//   if (p.count == 0) std::cerr << "no GPU device: " << p.reason << "\n";
//   for (const std::string& u : p.unusable) std::cerr << u << "\n";   // listed but not usable
//   std::vector<std::shared_ptr<GpuContext>> gpus = OpenGpus();      // p.count contexts
//
// One source of truth for "the usable GPUs": a device is usable when its context opened (streams,
// cuBLAS and cuDNN handles, allocators). OpenGpus opens every device CUDA lists once per process;
// ProbeGpus describes that same result, so ProbeGpus().count == OpenGpus().size() always, and each
// device CUDA lists but weft could not open is in `unusable` with its reason. Zero devices is
// normal (a CPU-only machine, a build without CUDA): the first probe says so once on stderr with
// CUDA's own reason, and every later call returns the same answer. Thread-safe.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/allocator.h"
#include "core/status.h"

namespace weft {

struct GpuProbe {
  int count = 0;                      // usable GPUs: OpenGpus() holds a context for each, in this order
  std::string reason;                 // why none is usable (empty when count > 0)
  std::vector<std::string> names;     // the usable ones: "NVIDIA A100-SXM4-80GB (sm_80, 79 GiB)"
  std::vector<std::string> unusable;  // "GPU ordinal 1: <why>" for each listed device that did not open
};
const GpuProbe& ProbeGpus();

// A GPU's streams, library handles and allocators (core/cuda/gpu_context.h; complete only in
// CUDA builds). Owned by shared_ptr: devices, kernels' contexts and copies share it.
class GpuContext;

// One context per usable device, opened once per process and shared by every session.
std::vector<std::shared_ptr<GpuContext>> OpenGpus();
// The device's caching allocator (device memory).
Allocator* GpuAllocatorOf(const GpuContext& gpu);

// "no GPU device: <reason>" as a FailedPrecondition, for --device gpu and explicit placements.
std::string NoGpuMessage();

// What the GPU kernels of a session may do beyond the CPU kernels' arithmetic (SessionOptions::gpu).
struct GpuOptions {
  // TensorFloat-32 in fp32 convolutions (sm_80 and newer): faster, with a 10-bit mantissa in the
  // products (results differ from the CPU by about 1e-3 relative; docs/cuda.md). Off: full fp32,
  // as TF's enable_tensor_float_32_execution(False).
  bool allow_tf32 = false;
  // Only algorithms that give the same bits on every run: cuDNN's deterministic convolution
  // algorithms, GatherGrad adding repeated indices in index order instead of by atomic adds.
  bool deterministic = false;
};

// The usable ones of `device_count` devices: open(i) returns {description, context} for device i,
// or throws Error when it cannot be used; such a device is listed in `probe.unusable` with the
// error, the others keep their ordinal order. `none_reason` says why CUDA lists no device (when
// device_count is 0). OpenGpus calls it with the CUDA constructor; tests inject failures.
template <class Context>
struct UsableGpus {
  std::vector<std::shared_ptr<Context>> contexts;
  GpuProbe probe;
};
template <class Context, class Open>
UsableGpus<Context> OpenUsableGpus(int device_count, const std::string& none_reason, Open&& open) {
  UsableGpus<Context> u;
  for (int i = 0; i < device_count; ++i) {
    try {
      std::pair<std::string, std::shared_ptr<Context>> opened = open(i);
      u.probe.names.push_back(std::move(opened.first));
      u.contexts.push_back(std::move(opened.second));
    } catch (const Error& e) {
      u.probe.unusable.push_back(fmt::format("GPU ordinal {}: {}", i, e.what()));
    }
  }
  u.probe.count = static_cast<int>(u.contexts.size());
  if (u.probe.count > 0) return u;
  u.probe.reason = device_count == 0 ? none_reason
                                     : fmt::format("CUDA lists {} device(s) and none could be opened: {}",
                                                   device_count, fmt::join(u.probe.unusable, "; "));
  return u;
}

}  // namespace weft
