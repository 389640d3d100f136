#include "core/threadpool.h"

#include <algorithm>
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

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t blocks = std::min<int64_t>(n, num_threads_);
  if (blocks <= 1) {
    fn(0, n);
    return;
  }
  Eigen::Barrier barrier(static_cast<unsigned>(blocks - 1));
  const int64_t per = (n + blocks - 1) / blocks;
  for (int64_t b = 1; b < blocks; ++b) {
    const int64_t begin = b * per, end = std::min(n, begin + per);
    pool_->Schedule([&, begin, end] {
      if (begin < end) fn(begin, end);
      barrier.Notify();
    });
  }
  fn(0, std::min(n, per));
  barrier.Wait();
}

int HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace weft
