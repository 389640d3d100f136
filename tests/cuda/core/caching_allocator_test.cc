// The caching allocator's bookkeeping against a host backing store (no GPU needed): the same code
// runs over cudaMalloc and cudaHostAlloc in core/cuda/.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "core/caching_allocator.h"
#include "core/status.h"

using namespace weft;

namespace {
constexpr size_t kChunk = size_t{1} << 20;
}

TEST_CASE("caching allocator: one chunk serves many blocks, split and merged back") {
  HostBackingStore store(size_t{16} << 20);
  CachingAllocator a(&store, {.limit_bytes = 0, .chunk_bytes = kChunk, .alignment = 256});
  void* p = a.Allocate(1000);
  void* q = a.Allocate(3000);
  CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);
  CHECK(reinterpret_cast<uintptr_t>(q) % 256 == 0);
  CHECK(static_cast<char*>(q) - static_cast<char*>(p) == 1024);  // split off the same chunk
  std::memset(p, 1, 1000);
  std::memset(q, 2, 3000);
  CachingAllocatorDetails d = a.Details();
  CHECK(d.num_chunks == 1);
  CHECK(d.reserved_bytes == kChunk);
  CHECK(d.allocated_bytes == 1024 + 3072);
  CHECK(d.num_splits == 2);
  CHECK(d.num_free_blocks == 1);
  CHECK(a.Stats().bytes_in_use == 4000);
  CHECK(a.Stats().bytes_cached == static_cast<int64_t>(kChunk - 4096));

  a.Deallocate(p, 1000);
  CHECK(a.Details().num_free_blocks == 2);  // p's block cannot merge: q sits between it and the rest
  a.Deallocate(q, 3000);
  d = a.Details();
  CHECK(d.num_free_blocks == 1);  // all three merged into one block spanning the chunk
  CHECK(d.num_merges == 2);
  CHECK(d.largest_free_block == kChunk);
  CHECK(a.Stats().bytes_in_use == 0);
  CHECK(a.Stats().peak_bytes_in_use == 4000);
  CHECK(store.reserve_calls() == 1);

  // The next step's allocations come from the cache, not the store.
  void* r = a.Allocate(1000);
  CHECK(r == p);
  CHECK(store.reserve_calls() == 1);
  CHECK(a.Stats().cache_hits == 2);
  a.Deallocate(r, 1000);
  a.Trim();
  CHECK(a.Details().num_chunks == 0);
  CHECK(store.reserved() == 0);
}

TEST_CASE("caching allocator: best fit picks the smallest free block that holds the request") {
  HostBackingStore store(size_t{16} << 20);
  CachingAllocator a(&store, {.limit_bytes = 0, .chunk_bytes = kChunk, .alignment = 256});
  std::vector<void*> p;
  for (size_t s : {4096, 256, 2048, 256}) p.push_back(a.Allocate(s));
  a.Deallocate(p[0], 4096);  // free: 4096 at the start, 2048 in the middle, the chunk's tail
  a.Deallocate(p[2], 2048);
  void* q = a.Allocate(1500);  // rounds to 1536: the 2048 hole, not the 4096 one or the tail
  CHECK(q == p[2]);
  CHECK(a.Details().num_free_blocks == 3);  // 4096, the 512 left of the hole, the tail
  a.Deallocate(q, 1500);
  a.Deallocate(p[1], 256);
  a.Deallocate(p[3], 256);
  CHECK(a.Details().num_free_blocks == 1);
  CHECK(a.Details().allocated_bytes == 0);
}

TEST_CASE("caching allocator: large requests get their own chunk; zero bytes is a valid block") {
  HostBackingStore store(size_t{16} << 20);
  CachingAllocator a(&store, {.limit_bytes = 0, .chunk_bytes = kChunk, .alignment = 256});
  void* big = a.Allocate(3 * kChunk + 10);
  CHECK(a.Details().reserved_bytes == 3 * kChunk + 256);
  void* z1 = a.Allocate(0);
  void* z2 = a.Allocate(0);
  CHECK(z1 != z2);
  CHECK(a.Details().num_chunks == 2);
  a.Deallocate(z1, 0);
  a.Deallocate(z2, 0);
  a.Deallocate(big, 3 * kChunk + 10);
}

TEST_CASE("caching allocator: out of memory names the sizes, after giving free chunks back") {
  HostBackingStore store(size_t{8} << 20);
  CachingAllocator a(&store, {.limit_bytes = size_t{5} << 20, .chunk_bytes = kChunk, .alignment = 256});
  void* p = a.Allocate(3 << 20);
  void* q = a.Allocate(512 << 10);
  a.Deallocate(q, 512 << 10);  // its 1 MiB chunk is now wholly free and cached
  CHECK(a.Details().num_chunks == 2);
  // 1.5 MiB does not fit in the cached chunk; trimming it leaves room under the 5 MiB limit.
  void* r = a.Allocate(3 << 19);
  CHECK(a.Details().num_chunks == 2);
  CHECK(a.Details().reserved_bytes == (3u << 20) + (3u << 19));
  a.Deallocate(r, 3 << 19);
  try {
    a.Allocate(5 << 19);  // 2.5 MiB: 3 in use + 2.5 > 5 even with the cache given back
    FAIL("expected ResourceExhausted");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kResourceExhausted);
    const std::string m = e.what();
    CHECK(m.find("allocating 2621440 bytes") != std::string::npos);
    CHECK(m.find("3145728 bytes in use") != std::string::npos);
    CHECK(m.find("limit 5242880") != std::string::npos);
  }
  // The failed attempt left the books as they were (the free chunk was given back).
  CHECK(a.Stats().bytes_in_use == 3 << 20);
  CHECK(a.Details().num_chunks == 1);
  a.Deallocate(p, 3 << 20);
}

TEST_CASE("caching allocator: a pointer it did not hand out is counted, not corruption") {
  HostBackingStore store(size_t{4} << 20);
  CachingAllocator a(&store, {.limit_bytes = 0, .chunk_bytes = kChunk, .alignment = 256});
  void* p = a.Allocate(100);
  int x = 0;
  a.Deallocate(&x, 4);  // never throws: it runs in destructors
  CHECK(a.Details().num_bad_frees == 1);
  CHECK(a.Stats().bytes_in_use == 100);
  a.Deallocate(p, 100);
  a.Deallocate(p, 100);  // twice
  CHECK(a.Details().num_bad_frees == 2);
  CHECK(a.Stats().bytes_in_use == 0);
  CHECK(a.Details().num_free_blocks == 1);
}

TEST_CASE("caching allocator: the store running dry is ResourceExhausted too") {
  HostBackingStore store(size_t{1} << 20);
  CachingAllocator a(&store, {.limit_bytes = 0, .chunk_bytes = kChunk, .alignment = 256});
  void* p = a.Allocate(kChunk);
  CHECK_THROWS_AS(a.Allocate(256), Error);
  a.Deallocate(p, kChunk);
  void* q = a.Allocate(256);  // the freed chunk serves it
  a.Deallocate(q, 256);
}
