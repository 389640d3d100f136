// A caching allocator over a backing store: the GPU's device memory (cudaMalloc) and pinned host
// memory (cudaHostAlloc) both go through it (core/cuda/), and tests run it over a host store.
//
//   HostBackingStore store(/*capacity=*/64 << 20);          // tests: host memory plays the device
//   CachingAllocator a(&store, {.limit_bytes = 32 << 20});
//   void* p = a.Allocate(1000);      // reserves a 2 MiB chunk, splits off a 1024-byte block
//   a.Deallocate(p, 1000);           // the block is free again and merges with its neighbours
//   a.Details().reserved_bytes;      // 2 MiB: still cached for the next step
//
// Memory is reserved from the store in chunks (at least `chunk_bytes`); an allocation takes the
// smallest free block that fits (best fit), splitting off the rest when the rest is worth keeping;
// a freed block merges with free neighbours of the same chunk. When the store has no more or the
// limit is reached, wholly free chunks go back to the store and the allocation is tried once more;
// then it throws ResourceExhausted naming the requested, in-use, reserved and limit sizes.
// cudaMalloc and cudaFree synchronize the device, so a training step that allocates the same
// sizes every step must not reach them after the first: the cache makes that so.
//
// Ordering: a block freed while a GPU kernel still uses it may be handed out again at once. That is
// safe as long as every user of this allocator's memory runs on one stream (weft's compute stream),
// whose order the later kernel follows; copies on other streams hold their tensors until they end.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>

#include "core/allocator.h"

namespace weft {

// Where the chunks come from. Reserve returns null when the store has no room (no throw).
class BackingStore {
 public:
  virtual ~BackingStore() = default;
  virtual std::string Name() const = 0;  // "cuda:0", "pinned", "host-test"
  virtual MemoryKind kind() const = 0;
  virtual void* Reserve(size_t bytes) = 0;
  virtual void Release(void* ptr, size_t bytes) = 0;
  // Copies `bytes` at `src` (memory it reserved) into host memory at `dst`, after the work queued
  // on that memory so far. The default memcpy serves stores of host memory (pinned, test stores);
  // a device store overrides it (core/cuda/gpu_context.cc: a copy on the compute stream).
  virtual void CopyToHost(void* dst, const void* src, size_t bytes) const;
};

// Host memory with a fixed capacity: a device without a device (tests, docs). Thread-safe.
class HostBackingStore final : public BackingStore {
 public:
  explicit HostBackingStore(size_t capacity_bytes, MemoryKind kind = MemoryKind::kDevice)
      : capacity_(capacity_bytes), kind_(kind) {}
  std::string Name() const override { return "host-store"; }
  MemoryKind kind() const override { return kind_; }
  void* Reserve(size_t bytes) override;
  void Release(void* ptr, size_t bytes) override;
  size_t reserved() const;
  int reserve_calls() const;

 private:
  const size_t capacity_;
  const MemoryKind kind_;
  mutable std::mutex mu_;
  size_t reserved_ = 0;
  int reserve_calls_ = 0;
};

struct CachingAllocatorOptions {
  size_t limit_bytes = 0;                // most reserved from the store at once; 0: no limit but the store's
  size_t chunk_bytes = size_t{2} << 20;  // smallest chunk reserved at a time
  size_t alignment = 256;                // block sizes and addresses (cudaMalloc aligns to 256)
};

// Bookkeeping beyond AllocatorStats, for tests and the memory report.
struct CachingAllocatorDetails {
  size_t reserved_bytes = 0;      // held from the store
  size_t allocated_bytes = 0;     // in live blocks (rounded sizes)
  size_t largest_free_block = 0;
  int num_chunks = 0;
  int num_free_blocks = 0;
  int64_t num_splits = 0;
  int64_t num_merges = 0;
  int64_t num_reserves = 0;       // chunks asked of the store
  int64_t num_bad_frees = 0;      // Deallocate of a pointer that is not a live block (ignored)
};

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(BackingStore* store, CachingAllocatorOptions options);  // store: not owned, outlives this
  ~CachingAllocator() override;  // gives every chunk back (REQUIRES: no live blocks)

  std::string Name() const override { return "caching(" + store_->Name() + ")"; }
  MemoryKind kind() const override { return store_->kind(); }
  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  AllocatorStats Stats() const override;
  void Trim() override;  // wholly free chunks back to the store
  void CopyToHost(void* dst, const void* src, size_t bytes) const override { store_->CopyToHost(dst, src, bytes); }
  CachingAllocatorDetails Details() const;
  // The size a request of `bytes` occupies (rounded up to the alignment, at least one unit).
  size_t RoundedSize(size_t bytes) const;

 private:
  struct Block {
    char* ptr;
    size_t size;
    bool free = true;
    bool chunk_head = false;  // first block of its chunk
    Block* prev = nullptr;    // neighbours within the same chunk
    Block* next = nullptr;
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
    }
  };
  Block* TakeFree(size_t size);       // REQUIRES mu_
  bool ReserveChunk(size_t size);     // REQUIRES mu_
  size_t TrimLocked();                // REQUIRES mu_; returns bytes released
  void MergeInto(Block* left, Block* right);  // REQUIRES mu_; right is absorbed

  BackingStore* store_;
  const CachingAllocatorOptions options_;
  mutable std::mutex mu_;
  std::map<const char*, Block*> blocks_;  // every block by address (owned)
  std::set<Block*, BySize> free_;
  std::map<char*, size_t> chunks_;        // chunk address -> size
  size_t reserved_ = 0, allocated_ = 0;
  int64_t num_allocs_ = 0, in_use_ = 0, peak_ = 0, hits_ = 0, splits_ = 0, merges_ = 0, reserves_ = 0, bad_frees_ = 0;
};

}  // namespace weft
