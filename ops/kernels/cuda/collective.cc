// The collectives' Reducer on a GPU (runtime/collectives/reduce.h): new tensors from the
// device's caching allocator, merges and divisions as kernels on its compute stream (reduce.cu),
// copies with cudaMemcpyDefault (host tensors from other processes, other devices' tensors).
// Each call waits for the compute stream, so the algorithms' callback chains, which hand the
// result to other members and devices at once, see finished bytes.
#include <fmt/format.h>

#include "core/cuda/cuda_status.h"
#include "core/gpu_backend.h"
#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace {

ReduceKind KindOf(MergeOp op) {
  switch (op) {
    case MergeOp::kMax: return ReduceKind::kMax;
    case MergeOp::kMin: return ReduceKind::kMin;
    case MergeOp::kAdd: break;
  }
  return ReduceKind::kSum;
}

class CudaReducer : public Reducer {
 public:
  explicit CudaReducer(GpuContext* gpu) : gpu_(gpu) {}
  std::string Name() const override { return fmt::format("GPU:{}", gpu_->ordinal()); }
  Tensor Allocate(DType dtype, const TensorShape& shape) const override {
    return Tensor(dtype, shape, gpu_->allocator());
  }
  void Copy(void* dst, const void* src, size_t bytes) const override {
    if (bytes == 0) return;
    gpu_->Activate();
    WEFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, gpu_->compute_stream()));
    Wait("collective copy");
  }
  void Merge(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n) const override {
    if (n <= 0) return;
    gpu_->Activate();
    Dispatch<float, double, int32_t, int64_t>(dtype, "collective merge on the GPU", [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchCollectiveMerge<T>(KindOf(op), static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b),
                               n, gpu_->compute_stream());
    });
    Wait("collective merge");
  }
  void Divide(DType dtype, void* dst, int64_t n, int64_t divisor) const override {
    if (n <= 0) return;
    gpu_->Activate();
    Dispatch<float, double, int32_t, int64_t>(dtype, "collective divide on the GPU", [&](auto tag) {
      using T = typename decltype(tag)::type;
      LaunchCollectiveDivide<T>(static_cast<T*>(dst), n, divisor, gpu_->compute_stream());
    });
    Wait("collective divide");
  }
  Tensor Adopt(const Tensor& t) const override {
    if (t.bytes() == 0 || OnThisDevice(t)) return t;
    Tensor d = Allocate(t.dtype(), t.shape());
    Copy(d.raw_data(), t.raw_data(), t.bytes());
    return d;
  }
  void InputReady() const override {
    gpu_->Activate();
    Wait("the collective's input");
  }

 private:
  bool OnThisDevice(const Tensor& t) const {
    if (t.memory_kind() != MemoryKind::kDevice) return false;
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, t.raw_data()) != cudaSuccess) {
      (void)cudaGetLastError();  // not a CUDA pointer: copied in like host memory
      return false;
    }
    return attr.type == cudaMemoryTypeDevice && attr.device == gpu_->ordinal();
  }
  void Wait(const char* what) const {
    ThrowIfError(CudaStatus(cudaStreamSynchronize(gpu_->compute_stream()), fmt::format("{} on {}", what, Name())));
  }

  GpuContext* gpu_;
};

}  // namespace

std::shared_ptr<const Reducer> NewCudaReducer(GpuContext* gpu) { return std::make_shared<CudaReducer>(gpu); }

// The module's entry point (core/gpu.h, GpuBackend): the CPU collective kernels, registered for
// the GPU too (ops/kernels/cpu/collective.cc), take their Reducer from it.
extern "C" __attribute__((visibility("default"))) std::shared_ptr<const Reducer> weft_cuda_new_reducer(GpuContext* gpu) {
  return NewCudaReducer(gpu);
}
[[maybe_unused]] static constexpr decltype(GpuBackend::new_reducer) kCheckNewReducer = &weft_cuda_new_reducer;

}  // namespace weft
