#include "runtime/collectives/context.h"

#include <chrono>
#include <vector>

#include "runtime/collectives/collective.h"

namespace weft {
namespace {

// How often a watchdog with live collectives looks at their deadlines: a deadline is noticed at most
// this late.
constexpr std::chrono::milliseconds kWatchdogPeriod(50);

}  // namespace

CollectiveContext::CollectiveContext(int num_threads)
    : num_threads_(num_threads > 0 ? num_threads : HardwareThreads()) {}

CollectiveContext::~CollectiveContext() {
  std::vector<std::shared_ptr<Collective>> running;
  {
    std::lock_guard<std::mutex> l(mu_);
    closing_ = true;
    for (auto& [id, weak] : live_) {
      if (auto c = weak.lock()) running.push_back(std::move(c));
    }
  }
  // Ended ones ignore this; one still running has outlived its step (see the header's contract).
  for (auto& c : running) c->Fail(errors::Cancelled("the collective's context is being destroyed"));
  running.clear();  // a collective's last reference may go here: outside the lock
  {
    std::unique_lock<std::mutex> l(mu_);
    drained_.wait(l, [&] { return live_.empty(); });
    stop_ = true;
  }
  cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  pool_.reset();  // runs what is still scheduled (a `done` being delivered) first
}

ThreadPool& CollectiveContext::pool() {
  std::call_once(pool_once_, [&] { pool_ = std::make_unique<ThreadPool>(num_threads_, "collective"); });
  return *pool_;
}

size_t CollectiveContext::num_live() const {
  std::lock_guard<std::mutex> l(mu_);
  return live_.size();
}

bool CollectiveContext::watchdog_started() const {
  std::lock_guard<std::mutex> l(mu_);
  return watchdog_.joinable();
}

double CollectiveContext::active_seconds() const {
  std::lock_guard<std::mutex> l(mu_);
  auto total = active_total_;
  if (active_ > 0) total += std::chrono::steady_clock::now() - active_since_;
  return std::chrono::duration<double>(total).count();
}

void CollectiveContext::BeginActive() {
  std::lock_guard<std::mutex> l(mu_);
  if (active_++ == 0) active_since_ = std::chrono::steady_clock::now();
}

void CollectiveContext::EndActive() {
  std::lock_guard<std::mutex> l(mu_);
  if (--active_ == 0) active_total_ += std::chrono::steady_clock::now() - active_since_;
}

uint64_t CollectiveContext::Watch(std::weak_ptr<Collective> c) {
  std::lock_guard<std::mutex> l(mu_);
  const uint64_t id = ++next_id_;
  live_.emplace(id, std::move(c));
  if (!watchdog_.joinable()) watchdog_ = std::thread([this] { WatchdogLoop(); });
  // Only a watchdog asleep for good needs waking: one in its kWatchdogPeriod wait checks then anyway.
  // (Waking it whenever no collective was running cost back-to-back small collectives a thread
  // wake-up each, a context switch on a machine whose cores spin in UCX progress.)
  if (idle_) cv_.notify_all();
  return id;
}

void CollectiveContext::Forget(uint64_t id) {
  std::lock_guard<std::mutex> l(mu_);
  live_.erase(id);
  // Only the destructor waits for the last one: a notification per collective would cost every
  // step a wake-up.
  if (closing_ && live_.empty()) drained_.notify_all();
}

// Fails the collectives waiting past their deadline; sleeps while none is live.
void CollectiveContext::WatchdogLoop() {
  std::unique_lock<std::mutex> l(mu_);
  while (!stop_) {
    if (live_.empty()) {
      idle_ = true;
      cv_.wait(l, [&] { return stop_ || !live_.empty(); });
      idle_ = false;
      continue;
    }
    cv_.wait_for(l, kWatchdogPeriod);
    std::vector<std::shared_ptr<Collective>> live;
    for (auto& [id, weak] : live_) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
    l.unlock();
    const auto now = std::chrono::steady_clock::now();
    for (auto& c : live) c->CheckDeadline(now);
    live.clear();  // a collective's last reference may go here: outside the lock
    l.lock();
  }
}

}  // namespace weft
