#include "core/memory_budget.h"

#include <algorithm>
#include <vector>

#include "core/status.h"

namespace weft {
namespace {

thread_local const std::string* label_node = nullptr;
thread_local DType label_dtype = DType::kInvalid;
thread_local const TensorShape* label_shape = nullptr;

std::string CurrentLabel() {
  std::string s = label_node != nullptr ? "'" + *label_node + "'" : "(unlabelled)";
  if (label_shape != nullptr) s += fmt::format(" {}{}", DTypeName(label_dtype), label_shape->ToString());
  return s;
}

std::string Bytes(int64_t n) {
  if (n >= (int64_t{1} << 20)) return fmt::format("{} bytes ({:.1f} MiB)", n, static_cast<double>(n) / (1 << 20));
  return fmt::format("{} bytes", n);
}

}  // namespace

ScopedAllocationNode::ScopedAllocationNode(const std::string* node) : previous_(label_node) { label_node = node; }
ScopedAllocationNode::~ScopedAllocationNode() { label_node = previous_; }

ScopedAllocationShape::ScopedAllocationShape(DType dtype, const TensorShape* shape)
    : previous_dtype_(label_dtype), previous_shape_(label_shape) {
  label_dtype = dtype;
  label_shape = shape;
}
ScopedAllocationShape::~ScopedAllocationShape() {
  label_dtype = previous_dtype_;
  label_shape = previous_shape_;
}

BudgetAllocator::BudgetAllocator(Allocator* base, std::string device, int64_t limit_bytes)
    : base_(base), device_(std::move(device)), limit_(limit_bytes) {
  WEFT_REQUIRE(base_ != nullptr && limit_ > 0, "BudgetAllocator for '{}': needs an allocator and a limit > 0 (got {})",
               device_, limit_);
}

std::string BudgetAllocator::Report(size_t asked, const std::string& label) const {
  std::vector<const Block*> blocks;
  for (const auto& [p, b] : live_) blocks.push_back(&b);
  const size_t shown = std::min<size_t>(blocks.size(), 5);
  std::partial_sort(blocks.begin(), blocks.begin() + static_cast<std::ptrdiff_t>(shown), blocks.end(),
                    [](const Block* a, const Block* b) { return a->bytes > b->bytes; });
  std::string largest;
  for (size_t i = 0; i < shown; ++i) largest += fmt::format("{}{} {}", i ? ", " : "", blocks[i]->label, Bytes(blocks[i]->bytes));
  return fmt::format(
      "device {} is over its memory limit of {}: allocating {} for {} with {} in use; this step's peak so far {} "
      "({} live blocks; largest: {})",
      device_, Bytes(limit_), Bytes(static_cast<int64_t>(asked)), label, Bytes(in_use_),
      Bytes(std::max(peak_, in_use_ + static_cast<int64_t>(asked))), live_.size(), largest.empty() ? "none" : largest);
}

void* BudgetAllocator::Allocate(size_t bytes) {
  const std::string label = CurrentLabel();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (in_use_ + static_cast<int64_t>(bytes) > limit_) throw Error(errors::ResourceExhausted("{}", Report(bytes, label)));
    in_use_ += static_cast<int64_t>(bytes);  // reserved before the base allocates, so racing threads see it
    peak_ = std::max(peak_, in_use_);
    ++num_allocs_;
  }
  void* p = nullptr;
  try {
    p = base_->Allocate(bytes);
  } catch (...) {
    std::lock_guard<std::mutex> l(mu_);
    in_use_ -= static_cast<int64_t>(bytes);
    throw;
  }
  std::lock_guard<std::mutex> l(mu_);
  live_.emplace(p, Block{static_cast<int64_t>(bytes), label});
  return p;
}

void BudgetAllocator::Deallocate(void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  bool last;
  {
    std::lock_guard<std::mutex> l(mu_);
    live_.erase(ptr);
    in_use_ -= static_cast<int64_t>(bytes);
    last = released_ && in_use_ == 0;
  }
  base_->Deallocate(ptr, bytes);
  if (last) delete this;
}

std::unique_ptr<BudgetAllocator, BudgetAllocator::Releaser> BudgetAllocator::Create(Allocator* base, std::string device,
                                                                                  int64_t limit_bytes) {
  return std::unique_ptr<BudgetAllocator, Releaser>(new BudgetAllocator(base, std::move(device), limit_bytes));
}

void BudgetAllocator::Release() {
  bool unused;
  {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    unused = in_use_ == 0;
  }
  if (unused) delete this;
}

AllocatorStats BudgetAllocator::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return {num_allocs_, in_use_, peak_, 0, 0};
}

void BudgetAllocator::ResetPeak() {
  std::lock_guard<std::mutex> l(mu_);
  peak_ = in_use_;
}

}  // namespace weft
