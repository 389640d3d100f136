// A memory budget per device: an Allocator over another that fails, with a report, any allocation
// that would take the device's live bytes above a limit, so that "the model does not fit this
// device" is a real, testable condition on CPU devices too (every CPU device shares the process's
// host allocator; the budget counts what each device's kernels allocate).
//
//   BudgetHandle cpu1 = BudgetAllocator::Create(CpuAllocator(), "/device:CPU:1", 64 << 20);
//   Tensor t(DType::kFloat32, {1024, 1024}, cpu1.get());   // counted against CPU:1's 64 MiB
//   cpu1->ResetPeak();                                      // a Session does this when a step starts
//
// Over the limit, Allocate throws ResourceExhausted naming the device, the limit, the request
// (with the node and shape being allocated when the allocating thread labelled them), the bytes in
// use, the peak since the last ResetPeak (the step's) and the largest live blocks with their labels.
//
// Labels: the executor names the node whose kernel runs on the thread (ScopedAllocationNode) and
// Tensor's constructor the dtype and shape it allocates (ScopedAllocationShape); blocks allocated
// without them (fed tensors, callbacks of asynchronous kernels) are reported as "(unlabelled)".
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/allocator.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace weft {

// RAII: while alive, allocations on this thread are labelled with `node` (not owned; must outlive
// the scope). Nested scopes restore the outer label.
class ScopedAllocationNode {
 public:
  explicit ScopedAllocationNode(const std::string* node);
  ~ScopedAllocationNode();
  ScopedAllocationNode(const ScopedAllocationNode&) = delete;
  ScopedAllocationNode& operator=(const ScopedAllocationNode&) = delete;

 private:
  const std::string* previous_;
};

// RAII: while alive, allocations on this thread are for a tensor of this dtype and shape (not owned).
class ScopedAllocationShape {
 public:
  ScopedAllocationShape(DType dtype, const TensorShape* shape);
  ~ScopedAllocationShape();
  ScopedAllocationShape(const ScopedAllocationShape&) = delete;
  ScopedAllocationShape& operator=(const ScopedAllocationShape&) = delete;

 private:
  DType previous_dtype_;
  const TensorShape* previous_shape_;
};

// Tensors may outlive whoever made the budget (a Session's fetched outputs): the owner holds it
// through a BudgetHandle, whose end releases it, and the allocator deletes itself once released
// and its last block is freed.
class BudgetAllocator final : public Allocator {
 public:
  struct Releaser {
    void operator()(BudgetAllocator* a) const { a->Release(); }
  };
  // base: not owned, outlives every block allocated through the budget. limit_bytes > 0.
  static std::unique_ptr<BudgetAllocator, Releaser> Create(Allocator* base, std::string device, int64_t limit_bytes);
  std::string Name() const override { return base_->Name() + " (budget of " + device_ + ")"; }
  MemoryKind kind() const override { return base_->kind(); }
  void* Allocate(size_t bytes) override;
  void Deallocate(void* ptr, size_t bytes) override;
  // This device's blocks: allocations, bytes in use, peak since the last ResetPeak.
  AllocatorStats Stats() const override;
  void CopyToHost(void* dst, const void* src, size_t bytes) const override { base_->CopyToHost(dst, src, bytes); }
  // Starts a new peak (at the bytes in use now).
  void ResetPeak();
  int64_t limit() const { return limit_; }
  const std::string& device() const { return device_; }

 private:
  BudgetAllocator(Allocator* base, std::string device, int64_t limit_bytes);
  ~BudgetAllocator() override = default;
  void Release();
  struct Block {
    int64_t bytes;
    std::string label;  // "'node' float32[64,128]" or "(unlabelled)"
  };
  std::string Report(size_t asked, const std::string& label) const;  // REQUIRES: mu_ held

  Allocator* base_;
  const std::string device_;
  const int64_t limit_;
  mutable std::mutex mu_;
  std::unordered_map<void*, Block> live_;  // guarded by mu_
  int64_t in_use_ = 0, peak_ = 0, num_allocs_ = 0;  // guarded by mu_
  bool released_ = false;                           // guarded by mu_
};
using BudgetHandle = std::unique_ptr<BudgetAllocator, BudgetAllocator::Releaser>;

}  // namespace weft
