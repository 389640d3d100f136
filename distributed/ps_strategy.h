// ParameterServerStrategy: variables on the ps tasks, computation replicated on the workers,
// synchronous updates (TF1's between-task replication driven by one client).
//
//   Server server(ClusterConfig::FromEnvironment());      // the client's task: worker:0
//   ParameterServerStrategy strategy(&server);           // ps and worker tasks from the cluster
//   {
//     auto scope = strategy.scope();
//     auto model = zoo::FindZooModel("mnist_cnn").build({28, 28, 1}, 10);
//     model->Compile(options);                            // a Session running on the cluster
//     model->Fit(x, y, {.batch_size = 128});              // the global batch, split over workers
//   }
//
// Each variable goes to the ps task with the fewest bytes placed so far (its slots and its update
// with it); replica r runs on worker r's CPU:0 with its slice of the global batch; each gradient is
// summed on its variable's ps task (AddN over Send/Recv pairs, in replica order) and applied once
// per step, so training equals single-process training of the same global batch. The client's
// task (worker:0 when it is a worker) computes replica 0, feeds and fetches. Every step runs
// through a DistributedSession (distributed/distributed_session.h): a failing task fails the step
// naming it. Checkpoints (Model::SaveWeights) need the variables in this process: not supported
// yet with this strategy. Immutable after construction: thread-safe.
#pragma once

#include "distributed/distributed_session.h"
#include "distributed/strategy.h"

namespace weft {

class ParameterServerStrategy : public Strategy {
 public:
  // server: this process's task, not owned, outlives every model using the strategy. Throws
  // InvalidArgument when the cluster has no ps or no worker tasks.
  explicit ParameterServerStrategy(Server* server, DistributedSessionOptions options = {});
  std::string name() const override { return "ParameterServerStrategy"; }
  bool mirrored() const override { return false; }
  std::string variable_device() const override { return ps_devices_.front(); }
  std::vector<std::string> variable_devices() const override { return ps_devices_; }
  std::function<std::unique_ptr<RemoteRunner>(Graph*)> remote_runner() const override;

 private:
  Server* server_;
  DistributedSessionOptions options_;
  std::vector<std::string> ps_devices_;
};

}  // namespace weft
