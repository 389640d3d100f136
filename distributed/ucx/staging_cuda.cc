// The CUDA DeviceCopier (distributed/ucx/staging.h): chunk copies on the copy streams of the GPU
// that holds the device side, into pinned bounce buffers, `done` delivered on the copier's own
// thread. Part of the CUDA backend module (libweft_cuda.so, core/gpu.h), not of libweft_ucx.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "core/cuda/gpu_context.h"
#include "core/gpu_backend.h"
#include "core/threadpool.h"
#include "distributed/ucx/staging.h"

namespace weft {
namespace {

class CudaCopier : public DeviceCopier {
 public:
  explicit CudaCopier(std::vector<std::shared_ptr<GpuContext>> gpus)
      : gpus_(std::move(gpus)), callbacks_(std::make_unique<ThreadPool>(1, "cuda-copier")) {}
  ~CudaCopier() override {
    // Host functions still queued on the copy streams schedule onto callbacks_: let them run first.
    for (const auto& gpu : gpus_) {
      (void)cudaSetDevice(gpu->ordinal());
      (void)cudaStreamSynchronize(gpu->d2h_stream());
      (void)cudaStreamSynchronize(gpu->h2d_stream());
    }
    callbacks_.reset();  // runs the `done`s already scheduled
  }

  std::string Name() const override {
    std::string n = "cuda:";
    for (size_t i = 0; i < gpus_.size(); ++i) n += fmt::format("{}{}", i == 0 ? "" : ",", gpus_[i]->ordinal());
    return n;
  }
  // Portable pinned memory (cudaHostAllocPortable): any GPU's copy engine may read and write it.
  void* AllocateHost(size_t bytes) override { return gpus_.front()->pinned_allocator()->Allocate(bytes); }
  void FreeHost(void* p, size_t bytes) override { gpus_.front()->pinned_allocator()->Deallocate(p, bytes); }
  void ToHost(const void* src, void* dst, size_t bytes, Done done) override {
    Copy(src, src, dst, bytes, /*to_host=*/true, std::move(done));
  }
  void ToDevice(const void* src, void* dst, size_t bytes, Done done) override {
    Copy(dst, src, dst, bytes, /*to_host=*/false, std::move(done));
  }

 private:
  struct Pending {
    ThreadPool* pool;
    Done done;
  };

  // A CUDA host function may not call CUDA, and `done` starts the next chunk's copy: hand it over.
  static void CUDART_CB Completed(void* arg) {
    auto* p = static_cast<Pending*>(arg);
    p->pool->Schedule([done = std::move(p->done)] { done(Status()); });
    delete p;
  }

  // The context of the GPU whose memory `device_ptr` is: its streams order the copy after the
  // kernels that produce (or still read) that memory.
  GpuContext* Owner(const void* device_ptr) const {
    cudaPointerAttributes attr{};
    ThrowIfError(CudaStatus(cudaPointerGetAttributes(&attr, device_ptr), "cudaPointerGetAttributes (staging copy)"));
    for (const auto& gpu : gpus_) {
      if (gpu->ordinal() == attr.device) return gpu.get();
    }
    throw Error(errors::FailedPrecondition("staging copier {}: the memory at {} is on CUDA device {}, which this "
                                           "process does not use",
                                           Name(), device_ptr, attr.device));
  }

  void Copy(const void* device_side, const void* src, void* dst, size_t bytes, bool to_host, Done done) {
    Status s;
    GpuContext* gpu = nullptr;
    cudaStream_t stream = nullptr;
    try {
      gpu = Owner(device_side);
      gpu->Activate();
      stream = to_host ? gpu->d2h_stream() : gpu->h2d_stream();
      // After the kernels queued so far: they produce the source, or may still read a destination
      // block the caching allocator handed out again.
      gpu->OrderAfter(stream, gpu->compute_stream());
    } catch (const Error& e) {
      s = e.status();
    }
    if (s.ok() && bytes > 0) {
      s = CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
                     fmt::format("staging a {}-byte chunk {} on GPU ordinal {}", bytes,
                                 to_host ? "device to host" : "host to device", gpu->ordinal()));
    }
    if (!s.ok()) {
      done(s);
      return;
    }
    auto* p = new Pending{callbacks_.get(), std::move(done)};
    s = CudaStatus(cudaLaunchHostFunc(stream, &CudaCopier::Completed, p), "cudaLaunchHostFunc (staging copy)");
    if (!s.ok()) {
      Done d = std::move(p->done);
      delete p;
      d(s);
    }
  }

  std::vector<std::shared_ptr<GpuContext>> gpus_;
  std::unique_ptr<ThreadPool> callbacks_;
};

}  // namespace

std::shared_ptr<DeviceCopier> NewCudaCopier(std::vector<std::shared_ptr<GpuContext>> gpus) {
  WEFT_REQUIRE(!gpus.empty(), "NewCudaCopier: no GPU context");
  for (const auto& g : gpus) WEFT_REQUIRE(g != nullptr, "NewCudaCopier: a null GPU context");
  return std::make_shared<CudaCopier>(std::move(gpus));
}

// The module's entry point (core/gpu.h, GpuBackend): SelectDeviceCopier (staging.cc) takes the
// copier from it, so libweft_ucx links no CUDA library.
extern "C" __attribute__((visibility("default"))) std::shared_ptr<DeviceCopier> weft_cuda_new_copier(
    const std::vector<std::shared_ptr<GpuContext>>& gpus) {
  return NewCudaCopier(gpus);
}
[[maybe_unused]] static constexpr decltype(GpuBackend::new_copier) kCheckNewCopier = &weft_cuda_new_copier;

}  // namespace weft
