#include "core/cuda/gpu_context.h"

#include <cstdio>

namespace weft {
namespace {

// Device memory from cudaMalloc on one device.
class CudaDeviceStore final : public BackingStore {
 public:
  explicit CudaDeviceStore(int ordinal) : ordinal_(ordinal) {}
  std::string Name() const override { return fmt::format("cuda:{}", ordinal_); }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* Reserve(size_t bytes) override {
    void* p = nullptr;
    if (cudaSetDevice(ordinal_) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
      (void)cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
      return nullptr;
    }
    return p;
  }
  void Release(void* ptr, size_t) override { (void)cudaFree(ptr); }

 private:
  int ordinal_;
};

// Page-locked host memory: the copy engines read and write it without a staging copy.
class CudaPinnedStore final : public BackingStore {
 public:
  std::string Name() const override { return "pinned"; }
  MemoryKind kind() const override { return MemoryKind::kPinnedHost; }
  void* Reserve(size_t bytes) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void Release(void* ptr, size_t) override { (void)cudaFreeHost(ptr); }
};

// Memory left to other users of the device (CUDA context, cuDNN workspaces of other processes).
constexpr size_t kDeviceReserve = size_t{256} << 20;
constexpr size_t kPinnedLimit = size_t{1} << 30;

}  // namespace

GpuContext::GpuContext(int ordinal) : ordinal_(ordinal) {
  const std::string where = fmt::format("GPU:{}", ordinal);
  ThrowIfError(CudaStatus(cudaSetDevice(ordinal), where + ": cudaSetDevice"));
  ThrowIfError(CudaStatus(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking), where + ": compute stream"));
  ThrowIfError(CudaStatus(cudaStreamCreateWithFlags(&h2d_, cudaStreamNonBlocking), where + ": host-to-device stream"));
  ThrowIfError(CudaStatus(cudaStreamCreateWithFlags(&d2h_, cudaStreamNonBlocking), where + ": device-to-host stream"));
  ThrowIfError(CublasStatus(cublasCreate(&cublas_), where + ": cublasCreate"));
  ThrowIfError(CublasStatus(cublasSetStream(cublas_, compute_), where + ": cublasSetStream"));
  ThrowIfError(CudnnStatus(cudnnCreate(&cudnn_), where + ": cudnnCreate"));
  ThrowIfError(CudnnStatus(cudnnSetStream(cudnn_, compute_), where + ": cudnnSetStream"));
  size_t free_bytes = 0, total_bytes = 0;
  ThrowIfError(CudaStatus(cudaMemGetInfo(&free_bytes, &total_bytes), where + ": cudaMemGetInfo"));
  device_store_ = std::make_unique<CudaDeviceStore>(ordinal);
  pinned_store_ = std::make_unique<CudaPinnedStore>();
  device_alloc_ = std::make_unique<CachingAllocator>(
      device_store_.get(),
      CachingAllocatorOptions{.limit_bytes = free_bytes > 2 * kDeviceReserve ? free_bytes - kDeviceReserve : free_bytes});
  pinned_alloc_ = std::make_unique<CachingAllocator>(pinned_store_.get(), CachingAllocatorOptions{.limit_bytes = kPinnedLimit});
}

GpuContext::~GpuContext() {
  (void)cudaSetDevice(ordinal_);
  for (cudaStream_t s : {compute_, h2d_, d2h_}) {
    if (s != nullptr) (void)cudaStreamSynchronize(s);
  }
  device_alloc_.reset();  // before the streams and handles: nothing may still use the memory
  pinned_alloc_.reset();
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  for (cudaStream_t s : {compute_, h2d_, d2h_}) {
    if (s != nullptr) (void)cudaStreamDestroy(s);
  }
}

void GpuContext::Activate() const { WEFT_CUDA_CHECK(cudaSetDevice(ordinal_)); }

void GpuContext::OrderAfter(cudaStream_t waiter, cudaStream_t signaller) const {
  cudaEvent_t e = nullptr;
  WEFT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  Status s = CudaStatus(cudaEventRecord(e, signaller), "cudaEventRecord");
  if (s.ok()) s = CudaStatus(cudaStreamWaitEvent(waiter, e, 0), "cudaStreamWaitEvent");
  (void)cudaEventDestroy(e);  // released once the wait has happened
  ThrowIfError(s);
}

Tensor GpuContext::CopyToDevice(const Tensor& host) {
  Activate();
  Tensor d(host.dtype(), host.shape(), allocator());
  if (host.bytes() > 0) {
    // The destination block may have been freed by a kernel still queued on the compute stream.
    OrderAfter(h2d_, compute_);
    WEFT_CUDA_CHECK(cudaMemcpyAsync(d.raw_data(), host.raw_data(), host.bytes(), cudaMemcpyHostToDevice, h2d_));
    OrderAfter(compute_, h2d_);
    WEFT_CUDA_CHECK(cudaStreamSynchronize(h2d_));
  }
  return d;
}

Tensor GpuContext::CopyToHost(const Tensor& device) {
  Activate();
  Tensor h(device.dtype(), device.shape(), pinned_allocator());
  if (device.bytes() > 0) {
    OrderAfter(d2h_, compute_);
    WEFT_CUDA_CHECK(cudaMemcpyAsync(h.raw_data(), device.raw_data(), device.bytes(), cudaMemcpyDeviceToHost, d2h_));
    WEFT_CUDA_CHECK(cudaStreamSynchronize(d2h_));
  }
  return h;
}

const GpuProbe& ProbeGpus() {
  static const GpuProbe probe = [] {
    GpuProbe p;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      p.reason = fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
      n = 0;
    } else if (n == 0) {
      p.reason = "CUDA reports no devices";
    }
    for (int i = 0; i < n; ++i) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
      p.names.push_back(fmt::format("{} (sm_{}{}, {} GiB)", prop.name, prop.major, prop.minor, prop.totalGlobalMem >> 30));
    }
    p.count = static_cast<int>(p.names.size());
    if (p.count == 0) std::fprintf(stderr, "weft: 0 GPU devices: %s; running on CPU\n", p.reason.c_str());
    return p;
  }();
  return probe;
}

std::vector<std::shared_ptr<GpuContext>> OpenGpus() {
  // Never destroyed: tensors in device memory may outlive every session until exit, and the CUDA
  // runtime tears itself down at exit in an order static destructors cannot follow.
  static const auto* gpus = [] {
    auto* v = new std::vector<std::shared_ptr<GpuContext>>();
    for (int i = 0; i < ProbeGpus().count; ++i) {
      try {
        v->push_back(std::make_shared<GpuContext>(i));
      } catch (const Error& e) {  // one unusable device (out of memory, in use) leaves the others
        std::fprintf(stderr, "weft: GPU %d is not used: %s\n", i, e.what());
      }
    }
    return v;
  }();
  return *gpus;
}

Allocator* GpuAllocatorOf(const GpuContext& gpu) { return const_cast<GpuContext&>(gpu).allocator(); }

std::string NoGpuMessage() { return "no GPU device: " + ProbeGpus().reason; }

}  // namespace weft
