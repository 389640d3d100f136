#include "core/caching_allocator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/status.h"

namespace weft {

void BackingStore::CopyToHost(void* dst, const void* src, size_t bytes) const {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

void* HostBackingStore::Reserve(size_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  ++reserve_calls_;
  if (bytes > capacity_ - reserved_) return nullptr;
  // Aligned as cudaMalloc aligns (256 bytes), so the allocator sees what it sees on a GPU.
  constexpr size_t kAlign = 256;
  void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (p != nullptr) reserved_ += bytes;
  return p;
}

void HostBackingStore::Release(void* ptr, size_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  reserved_ -= bytes;
  std::free(ptr);
}

size_t HostBackingStore::reserved() const {
  std::lock_guard<std::mutex> l(mu_);
  return reserved_;
}

int HostBackingStore::reserve_calls() const {
  std::lock_guard<std::mutex> l(mu_);
  return reserve_calls_;
}

CachingAllocator::CachingAllocator(BackingStore* store, CachingAllocatorOptions options)
    : store_(store), options_(options) {
  WEFT_REQUIRE(options_.alignment >= kTensorAlignment && options_.alignment % kTensorAlignment == 0,
               "caching allocator: alignment {} must be a multiple of {}", options_.alignment, kTensorAlignment);
  WEFT_REQUIRE(options_.chunk_bytes % options_.alignment == 0, "caching allocator: chunk size {} is not a multiple of {}",
               options_.chunk_bytes, options_.alignment);
}

CachingAllocator::~CachingAllocator() {
  for (auto& [ptr, size] : chunks_) store_->Release(ptr, size);
  for (auto& [ptr, block] : blocks_) delete block;
}

size_t CachingAllocator::RoundedSize(size_t bytes) const {
  const size_t a = options_.alignment;
  return bytes == 0 ? a : (bytes + a - 1) / a * a;
}

CachingAllocator::Block* CachingAllocator::TakeFree(size_t size) {
  Block probe{nullptr, size};
  auto it = free_.lower_bound(&probe);
  if (it == free_.end()) return nullptr;
  Block* b = *it;
  free_.erase(it);
  b->free = false;
  // Split when the rest is itself a usable block; the rest stays free in the same chunk.
  if (b->size - size >= options_.alignment) {
    auto* rest = new Block{b->ptr + size, b->size - size};
    rest->prev = b;
    rest->next = b->next;
    if (b->next != nullptr) b->next->prev = rest;
    b->next = rest;
    b->size = size;
    blocks_[rest->ptr] = rest;
    free_.insert(rest);
    ++splits_;
  }
  return b;
}

bool CachingAllocator::ReserveChunk(size_t size) {
  size_t chunk = std::max(size, options_.chunk_bytes);
  const size_t limit = options_.limit_bytes;
  if (limit != 0 && reserved_ + chunk > limit) chunk = size;  // a chunk that just fits beats failing
  if (limit != 0 && reserved_ + chunk > limit) return false;
  char* p = static_cast<char*>(store_->Reserve(chunk));
  ++reserves_;
  if (p == nullptr) return false;
  auto* b = new Block{p, chunk};
  b->chunk_head = true;
  blocks_[p] = b;
  free_.insert(b);
  chunks_[p] = chunk;
  reserved_ += chunk;
  return true;
}

void* CachingAllocator::Allocate(size_t bytes) {
  const size_t size = RoundedSize(bytes);
  std::lock_guard<std::mutex> l(mu_);
  Block* b = TakeFree(size);
  if (b != nullptr) {
    ++hits_;
  } else {
    // Not cached: a new chunk; failing that, give wholly free chunks back and try once more.
    bool ok = ReserveChunk(size);
    if (!ok && TrimLocked() > 0) ok = ReserveChunk(size);
    if (ok) b = TakeFree(size);
  }
  if (b == nullptr) {
    size_t largest = free_.empty() ? 0 : (*free_.rbegin())->size;
    throw Error(errors::ResourceExhausted(
        "{}: out of memory allocating {} bytes: {} bytes in use, {} reserved, limit {}, largest free block {}",
        Name(), bytes, in_use_, reserved_,
        options_.limit_bytes == 0 ? std::string("none") : std::to_string(options_.limit_bytes), largest));
  }
  allocated_ += b->size;
  ++num_allocs_;
  in_use_ += static_cast<int64_t>(bytes);
  peak_ = std::max(peak_, in_use_);
  return b->ptr;
}

void CachingAllocator::MergeInto(Block* left, Block* right) {
  left->size += right->size;
  left->next = right->next;
  if (right->next != nullptr) right->next->prev = left;
  blocks_.erase(right->ptr);
  delete right;
  ++merges_;
}

void CachingAllocator::Deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> l(mu_);
  auto it = blocks_.find(static_cast<const char*>(ptr));
  if (it == blocks_.end() || it->second->free) {
    // A pointer this allocator did not hand out (or freed twice): a bug elsewhere. Deallocate runs
    // in destructors, so it is reported and counted, never thrown; the books stay intact.
    if (bad_frees_++ == 0) {
      std::fprintf(stderr, "weft: %s: Deallocate of %p (%zu bytes), which is not a live block (ignored)\n",
                   Name().c_str(), ptr, bytes);
    }
    return;
  }
  Block* b = it->second;
  b->free = true;
  allocated_ -= b->size;
  in_use_ -= static_cast<int64_t>(bytes);
  if (b->next != nullptr && b->next->free) {
    free_.erase(b->next);
    MergeInto(b, b->next);
  }
  if (b->prev != nullptr && b->prev->free) {
    Block* left = b->prev;
    free_.erase(left);
    MergeInto(left, b);
    b = left;
  }
  free_.insert(b);
}

size_t CachingAllocator::TrimLocked() {
  size_t released = 0;
  for (auto it = chunks_.begin(); it != chunks_.end();) {
    Block* head = blocks_.at(it->first);
    if (head->free && head->next == nullptr) {  // one free block spans the chunk
      free_.erase(head);
      blocks_.erase(head->ptr);
      delete head;
      store_->Release(it->first, it->second);
      reserved_ -= it->second;
      released += it->second;
      it = chunks_.erase(it);
    } else {
      ++it;
    }
  }
  return released;
}

void CachingAllocator::Trim() {
  std::lock_guard<std::mutex> l(mu_);
  TrimLocked();
}

AllocatorStats CachingAllocator::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return {num_allocs_, in_use_, peak_, static_cast<int64_t>(reserved_ - allocated_), hits_};
}

CachingAllocatorDetails CachingAllocator::Details() const {
  std::lock_guard<std::mutex> l(mu_);
  CachingAllocatorDetails d;
  d.reserved_bytes = reserved_;
  d.allocated_bytes = allocated_;
  d.largest_free_block = free_.empty() ? 0 : (*free_.rbegin())->size;
  d.num_chunks = static_cast<int>(chunks_.size());
  d.num_free_blocks = static_cast<int>(free_.size());
  d.num_splits = splits_;
  d.num_merges = merges_;
  d.num_reserves = reserves_;
  d.num_bad_frees = bad_frees_;
  return d;
}

}  // namespace weft
