// Allocators behind one interface: CPU now, pinned host and CUDA device memory later.
//
//   Allocator* a = CpuAllocator();
//   void* p = a->Allocate(1024);     // 64-byte aligned; throws ResourceExhausted when it cannot
//   a->Deallocate(p, 1024);
//   a->Trim();                       // hands cached blocks back to the system
//
// CpuAllocator() caches freed blocks of 16 KiB and more in size-class free lists and hands them
// out again: a training step allocates the same activation sizes every step, and fresh memory
// from the system costs a page fault per 4 KiB touched. Blocks of 2 MiB and more start on a
// 2 MiB boundary and are advised for transparent huge pages (MADV_HUGEPAGE).
//
// Thread-safe: every Allocator may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace weft {

// Where a buffer's bytes live. Kernels and transfers use it to decide what to copy.
enum class MemoryKind { kHost, kPinnedHost, kDevice };
std::string_view MemoryKindName(MemoryKind kind);

inline constexpr size_t kTensorAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;  // bytes asked for and not yet deallocated
  int64_t peak_bytes_in_use = 0;
  int64_t bytes_cached = 0;  // freed, kept in free lists for reuse (caching allocators)
  int64_t cache_hits = 0;    // allocations served from those lists
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string Name() const = 0;
  virtual MemoryKind kind() const = 0;
  // Returns `bytes` of memory aligned to kTensorAlignment (never null; zero bytes gives a valid
  // unique pointer). Throws Error(ResourceExhausted) naming the size when it cannot.
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  virtual AllocatorStats Stats() const = 0;
  // Returns cached free memory to the system (no-op for allocators that cache nothing).
  virtual void Trim() {}
  // Copies `bytes` of a block this allocator handed out (`src`, possibly device memory) into host
  // memory at `dst`, after the device work queued so far on that memory. Host kinds memcpy; an
  // allocator of device memory overrides it (the caching allocator asks its backing store).
  virtual void CopyToHost(void* dst, const void* src, size_t bytes) const;
};

// The process's host allocator: caching, at most kDefaultCpuCacheBytes cached (one instance
// shared by all sessions; never destroyed, so it outlives every tensor).
Allocator* CpuAllocator();

inline constexpr size_t kDefaultCpuCacheBytes = size_t{1} << 30;

// A separate caching host allocator that keeps at most `max_cached_bytes` of freed blocks (0:
// caches nothing); for tests and for callers that want their own cache. The caller owns it and
// must destroy it after every buffer it allocated.
std::unique_ptr<Allocator> NewCachingCpuAllocator(size_t max_cached_bytes);

}  // namespace weft
