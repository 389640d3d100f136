// RAII wrappers over UCX's ucp layer: context, worker with its progress thread, endpoints. (weft
// accepts connections itself, over TCP: peer_connector.h.)
//
//   UcxContext ctx({.config = {{"TLS", "tcp,self"}}});          // UCX_* environment, then these overrides
//   UcxWorker worker(&ctx);                                      // starts the progress thread
//   std::unique_ptr<UcxEndpoint> ep;
//   ThrowIfError(worker.RunSync([&] {                            // ucp calls happen on the progress thread
//     ep = UcxEndpoint::ConnectToWorker(&worker, peer_worker_address, "worker:1", false, on_error);
//     return Status();
//   }, std::chrono::seconds(5)));
//
// Threading: the ucp worker is created single-threaded and every ucp call is made on the worker's
// progress thread. Other threads hand work over with Post() (fire and forget) or RunSync() (waits,
// with a timeout). A thread about to wait for a result may lend itself instead (DriveUntil): it
// becomes the progress thread until the result is there, while the progress thread parks. The
// progress thread spins adaptively: while work is outstanding (AddDemand: a Recv waiting for a
// peer, a send in flight) it keeps polling for up to `busy_spin` after the last activity; with
// nothing outstanding only for `spin`. Then it arms the worker (ucp_worker_arm) and
// sleeps in epoll on the worker's event fd, a wake-up eventfd and the next timer tick: an idle
// worker costs no CPU; other fds can wake it too (AddWakeFd: PeerConnector's sockets). Optionally
// a second ucp worker (cm(), see UcxWorkerOptions::cm_worker) is progressed less often.
// UcxEndpoint is used on the progress thread only.
//
// Every ucs_status_t becomes a weft Status carrying ucs_status_string (UcxStatus below).
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "distributed/cluster_spec.h"

namespace weft {

// OK for UCS_OK; otherwise "<what>: <ucs_status_string>" with a code chosen by the status
// (Unavailable for unreachable / reset / timed-out peers, DeadlineExceeded for UCS_ERR_TIMED_OUT,
// Cancelled for UCS_ERR_CANCELED, ResourceExhausted for no memory, Internal otherwise).
Status UcxStatus(ucs_status_t status, std::string_view what);

struct UcxContextOptions {
  // ucp config overrides applied after the UCX_* environment ({"TLS", "tcp,self"}, {"RNDV_THRESH", "32k"}).
  std::map<std::string, std::string> config;
  // Extra ucp features beyond TAG and WAKEUP (UCP_FEATURE_AM for a control plane, UCP_FEATURE_RMA ...).
  uint64_t extra_features = 0;
};

class UcxContext {
 public:
  explicit UcxContext(const UcxContextOptions& options = {});  // throws Error with UCX's reason
  ~UcxContext();
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;
  ucp_context_h get() const { return context_; }

 private:
  ucp_context_h context_ = nullptr;
};

struct UcxWorkerOptions {
  // How long the progress thread keeps polling after the last activity before it sleeps in epoll.
  // 0 sleeps at once (least CPU); tens of microseconds keep small-message latency near UCX's own.
  std::chrono::microseconds spin{50};
  // How long it keeps polling after the last activity while work is outstanding (AddDemand > 0):
  // small-message round trips then never pay an epoll wake-up; a Recv that waits longer (the peer
  // is computing) lets the thread sleep until UCX has an event. 0 treats outstanding work as idle.
  std::chrono::microseconds busy_spin{20000};
  // Past `spin`, yield the core on every idle round of that busy polling. Off by default: on a
  // loaded machine a yield can cost a whole time slice, far more than a small message's latency
  // (bench/README.md, "Why the UCX defaults are what they are"); on for oversubscribed hosts where
  // the peer we wait for may be queued behind us.
  bool yield_while_busy = false;
  // Tick hooks run at least this often (timeouts are checked there).
  std::chrono::milliseconds tick{20};
  // A second ucp worker on the same context for the connection manager (cm(): the listener and
  // the endpoints it makes), progressed by the same thread at most every `cm_poll` while it polls
  // (at once when an event wakes it from sleep). In UCX 1.13 those endpoints use the tcp
  // transport, whose progress is an epoll_wait system call: on the data worker it was paid on
  // every round, a large share of a small message's round trip over shared memory (bench/README.md).
  // Off (the default since weft accepts connections itself, peer_connector.h): one worker for all.
  bool cm_worker = false;
  std::chrono::microseconds cm_poll{200};
  // While a thread drives the worker (DriveUntil) the progress thread parks; it looks again after
  // this long even when nobody woke it (a lender that got its result does not wake it: the next
  // wait usually lends again at once; posted work and an idle hand-back do wake it).
  std::chrono::microseconds lend_park{500};
  // Off: DriveUntil never lends (waiting threads block and the progress thread wakes them).
  // Whole programs: WEFT_UCX_LEND=0/1 through ApplyUcxEnvironment (environment.h).
  bool lend = true;
  std::string name = "ucx";
};

class UcxWorker {
 public:
  explicit UcxWorker(UcxContext* context, const UcxWorkerOptions& options = {});  // context: not owned
  // Stops the progress thread after running what was posted. Owners must destroy their endpoints
  // and listeners (on the progress thread) before.
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  // The worker for the connection manager: listeners and endpoints made through it (see cm_worker).
  ucp_worker_h cm() const { return cm_worker_ != nullptr ? cm_worker_ : worker_; }
  // Runs `fn` on the progress thread, in posting order. Thread-safe. After Stop(), `fn` is dropped
  // and Post returns false.
  bool Post(std::function<void()> fn);
  // On the progress thread: runs `fn` at once, or, when called from inside ucp_worker_progress (a
  // UCX callback: UCX's transports must not be re-entered), right after that progress call returns,
  // before anything else (no queue, no wake-up). Elsewhere: Post.
  bool RunOrPost(std::function<void()> fn);
  // RunOrPost, and on another thread: runs `fn` right here when nobody drives the worker because
  // the progress thread is parked after a lend (DriveUntil; it looks again within lend_park), as
  // MPI's caller makes its own sends, instead of waking it; otherwise Post. `fn` must not block.
  bool RunHereOrPost(std::function<void()> fn);
  // Outstanding work that wants a quick answer (+1 when it starts, -1 when it ends; any thread):
  // while positive the progress thread spins up to busy_spin instead of spin.
  void AddDemand(int delta) { demand_.fetch_add(delta, std::memory_order_relaxed); }
  int demand() const { return demand_.load(std::memory_order_relaxed); }
  // Runs `fn` on the progress thread and returns its status (or DeadlineExceeded after `timeout`;
  // `fn` may still run later). Called on the progress thread it runs `fn` inline.
  Status RunSync(std::function<Status()> fn, std::chrono::milliseconds timeout);
  // Hooks run on the progress thread after every round of progress (`poll`) and on every tick
  // (`tick`). Add them before traffic starts; they live as long as the worker.
  void AddPollHook(std::function<void()> poll);
  void AddTickHook(std::function<void()> tick);
  // Wakes the sleeping progress thread when `fd` is readable (level-triggered), so that a poll
  // hook can serve it: PeerConnector's epoll set of TCP sockets. The fd must outlive the worker
  // or be removed (RemoveWakeFd) first. Any thread.
  void AddWakeFd(int fd);
  void RemoveWakeFd(int fd);
  // This worker's address (for UcxEndpoint::ConnectToWorker on a peer).
  const std::string& address() const { return address_; }
  // True on the thread that drives the worker now: the progress thread, or a thread inside DriveUntil.
  bool OnProgressThread() const { return driver_ == this; }
  // Progresses the worker until `done()` holds or `timeout` passes (progress thread only: for
  // closing endpoints and flushing). Returns whether done() held.
  bool ProgressUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  // Lends the calling thread to the worker until `ready()` holds: it becomes the progress thread
  // (OnProgressThread, posted work, hooks, UCX callbacks all run on it) while the progress thread
  // parks, so that a result the caller waits for ends the wait on the thread that made it, with no
  // thread woken in between (MPI's way: the caller progresses). It drives as long as the progress
  // thread would poll (spin / busy_spin after the last activity), then hands back and returns
  // ready(); the caller then blocks as usual. Returns false at once when another thread drives
  // (the progress thread is mid-round for at most one round) or on the progress thread itself.
  // Any thread but one inside a UCX callback; ready() must not block.
  bool DriveUntil(const std::function<bool()>& ready);
  // How many times a thread drove the worker through DriveUntil (for tests).
  int64_t num_lent() const { return num_lent_.load(std::memory_order_relaxed); }
  // The time, cheaply. On the thread that drives the worker (OnProgressThread: hooks, callbacks,
  // posted work): the time its round read after progress, which is behind the clock by that
  // round's work so far plus at most kIdleRoundsPerClock idle rounds; elsewhere the clock itself.
  // For throttles, deadlines and wait times that tolerate microseconds; not for measuring.
  std::chrono::steady_clock::time_point Now() const {
    return OnProgressThread() ? round_now_ : std::chrono::steady_clock::now();
  }
  // An idle round (nothing posted, progressed or due) reads the clock only every this many rounds:
  // a read costs ~60 ns on these VMs (the vdso's clock_gettime), more than the rest of an idle round
  // over shared memory, and four reads a round were two thirds of the polling loop's cycles
  // (bench/README.md, "The small-message path").
  static constexpr int kIdleRoundsPerClock = 16;
  void Stop();

 private:
  void Loop();
  // One round on the driving thread: posted work, progress of the worker(s), poll hooks, the tick
  // hooks when due; true when anything happened.
  bool Round();
  // How long the driver keeps polling after its last activity (spin or busy_spin, see AddDemand).
  std::chrono::microseconds SpinFor() const;
  // The progress thread while threads drive (lent_): sleeps until WakeParked or `lend_park`
  // passes; true when woken.
  bool Park();
  void WakeParked();
  void TakeBaton();
  bool TryTakeBaton();
  void GiveBaton();
  // One ucp_worker_progress of `worker` (the data worker by default), then the work RunOrPost
  // deferred from its callbacks; true when anything happened.
  bool Progress(ucp_worker_h worker = nullptr);
  // Arms the worker(s) for sleeping; false when events arrived meanwhile.
  bool Arm();
  void Wake();
  void Guarded(const std::function<void()>& fn);
  bool RunPosted();

  UcxContext* context_;
  UcxWorkerOptions options_;
  ucp_worker_h worker_ = nullptr;
  ucp_worker_h cm_worker_ = nullptr;
  std::string address_;
  int worker_fd_ = -1, cm_fd_ = -1, wake_fd_ = -1, epoll_fd_ = -1;
  std::mutex mu_;
  std::vector<std::function<void()>> posted_, batch_;  // batch_: progress thread, reused (no allocation per round)
  std::atomic<bool> has_posted_{false};              // posted_ is not empty (read without the lock)
  std::atomic<bool> sleeping_{false};                // the loop is in (or about to enter) epoll_wait
  bool stopping_ = false;
  std::atomic<bool> stopping_flag_{false};
  std::atomic<bool> thread_done_{false};  // the progress thread was joined
  std::atomic<int> demand_{0};
  bool in_progress_ = false;                              // progress thread: inside ucp_worker_progress
  std::vector<std::function<void()>> deferred_;
  std::vector<std::function<void()>> spare_deferred_;  // deferred_'s other buffer (no allocation per round)
  std::vector<std::function<void()>> poll_hooks_, tick_hooks_;
  std::thread thread_;
  // Driving: the thread that may call ucp holds baton_ (the progress thread for one round at a
  // time, a lender for its whole DriveUntil). lent_ is 1 while a thread lends itself; the
  // progress thread then parks (parked_, on the futex park_word_). Round state below belongs to
  // the baton holder.
  static thread_local const UcxWorker* driver_;
  std::atomic<int> baton_{0};
  std::atomic<int> lent_{0};
  std::atomic<bool> parked_{false};
  std::atomic<int> park_word_{0};  // futex word of Park / WakeParked
  std::atomic<int64_t> num_lent_{0};
  std::chrono::steady_clock::time_point next_tick_, next_cm_;
  std::chrono::steady_clock::time_point round_now_;  // Now() on the driving thread
  int idle_rounds_ = 0;                               // idle rounds since round_now_ was read
};

// An endpoint, with peer-failure handling (UCP_ERR_HANDLING_MODE_PEER) unless asked otherwise: when
// the peer dies or the connection breaks, the status is recorded and `on_error` runs once on the
// progress thread.
class UcxEndpoint {
 public:
  using ErrorCallback = std::function<void(const Status& status)>;
  // Connects to a worker address (ucp_worker_get_address). With `peer_error_handling` UCX uses only
  // transports that report peer failure (in UCX 1.13: tcp, cma, verbs); without it, shared memory
  // (posix, sysv) too, and failures must be noticed elsewhere (UcxTransport keeps a connection-manager
  // endpoint for that).
  static std::unique_ptr<UcxEndpoint> ConnectToWorker(UcxWorker* worker, const std::string& worker_address,
                                                      std::string peer_name, bool peer_error_handling,
                                                      ErrorCallback on_error);
  // Closes (flushing when healthy, forcing otherwise), progressing for at most ~1 s.
  ~UcxEndpoint();
  UcxEndpoint(const UcxEndpoint&) = delete;
  UcxEndpoint& operator=(const UcxEndpoint&) = delete;

  ucp_ep_h get() const { return ep_; }
  const std::string& peer_name() const { return peer_name_; }
  // OK while healthy; the failure otherwise.
  const Status& status() const { return status_; }
  bool failed() const { return !status_.ok(); }

 private:
  UcxEndpoint(UcxWorker* worker, std::string peer_name, ErrorCallback on_error)
      : worker_(worker), peer_name_(std::move(peer_name)), on_error_(std::move(on_error)) {}
  static void OnError(void* arg, ucp_ep_h ep, ucs_status_t status);
  UcxWorker* worker_;
  ucp_worker_h owner_ = nullptr;  // the ucp worker the endpoint was made on (data or cm)
  std::string peer_name_;
  ErrorCallback on_error_;
  ucp_ep_h ep_ = nullptr;
  Status status_;
};


}  // namespace weft
