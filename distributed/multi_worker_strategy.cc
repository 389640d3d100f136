#include "distributed/multi_worker_strategy.h"

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>

#include <unistd.h>

#include "core/gpu.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx/staging.h"
#include "train/zero.h"

namespace weft {

// Where this process sits among the workers, worked out before the base class is built.
struct MultiWorkerMirroredStrategy::Layout {
  ClusterConfig config;
  int worker_index = 0;
  std::vector<std::string> devices, group;

  static Layout Make(const MultiWorkerOptions& o) {
    Layout l;
    train::CheckShardStage(o.shard_optimizer_state, "MultiWorkerMirroredStrategy");  // before connecting
    l.config = o.cluster ? *o.cluster : ResolveCluster();
    const TaskId& me = l.config.RequireTask();
    for (const auto& [job, addresses] : l.config.cluster.jobs()) {
      WEFT_REQUIRE(job == "chief" || job == "worker",
                   "MultiWorkerMirroredStrategy: the cluster has a '{}' job; only chief and worker tasks take part "
                   "(ParameterServerStrategy uses ps tasks)", job);
    }
    WEFT_REQUIRE(me.job == "chief" || me.job == "worker", "MultiWorkerMirroredStrategy: this task is {}, not a worker",
                 me.ToString());
    WEFT_REQUIRE(o.devices_per_worker >= 1, "MultiWorkerMirroredStrategy: devices_per_worker must be >= 1, got {}",
                 o.devices_per_worker);
    int w = 0;
    for (const TaskId& t : l.config.cluster.Tasks()) {  // chief first, then the workers
      if (t == me) l.worker_index = w;
      for (int d = 0; d < o.devices_per_worker; ++d) {
        l.group.push_back(fmt::format("{}/device:CPU:{}", t.DeviceName(), d));
        if (t == me) l.devices.push_back(l.group.back());
      }
      ++w;
    }
    return l;
  }
};

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(MultiWorkerOptions options)
    : MultiWorkerMirroredStrategy(options, Layout::Make(options)) {}

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(MultiWorkerOptions options, Layout l)
    : Strategy(l.devices, l.group, l.worker_index * options.devices_per_worker),
      options_(std::move(options)),
      config_(std::move(l.config)),
      task_name_(config_.task->ToString()),
      worker_index_(l.worker_index),
      callbacks_(std::make_unique<ThreadPool>(2, "weft-coll")) {
  set_shard_optimizer_state(options_.shard_optimizer_state);
  UcxTransportOptions t;
  t.cluster = config_.cluster;
  t.task = *config_.task;
  t.connect_timeout = options_.connect_timeout;
  t.device_copier = SelectDeviceCopier(OpenGpus());  // GPU tensors staged when UCX lacks CUDA
  ApplyUcxEnvironment(&t);  // WEFT_UCX_* overrides: whole programs A/B'd without recompiling
  // The secret comes from where the cluster does (the environment a launcher set), unless given.
  const ClusterSecret secret = options_.secret ? *options_.secret : ResolveClusterSecret();
  t.cluster_secret = secret.secret;
  t.insecure = secret.insecure;
  auto beside_reports = [&](const std::string& name) {
    return options_.hang_report_dir.empty() ? name : options_.hang_report_dir + "/" + name;
  };
  if (options_.trace_events > 0) {
    trace_ring_ = std::make_shared<TraceRing>(TraceRingOptions{
        .capacity = options_.trace_events,
        .process = config_.task->ToString(),
        .dump_path = beside_reports(fmt::format("weft-trace-{}-{}.json", config_.task->job, config_.task->index))});
    if (options_.trace_dump_on_fatal_signal) trace_ring_->InstallFatalSignalDump();
  }
  waits_ = std::make_unique<WaitDescriber>(config_.cluster);
  reporter_ = std::make_unique<HangReporter>(
      HangReportOptions{.path = beside_reports(fmt::format("weft-hang-{}-{}.txt", config_.task->job, config_.task->index)),
                        .on_signal = options_.hang_report_on_signal},
      [this](std::string_view why, ReportText* out) {
        DescribeWaits(why, out);
        if (trace_ring_) AppendTraceDump(*trace_ring_, why, out);  // what led up to the wait
      });
  mgr_ = std::make_unique<UcxRendezvousMgr>(
      t, UcxRendezvousOptions{.recv_timeout = options_.collective_timeout,
                              .callback_pool = callbacks_.get(),
                              .on_stall = [this](uint64_t step, const Status& why) {
                                if (step < (uint64_t{1} << 62)) ReportStall(*reporter_, step, why);
                              }});
  Status s = mgr_->ConnectAll();
  if (!s.ok()) {
    throw Error(s.WithContext(fmt::format("MultiWorkerMirroredStrategy: task {} connecting to the other workers",
                                          config_.task->ToString())));
  }
  if (trace_ring_) MeasureClockOffset();
}

void MultiWorkerMirroredStrategy::MeasureClockOffset() {
  // The fingerprint check of step 0, which never runs (CheckCollectives): a step id of its own.
  constexpr uint64_t kClockStep = uint64_t{2} << 62;
  constexpr int kRounds = 8;
  const std::vector<TaskId> tasks = config_.cluster.Tasks();
  const std::string chief = tasks[0].ToString();
  if (tasks.size() < 2) {
    trace_ring_->SetClockOffset(chief, 0, 0);
    return;
  }
  auto device = [&](size_t w) { return tasks[w].DeviceName() + "/device:CPU:0"; };
  auto key = [&](size_t from, size_t to, int round) {
    return fmt::format("{};0;{};_clock/{};0:0", device(from), device(to), round);
  };
  std::shared_ptr<UcxRendezvous> r = mgr_->Find(kClockStep);
  const auto deadline = std::chrono::steady_clock::now() + options_.connect_timeout;
  // One Recv of an int64 clock reading, waited for up to the deadline.
  auto recv = [&](const std::string& k) {
    struct Wait {
      std::mutex mu;
      bool done = false;
      Status status;
      int64_t value = 0;
    };
    auto wait = std::make_shared<Wait>();
    r->RecvAsync(k, {}, [wait](const Status& st, const Tensor& t, bool) {
      std::lock_guard<std::mutex> l(wait->mu);
      wait->status = st;
      if (st.ok()) wait->value = t.scalar<int64_t>()();
      wait->done = true;
    });
    auto done = [&] {
      std::lock_guard<std::mutex> l(wait->mu);
      return wait->done;
    };
    r->DriveUntil([&] { return done() || std::chrono::steady_clock::now() >= deadline; });
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(50));
    std::lock_guard<std::mutex> l(wait->mu);
    if (!wait->done) {
      r->StartAbort(errors::DeadlineExceeded("clock exchange"));
      throw Error(errors::DeadlineExceeded("MultiWorkerMirroredStrategy: task {}: no clock reading from '{}' within {} ms",
                                           config_.task->ToString(), k, options_.connect_timeout.count()));
    }
    ThrowIfError(wait->status);
    return wait->value;
  };
  const size_t me = static_cast<size_t>(worker_index_);
  int64_t best_rtt = -1, best_offset = 0;
  try {
    for (int round = 0; round < kRounds; ++round) {
      if (me == 0) {  // the chief answers every worker's reading with its own
        for (size_t w = 1; w < tasks.size(); ++w) {
          (void)recv(key(w, 0, round));
          ThrowIfError(r->Send(key(0, w, round), {}, Tensor::Scalar<int64_t>(TraceRing::NowNanos()), false));
        }
        continue;
      }
      const int64_t t0 = TraceRing::NowNanos();
      ThrowIfError(r->Send(key(me, 0, round), {}, Tensor::Scalar<int64_t>(t0), false));
      const int64_t chief_ns = recv(key(0, me, round));
      const int64_t t2 = TraceRing::NowNanos();
      if (best_rtt < 0 || t2 - t0 < best_rtt) {
        best_rtt = t2 - t0;
        best_offset = chief_ns - (t0 + t2) / 2;  // the chief read its clock halfway, give or take rtt/2
      }
    }
  } catch (const Error& e) {
    r.reset();
    (void)mgr_->Cleanup(kClockStep);
    throw Error(e.status().WithContext(
        fmt::format("MultiWorkerMirroredStrategy: task {} measuring its clock against {}", config_.task->ToString(), chief)));
  }
  r.reset();
  (void)mgr_->Cleanup(kClockStep);
  trace_ring_->SetClockOffset(chief, me == 0 ? 0 : best_offset, me == 0 ? 0 : best_rtt);
}

std::string MultiWorkerMirroredStrategy::DumpTrace(const std::string& path, const std::string& why) const {
  if (!trace_ring_) {
    throw Error(errors::FailedPrecondition("MultiWorkerMirroredStrategy: task {} keeps no trace (trace_events is 0)",
                                           config_.task->ToString()));
  }
  const std::string where = path.empty() ? trace_ring_->dump_path() : path;
  trace_ring_->Dump(where, why);
  return where;
}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  (void)Shutdown();
  mgr_.reset();  // the transport's threads stop before the callback pool goes
  callbacks_.reset();
  reporter_.reset();  // after mgr_: no stall can be reported any more
}

std::string MultiWorkerMirroredStrategy::DescribeWaits(std::string_view why) const {
  ReportText text(256 * 1024);
  DescribeWaits(why, &text);
  return std::string(text.view());
}

void MultiWorkerMirroredStrategy::DescribeWaits(std::string_view why, ReportText* out) const {
  // Allocates nothing (HangReporter's contract): the task's name is made at construction, the
  // Recvs are listed into waits_'s reserved space, the running nodes visited in place.
  std::lock_guard<std::mutex> describing(describe_mu_);
  out->Append("=== weft hang report: {} (pid {}) ===\nwhy: {}\nlast completed collective step: {}\n", task_name_,
              getpid(), why, last_completed_.load());
  // Collective steps only: the leave handshake, fingerprints and local steps are 2^62 and up.
  size_t n = mgr_ ? waits_->AppendWaiting(*mgr_, uint64_t{1} << 62, out) : 0;
  {
    std::lock_guard<std::mutex> l(sessions_->mu);
    for (const Session* s : sessions_->alive) {
      const bool listed = s->ForEachRunning([out](uint64_t step, const Node& node, std::string_view device) {
        out->Append("running: step {}: {} '{}' on {}\n", step, node.op(), node.name(), device);
      });
      if (!listed) out->Append("running: (a Session was busy: its running nodes are not listed)\n");
    }
  }
  if (n == 0) out->Append("no Recv or collective of a collective step is waiting\n");
  waits_->AppendWaitsFor(out);
}

Status MultiWorkerMirroredStrategy::Shutdown() {
  if (shut_down_ || !mgr_) return Status();
  shut_down_ = true;
  // One step id no collective or local step uses; every worker sends "bye" from its CPU:0 to the
  // others' and waits for theirs.
  constexpr uint64_t kLeaveStep = uint64_t{3} << 62;
  std::vector<std::string> workers;
  for (const TaskId& t : config_.cluster.Tasks()) workers.push_back(t.DeviceName() + "/device:CPU:0");
  const std::string me = config_.task->DeviceName() + "/device:CPU:0";
  std::shared_ptr<UcxRendezvous> r = mgr_->Find(kLeaveStep);
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    size_t pending = 0;
    Status status;
  };
  auto wait = std::make_shared<Wait>();
  for (const std::string& peer : workers) {
    if (peer == me) continue;
    (void)r->Send(fmt::format("{};0;{};_leave;0:0", me, peer), {}, Tensor::Scalar<int32_t>(worker_index_), false);
    {
      std::lock_guard<std::mutex> l(wait->mu);
      wait->pending++;
    }
    r->RecvAsync(fmt::format("{};0;{};_leave;0:0", peer, me), {}, [wait](const Status& s, const Tensor&, bool) {
      std::lock_guard<std::mutex> l(wait->mu);
      // A peer whose connection ends here has left (after our "bye", which it may not answer).
      if (!s.ok() && s.code() != Code::kUnavailable && wait->status.ok()) wait->status = s;
      if (--wait->pending == 0) wait->cv.notify_all();
    });
  }
  Status result;
  const auto patience = collective_step_failed_ ? std::chrono::milliseconds(0) : options_.shutdown_timeout;
  {
    std::unique_lock<std::mutex> l(wait->mu);
    if (patience.count() == 0) {
      result = wait->pending == 0 ? wait->status : Status();  // nobody waited for: see the header
    } else if (!wait->cv.wait_for(l, patience, [&] { return wait->pending == 0; })) {
      result = errors::DeadlineExceeded("MultiWorkerMirroredStrategy: task {}: {} worker(s) did not leave within {} ms",
                                        config_.task->ToString(), wait->pending, options_.shutdown_timeout.count());
    } else {
      result = wait->status;
    }
  }
  r.reset();
  mgr_->Cleanup(kLeaveStep);
  // Our "bye" itself must get out before the process may end; after a failed step nobody waits
  // for it (and what else is in flight, a stopped peer never takes: UcxRendezvousMgr's destructor
  // still gives it its bounded drain).
  if (!collective_step_failed_) mgr_->transport().WaitForSends(std::chrono::seconds(2));
  return result;
}

Status MultiWorkerMirroredStrategy::CheckCollectives(uint64_t step_id,
                                                     const std::vector<CollectiveSignature>& mine) const {
  // The exchange's own step id: no collective step (from 1), local step (from 2^62) or the leave
  // handshake (3 * 2^62) uses it, and every worker derives the same one from the step it checks.
  const uint64_t check_step = (uint64_t{2} << 62) + step_id;
  const std::vector<TaskId> tasks = config_.cluster.Tasks();
  auto name = [&](size_t w) { return tasks[w].ToString(); };  // "worker:1", "chief:0"
  auto device = [&](size_t w) { return tasks[w].DeviceName() + "/device:CPU:0"; };
  const size_t me = static_cast<size_t>(worker_index_);
  const std::string bytes = EncodeSignatures(mine);
  Tensor wire(DType::kUInt8, TensorShape({static_cast<int64_t>(bytes.size())}));
  if (!bytes.empty()) std::memcpy(wire.raw_data(), bytes.data(), bytes.size());
  std::shared_ptr<UcxRendezvous> r = mgr_->Find(check_step);
  struct Wait {
    std::mutex mu;
    std::condition_variable cv;
    size_t pending = 0;
    std::map<size_t, std::string> received;  // by worker
    Status status;
  };
  auto wait = std::make_shared<Wait>();
  Status result;
  for (size_t w = 0; w < tasks.size() && result.ok(); ++w) {
    if (w == me) continue;
    result = r->Send(fmt::format("{};0;{};_fingerprint;0:0", device(me), device(w)), {}, wire, false);
    {
      std::lock_guard<std::mutex> l(wait->mu);
      wait->pending++;
    }
    r->RecvAsync(fmt::format("{};0;{};_fingerprint;0:0", device(w), device(me)), {},
                 [wait, w](const Status& s, const Tensor& t, bool) {
                   std::lock_guard<std::mutex> l(wait->mu);
                   if (!s.ok() && wait->status.ok()) wait->status = s;
                   if (s.ok()) wait->received[w] = std::string(static_cast<const char*>(t.raw_data()), t.bytes());
                   if (--wait->pending == 0) wait->cv.notify_all();
                 });
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.collective_timeout;
  auto done = [&] {
    std::lock_guard<std::mutex> l(wait->mu);
    return wait->pending == 0;
  };
  r->DriveUntil([&] { return done() || std::chrono::steady_clock::now() >= deadline; });
  {
    std::unique_lock<std::mutex> l(wait->mu);
    if (!wait->cv.wait_until(l, deadline, [&] { return wait->pending == 0; })) {
      std::string missing;
      for (size_t w = 0; w < tasks.size(); ++w) {
        if (w != me && wait->received.count(w) == 0) missing += (missing.empty() ? "" : ", ") + name(w);
      }
      if (result.ok()) {
        result = errors::DeadlineExceeded(
            "{} (step {}): no collective fingerprint from {} within {} ms: that worker is not running this step "
            "(stopped, stuck in an earlier step, or running another program)",
            name(me), step_id, missing, options_.collective_timeout.count());
      }
    } else if (result.ok()) {
      result = wait->status;
    }
  }
  // Compared with the lower-ranked side as the reference, so both workers word it alike.
  std::map<size_t, std::string> received;
  {
    std::lock_guard<std::mutex> l(wait->mu);
    received = wait->received;
  }
  for (const auto& [w, theirs_bytes] : received) {
    if (!result.ok()) break;
    try {
      const std::vector<CollectiveSignature> theirs = DecodeSignatures(theirs_bytes, name(w));
      result = w < me ? CompareSignatures(theirs, name(w), mine, name(me)) : CompareSignatures(mine, name(me), theirs, name(w));
    } catch (const Error& e) {
      result = e.status();
    }
  }
  if (!result.ok()) r->StartAbort(result);  // a Recv still pending ends with it
  r.reset();
  (void)mgr_->Cleanup(check_step);
  if (!result.ok()) {
    collective_step_failed_ = true;  // nobody waits for this worker's data (see Shutdown)
    return result.WithContext(fmt::format("MultiWorkerMirroredStrategy: checking step {}'s collectives", step_id));
  }
  return result;
}

void MultiWorkerMirroredStrategy::ConfigureSession(SessionOptions* o) const {
  o->job = config_.task->job;
  o->task = config_.task->index;
  UcxRendezvousMgr* mgr = mgr_.get();
  o->rendezvous_factory = [mgr](uint64_t step) { return mgr->Find(step); };
  o->rendezvous_cleanup = [this, mgr](uint64_t step) {
    const bool ok = mgr->Cleanup(step).ok();
    if (step >= (uint64_t{1} << 62)) return;
    if (!ok) collective_step_failed_ = true;
    if (ok && step > last_completed_.load()) last_completed_ = step;
  };
  o->lifetime_hook = [sessions = sessions_](const Session* s, bool alive) {
    std::lock_guard<std::mutex> l(sessions->mu);
    if (alive) {
      sessions->alive.insert(s);
    } else {
      sessions->alive.erase(s);
    }
  };
  o->trace_ring = trace_ring_;
  o->check_collectives = [this](uint64_t step, const std::vector<CollectiveSignature>& mine) {
    return CheckCollectives(step, mine);
  };
  o->next_step_id = [this](bool collective) {
    if (collective) return ++collective_steps_;
    return (uint64_t{1} << 62) + ++local_steps_;
  };
}

}  // namespace weft
