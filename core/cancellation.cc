#include "core/cancellation.h"

namespace weft {

bool CancellationManager::StartCancel(Status why) {
  std::map<Token, Callback> to_run;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (cancelled_) return false;
    cancelled_ = true;
    status_ = why.ok() ? errors::Cancelled("step cancelled") : std::move(why);
    to_run.swap(callbacks_);
  }
  for (auto& [token, cb] : to_run) cb(status_);
  return true;
}

bool CancellationManager::IsCancelled() const {
  std::lock_guard<std::mutex> l(mu_);
  return cancelled_;
}

Status CancellationManager::status() const {
  std::lock_guard<std::mutex> l(mu_);
  return status_;
}

CancellationManager::Token CancellationManager::RegisterCallback(Callback cb) {
  std::unique_lock<std::mutex> l(mu_);
  if (cancelled_) {
    Status s = status_;
    l.unlock();
    cb(s);
    return -1;
  }
  const Token t = next_++;
  callbacks_.emplace(t, std::move(cb));
  return t;
}

void CancellationManager::DeregisterCallback(Token token) {
  std::lock_guard<std::mutex> l(mu_);
  callbacks_.erase(token);
}

}  // namespace weft
