#include "core/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace weft {

void Allocator::CopyToHost(void* dst, const void* src, size_t bytes) const {
  if (kind() == MemoryKind::kDevice) {
    throw Error(errors::Unimplemented("allocator {} holds device memory but cannot copy it to the host", Name()));
  }
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinnedHost: return "pinned-host";
    case MemoryKind::kDevice: return "device";
  }
  return "unknown";
}

namespace {

// Blocks below this size come from (and go back to) malloc directly: glibc serves them from its
// arenas without page faults, while larger ones are mmap'ed and unmapped on every free.
constexpr size_t kMinCachedBytes = 16 * 1024;

// The size class of a cached block: `bytes` rounded up to a quarter of its leading power of two
// (16 KiB, 20 KiB, 24 KiB, 28 KiB, 32 KiB, 40 KiB, ...), so at most 25% is wasted and nearby sizes
// (a smaller last batch) share blocks. Always a multiple of 4 KiB, so of kTensorAlignment.
size_t SizeClass(size_t bytes) {
  const int top = 63 - __builtin_clzll(bytes);
  const size_t step = (size_t{1} << top) / 4;
  return (bytes + step - 1) / step * step;
}

class CachingCpuAllocator final : public Allocator {
 public:
  explicit CachingCpuAllocator(size_t max_cached_bytes) : limit_(max_cached_bytes) {}
  ~CachingCpuAllocator() override { Trim(); }

  std::string Name() const override { return "cpu"; }
  MemoryKind kind() const override { return MemoryKind::kHost; }

  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    if (bytes >= kMinCachedBytes) {
      const size_t cls = SizeClass(bytes);
      {
        std::lock_guard<std::mutex> l(mu_);
        auto it = free_.find(cls);
        if (it != free_.end() && !it->second.empty()) {
          p = it->second.back();
          it->second.pop_back();
          cached_.fetch_sub(static_cast<int64_t>(cls), std::memory_order_relaxed);
          hits_.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (p == nullptr) p = SystemAllocate(cls, bytes);
    } else {
      // aligned_alloc needs a size that is a multiple of the alignment.
      const size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
      p = SystemAllocate(rounded == 0 ? kTensorAlignment : rounded, bytes);
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
    if (bytes >= kMinCachedBytes) {
      const size_t cls = SizeClass(bytes);
      std::lock_guard<std::mutex> l(mu_);
      if (static_cast<size_t>(cached_.load(std::memory_order_relaxed)) + cls <= limit_) {
        free_[cls].push_back(ptr);
        cached_.fetch_add(static_cast<int64_t>(cls), std::memory_order_relaxed);
        return;
      }
    }
    std::free(ptr);
  }

  AllocatorStats Stats() const override {
    return {num_allocs_.load(), in_use_.load(), peak_.load(), cached_.load(), hits_.load()};
  }

  void Trim() override {
    std::unordered_map<size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> l(mu_);
      blocks.swap(free_);
      cached_.store(0);
    }
    for (auto& [cls, list] : blocks) {
      for (void* p : list) std::free(p);
    }
  }

 private:
  // `size` bytes from the system (a multiple of kTensorAlignment); on failure, trims the cache
  // and tries once more before giving up.
  void* SystemAllocate(size_t size, size_t asked) {
    void* p = AlignedAllocate(size);
    if (p == nullptr && cached_.load() > 0) {
      Trim();
      p = AlignedAllocate(size);
    }
    if (p == nullptr) {
      throw Error(errors::ResourceExhausted("cpu allocator: cannot allocate {} bytes ({} in use)", asked,
                                            in_use_.load()));
    }
    return p;
  }

  // Blocks of at least a huge page start on a huge-page boundary and ask the kernel for
  // transparent huge pages (this machine's THP mode is "madvise": nothing gets them unasked).
  // Fewer TLB misses for large tensors, and UCX's cma transfers pin one 2 MiB folio where they
  // pinned 512 pages, so tensors of 4 MiB and more move between processes over shared memory
  // much faster, and compute is no slower (the figures: bench/README.md, UCX Send/Recv).
  static void* AlignedAllocate(size_t size) {
    if (size < kHugePageBytes) return std::aligned_alloc(kTensorAlignment, size);
    void* p = nullptr;
    if (posix_memalign(&p, kHugePageBytes, size) != 0) return nullptr;
    madvise(p, size / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);  // advice: failure is harmless
    return p;
  }
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  const size_t limit_;
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // size class -> free blocks; guarded by mu_
  std::atomic<int64_t> num_allocs_{0}, in_use_{0}, peak_{0}, cached_{0}, hits_{0};
};

}  // namespace

Allocator* CpuAllocator() {
  static CachingCpuAllocator* allocator = new CachingCpuAllocator(kDefaultCpuCacheBytes);  // never destroyed
  return allocator;
}

std::unique_ptr<Allocator> NewCachingCpuAllocator(size_t max_cached_bytes) {
  return std::make_unique<CachingCpuAllocator>(max_cached_bytes);
}

}  // namespace weft
