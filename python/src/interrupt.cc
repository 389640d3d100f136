// Running C++ work with the GIL released while Ctrl-C stays effective.
//
// Python runs signal handlers only on its main thread, between bytecodes or in PyErr_CheckSignals,
// so a long C++ call would otherwise hold Ctrl-C back until it ends. The work runs inline on the
// calling thread (no thread hand-off: a Session.run of a small graph costs microseconds, and a
// hand-off costs a scheduler wake-up, which under load is milliseconds). For its duration a
// SIGINT handler is installed that
//   1. chains to the previous handler (Python's, which records the signal for PyErr_CheckSignals),
//   2. wakes a watcher thread through an eventfd (async-signal-safe); the watcher calls the call's
//      `cancel` (Session::Cancel, Model::StopTraining) and repeats it every 50 ms until the call
//      ends, so a cancel that lands before the step has started is not lost.
// When the work returns, the previous handler is put back and PyErr_CheckSignals raises the
// KeyboardInterrupt; the work's own error (Cancelled) is dropped.
//
// Only the main thread does this, and only when Python handles SIGINT (the default); calls from
// other threads, nested calls (a Python callback inside fit calling Session.run) and processes
// where SIGINT is SIG_DFL / SIG_IGN simply run the work with the GIL released.
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <thread>

#include "common.h"

namespace weft::python {
namespace {

std::mutex g_mu;                                   // guards g_cancel
const std::function<void()>* g_cancel = nullptr;   // the running call's cancel (main thread's frame)
std::atomic<bool> g_interrupted{false};
int g_wake_fd = -1;
struct sigaction g_previous;  // the handler to chain to and restore (written before ours is installed)
int g_depth = 0;              // main-thread calls in progress (nesting)
unsigned long g_main_thread = 0;

extern "C" void OnSigint(int sig, siginfo_t* info, void* context) {
  g_interrupted.store(true);
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(g_wake_fd, &one, sizeof one);
  if ((g_previous.sa_flags & SA_SIGINFO) != 0) {
    if (g_previous.sa_sigaction != nullptr) g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(sig);
  }
}

void Watcher() {
  for (;;) {
    uint64_t v;
    if (read(g_wake_fd, &v, sizeof v) < 0) {
      if (errno == EINTR) continue;
      return;  // the eventfd is gone: nothing left to watch
    }
    for (;;) {
      {
        std::lock_guard<std::mutex> l(g_mu);
        if (g_cancel == nullptr || !g_interrupted.load()) break;
        (*g_cancel)();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

void StartWatcher() {
  g_wake_fd = eventfd(0, EFD_CLOEXEC);
  if (g_wake_fd < 0) throw Error(errors::Internal("eventfd failed (errno {}): Ctrl-C handling unavailable", errno));
  // The watcher never takes SIGINT itself (it would only interrupt its read).
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  std::thread(Watcher).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

bool PythonHandlesSigint(struct sigaction* current) {
  if (sigaction(SIGINT, nullptr, current) != 0) return false;
  if ((current->sa_flags & SA_SIGINFO) != 0) return current->sa_sigaction != nullptr;
  return current->sa_handler != SIG_DFL && current->sa_handler != SIG_IGN;
}

}  // namespace

void RunInterruptibleVoid(const std::function<void()>& work, const std::function<void()>& cancel) {
  struct sigaction current;
  if (PyThread_get_thread_ident() != g_main_thread || g_depth > 0 || !PythonHandlesSigint(&current)) {
    py::gil_scoped_release nogil;
    work();
    return;
  }
  static std::once_flag started;
  std::call_once(started, StartWatcher);
  {
    std::lock_guard<std::mutex> l(g_mu);
    g_cancel = &cancel;
    g_interrupted.store(false);
  }
  g_previous = current;
  struct sigaction ours = {};
  ours.sa_sigaction = OnSigint;
  ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
  sigemptyset(&ours.sa_mask);
  sigaction(SIGINT, &ours, nullptr);
  ++g_depth;
  std::exception_ptr error;
  {
    py::gil_scoped_release nogil;
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
  }
  --g_depth;
  sigaction(SIGINT, &g_previous, nullptr);
  {
    std::lock_guard<std::mutex> l(g_mu);
    g_cancel = nullptr;
  }
  if (g_interrupted.exchange(false) && PyErr_CheckSignals() != 0) {
    throw py::error_already_set();  // KeyboardInterrupt (or whatever the handler raised)
  }
  if (error) std::rethrow_exception(error);
}

void InitInterrupt() {
  g_main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

}  // namespace weft::python
