#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "core/allocator.h"
#include "core/tensor.h"

using namespace weft;

TEST_CASE("a caching allocator reuses freed blocks of the same size class") {
  auto a = NewCachingCpuAllocator(size_t{1} << 24);
  void* p = a->Allocate(100000);
  CHECK(reinterpret_cast<uintptr_t>(p) % kTensorAlignment == 0);
  std::memset(p, 1, 100000);
  a->Deallocate(p, 100000);
  AllocatorStats s = a->Stats();
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_cached >= 100000);
  CHECK(s.cache_hits == 0);
  // A slightly different size in the same class gets the same block back.
  void* q = a->Allocate(99000);
  CHECK(q == p);
  s = a->Stats();
  CHECK(s.cache_hits == 1);
  CHECK(s.bytes_cached == 0);
  CHECK(s.bytes_in_use == 99000);
  CHECK(s.num_allocs == 2);
  CHECK(s.peak_bytes_in_use == 100000);
  // A size of another class does not.
  void* r = a->Allocate(300000);
  CHECK(r != q);
  CHECK(a->Stats().cache_hits == 1);
  a->Deallocate(q, 99000);
  a->Deallocate(r, 300000);
}

TEST_CASE("a caching allocator keeps small blocks out of the cache and trims on request") {
  auto a = NewCachingCpuAllocator(size_t{1} << 24);
  void* small = a->Allocate(100);
  a->Deallocate(small, 100);
  CHECK(a->Stats().bytes_cached == 0);
  void* big = a->Allocate(1 << 20);
  a->Deallocate(big, 1 << 20);
  CHECK(a->Stats().bytes_cached == (1 << 20));
  a->Trim();
  CHECK(a->Stats().bytes_cached == 0);
  void* again = a->Allocate(1 << 20);
  CHECK(a->Stats().cache_hits == 0);
  a->Deallocate(again, 1 << 20);
}

TEST_CASE("a caching allocator caches at most its limit") {
  auto a = NewCachingCpuAllocator(3 << 20);
  void* p[4];
  for (auto& b : p) b = a->Allocate(1 << 20);
  for (auto& b : p) a->Deallocate(b, 1 << 20);
  CHECK(a->Stats().bytes_cached == (3 << 20));
  auto none = NewCachingCpuAllocator(0);
  void* q = none->Allocate(1 << 20);
  none->Deallocate(q, 1 << 20);
  CHECK(none->Stats().bytes_cached == 0);
}

TEST_CASE("zero bytes gives a valid unique pointer") {
  auto a = NewCachingCpuAllocator(1 << 20);
  void* p = a->Allocate(0);
  void* q = a->Allocate(0);
  CHECK(p != nullptr);
  CHECK(p != q);
  a->Deallocate(p, 0);
  a->Deallocate(q, 0);
}

TEST_CASE("tensors allocated through the process's CPU allocator reuse its cache") {
  Allocator* cpu = CpuAllocator();
  { Tensor t(DType::kFloat32, {64, 1024}); }
  const int64_t hits = cpu->Stats().cache_hits;
  { Tensor t(DType::kFloat32, {64, 1024}); }
  CHECK(cpu->Stats().cache_hits == hits + 1);
}

TEST_CASE("blocks of a huge page and more start on a huge-page boundary (transparent huge pages)") {
  auto a = NewCachingCpuAllocator(0);
  constexpr size_t kHuge = size_t{2} << 20;
  for (size_t bytes : {kHuge, kHuge + 4096, size_t{5} << 20}) {
    CAPTURE(bytes);
    void* p = a->Allocate(bytes);
    CHECK(reinterpret_cast<uintptr_t>(p) % kHuge == 0);
    std::memset(p, 7, bytes);  // every byte usable
    CHECK(static_cast<unsigned char*>(p)[bytes - 1] == 7);
    a->Deallocate(p, bytes);
  }
  void* small = a->Allocate(kHuge / 2);  // smaller blocks keep the plain alignment
  CHECK(reinterpret_cast<uintptr_t>(small) % kTensorAlignment == 0);
  a->Deallocate(small, kHuge / 2);
}
