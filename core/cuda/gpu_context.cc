#include "core/cuda/gpu_context.h"

#include <cstdio>

#include "core/gpu_backend.h"

namespace weft {
namespace {

// Device memory from cudaMalloc on one device. Reads to the host go on the device's compute stream,
// so they follow every kernel queued on the memory (the compute stream is where they all run).
class CudaDeviceStore final : public BackingStore {
 public:
  CudaDeviceStore(int ordinal, cudaStream_t compute) : ordinal_(ordinal), compute_(compute) {}
  std::string Name() const override { return fmt::format("cuda:{}", ordinal_); }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  void* Reserve(size_t bytes) override {
    void* p = nullptr;
    // cudaSetDevice changes the calling thread's current device: put the caller's back.
    int caller = ordinal_;
    (void)cudaGetDevice(&caller);
    const bool ok = cudaSetDevice(ordinal_) == cudaSuccess && cudaMalloc(&p, bytes) == cudaSuccess;
    if (!ok) {
      (void)cudaGetLastError();  // clear the sticky-free error so later calls are not blamed
      p = nullptr;
    }
    (void)cudaSetDevice(caller);
    return p;
  }
  void Release(void* ptr, size_t) override { (void)cudaFree(ptr); }
  void CopyToHost(void* dst, const void* src, size_t bytes) const override {
    if (bytes == 0) return;
    const std::string where = fmt::format("GPU:{}: copy of {} bytes to the host", ordinal_, bytes);
    ThrowIfError(CudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, compute_), where));
    ThrowIfError(CudaStatus(cudaStreamSynchronize(compute_), where));
  }

 private:
  int ordinal_;
  cudaStream_t compute_;
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
  try {
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
    device_store_ = std::make_unique<CudaDeviceStore>(ordinal, compute_);
    pinned_store_ = std::make_unique<CudaPinnedStore>();
    device_alloc_ = std::make_unique<CachingAllocator>(
        device_store_.get(), CachingAllocatorOptions{.limit_bytes = free_bytes > 2 * kDeviceReserve
                                                                        ? free_bytes - kDeviceReserve
                                                                        : free_bytes});
    pinned_alloc_ =
        std::make_unique<CachingAllocator>(pinned_store_.get(), CachingAllocatorOptions{.limit_bytes = kPinnedLimit});
  } catch (...) {
    Release();  // no destructor runs for a constructor that throws
    throw;
  }
}

GpuContext::~GpuContext() { Release(); }

void GpuContext::Release() {
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
  cudnn_ = nullptr;
  cublas_ = nullptr;
  compute_ = h2d_ = d2h_ = nullptr;
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
  // Pinned when the pool has room (the copy engine reads it directly), else pageable: a large or
  // long-held fetch must not fail because the pinned pool is used up.
  Tensor h = Tensor::AllocateOr(device.dtype(), device.shape(), pinned_allocator(), CpuAllocator());
  if (device.bytes() > 0) {
    OrderAfter(d2h_, compute_);
    WEFT_CUDA_CHECK(cudaMemcpyAsync(h.raw_data(), device.raw_data(), device.bytes(), cudaMemcpyDeviceToHost, d2h_));
    WEFT_CUDA_CHECK(cudaStreamSynchronize(d2h_));
  }
  return h;
}

namespace {

// Every device CUDA lists, opened once per process (OpenUsableGpus, core/gpu.h). Never destroyed:
// tensors in device memory may outlive every session until exit, and the CUDA runtime tears
// itself down at exit in an order static destructors cannot follow.
const UsableGpus<GpuContext>& Usable() {
  static const auto* usable = [] {
    int n = 0;
    std::string none;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      none = fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
      n = 0;
    } else if (n == 0) {
      none = "CUDA reports no devices";
    }
    auto* u = new UsableGpus<GpuContext>(OpenUsableGpus<GpuContext>(n, none, [](int i) {
      cudaDeviceProp prop{};
      ThrowIfError(CudaStatus(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties"));
      std::string name =
          fmt::format("{} (sm_{}{}, {} GiB)", prop.name, prop.major, prop.minor, prop.totalGlobalMem >> 30);
      return std::make_pair(std::move(name), std::make_shared<GpuContext>(i));
    }));
    for (const std::string& why : u->probe.unusable) std::fprintf(stderr, "weft: not used: %s\n", why.c_str());
    if (u->probe.count == 0) {
      std::fprintf(stderr, "weft: 0 GPU devices: %s; running on CPU\n", u->probe.reason.c_str());
    }
    return u;
  }();
  return *usable;
}

}  // namespace

// The module's entry points (core/gpu.h, GpuBackend); libweft's ProbeGpus / OpenGpus answer with them.
extern "C" __attribute__((visibility("default"))) const UsableGpus<GpuContext>* weft_cuda_usable() {
  return &Usable();
}
extern "C" __attribute__((visibility("default"))) Allocator* weft_cuda_allocator_of(const GpuContext& gpu) {
  return const_cast<GpuContext&>(gpu).allocator();
}
[[maybe_unused]] static constexpr decltype(GpuBackend::usable) kCheckUsable = &weft_cuda_usable;
[[maybe_unused]] static constexpr decltype(GpuBackend::allocator_of) kCheckAllocatorOf = &weft_cuda_allocator_of;

}  // namespace weft
