// The CUDA DeviceCopier (distributed/ucx/staging.h): chunk copies on a GPU's copy streams into
// pinned bounce buffers, `done` delivered on the copier's own thread. CUDA builds only.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "core/cuda/gpu_context.h"
#include "core/threadpool.h"
#include "distributed/ucx/staging.h"

namespace weft {
namespace {

class CudaCopier : public DeviceCopier {
 public:
  explicit CudaCopier(std::shared_ptr<GpuContext> gpu)
      : gpu_(std::move(gpu)), callbacks_(std::make_unique<ThreadPool>(1, "cuda-copier")) {}
  ~CudaCopier() override {
    // Host functions still queued on the copy streams schedule onto callbacks_: let them run first.
    (void)cudaSetDevice(gpu_->ordinal());
    (void)cudaStreamSynchronize(gpu_->d2h_stream());
    (void)cudaStreamSynchronize(gpu_->h2d_stream());
    callbacks_.reset();  // runs the `done`s already scheduled
  }

  std::string Name() const override { return fmt::format("cuda:{}", gpu_->ordinal()); }
  void* AllocateHost(size_t bytes) override { return gpu_->pinned_allocator()->Allocate(bytes); }
  void FreeHost(void* p, size_t bytes) override { gpu_->pinned_allocator()->Deallocate(p, bytes); }
  void ToHost(const void* src, void* dst, size_t bytes, Done done) override {
    Copy(src, dst, bytes, gpu_->d2h_stream(), "device to host", std::move(done));
  }
  void ToDevice(const void* src, void* dst, size_t bytes, Done done) override {
    Copy(src, dst, bytes, gpu_->h2d_stream(), "host to device", std::move(done));
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

  void Copy(const void* src, void* dst, size_t bytes, cudaStream_t stream, const char* what, Done done) {
    Status s;
    try {
      gpu_->Activate();
      // After the kernels queued so far: they produce the source, or may still read a destination
      // block the caching allocator handed out again.
      gpu_->OrderAfter(stream, gpu_->compute_stream());
    } catch (const Error& e) {
      s = e.status();
    }
    if (s.ok() && bytes > 0) {
      s = CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream),
                     fmt::format("staging a {}-byte chunk {} on {}", bytes, what, Name()));
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

  std::shared_ptr<GpuContext> gpu_;
  std::unique_ptr<ThreadPool> callbacks_;
};

}  // namespace

std::shared_ptr<DeviceCopier> NewCudaCopier(std::shared_ptr<GpuContext> gpu) {
  WEFT_REQUIRE(gpu != nullptr, "NewCudaCopier: no GPU context");
  return std::make_shared<CudaCopier>(std::move(gpu));
}

}  // namespace weft
