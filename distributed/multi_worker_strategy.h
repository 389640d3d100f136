// MultiWorkerMirroredStrategy: synchronous data parallelism over several processes (workers),
// each running the same program, as tf.distribute.MultiWorkerMirroredStrategy.
//
//   // every worker, with TF_CONFIG set (weft-zoo launch sets it) or under mpirun / srun:
//   MultiWorkerMirroredStrategy strategy;            // reads the cluster, connects to the others
//   std::unique_ptr<Model> model;
//   {
//     auto scope = strategy.scope();
//     model = std::make_unique<Sequential>(...);
//     model->Compile(...);                           // variables broadcast from the chief
//   }
//   model->Fit(x, y, {.batch_size = 64 * strategy.num_workers()});   // the global batch
//
// The cluster comes from ResolveCluster (TF_CONFIG, else the rank of mpirun / PMI / srun:
// distributed/cluster_resolver.h); its workers are the tasks of jobs chief and worker, in that
// order (ps and evaluator tasks are an error). Each worker owns `devices_per_worker` replicas
// (/job:worker/replica:0/task:T/device:CPU:d); the replicas of all workers form one group, in
// worker order. The strategy starts a UcxRendezvousMgr for its task (listening on its address,
// connected to every other worker within `connect_timeout`) and plugs it into the session of
// every model compiled in its scope: collective steps (training steps, the initial broadcast)
// share step ids across workers, other Runs (Evaluate, Predict) stay local. Gradients are
// all-reduced across all replicas (CollectiveReduce over UcxRendezvous); each worker feeds its
// replicas' slices of every global batch (the same shuffled order everywhere: the data is sharded
// by batch slices); a worker that dies or stops makes the others' step fail with Unavailable
// naming it (or DeadlineExceeded after `collective_timeout`).
//
// Mismatched programs: before the first run of each compiled collective step (the initial
// broadcast, the training step), every worker sends the others the list of the step's
// collectives (op, group, instance, dtype, shape, algorithm: runtime/collectives/fingerprint.h)
// and compares theirs with its own before any data moves; a difference fails the step on every
// worker with FailedPrecondition naming the first collective that differs on each side ("worker:1
// all-reduces 'dense/kernel' grad [784,256] where worker:0 has 'dense/kernel' grad [784,512]").
// A peer that sends no list within `collective_timeout` fails it with DeadlineExceeded naming it.
//
// Hangs: when a collective step passes its deadline (a Recv or a collective waiting longer than
// `collective_timeout`) or loses a peer, and on SIGUSR1 at any time, the worker prints and
// writes a hang report (hang_report_path()): the Recvs it still waits for with their source
// task, the collective instances and the members not heard from, the last collective step it
// completed, the graph nodes still running, and "waits for: <tasks>" (docs/distributed.md, "How to read a hang report").
// With each report, and when a step fails, it dumps its always-on trace ring (the last
// `trace_events` kernels, collective messages and steps: runtime/trace_ring.h) beside the report;
// the clock offset to the chief, measured when the workers connect, goes into every dump so that
// `weft-zoo trace merge` can align the ranks (docs/distributed.md, "How to read a trace").
//
// Leaving: Shutdown() (also run by the destructor) tells every other worker this one is done and
// waits, up to `shutdown_timeout`, until each has said the same, so that no worker exits while
// another still waits for its last messages (a worker that ended its last step may still owe the
// others the last chunks of that step's all-reduce). A worker whose connection ends meanwhile
// (one that failed, or that got this worker's "bye" and left) is not waited for; after a failed
// collective step nobody is (the step failed everywhere: nothing is owed), so that a step's
// DeadlineExceeded reaches the caller at `collective_timeout`, not `shutdown_timeout` later.
//
// Thread-safe after construction; the steps of its models must be issued in the same order on
// every worker, one at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "core/threadpool.h"
#include "distributed/cluster_resolver.h"
#include "distributed/hang_report.h"
#include "runtime/trace_ring.h"
#include "train/strategy.h"
#include "distributed/ucx_rendezvous.h"

namespace weft {

struct MultiWorkerOptions {
  std::optional<ClusterConfig> cluster;  // unset: ResolveCluster()
  std::optional<ClusterSecret> secret;   // unset: ResolveClusterSecret() (the environment)
  int devices_per_worker = 1;
  // Sharded optimizer state (ZeRO, train/zero.h): 0 off, 1 shard the optimizer slots over the
  // replicas in sync, 2 also reduce-scatter the gradients. Anything else: InvalidArgument.
  int shard_optimizer_state = 0;
  std::chrono::milliseconds collective_timeout{60000};
  std::chrono::milliseconds connect_timeout{60000};
  std::chrono::milliseconds shutdown_timeout{10000};
  // Hang reports (distributed/hang_report.h): written to "<dir>/weft-hang-<job>-<index>.txt"
  // (empty dir: the working directory; a checkpoint directory's parent is a good place) when a
  // collective step passes its deadline or loses a peer, and on SIGUSR1 when `hang_report_on_signal`.
  std::string hang_report_dir;
  bool hang_report_on_signal = true;
  // The always-on trace (runtime/trace_ring.h): this process's last `trace_events` events
  // (kernels, collective messages, steps), dumped to "<hang_report_dir>/weft-trace-<job>-<index>.json"
  // with every hang report (SIGUSR1 included), when a step fails, by DumpTrace(), and on a fatal
  // signal when `trace_dump_on_fatal_signal`. 0: no trace.
  size_t trace_events = 16384;
  bool trace_dump_on_fatal_signal = true;
};

class MultiWorkerMirroredStrategy : public Strategy {
 public:
  explicit MultiWorkerMirroredStrategy(MultiWorkerOptions options = {});
  ~MultiWorkerMirroredStrategy() override;
  std::string name() const override { return "MultiWorkerMirroredStrategy"; }
  bool mirrored() const override { return true; }
  bool is_chief() const override { return worker_index_ == 0; }
  void ConfigureSession(SessionOptions* options) const override;
  double collective_timeout_seconds() const override { return options_.collective_timeout.count() / 1000.0; }

  const ClusterConfig& cluster() const { return config_; }
  const TaskId& task() const { return *config_.task; }
  int worker_index() const { return worker_index_; }
  UcxRendezvousMgr& rendezvous() const { return *mgr_; }
  // Where this worker's hang reports go, and the report a stall or SIGUSR1 would write now.
  const std::string& hang_report_path() const { return reporter_->path(); }
  std::string DescribeWaits(std::string_view why) const;
  // The same into `out`, allocating nothing (the reporter's builder); not thread-safe with itself
  // (the reporter calls it under its lock).
  void DescribeWaits(std::string_view why, ReportText* out) const;
  HangReporter& hang_reporter() const { return *reporter_; }
  // The trace ring (null when trace_events is 0) and where it dumps. DumpTrace writes it now to
  // `path` (empty: trace_path()) and returns the path; throws FailedPrecondition without a ring.
  TraceRing* trace_ring() const { return trace_ring_.get(); }
  std::string trace_path() const { return trace_ring_ ? trace_ring_->dump_path() : std::string(); }
  std::string DumpTrace(const std::string& path = "", const std::string& why = "on request") const;
  // The leave handshake (see above); idempotent. Returns the first problem (a peer that failed or
  // did not answer in time), which the destructor ignores.
  Status Shutdown();

 private:
  struct Layout;
  MultiWorkerMirroredStrategy(MultiWorkerOptions options, Layout layout);
  // SessionOptions::check_collectives: the fingerprint exchange described above.
  Status CheckCollectives(uint64_t step_id, const std::vector<CollectiveSignature>& mine) const;
  // At connection: this worker's clock offset to the chief's (a few ping-pongs, the one with the
  // shortest round trip kept), for the trace's timeline across processes.
  void MeasureClockOffset();

  MultiWorkerOptions options_;
  ClusterConfig config_;
  std::string task_name_;  // "worker:1", made once (reports allocate nothing)
  int worker_index_ = 0;
  std::unique_ptr<ThreadPool> callbacks_;  // Recv callbacks (collective reductions) off the UCX thread
  std::shared_ptr<TraceRing> trace_ring_;  // shared with the Sessions, which may outlive the strategy
  mutable std::mutex describe_mu_;           // one DescribeWaits at a time: waits_ is its scratch
  std::unique_ptr<WaitDescriber> waits_;    // DescribeWaits' scratch space, reserved
  std::unique_ptr<HangReporter> reporter_;  // before mgr_, whose stalls it reports
  std::unique_ptr<UcxRendezvousMgr> mgr_;
  // Step ids: collective steps count up from 1 on every worker alike; local ones from 2^62.
  mutable std::atomic<uint64_t> collective_steps_{0}, local_steps_{0};
  mutable std::atomic<uint64_t> last_completed_{0};  // the last collective step that ended well
  // The Sessions configured by this strategy and alive (SessionOptions::lifetime_hook): their
  // running nodes go into hang reports. Shared with the hooks: a Session may outlive the strategy.
  struct Sessions {
    std::mutex mu;
    std::set<const Session*> alive;
  };
  std::shared_ptr<Sessions> sessions_ = std::make_shared<Sessions>();
  bool shut_down_ = false;
  // Set when a collective step of this worker failed (its rendezvous was aborted): every member's
  // copy of that step fails too, so nobody waits for this worker's data, and Shutdown does not
  // wait for the others' "bye" (a stopped or failed peer would hold this worker's error back).
  mutable std::atomic<bool> collective_step_failed_{false};
};

}  // namespace weft
