#include "distributed/ucx/ucx.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <linux/futex.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <condition_variable>
#include <cstring>

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;

// The futex word of an atomic<int> (lock-free, the int's own storage).
int* FutexWord(std::atomic<int>* a) { return reinterpret_cast<int*>(a); }

}  // namespace

thread_local const UcxWorker* UcxWorker::driver_ = nullptr;

Status UcxStatus(ucs_status_t status, std::string_view what) {
  if (status == UCS_OK) return Status();
  const std::string msg = fmt::format("{}: {} (UCX status {})", what, ucs_status_string(status), int(status));
  switch (status) {
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_IO_ERROR:
      return Status(Code::kUnavailable, msg);
    case UCS_ERR_TIMED_OUT:
      return Status(Code::kDeadlineExceeded, msg);
    case UCS_ERR_CANCELED:
      return Status(Code::kCancelled, msg);
    case UCS_ERR_NO_MEMORY:
    case UCS_ERR_NO_RESOURCE:
    case UCS_ERR_EXCEEDS_LIMIT:
      return Status(Code::kResourceExhausted, msg);
    case UCS_ERR_MESSAGE_TRUNCATED:
      return Status(Code::kDataLoss, msg);
    case UCS_ERR_INVALID_PARAM:
    case UCS_ERR_INVALID_ADDR:
      return Status(Code::kInvalidArgument, msg);
    case UCS_ERR_BUSY:
    case UCS_ERR_ALREADY_EXISTS:
      return Status(Code::kAlreadyExists, msg);
    case UCS_ERR_UNSUPPORTED:
      return Status(Code::kUnimplemented, msg);
    default:
      return Status(Code::kInternal, msg);
  }
}

UcxContext::UcxContext(const UcxContextOptions& options) {
  ucp_config_t* config = nullptr;
  ThrowIfError(UcxStatus(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read"));
  for (const auto& [name, value] : options.config) {
    const ucs_status_t s = ucp_config_modify(config, name.c_str(), value.c_str());
    if (s != UCS_OK) {
      ucp_config_release(config);
      ThrowIfError(UcxStatus(s, fmt::format("UCX config {}={}", name, value)));
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP | options.extra_features;
  params.mt_workers_shared = 0;
  const ucs_status_t s = ucp_init(&params, config, &context_);
  ucp_config_release(config);
  ThrowIfError(UcxStatus(s, "ucp_init"));
}

UcxContext::~UcxContext() {
  if (context_ != nullptr) ucp_cleanup(context_);
}

UcxWorker::UcxWorker(UcxContext* context, const UcxWorkerOptions& options) : context_(context), options_(options) {
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;  // only the progress thread calls ucp
  ThrowIfError(UcxStatus(ucp_worker_create(context_->get(), &params, &worker_), "ucp_worker_create"));
  auto fail = [&](Status s) {
    if (wake_fd_ >= 0) close(wake_fd_);
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (cm_worker_ != nullptr) ucp_worker_destroy(cm_worker_);
    ucp_worker_destroy(worker_);
    throw Error(s);
  };
  if (options_.cm_worker) {
    ucs_status_t s = ucp_worker_create(context_->get(), &params, &cm_worker_);
    if (s != UCS_OK) {
      cm_worker_ = nullptr;
      fail(UcxStatus(s, "ucp_worker_create (connection manager)"));
    }
    s = ucp_worker_get_efd(cm_worker_, &cm_fd_);
    if (s != UCS_OK) fail(UcxStatus(s, "ucp_worker_get_efd (connection manager)"));
  }
  ucp_address_t* address = nullptr;
  size_t address_bytes = 0;
  ucs_status_t s = ucp_worker_get_address(worker_, &address, &address_bytes);
  if (s != UCS_OK) fail(UcxStatus(s, "ucp_worker_get_address"));
  address_.assign(reinterpret_cast<const char*>(address), address_bytes);
  ucp_worker_release_address(worker_, address);
  s = ucp_worker_get_efd(worker_, &worker_fd_);
  if (s != UCS_OK) fail(UcxStatus(s, "ucp_worker_get_efd"));
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (wake_fd_ < 0 || epoll_fd_ < 0) fail(errors::Internal("UcxWorker: eventfd/epoll: {}", std::strerror(errno)));
  for (int fd : {worker_fd_, wake_fd_, cm_fd_}) {
    if (fd < 0) continue;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      fail(errors::Internal("UcxWorker: epoll_ctl: {}", std::strerror(errno)));
    }
  }
  thread_ = std::thread([this] { Loop(); });
  // Wait until the loop runs.
  RunSync([] { return Status(); }, std::chrono::seconds(10));
}

UcxWorker::~UcxWorker() {
  Stop();
  close(wake_fd_);
  close(epoll_fd_);
  if (cm_worker_ != nullptr) ucp_worker_destroy(cm_worker_);
  ucp_worker_destroy(worker_);
}

void UcxWorker::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    stopping_flag_ = true;
  }
  Wake();
  WakeParked();
  if (thread_.joinable() && !OnProgressThread()) {
    thread_.join();
    thread_done_.store(true, std::memory_order_release);
  }
}

void UcxWorker::Wake() {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
}

bool UcxWorker::Post(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return false;
    posted_.push_back(std::move(fn));
    has_posted_.store(true, std::memory_order_seq_cst);
  }
  // A polling loop sees posted_ on its next round; only a sleeping (or about to sleep) one needs
  // the eventfd (a write and a spurious epoll round saved per Post while it polls). The loop sets
  // sleeping_ before it looks at has_posted_ a last time: one of the two sees the other's store.
  if (!OnProgressThread()) {
    if (sleeping_.load(std::memory_order_seq_cst)) Wake();
    // Parked for a lender that has left: nobody runs the work until the park times out. (While
    // one drives, it runs the work; it checks has_posted_ after clearing lent_, we check lent_
    // after setting has_posted_: one of the two sees the other.)
    if (parked_.load(std::memory_order_seq_cst) && lent_.load(std::memory_order_seq_cst) == 0) WakeParked();
  }
  return true;
}

bool UcxWorker::TryTakeBaton() {
  int free = 0;
  return baton_.compare_exchange_strong(free, 1, std::memory_order_acquire);
}

// A futex lock (0 free, 1 held, 2 held with waiters). The progress thread holds it for one round
// at a time (a few microseconds), so a waiter spins that long; past it the holder was probably
// descheduled (2 cores, more runnable threads) and the waiter sleeps rather than spin on.
void UcxWorker::TakeBaton() {
  if (TryTakeBaton()) return;  // the usual case, before the clock is read (every round takes it)
  const auto spin_until = Clock::now() + std::chrono::microseconds(20);
  for (int i = 0;; ++i) {
    if (TryTakeBaton()) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (i % 64 == 63 && Clock::now() >= spin_until) break;
  }
  while (baton_.exchange(2, std::memory_order_acquire) != 0) {
    syscall(SYS_futex, FutexWord(&baton_), FUTEX_WAIT_PRIVATE, 2, nullptr, nullptr, 0);
  }
}

void UcxWorker::GiveBaton() {
  if (baton_.exchange(0, std::memory_order_release) == 2) {
    syscall(SYS_futex, FutexWord(&baton_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
}

void UcxWorker::WakeParked() {
  park_word_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, FutexWord(&park_word_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

bool UcxWorker::Park() {
  const int word = park_word_.load(std::memory_order_seq_cst);
  parked_.store(true, std::memory_order_seq_cst);
  bool woken = true;
  // has_posted_ is looked at after parked_ is set, and Post looks at parked_ after setting
  // has_posted_: either we see its work or it wakes us.
  if (!stopping_flag_.load() && !has_posted_.load(std::memory_order_seq_cst)) {
    const auto park = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.lend_park).count();
    timespec ts{static_cast<time_t>(park / 1000000000), static_cast<long>(park % 1000000000)};
    // Returns at once when WakeParked ran since `word` was read; ETIMEDOUT when nobody woke us.
    const long rc = syscall(SYS_futex, FutexWord(&park_word_), FUTEX_WAIT_PRIVATE, word, &ts, nullptr, 0);
    woken = !(rc != 0 && errno == ETIMEDOUT);
  }
  parked_.store(false, std::memory_order_seq_cst);
  return woken;
}

std::chrono::microseconds UcxWorker::SpinFor() const {
  return demand_.load(std::memory_order_relaxed) > 0 ? std::max(options_.busy_spin, options_.spin) : options_.spin;
}

bool UcxWorker::DriveUntil(const std::function<bool()>& ready) {
  if (ready()) return true;
  if (!options_.lend || driver_ != nullptr || stopping_flag_.load() || thread_done_.load()) return false;
  int idle = 0;
  if (!lent_.compare_exchange_strong(idle, 1, std::memory_order_seq_cst)) return false;  // another thread drives
  // The progress thread gives the baton up at the end of its round (or before it sleeps) and
  // then parks, seeing lent_.
  TakeBaton();
  num_lent_.fetch_add(1, std::memory_order_relaxed);
  driver_ = this;
  round_now_ = Clock::now();
  auto last_activity = round_now_;
  bool handed_back_idle = false;
  while (!ready()) {
    if (stopping_flag_.load(std::memory_order_relaxed)) break;
    if (Round()) {
      last_activity = round_now_;
      continue;
    }
    if (round_now_ - last_activity >= SpinFor()) {
      handed_back_idle = true;  // the progress thread polls (or sleeps) from here
      break;
    }
  }
  driver_ = nullptr;
  GiveBaton();
  lent_.store(0, std::memory_order_seq_cst);
  // Leaving with the result, the progress thread stays parked until lend_park passes: the caller
  // usually lends again at once (the next step), and what is still in flight (sends the peer
  // has not pulled yet) can wait that long. Waking it at once for those made the woken thread
  // and the next lender fight over the baton and the cores (bench/README.md has what it cost).
  // Posted work, an idle hand-back and stopping do wake it.
  if (handed_back_idle || has_posted_.load(std::memory_order_seq_cst) || stopping_flag_.load()) {
    WakeParked();
  }
  return ready();
}

bool UcxWorker::RunOrPost(std::function<void()> fn) {
  // After Stop() the caller that makes ucp calls (RunSync runs them on its own thread) is the progress thread.
  if (!OnProgressThread() && !thread_done_.load(std::memory_order_acquire)) return Post(std::move(fn));
  if (in_progress_) {
    deferred_.push_back(std::move(fn));
  } else {
    Guarded(fn);
  }
  return true;
}

bool UcxWorker::RunHereOrPost(std::function<void()> fn) {
  if (OnProgressThread() || driver_ != nullptr || !parked_.load(std::memory_order_seq_cst) ||
      lent_.load(std::memory_order_seq_cst) != 0 || !TryTakeBaton()) {
    return RunOrPost(std::move(fn));
  }
  if (lent_.load(std::memory_order_seq_cst) != 0 || stopping_flag_.load()) {  // a lender came meanwhile
    GiveBaton();
    return RunOrPost(std::move(fn));
  }
  driver_ = this;
  round_now_ = Clock::now();  // (the parked progress thread's last round may be lend_park old)
  Guarded(fn);
  RunPosted();
  driver_ = nullptr;
  GiveBaton();
  return true;
}

bool UcxWorker::Progress(ucp_worker_h worker) {
  const bool outer = in_progress_;  // ProgressUntil from inside a UCX callback: the outer call runs the deferred work
  in_progress_ = true;
  bool any = ucp_worker_progress(worker != nullptr ? worker : worker_) != 0;
  in_progress_ = outer;
  while (!outer && !deferred_.empty()) {
    any = true;
    // Two buffers that keep their capacity: deferred_ takes the spare's, the batch becomes the next
    // spare. (A deferred function that progresses again takes the spare, then empty: still correct.)
    std::vector<std::function<void()>> batch = std::move(spare_deferred_);
    spare_deferred_.clear();
    batch.swap(deferred_);
    for (auto& fn : batch) Guarded(fn);
    batch.clear();
    if (batch.capacity() > spare_deferred_.capacity()) spare_deferred_ = std::move(batch);
  }
  return any;
}

Status UcxWorker::RunSync(std::function<Status()> fn, std::chrono::milliseconds timeout) {
  if (OnProgressThread()) return fn();
  {
    std::lock_guard<std::mutex> l(mu_);
    // After Stop() the thread is gone and nothing else calls ucp: run here.
    if (stopping_ && !thread_.joinable()) return fn();
  }
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Status status;
  };
  auto shared = std::make_shared<Shared>();
  const bool posted = Post([shared, fn = std::move(fn)] {
    Status s;
    try {
      s = fn();
    } catch (const Error& e) {
      s = e.status();
    } catch (const std::exception& e) {
      s = errors::Internal("{}", e.what());
    }
    std::lock_guard<std::mutex> l(shared->mu);
    shared->status = s;
    shared->done = true;
    shared->cv.notify_all();
  });
  if (!posted) return errors::Cancelled("{}: the UCX progress thread is stopping", options_.name);
  std::unique_lock<std::mutex> l(shared->mu);
  if (!shared->cv.wait_for(l, timeout, [&] { return shared->done; })) {
    return errors::DeadlineExceeded("{}: work on the UCX progress thread did not finish within {} ms", options_.name,
                                    timeout.count());
  }
  return shared->status;
}

void UcxWorker::AddPollHook(std::function<void()> poll) {
  RunSync([&] {
    poll_hooks_.push_back(std::move(poll));
    return Status();
  }, std::chrono::seconds(10));
}

void UcxWorker::AddTickHook(std::function<void()> tick) {
  RunSync([&] {
    tick_hooks_.push_back(std::move(tick));
    return Status();
  }, std::chrono::seconds(10));
}

void UcxWorker::AddWakeFd(int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw Error(errors::Internal("{}: epoll_ctl(ADD, {}): {}", options_.name, fd, std::strerror(errno)));
  }
}

void UcxWorker::RemoveWakeFd(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

// Work on the progress thread must not take the process down: an exception that escapes it is
// reported on stderr (there is no caller to give it to) and the loop goes on.
void UcxWorker::Guarded(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft %s: error on the UCX progress thread: %s\n", options_.name.c_str(), e.what());
  }
}

bool UcxWorker::RunPosted() {
  if (!has_posted_.load(std::memory_order_acquire)) return false;
  {
    std::lock_guard<std::mutex> l(mu_);
    batch_.swap(posted_);
    has_posted_.store(false, std::memory_order_relaxed);
  }
  for (auto& fn : batch_) Guarded(fn);
  const bool ran = !batch_.empty();
  batch_.clear();
  return ran;
}

bool UcxWorker::ProgressUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    bool any = Progress();
    if (cm_worker_ != nullptr) any = Progress(cm_worker_) || any;
    if (!any) std::this_thread::yield();
  }
  return true;
}

bool UcxWorker::Arm() {
  if (ucp_worker_arm(worker_) == UCS_ERR_BUSY) return false;
  return cm_worker_ == nullptr || ucp_worker_arm(cm_worker_) != UCS_ERR_BUSY;
}

bool UcxWorker::Round() {
  bool active = RunPosted();
  while (Progress()) active = true;
  // One clock read per active round, and one per kIdleRoundsPerClock idle ones: the connection
  // manager's and the ticks' schedules and the poll hooks (through Now()) share it.
  if (active || ++idle_rounds_ >= kIdleRoundsPerClock) {
    round_now_ = Clock::now();
    idle_rounds_ = 0;
  }
  const auto now = round_now_;
  if (cm_worker_ != nullptr && now >= next_cm_) {
    while (Progress(cm_worker_)) active = true;
    next_cm_ = now + options_.cm_poll;
  }
  for (auto& hook : poll_hooks_) Guarded(hook);
  if (now >= next_tick_) {
    for (auto& hook : tick_hooks_) Guarded(hook);
    next_tick_ = now + options_.tick;
  }
  return active;
}

void UcxWorker::Loop() {
  driver_ = this;
  round_now_ = Clock::now();
  auto last_activity = round_now_;
  next_tick_ = round_now_ + options_.tick;
  next_cm_ = Clock::now();
  // While threads keep lending, park again after each timed-out park (after one round for
  // whatever is left in flight): the next lend usually comes before the next timeout.
  int64_t lends_seen = -1;
  bool stale = false;  // round_now_ was not read since this thread slept or parked
  for (;;) {
    if (lent_.load(std::memory_order_seq_cst) != 0 ||
        (lends_seen >= 0 && lends_seen != num_lent_.load(std::memory_order_relaxed))) {
      if (lent_.load(std::memory_order_seq_cst) == 0 && TryTakeBaton()) {
        round_now_ = Clock::now();
        if (lent_.load(std::memory_order_seq_cst) == 0) Round();
        GiveBaton();
      }
      lends_seen = num_lent_.load(std::memory_order_relaxed);
      const bool woken = Park();
      if (woken || stopping_flag_.load()) lends_seen = -1;  // woken: back to duty
      last_activity = Clock::now();
      stale = true;  // (round_now_ is the baton holder's: set once we hold it)
      continue;
    }
    lends_seen = -1;
    TakeBaton();  // (blocks while RunHereOrPost or a lender that has not seen us yet holds it)
    if (lent_.load(std::memory_order_seq_cst) != 0) {  // a lender came meanwhile: let it have the baton
      GiveBaton();
      continue;
    }
    if (stale) {
      round_now_ = Clock::now();
      stale = false;
    }
    const bool active = Round();
    const auto now = round_now_;
    if (stopping_flag_.load(std::memory_order_relaxed) || has_posted_.load(std::memory_order_acquire)) {
      std::unique_lock<std::mutex> l(mu_);
      if (stopping_ && posted_.empty()) {
        l.unlock();
        GiveBaton();
        break;
      }
      if (!posted_.empty()) {
        l.unlock();
        GiveBaton();
        continue;
      }
    }
    if (active) {
      last_activity = now;
      GiveBaton();
      continue;
    }
    if (now - last_activity < SpinFor()) {
      GiveBaton();
      // Optionally, past the idle spin, give the core to whoever else is runnable while polling.
      if (options_.yield_while_busy && now - last_activity >= options_.spin) std::this_thread::yield();
      continue;
    }
    // Sleep until UCX has an event, someone posts work, or the next tick.
    sleeping_.store(true, std::memory_order_seq_cst);
    if (has_posted_.load(std::memory_order_seq_cst) || stopping_flag_.load()) {
      sleeping_.store(false, std::memory_order_relaxed);
      GiveBaton();
      continue;
    }
    const bool armed = Arm();  // a ucp call: still holding the baton
    // Whatever wakes us (or arrived meanwhile) may be the connection manager's: poll it next round.
    next_cm_ = now;
    const int wait_ms = static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(next_tick_ - now).count()) + 1);
    GiveBaton();
    if (!armed) {
      sleeping_.store(false, std::memory_order_relaxed);
      continue;
    }
    // (A lender may drive while we sleep: its progress drains what woke us; we then park.)
    epoll_event events[4];
    const int n = epoll_wait(epoll_fd_, events, 4, wait_ms);
    for (int i = 0; i < n; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t v;
        [[maybe_unused]] ssize_t r = read(wake_fd_, &v, sizeof(v));
      }
    }
    sleeping_.store(false, std::memory_order_relaxed);
    last_activity = Clock::now();  // spin again briefly after waking: more traffic usually follows
    stale = true;
  }
  driver_ = nullptr;
}

std::unique_ptr<UcxEndpoint> UcxEndpoint::ConnectToWorker(UcxWorker* worker, const std::string& worker_address,
                                                          std::string peer_name, bool peer_error_handling,
                                                          ErrorCallback on_error) {
  std::unique_ptr<UcxEndpoint> ep(new UcxEndpoint(worker, std::move(peer_name), std::move(on_error)));
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.address = reinterpret_cast<const ucp_address_t*>(worker_address.data());
  params.err_mode = peer_error_handling ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
  params.err_handler.cb = &UcxEndpoint::OnError;
  params.err_handler.arg = ep.get();
  ep->owner_ = worker->get();
  ThrowIfError(UcxStatus(ucp_ep_create(ep->owner_, &params, &ep->ep_),
                         fmt::format("connecting to the worker of {}", ep->peer_name_)));
  return ep;
}

void UcxEndpoint::OnError(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* self = static_cast<UcxEndpoint*>(arg);
  if (self->failed()) return;
  self->status_ = UcxStatus(status, fmt::format("connection to {}", self->peer_name_));
  self->status_ = Status(Code::kUnavailable, self->status_.message());  // a broken peer is Unavailable
  if (self->on_error_) self->on_error_(self->status_);
}

UcxEndpoint::~UcxEndpoint() {
  if (ep_ == nullptr) return;
  on_error_ = nullptr;  // the owner is going away: errors during close are not news
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = failed() ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t req = ucp_ep_close_nbx(ep_, &param);
  if (req != nullptr && !UCS_PTR_IS_ERR(req)) {
    const bool done = worker_->ProgressUntil([&] { return ucp_request_check_status(req) != UCS_INPROGRESS; },
                                             std::chrono::milliseconds(1000));
    if (!done) ucp_request_cancel(owner_, req);
    ucp_request_free(req);
  }
}


}  // namespace weft
