#include "distributed/ucx/memreg.h"

namespace weft {

bool UcxMemRegistry::Register(void* chunk, size_t bytes) {
  if (chunk == nullptr || bytes == 0) return false;
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return false;
  ucp_mem_map_params_t params{};
  params.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
  params.address = chunk;
  params.length = bytes;
  ucp_mem_h memh = nullptr;
  if (ucp_mem_map(context_, &params, &memh) != UCS_OK) return false;
  registrations_++;
  auto [it, inserted] = chunks_.emplace(reinterpret_cast<uintptr_t>(chunk), Entry{bytes, memh});
  if (!inserted) {  // registered twice: keep the newer mapping
    ucp_mem_unmap(context_, it->second.memh);
    it->second = Entry{bytes, memh};
  }
  return true;
}

void UcxMemRegistry::Unregister(void* chunk) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = chunks_.find(reinterpret_cast<uintptr_t>(chunk));
  if (it == chunks_.end()) return;
  if (!closed_) ucp_mem_unmap(context_, it->second.memh);
  chunks_.erase(it);
}

ucp_mem_h UcxMemRegistry::Find(const void* p, size_t bytes) const {
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> l(mu_);
  if (closed_ || chunks_.empty()) return nullptr;
  auto it = chunks_.upper_bound(a);
  if (it == chunks_.begin()) return nullptr;
  --it;
  if (a + bytes > it->first + it->second.bytes) return nullptr;
  hits_++;
  return it->second.memh;
}

void UcxMemRegistry::Close() {
  std::lock_guard<std::mutex> l(mu_);
  if (closed_) return;
  closed_ = true;
  for (auto& [start, e] : chunks_) ucp_mem_unmap(context_, e.memh);
  chunks_.clear();
}

int64_t UcxMemRegistry::num_registered() const {
  std::lock_guard<std::mutex> l(mu_);
  return static_cast<int64_t>(chunks_.size());
}

int64_t UcxMemRegistry::registrations() const {
  std::lock_guard<std::mutex> l(mu_);
  return registrations_;
}

int64_t UcxMemRegistry::lookups_hit() const {
  std::lock_guard<std::mutex> l(mu_);
  return hits_;
}

}  // namespace weft
