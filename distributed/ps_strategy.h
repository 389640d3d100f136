// ParameterServerStrategy: variables on the ps tasks, computation on the workers, with
// synchronous updates (one client drives every worker's replica, TF1's in-graph replication) or
// asynchronous ones (every worker is a client, TF1's between-graph async training).
//
//   Server server(ClusterConfig::FromEnvironment());      // the client's task: worker:0 (sync)
//   ParameterServerStrategy strategy(&server);           // ps and worker tasks from the cluster
//   {
//     auto scope = strategy.scope();
//     auto model = zoo::FindZooModel("mnist_cnn").build({28, 28, 1}, 10);
//     model->Compile(options);                            // a Session running on the cluster
//     model->Fit(x, y, {.batch_size = 128});              // the global batch, split over workers
//   }
//
// Each variable goes to the ps task with the fewest bytes placed so far (its slots and its update
// with it); the step counter lives on ps:0.
//
// Sync (PsMode::kSync): replica r runs on worker r's CPU:0 with its slice of the global batch;
// each gradient is summed on its variable's ps task (AddN over Send/Recv pairs, in replica order)
// and applied once per step, so training equals single-process training of the same global batch.
// The client's task (worker:0) computes replica 0, feeds and fetches; the other workers only serve.
//
// Async (PsMode::kAsync): every worker (and chief) task runs the same program as its own client,
// with one replica on its own CPU:0 and the shared variables on the ps tasks (the ps servers hold
// them by name across clients). Each worker applies the gradients of its own batches as soon as it
// has them, without waiting for the others; `step` on ps:0 counts every worker's steps. The chief
// (the chief task, else worker:0) initializes the variables and writes checkpoints; the others
// wait for the initialization; Fit(x, y) trains each worker on its shard of the rows. A worker's
// session talks to the ps tasks and its own task only (device_filters), so workers may come and go.
//
// Every step runs through a DistributedSession (distributed/distributed_session.h): a failing
// task fails the step naming it. Each task's Server keeps the always-on trace of the partitions
// run there and writes hang reports (a Recv past its deadline, SIGUSR1: ServerOptions). Checkpoints (Model::SaveWeights / LoadWeights) fetch the
// variables from the ps tasks and assign them there. Immutable after construction: thread-safe.
#pragma once

#include <string_view>

#include "distributed/distributed_session.h"
#include "train/strategy.h"

namespace weft {

enum class PsMode { kSync, kAsync };
// "sync" or "async"; anything else is InvalidArgument naming it.
PsMode ParsePsMode(std::string_view text);

class ParameterServerStrategy : public Strategy {
 public:
  // server: this process's task, not owned, outlives every model using the strategy. Throws
  // InvalidArgument when the cluster has no ps or no worker tasks, or (async) when this task is
  // not a worker or the chief.
  explicit ParameterServerStrategy(Server* server, DistributedSessionOptions options = {},
                                   PsMode mode = PsMode::kSync);
  std::string name() const override { return "ParameterServerStrategy"; }
  PsMode mode() const { return mode_; }
  bool mirrored() const override { return false; }
  bool is_chief() const override { return chief_; }
  std::string variable_device() const override { return ps_devices_.front(); }
  std::vector<std::string> variable_devices() const override { return ps_devices_; }
  std::string step_device() const override { return ps_devices_.front(); }
  bool chief_initializes_variables() const override { return mode_ == PsMode::kAsync; }
  std::pair<int, int> input_shard() const override { return shard_; }
  std::function<std::unique_ptr<RemoteRunner>(Graph*)> remote_runner() const override;
  // This process's task's server: its trace ring and hang reports (ServerOptions) cover the
  // partitions of the steps run here.
  Server* server() const { return server_; }

 private:
  Server* server_;
  DistributedSessionOptions options_;
  PsMode mode_;
  std::vector<std::string> ps_devices_;
  bool chief_ = true;
  std::pair<int, int> shard_{0, 1};
};

}  // namespace weft
