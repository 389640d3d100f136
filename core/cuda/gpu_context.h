// One GPU: its streams, events, library handles and allocators (CUDA builds only).
//
//   std::shared_ptr<GpuContext> gpu = OpenGpus().at(0);        // core/gpu.h
//   gpu->OrderAfter(gpu->h2d_stream(), gpu->compute_stream());  // copies wait for queued kernels
//   Tensor t(DType::kFloat32, {1024}, gpu->allocator());        // device memory, cached
//   gpu->CopyToDevice(host, &t);                                 // H2D on the copy stream
//
// Kernels run in order on the compute stream; host-to-device and device-to-host copies run on
// their own streams so they overlap with compute, joined to it by events (OrderAfter). cuBLAS and
// cuDNN handles are bound to the compute stream; they are not safe for concurrent use, so calls
// through them hold `library_mu()`. Device memory comes from a CachingAllocator over cudaMalloc
// (limit: the free memory at start minus a reserve), pinned host memory from one over cudaHostAlloc.
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>

#include "core/caching_allocator.h"
#include "core/cuda/cuda_status.h"
#include "core/gpu.h"
#include "core/tensor.h"

namespace weft {

class GpuContext {
 public:
  // Opens device `ordinal`: throws (Unavailable, ResourceExhausted, ... with CUDA's reason) when it
  // cannot, having released whatever it had created (streams, handles).
  explicit GpuContext(int ordinal);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  int ordinal() const { return ordinal_; }
  cudaStream_t compute_stream() const { return compute_; }
  cudaStream_t h2d_stream() const { return h2d_; }
  cudaStream_t d2h_stream() const { return d2h_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  std::mutex& library_mu() { return library_mu_; }
  Allocator* allocator() { return device_alloc_.get(); }
  Allocator* pinned_allocator() { return pinned_alloc_.get(); }

  // Makes later work on `waiter` wait for the work queued on `signaller` so far.
  void OrderAfter(cudaStream_t waiter, cudaStream_t signaller) const;
  // Makes the device current on the calling thread. Every GPU kernel does it through GpuOf
  // (ops/kernels/cuda/gpu_kernel.h), and so does every method here that calls CUDA: a thread of the
  // executor's pool runs kernels of every device, and CUDA's current device is per thread.
  void Activate() const;

  // Copies a host tensor into a new device tensor on the H2D stream, ordered before later compute
  // work; returns once the copy has finished, so `host` may go away.
  Tensor CopyToDevice(const Tensor& host);
  // Copies a device tensor into a new host tensor on the D2H stream, after the compute work queued
  // so far; returns once the bytes are on the host. The host tensor is pinned memory, or pageable
  // memory when the pinned pool is used up (a slower copy, not a failure).
  Tensor CopyToHost(const Tensor& device);

 private:
  void Release();  // the destructor's work; also undoes a constructor that failed part-way

  int ordinal_;
  cudaStream_t compute_ = nullptr, h2d_ = nullptr, d2h_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  std::mutex library_mu_;
  std::unique_ptr<BackingStore> device_store_, pinned_store_;
  std::unique_ptr<CachingAllocator> device_alloc_, pinned_alloc_;
};

}  // namespace weft
