// The CUDA backend as libweft sees it: a module of its own, libweft_cuda.so beside libweft (core/cuda/,
// ops/kernels/cuda/, the staging copier), which libweft loads at run time only when the CUDA driver
// lists a device, so that a CPU-only process maps no CUDA library (the runtime, cuBLAS and cuDNN
// cost start-up time and memory: bench/README.md, "startup"), as TensorFlow and PyTorch load theirs. ProbeGpus / OpenGpus
// (core/gpu.h) answer through it; the few other places that need it (the GPU kernels' registration,
// the collectives' GPU merges, the staging copier) call its entry points here.
//
//   if (const GpuBackend* gpu = LoadGpuBackend()) gpu->register_kernels(registry);
//
// Thread-safe. Together with core/gpu.h this is the whole boundary between libweft and CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/gpu.h"

namespace weft {

class KernelRegistry;  // ops/kernel.h
class Reducer;         // runtime/collectives/reduce.h
class DeviceCopier;    // distributed/ucx/staging.h

// The CUDA backend's entry points: the extern "C" functions of libweft_cuda.so named in the
// comments, found by dlsym when the module is loaded (each is defined beside what it returns).
struct GpuBackend {
  std::string path;  // the module's file
  // weft_cuda_usable (core/cuda/gpu_context.cc): every device CUDA lists, opened once.
  const UsableGpus<GpuContext>* (*usable)() = nullptr;
  // weft_cuda_allocator_of (core/cuda/gpu_context.cc): the device's caching allocator.
  Allocator* (*allocator_of)(const GpuContext&) = nullptr;
  // weft_cuda_register_kernels (ops/kernels/cuda/gpu_kernel.cc): every GPU kernel, device type "GPU".
  void (*register_kernels)(KernelRegistry&) = nullptr;
  // weft_cuda_new_reducer (ops/kernels/cuda/collective.cc): the collectives' merges on a GPU.
  std::shared_ptr<const Reducer> (*new_reducer)(GpuContext*) = nullptr;
  // weft_cuda_new_copier (distributed/ucx/staging_cuda.cc): the staging copier over these GPUs.
  std::shared_ptr<DeviceCopier> (*new_copier)(const std::vector<std::shared_ptr<GpuContext>>&) = nullptr;
};

// The CUDA backend of this process, loaded by the first call, or null: in a build without CUDA,
// when the CUDA driver (libcuda.so.1) is missing or lists no device, or when the module does not
// load (a CUDA library missing); ProbeGpus().reason then says which. `even_without_gpu` (honoured
// by the first call only, so it must come before anything asks for GPUs or kernels) loads the module
// whenever it exists: programs that check the GPU kernels on a machine without a GPU (test_cuda,
// test_ops). Thread-safe.
const GpuBackend* LoadGpuBackend(bool even_without_gpu = false);

}  // namespace weft
