#include "core/threadpool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace weft {

ThreadPool::ThreadPool(int num_threads, std::string name)
    : num_threads_(std::max(1, num_threads)),
      name_(std::move(name)),
      // No spinning while idle: a session has several pools (inter-op, one intra-op per device),
      // and on a shared machine spinning workers take the cores the working threads need.
      pool_(std::make_unique<Eigen::ThreadPool>(num_threads_, /*allow_spinning=*/false)),
      device_(std::make_unique<Eigen::ThreadPoolDevice>(pool_.get(), num_threads_)) {}

ThreadPool::~ThreadPool() {
  device_.reset();
  pool_.reset();  // Eigen's pool joins its threads after draining the queues
}

namespace {
thread_local const ThreadPool* current_pool = nullptr;  // the pool whose task this thread runs
}  // namespace

void ThreadPool::Schedule(std::function<void()> fn) {
  pool_->Schedule([this, fn = std::move(fn)] {
    const ThreadPool* outer = current_pool;
    current_pool = this;
    fn();
    current_pool = outer;
  });
}

bool ThreadPool::InPool() const { return current_pool == this; }

namespace {

// One ParallelFor's ranges, shared with its helper tasks. A helper that finds no range left
// returns without touching `fn`, which lives on the caller's stack: the caller waits only for
// the ranges that were claimed (done == blocks), so it may return before late helpers run.
struct ParallelRanges {
  int64_t n = 0, blocks = 0, per = 0;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  std::atomic<int64_t> next{0};  // the next unclaimed range
  std::atomic<int64_t> done{0};  // ranges that have ended (or were skipped after a failure)
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;  // the first exception from fn (under mu)

  // Claims and runs ranges until none is left.
  void Work() {
    for (int64_t i = next.fetch_add(1); i < blocks; i = next.fetch_add(1)) {
      const int64_t begin = i * per, end = std::min(n, begin + per);
      try {
        if (begin < end && !failed.load(std::memory_order_relaxed)) (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> l(mu);
        if (!error) error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);  // the ranges still unclaimed are skipped
      }
      if (done.fetch_add(1) + 1 == blocks) {
        std::lock_guard<std::mutex> l(mu);  // the caller checks `done` under mu: no lost wake-up
        cv.notify_all();
      }
    }
  }
};

}  // namespace

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>(n, num_threads_ * kBlocksPerThread);
  if (blocks <= 1 || num_threads_ <= 1) {
    fn(0, n);
    return;
  }
  auto ranges = std::make_shared<ParallelRanges>();
  ranges->n = n;
  ranges->per = (n + blocks - 1) / blocks;
  ranges->blocks = (n + ranges->per - 1) / ranges->per;
  ranges->fn = &fn;
  const int helpers = static_cast<int>(std::min<int64_t>(num_threads_ - 1, ranges->blocks - 1));
  for (int h = 0; h < helpers; ++h) {
    pool_->Schedule([ranges] { ranges->Work(); });
  }
  ranges->Work();  // returns once every range is claimed: the wait is for ranges running elsewhere
  std::unique_lock<std::mutex> l(ranges->mu);
  ranges->cv.wait(l, [&] { return ranges->done.load() == ranges->blocks; });
  if (ranges->error) std::rethrow_exception(ranges->error);
}

int HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace weft
