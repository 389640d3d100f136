// Allocators behind one interface: CPU now, pinned host and CUDA device memory later.
//
//   Allocator* a = CpuAllocator();
//   void* p = a->Allocate(1024);     // 64-byte aligned; throws ResourceExhausted when it cannot
//   a->Deallocate(p, 1024);
//
// Thread-safe: every Allocator may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace weft {

// Where a buffer's bytes live. Kernels and transfers use it to decide what to copy.
enum class MemoryKind { kHost, kPinnedHost, kDevice };
std::string_view MemoryKindName(MemoryKind kind);

inline constexpr size_t kTensorAlignment = 64;

struct AllocatorStats {
  int64_t num_allocs = 0;
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
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
};

// The process's host allocator (stateless apart from statistics, so one instance is shared).
Allocator* CpuAllocator();

}  // namespace weft
