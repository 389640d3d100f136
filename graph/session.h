// Session: runs a graph. Each distinct (feeds, fetches, targets) signature is compiled once
// (prune, constant folding, CSE, placement on the session's devices, partitioning into one graph
// per device joined by _Send/_Recv pairs, kernels) and cached; every Run gets a fresh step id and
// a fresh rendezvous, and runs all the step's partitions at once. The first error on any device
// aborts the step everywhere (pending Recvs fail with it) and is the one reported.
//
//   Session sess(&g);
//   sess.Run({}, {}, {init});                                   // run the initializers
//   auto out = sess.Run({{x, x_value}}, {loss, w});             // feeds, fetches
//   float l = out[0].scalar<float>()();
//
// Across processes (every worker runs the same program, each its own Session), the step's
// rendezvous and id come from the options: `rendezvous_factory(step_id)` hands each Run its
// rendezvous (e.g. UcxRendezvousMgr::Find), `rendezvous_cleanup(step_id)` is called when the Run
// is over (UcxRendezvousMgr::Cleanup), and step ids count 1, 2, 3 ... per Session (or come from
// `next_step_id`), so the k-th Run of every worker has the same id. Then Runs must be issued in
// the same order on every worker (not concurrently). A Run says itself whether it is such a
// collective step (RunOptions::collective, handed to `next_step_id`); nothing about the calling
// thread decides it:
//
//   sess.Run(feeds, {loss}, {train}, RunOptions{.collective = true});   // every worker's k-th step
//
// The collectives of the Session's steps run on its CollectiveContext (runtime/collectives/
// context.h: their thread pool and watchdog), which the Session owns. See docs/distributed.md.
//
// Errors throw weft::Error: a missing feed names the placeholder, a feed of the wrong dtype or
// shape names both, a kernel failure names the node. Thread-safe: Run may be called from
// several threads; the graph must not change while a Run is compiling.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/memory_budget.h"
#include "graph/device.h"
#include "graph/executor.h"
#include "runtime/collectives/context.h"
#include "runtime/collectives/fingerprint.h"

namespace weft {

class Session;

// Runs a Session's steps somewhere else: DistributedSession (distributed/distributed_session.h)
// runs them over a cluster's servers. Made once per Session by SessionOptions::remote.
class RemoteRunner {
 public:
  virtual ~RemoteRunner() = default;
  // `timeout` > 0 bounds the step as RunOptions::timeout does (the runner's own limit still holds).
  virtual std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds,
                                  const std::vector<Output>& fetches, const std::vector<Node*>& targets,
                                  std::chrono::milliseconds timeout) = 0;
  // Session::Cancel: the running steps fail with `why` on every task they use.
  virtual void Cancel(const Status& why) = 0;
};

// How one Run runs (TensorFlow's RunOptions). Designated initializers name what a call sets:
// `RunOptions{.collective = true, .trace = &trace}`.
struct RunOptions {
  // True: the step takes part in collectives with other processes, so its id must come from the
  // sequence every worker shares (SessionOptions::next_step_id(true)); false: a local step (its
  // id is this process's own). Without `next_step_id` both kinds count on the Session's counter.
  bool collective = false;
  StepTrace* trace = nullptr;  // not owned; when set, every kernel of this step is recorded there
  // The longest the step may take (TensorFlow's RunOptions.timeout_in_ms); 0: no limit. Past it
  // the step is cancelled and Run throws DeadlineExceeded naming the step and what it was still
  // waiting for (the keys of its pending Recvs and their peers: Rendezvous::DescribeWaiting).
  std::chrono::milliseconds timeout{0};
};

struct SessionOptions {
  int inter_op_threads = 0;  // 0: hardware threads
  int intra_op_threads = 0;  // 0: hardware threads (split among the CPU devices)
  bool constant_folding = true;
  bool cse = true;
  int num_cpu_devices = 1;     // CPU:0 .. CPU:n-1 (virtual devices: each a parallel replica)
  std::string job = "localhost";  // the devices' names: /job:<job>/replica:0/task:<task>/device:CPU:i
  int task = 0;
  bool soft_placement = true;  // a node whose requested device cannot run it goes elsewhere
  bool use_gpus = true;        // add GPU:0.. for every usable GPU (docs/cuda.md); none without one
  GpuOptions gpu;              // TF32 and determinism of the GPU kernels (core/gpu.h); both off
  bool fuse_ops = true;  // FoldBatchNormIntoConv + FuseNnOps (graph/passes.h): inference batch norm into the
                         // conv; conv + bias + relu, max-pool grad + relu grad
  // The rendezvous of step `step_id` (must not be null); unset: a fresh LocalRendezvous per step.
  std::function<std::shared_ptr<Rendezvous>(uint64_t step_id)> rendezvous_factory;
  // Called once when step `step_id` is over (after the rendezvous is no longer used), ok or not.
  std::function<void(uint64_t step_id)> rendezvous_cleanup;
  // The id of the next Run, called with that Run's RunOptions::collective (a multi-worker strategy
  // keeps two sequences: collective steps share ids across workers, local ones must not collide
  // with them); unset: a per-Session counter 1, 2, 3 ... for both kinds (deterministic across
  // processes that issue the same Runs in the same order). Called on the thread that calls Run.
  std::function<uint64_t(bool collective)> next_step_id;
  // Called before the first collective Run (RunOptions::collective) of each compiled signature,
  // on the calling thread, with that step's id and its collective nodes in (group, instance)
  // order (runtime/collectives/fingerprint.h): a multi-worker strategy compares them with the
  // other workers' before any data moves. A non-OK status fails the Run with it before the step
  // starts (rendezvous_cleanup still runs); the next collective Run of the signature checks again.
  std::function<Status(uint64_t step_id, const std::vector<CollectiveSignature>& collectives)> check_collectives;
  // Called with this Session and true at the end of its constructor, and with false at the start
  // of its destructor: a multi-worker strategy keeps the Sessions it configured, to list their
  // running nodes in its hang reports (DescribeRunning). Must not call back into the Session then.
  std::function<void(const Session* session, bool alive)> lifetime_hook;
  // The always-on bounded trace (runtime/trace_ring.h): every kernel, collective message and step
  // of this Session's Runs goes into it, and a failed Run dumps it (TraceRingOptions::dump_path)
  // before throwing. Shared: a multi-worker strategy gives one ring to all its Sessions.
  std::shared_ptr<TraceRing> trace_ring;
  // A memory budget per device, in bytes (0: none): every device's kernels allocate through a
  // core/memory_budget.h BudgetAllocator, and a step that would take a device's live bytes above
  // it fails with ResourceExhausted naming the device, the limit, the step's peak and the largest
  // live tensors. Fed tensors (allocated by the caller) are not counted; in one process a tensor
  // that crosses devices counts on the device that made it (the rendezvous hands the buffer over).
  int64_t device_memory_limit = 0;
  // When set, every Run goes to the runner it makes for the graph (a cluster's servers hold the
  // variables then: vars() and Partitions() describe nothing; traces are not recorded).
  std::function<std::unique_ptr<RemoteRunner>(Graph*)> remote;
};

class Session {
 public:
  explicit Session(Graph* graph, SessionOptions options = {});  // graph: not owned
  ~Session();

  std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                          const std::vector<Node*>& targets, const RunOptions& options);
  // A local step; with `trace`, every kernel of this step is recorded there (graph/step_trace.h).
  std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                          const std::vector<Node*>& targets = {}, StepTrace* trace = nullptr) {
    return Run(feeds, fetches, targets, RunOptions{.trace = trace});
  }
  // By tensor name ("x:0", "x") for feeds and fetches and node name for targets.
  std::vector<Tensor> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                          const std::vector<std::string>& fetches, const std::vector<std::string>& targets);

  // Cancels the running steps (they fail with `why`, Cancelled by default); later Runs work.
  // Every wait of a step ends: its kernels see the step's CancellationManager, and the step's
  // rendezvous is aborted with `why`, so a Recv whose Send never comes (a peer that is gone, a
  // graph that has no sender for it) completes with that status.
  void Cancel(Status why = {});

  VarStore& vars() { return vars_; }
  const DeviceSet& devices() const { return devices_; }
  // The partitions the signature compiles to, by device (for tests, DOT export and tools).
  std::vector<std::pair<std::string, const Graph*>> Partitions(const std::vector<Output>& feeds,
                                                               const std::vector<Output>& fetches,
                                                               const std::vector<Node*>& targets = {});
  Graph* graph() const { return graph_; }
  // The context the collectives of this Session's steps run on (for tests and tools).
  CollectiveContext& collectives() const { return *collectives_; }
  // The nodes of its steps that have started and not ended ("step 5: CollectiveReduce 'x' on
  // /job:worker/.../CPU:0", Executor::DescribeRunning); one line saying so when another thread
  // holds the Session's lock at that moment (a report never waits for it). Thread-safe.
  std::vector<std::string> DescribeRunning() const;
  // The same nodes through Executor::ForEachRunning (no allocation); false, visiting nothing,
  // when another thread holds the Session's lock.
  bool ForEachRunning(const Executor::RunningVisitor& visit) const;
  // Number of compiled signatures in the cache (for tests).
  size_t num_compiled() const;
  // Per device with a memory budget (SessionOptions::device_memory_limit), its bytes in use and
  // peak since the start of the latest step; empty without budgets. Thread-safe.
  std::vector<std::pair<std::string, AllocatorStats>> DeviceMemory() const;
  // The id of the latest Run that started (0 before the first).
  int64_t last_step_id() const { return last_step_id_.load(); }

 private:
  struct Compiled;
  std::shared_ptr<Compiled> Compile(const std::vector<Output>& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Node*>& targets);
  Status RunPartitions(const Compiled& compiled, int64_t step_id, CallFrame* frame, CancellationManager* cm,
                       const RunOptions& options);

  Graph* graph_;
  SessionOptions options_;
  std::unique_ptr<ThreadPool> inter_op_;
  DeviceSet devices_;
  // Before vars_ and cache_, which hold tensors and executors that use them; each outlives its
  // last block anyway (BudgetHandle). Empty without SessionOptions::device_memory_limit.
  std::map<std::string, BudgetHandle> budgets_;
  VarStore vars_;
  // After devices_ (a GPU member's reducer uses its device), before the executors in cache_ that
  // hand it to kernels; its destructor cancels and waits for the collectives still running.
  std::unique_ptr<CollectiveContext> collectives_;
  void RecordStep(int64_t step_id, int64_t start_ns, bool collective, const Status& status) const;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Compiled>> cache_;
  std::atomic<int64_t> next_step_id_{1};
  std::atomic<int64_t> last_step_id_{0};
  std::map<int64_t, CancellationManager*> running_;
  std::unique_ptr<RemoteRunner> remote_;
};

}  // namespace weft
