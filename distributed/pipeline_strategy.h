// Pipeline parallelism across processes: stage i of a PipelineStrategy (train/pipeline.h) on task
// i of a cluster, the stages' Send/Recv pairs carried by UCX between the tasks.
//
//   // worker:0, the client (weft-zoo launch -n 2 ... --strategy pipeline does this):
//   Server server(ClusterConfig::FromEnvironment());          // TF_CONFIG names worker:0 and worker:1
//   ClusterPipelineStrategy strategy(&server, {.num_stages = 0, .micro_batches = 4});   // 0: a stage per task
//   {
//     auto scope = strategy.scope();
//     Sequential model(...);   model.Compile(...);          // stage 1's weights live on worker:1
//   }
//   model.Fit(x, y, {.batch_size = 64});
//   // worker:1: only a Server (weft-zoo server, or Server::Join in Python) until the client is done.
//
// One program, one client: the model's step graph is built once, on the client's task, exactly as
// in one process; its Session runs through a DistributedSession (distributed/distributed_session.h):
// each signature is placed, partitioned per device, and every stage task's partitions are
// registered on its server and run there for each step (the same mechanism as
// ParameterServerStrategy's sync mode; nothing pipeline-specific runs on the other tasks). The
// schedule's control edges order each stage's segments inside its own task's partition. Feeds,
// fetches and unplaced nodes (the step counter's reads, the metrics) are on the client's CPU:0,
// which is stage 0's device: the labels travel to the last stage, the loss back.
//
// Stages are the cluster's training tasks (the chief, if any, then the workers) in that order,
// each on its CPU:0; the client must be the first of them (stage 0). More stages than tasks is
// InvalidArgument naming the tasks. Tasks beyond the stages are not contacted (device_filters).
// A stage task that dies fails the client's step with Unavailable naming it (within the
// session's step_timeout when it only stops answering: DeadlineExceeded). Immutable after
// construction: thread-safe.
#pragma once

#include "distributed/distributed_session.h"
#include "train/pipeline.h"

namespace weft {

class ClusterPipelineStrategy : public PipelineStrategy {
 public:
  // server: this process's task (the cluster's first training task), not owned, outlives every
  // model using the strategy. options.num_stages 0: one stage per training task.
  ClusterPipelineStrategy(Server* server, PipelineOptions options, DistributedSessionOptions session_options = {});
  // The same, sharing the server: the sessions made for the strategy's models keep it alive, so
  // that a model may outlive the strategy and the caller's reference to the server (Python's
  // garbage collector frees them in any order).
  ClusterPipelineStrategy(std::shared_ptr<Server> server, PipelineOptions options,
                          DistributedSessionOptions session_options = {});
  std::string name() const override { return "PipelineStrategy"; }
  std::function<std::unique_ptr<RemoteRunner>(Graph*)> remote_runner() const override;
  Server* server() const { return server_; }
  // The task of each stage, "worker:1".
  std::vector<std::string> stage_tasks() const;

 private:
  std::shared_ptr<Server> shared_;  // null when the caller owns the server
  Server* server_;
  DistributedSessionOptions session_options_;
};

}  // namespace weft
