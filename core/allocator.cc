#include "core/allocator.h"

#include <cstdlib>

#include "core/status.h"

namespace weft {

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinnedHost: return "pinned-host";
    case MemoryKind::kDevice: return "device";
  }
  return "unknown";
}

namespace {

class CpuAllocatorImpl final : public Allocator {
 public:
  std::string Name() const override { return "cpu"; }
  MemoryKind kind() const override { return MemoryKind::kHost; }

  void* Allocate(size_t bytes) override {
    // aligned_alloc needs a size that is a multiple of the alignment.
    const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* p = std::aligned_alloc(kTensorAlignment, rounded == 0 ? kTensorAlignment : rounded);
    if (p == nullptr) {
      throw Error(errors::ResourceExhausted("cpu allocator: cannot allocate {} bytes ({} in use)", bytes,
                                            in_use_.load()));
    }
    num_allocs_.fetch_add(1, std::memory_order_relaxed);
    const int64_t now = in_use_.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
    return p;
  }

  void Deallocate(void* ptr, size_t bytes) override {
    if (ptr == nullptr) return;
    in_use_.fetch_sub(static_cast<int64_t>(bytes));
    std::free(ptr);
  }

  AllocatorStats Stats() const override { return {num_allocs_.load(), in_use_.load(), peak_.load()}; }

 private:
  std::atomic<int64_t> num_allocs_{0}, in_use_{0}, peak_{0};
};

}  // namespace

Allocator* CpuAllocator() {
  static CpuAllocatorImpl* allocator = new CpuAllocatorImpl();  // never destroyed: outlives tensors
  return allocator;
}

}  // namespace weft
