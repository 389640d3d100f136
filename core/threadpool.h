// A fixed pool of worker threads (Eigen's non-blocking work-stealing pool underneath) and the
// Eigen device that runs tensor expressions on it.
//
//   ThreadPool pool(2, "inter-op");
//   pool.Schedule([] { ... });                  // fire and forget
//   pool.ParallelFor(n, [&](int64_t begin, int64_t end) { ... });   // blocks until done
//
// Thread-safe. The destructor waits for scheduled work to finish.
#pragma once

// EIGEN_USE_THREADS is defined for the whole build (meson.build), so every TU sees the same Eigen.
#include <unsupported/Eigen/CXX11/Tensor>

#include <functional>
#include <memory>
#include <string>

namespace weft {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads, std::string name = "weft");
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  const std::string& name() const { return name_; }
  // Runs fn on a pool thread (or, when the pool's queue is contended or full, inline).
  void Schedule(std::function<void()> fn);
  // Splits [0, n) into up to kBlocksPerThread contiguous ranges per thread and runs fn(begin, end)
  // once on each; returns when all have run. The ranges are claimed one at a time, by the calling
  // thread and by helper tasks scheduled on the pool: a helper that starts after the caller has
  // claimed every range does nothing, so the caller never waits for a task still queued behind
  // other kernels' work, only for ranges another thread is running. fn must treat every index
  // alike whatever range it comes in (which thread runs a range, and how many ranges there are,
  // depends on timing). An exception from fn is rethrown here once every claimed range has ended.
  // Runs inline when n is 1 or the pool has one thread.
  void ParallelFor(int64_t n, const std::function<void(int64_t, int64_t)>& fn);
  static constexpr int64_t kBlocksPerThread = 4;
  // True when called from inside a task given to this pool's Schedule.
  bool InPool() const;

  // Device for Eigen tensor expressions: `out.device(pool.eigen_device()) = a + b;`
  const Eigen::ThreadPoolDevice& eigen_device() const { return *device_; }

 private:
  int num_threads_;
  std::string name_;
  std::unique_ptr<Eigen::ThreadPool> pool_;
  std::unique_ptr<Eigen::ThreadPoolDevice> device_;
};

// Number of hardware threads (at least 1).
int HardwareThreads();

}  // namespace weft
