// A bounded, thread-safe list of objects kept for reuse: the transport's per-message send ops and
// waiters are recycled through one instead of a new / delete per message. Owns what it holds.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

namespace weft {

template <typename T>
class FreeList {
 public:
  explicit FreeList(size_t max_kept) : max_kept_(max_kept) {}
  FreeList(const FreeList&) = delete;
  FreeList& operator=(const FreeList&) = delete;
  ~FreeList() {
    for (T* p : free_) delete p;
  }

  // A kept object (in the state Give's caller left it), or nullptr when none is kept.
  T* Take() {
    std::lock_guard<std::mutex> l(mu_);
    if (free_.empty()) return nullptr;
    T* p = free_.back();
    free_.pop_back();
    return p;
  }

  // Keeps `p` for a later Take, or deletes it when max_kept are kept already.
  void Give(T* p) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (free_.size() < max_kept_) {
        free_.push_back(p);
        return;
      }
    }
    delete p;
  }

 private:
  const size_t max_kept_;
  std::mutex mu_;
  std::vector<T*> free_;
};

}  // namespace weft
