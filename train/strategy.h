// Distribution strategies: how a model's variables and computation spread over devices.
//
//   MirroredStrategy strategy(2);                 // CPU:0 and CPU:1 of this process
//   {
//     auto scope = strategy.scope();              // like `with strategy.scope():`
//     Sequential model(...);                      // variables created in the scope are mirrored
//     model.Compile(...);                         // builds one replicated training step
//   }
//   model.Fit(x, y, {.batch_size = 128});         // the global batch, split across replicas
//
// OneDeviceStrategy: everything on one device. MirroredStrategy: one copy of every variable per
// replica device, equal initial values; each replica computes its slice of the global batch;
// gradients are summed across replicas by a CollectiveReduce (ops/collective.cc) and every
// replica applies the same update to its copy, so the copies stay bit-identical.
// CentralStorageStrategy: variables on one device, computation replicated; gradients are sent to
// the variables' device (Send/Recv pairs do the carrying) and summed there, one update.
//
// Strategy::Current() is the innermost scope on this thread. Thread-safety: a strategy is
// immutable after construction (but for its status board, which has its own lock); scopes are
// per thread.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/scope.h"
#include "graph/session.h"
#include "data/dataset.h"

namespace weft {

class PipelineStrategy;

// A live view of training under a strategy (`strategy.status()` in Python, `weft-zoo launch
// --status`): what this process's training steps did.
struct StrategyStatus {
  int64_t step = 0;                // training steps this process has run
  double images_per_second = 0;    // global-batch examples a second over the last ~2 s of steps
  double collective_fraction = 0;  // share of that window with a collective running (or waiting)
  double collective_seconds = 0;   // the same time, summed since this process's first step
};

class Strategy {
 public:
  virtual ~Strategy();
  virtual std::string name() const = 0;  // "MirroredStrategy"
  // This process's replica devices (full names), one per local replica.
  const std::vector<std::string>& devices() const { return devices_; }
  // Every replica in sync, of every worker, in rank order; devices() are group_devices()
  // [first_replica(), first_replica() + devices().size()). One process: the same as devices().
  const std::vector<std::string>& group_devices() const { return group_; }
  int num_replicas_in_sync() const { return static_cast<int>(group_.size()); }
  int num_local_replicas() const { return static_cast<int>(devices_.size()); }
  int first_replica() const { return first_replica_; }
  int num_workers() const { return num_replicas_in_sync() / num_local_replicas(); }
  // The chief writes checkpoints and summaries; every process of a one-process strategy is.
  virtual bool is_chief() const { return true; }
  // Plugs the strategy's cross-process rendezvous and step ids into a model's session (nothing in
  // one process). The model marks the Runs that take part in collectives across workers
  // (training steps, the broadcast of the chief's values) with RunOptions::collective, and the
  // strategy's SessionOptions::next_step_id gives those ids from the sequence every worker shares.
  virtual void ConfigureSession(SessionOptions* options) const {}
  // How long a collective member waits for the others before failing (the ops' timeout_seconds).
  virtual double collective_timeout_seconds() const { return 60.0; }
  // True: a variable has one component per replica. False: one variable on variable_device().
  virtual bool mirrored() const = 0;
  virtual std::string variable_device() const { return devices_.front(); }
  // Not mirrored: each variable goes to the least loaded of these (bytes placed so far, ties to the
  // first), its slots and its update with it.
  virtual std::vector<std::string> variable_devices() const { return {variable_device()}; }
  // The device of the model's step counter ("step"); empty: the first replica's.
  virtual std::string step_device() const { return ""; }
  // True: the variables live on tasks every worker shares and only the chief initializes them;
  // the other workers' Compile waits (up to collective_timeout_seconds) until it has.
  virtual bool chief_initializes_variables() const { return false; }
  // The part of Fit's arrays this process trains on, (index, count): Fit(x, y) takes rows
  // index, index + count, ... (count 1: all of them; replicated strategies split batches instead).
  virtual std::pair<int, int> input_shard() const { return {0, 1}; }
  // Set: the model's Session runs its steps through what this makes (a cluster's servers).
  virtual std::function<std::unique_ptr<RemoteRunner>(Graph*)> remote_runner() const { return {}; }
  // How many CPU devices a session must have for this strategy's devices to exist.
  int num_cpu_devices() const;
  // A PipelineStrategy (train/pipeline.h) is itself; other strategies replicate and return null.
  virtual const PipelineStrategy* pipeline() const { return nullptr; }
  // How many parts SplitBatch cuts a global batch into: one per replica in sync (a pipeline's
  // micro-batches).
  virtual int batch_parts() const { return num_replicas_in_sync(); }
  // Sharded optimizer state (train/zero.h): 0 off; 1: each replica in sync keeps the optimizer
  // slots of 1/num_replicas_in_sync() of the parameters and the updated shards are all-gathered;
  // 2: the gradients are also reduce-scattered instead of all-reduced. Mirrored strategies only.
  int shard_optimizer_state() const { return shard_optimizer_state_; }

  // The status board (train/strategy_status.cc). Model calls RecordStep after every training
  // step with its global batch size and its session's CollectiveContext::active_seconds().
  StrategyStatus status() const;
  void RecordStep(int64_t examples, double collective_seconds) const;
  // Set: RecordStep also rewrites this file (atomically: a temporary file renamed), at most once
  // a second, as "key value" lines (step, images_per_second, collective_fraction,
  // collective_seconds); `weft-zoo launch --status` reads them. Empty (the default): no file.
  void set_status_file(std::string path);

  // RAII: while alive, Strategy::Current() on this thread is this strategy.
  class ScopeGuard {
   public:
    explicit ScopeGuard(const Strategy* s);
    ~ScopeGuard();
    ScopeGuard(const ScopeGuard&) = delete;
    ScopeGuard& operator=(const ScopeGuard&) = delete;

   private:
    const Strategy* previous_;
  };
  [[nodiscard]] ScopeGuard scope() const { return ScopeGuard(this); }
  static const Strategy* Current();

  // Calls fn once per local replica with a scope pinned to the replica's device; returns the results.
  std::vector<Output> Run(const Scope& s, const std::function<Output(const Scope& replica_scope, int replica)>& fn) const;
  enum class ReduceOp { kSum, kMean };
  // Combines per-replica values on the first replica's device.
  Output Reduce(const Scope& s, ReduceOp op, const std::vector<Output>& per_replica) const;
  // Splits a global batch (every component along dim 0) into batch_parts() parts (all
  // workers' replicas: a worker feeds parts first_replica() ...) whose sizes
  // differ by at most one. Throws InvalidArgument when the batch has fewer rows than replicas.
  virtual std::vector<std::vector<Tensor>> SplitBatch(const std::vector<Tensor>& global) const;
  // A dataset of global batches {x, y, ...} as this process's replicas' parts {x_0, y_0, x_1, y_1,
  // ...} (across workers: its shard of every batch; tf.distribute's experimental_distribute_dataset;
  // Model::Fit splits batches itself).
  data::Dataset ExperimentalDistributeDataset(const data::Dataset& global_batches) const;

 protected:
  explicit Strategy(std::vector<std::string> devices);
  // Across processes: `devices` are this process's part of `group`, starting at `first_replica`.
  Strategy(std::vector<std::string> devices, std::vector<std::string> group, int first_replica);
  // InvalidArgument naming the strategy unless 0, 1 or 2.
  void set_shard_optimizer_state(int stage);

 private:
  std::vector<std::string> devices_;
  std::vector<std::string> group_;
  int first_replica_ = 0;
  int shard_optimizer_state_ = 0;

  struct StatusSample {
    std::chrono::steady_clock::time_point at;
    int64_t examples;  // summed since the first step
    double collective_seconds;
  };
  mutable std::mutex status_mu_;
  mutable std::deque<StatusSample> status_window_;  // guarded by status_mu_; the last ~2 s
  mutable int64_t status_steps_ = 0;                // guarded by status_mu_
  mutable int64_t status_examples_ = 0;             // guarded by status_mu_
  mutable double status_base_collective_ = -1;      // active_seconds at the first step
  mutable std::chrono::steady_clock::time_point status_written_{};  // guarded by status_mu_
  std::string status_file_;
  StrategyStatus StatusLocked() const;
};

// "/job:localhost/replica:0/task:0/device:CPU:<i>" for i < n.
std::vector<std::string> LocalCpuDevices(int n);

class OneDeviceStrategy : public Strategy {
 public:
  explicit OneDeviceStrategy(const std::string& device = "/device:CPU:0");
  std::string name() const override { return "OneDeviceStrategy"; }
  bool mirrored() const override { return true; }
};

class MirroredStrategy : public Strategy {
 public:
  // shard_optimizer_state: Strategy::shard_optimizer_state (0, 1 or 2).
  explicit MirroredStrategy(std::vector<std::string> devices, int shard_optimizer_state = 0);
  explicit MirroredStrategy(int num_cpu_devices = 2, int shard_optimizer_state = 0)
      : MirroredStrategy(LocalCpuDevices(num_cpu_devices), shard_optimizer_state) {}
  std::string name() const override { return "MirroredStrategy"; }
  bool mirrored() const override { return true; }
};

class CentralStorageStrategy : public Strategy {
 public:
  explicit CentralStorageStrategy(std::vector<std::string> compute_devices,
                                  std::string variable_device = "/job:localhost/replica:0/task:0/device:CPU:0");
  explicit CentralStorageStrategy(int num_cpu_devices = 2) : CentralStorageStrategy(LocalCpuDevices(num_cpu_devices)) {}
  std::string name() const override { return "CentralStorageStrategy"; }
  bool mirrored() const override { return false; }
  std::string variable_device() const override { return variable_device_; }

 private:
  std::string variable_device_;
};

}  // namespace weft
