// Running C++ work with the GIL released while the Python main thread stays responsive to Ctrl-C.
//
// Python runs signal handlers only on its main thread, between bytecodes or in PyErr_CheckSignals.
// So the work runs on a helper thread (from a small pool that lives for the process) and the main
// thread waits on a condition variable, waking every 50 ms to run the handlers. Calls from other
// threads (Python threads, or a Python callback running inside fit) run inline: no handler could
// run there anyway.
#include <chrono>
#include <condition_variable>
#include <atomic>
#include <deque>
#include <mutex>
#include <thread>

#include "common.h"

namespace weft::python {
namespace {

struct Job {
  std::function<void()> work;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;             // guarded by mu
  std::atomic<bool> finished{false};  // the same, readable without the lock (for the short spin)
  std::exception_ptr error;
};

// Short steps (a Session.run of a small graph takes microseconds) would otherwise pay two thread
// wake-ups; both sides spin this long before sleeping.
constexpr auto kSpin = std::chrono::microseconds(50);

template <typename Pred> bool SpinFor(Pred pred) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  do {
    if (pred()) return true;
    std::this_thread::yield();  // let the thread that does the work run (cores may be few)
  } while (std::chrono::steady_clock::now() < until);
  return pred();
}

// Threads that run jobs; they are never joined (detached, idle ones wait on the queue).
class Workers {
 public:
  void Submit(std::shared_ptr<Job> job) {
    std::lock_guard<std::mutex> l(mu_);
    queue_.push_back(std::move(job));
    queued_.store(queue_.size());
    if (spinning_ > 0) return;  // a worker is polling the queue and will take it
    if (idle_ > 0) {
      --idle_;  // claimed: counts threads not yet given a job
      cv_.notify_one();
    } else {
      std::thread([this] { Loop(); }).detach();
    }
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [&] { return !queue_.empty(); });
      std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      queued_.store(queue_.size());
      l.unlock();
      try {
        job->work();
      } catch (...) {
        job->error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> jl(job->mu);
        job->done = true;
        job->finished.store(true);
      }
      job->cv.notify_all();
      job.reset();
      l.lock();
      // Poll briefly for the next job (the caller's next step) before sleeping.
      ++spinning_;
      l.unlock();
      SpinFor([&] { return queued_.load() > 0; });
      l.lock();
      --spinning_;
      if (!queue_.empty()) continue;  // take it without counting as idle
      ++idle_;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<size_t> queued_{0};
  int idle_ = 0;      // sleeping on cv_ and not yet claimed
  int spinning_ = 0;  // polling queued_
};

Workers& GlobalWorkers() {
  static Workers* w = new Workers;  // leaked on purpose: its threads outlive static destruction
  return *w;
}

unsigned long g_main_thread = 0;

}  // namespace

void RunInterruptibleVoid(const std::function<void()>& work, const std::function<void()>& cancel) {
  if (PyThread_get_thread_ident() != g_main_thread) {
    py::gil_scoped_release nogil;
    work();
    return;
  }
  auto job = std::make_shared<Job>();
  job->work = work;
  std::optional<py::error_already_set> interrupted;
  {
    py::gil_scoped_release nogil;
    GlobalWorkers().Submit(job);
    SpinFor([&] { return job->finished.load(); });
    std::unique_lock<std::mutex> l(job->mu);
    while (!job->done) {
      if (job->cv.wait_for(l, std::chrono::milliseconds(50), [&] { return job->done; })) break;
      l.unlock();
      if (!interrupted) {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) interrupted.emplace();  // fetches the raised exception
      }
      // Cancel again on every tick until the work ends: a cancel that arrives before the step
      // has started (still compiling, or Fit not yet in its loop) would otherwise be lost.
      if (interrupted) cancel();
      l.lock();
    }
  }
  if (interrupted) throw std::move(*interrupted);  // the work's own error (Cancelled) is dropped
  if (job->error) std::rethrow_exception(job->error);
}

void InitInterrupt() {
  g_main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

}  // namespace weft::python
