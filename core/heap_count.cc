// The counting operator new of core/heap_count.h. Linked only into the programs that count (the
// UCX benchmarks, test_distributed): it replaces the global operator new and delete of the whole
// program, so it must never be part of a library.
#include "core/heap_count.h"

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/allocator.h"

namespace {

std::atomic<int64_t> g_news{0};
thread_local int64_t t_news = 0;

void* Allocate(std::size_t bytes) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  ++t_news;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}

void* AllocateAligned(std::size_t bytes, std::align_val_t align) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  ++t_news;
  const auto a = static_cast<std::size_t>(align);
  // aligned_alloc wants a size that is a multiple of the alignment.
  if (void* p = std::aligned_alloc(a, (bytes + a - 1) / a * a + (bytes == 0 ? a : 0))) return p;
  throw std::bad_alloc();
}

}  // namespace

// Every replaceable form goes through the two above (the nothrow ones return null instead of throwing).
void* operator new(std::size_t bytes) { return Allocate(bytes); }
void* operator new[](std::size_t bytes) { return Allocate(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return Allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return Allocate(bytes);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t bytes, std::align_val_t align) { return AllocateAligned(bytes, align); }
void* operator new[](std::size_t bytes, std::align_val_t align) { return AllocateAligned(bytes, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace weft {

int64_t HeapCount::ThisThreadNews() { return t_news; }

HeapCount HeapCount::Now() {
  return {g_news.load(std::memory_order_relaxed), CpuAllocator()->Stats().num_allocs};
}

}  // namespace weft
