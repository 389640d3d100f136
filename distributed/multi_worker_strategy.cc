#include "distributed/multi_worker_strategy.h"

#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "core/gpu.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx/staging.h"

namespace weft {

// Where this process sits among the workers, worked out before the base class is built.
struct MultiWorkerMirroredStrategy::Layout {
  ClusterConfig config;
  int worker_index = 0;
  std::vector<std::string> devices, group;

  static Layout Make(const MultiWorkerOptions& o) {
    Layout l;
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
      worker_index_(l.worker_index),
      callbacks_(std::make_unique<ThreadPool>(2, "weft-coll")) {
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
  mgr_ = std::make_unique<UcxRendezvousMgr>(
      t, UcxRendezvousOptions{.recv_timeout = options_.collective_timeout, .callback_pool = callbacks_.get()});
  Status s = mgr_->ConnectAll();
  if (!s.ok()) {
    throw Error(s.WithContext(fmt::format("MultiWorkerMirroredStrategy: task {} connecting to the other workers",
                                          config_.task->ToString())));
  }
}

MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() {
  (void)Shutdown();
  mgr_.reset();  // the transport's threads stop before the callback pool goes
  callbacks_.reset();
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

void MultiWorkerMirroredStrategy::ConfigureSession(SessionOptions* o) const {
  o->job = config_.task->job;
  o->task = config_.task->index;
  UcxRendezvousMgr* mgr = mgr_.get();
  o->rendezvous_factory = [mgr](uint64_t step) { return mgr->Find(step); };
  o->rendezvous_cleanup = [this, mgr](uint64_t step) {
    if (!mgr->Cleanup(step).ok() && step < (uint64_t{1} << 62)) collective_step_failed_ = true;
  };
  o->next_step_id = [this](bool collective) {
    if (collective) return ++collective_steps_;
    return (uint64_t{1} << 62) + ++local_steps_;
  };
}

}  // namespace weft
