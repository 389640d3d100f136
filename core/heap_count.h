// Counts the heap allocations of a whole program, for tests and benchmarks that check a path
// allocates nothing (or a known number of times) per message or per step:
//
//   const HeapCount before = HeapCount::Now();
//   ... 1000 messages ...
//   const double per_message = HeapCount::Now().Since(before) / 1000.0;
//
// `news` counts calls of the global operator new (every form: std::string, std::vector,
// std::function, make_shared ...); `cpu_allocs` counts CpuAllocator()'s allocations (tensor
// buffers, which come from malloc / posix_memalign and not from operator new). Only a program
// that links core/heap_count.cc has HeapCount::Now (it is not in libweft: it replaces the global
// operator new, meson's `heap_count_dep`).
//
// Thread-safe: the counters are relaxed atomics (the counts of other threads' allocations are
// included, which is the point: a message's cost is spread over the progress thread, the
// receiving thread and the sender).
#pragma once

#include <cstdint>

namespace weft {

struct HeapCount {
  int64_t news = 0;
  int64_t cpu_allocs = 0;

  static HeapCount Now();
  // The operator new calls of the calling thread so far (a path that must allocate nothing,
  // measured while other threads allocate).
  static int64_t ThisThreadNews();
  int64_t total() const { return news + cpu_allocs; }
  int64_t Since(const HeapCount& before) const { return total() - before.total(); }
};

}  // namespace weft
