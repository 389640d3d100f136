#include "distributed/pipeline_strategy.h"

namespace weft {

namespace {

PipelineOptions WithStages(PipelineOptions o, const Server& server) {
  const std::vector<TaskId> tasks = server.cluster().TrainingTasks();
  if (o.num_stages == 0) o.num_stages = static_cast<int>(tasks.size());
  std::string names;
  for (const TaskId& t : tasks) names += (names.empty() ? "" : ", ") + t.ToString();
  WEFT_REQUIRE(o.num_stages <= static_cast<int>(tasks.size()),
               "PipelineStrategy: {} stages need {} tasks (a stage per task), but the cluster has {} training "
               "task(s): {}", o.num_stages, o.num_stages, tasks.size(), names.empty() ? "none" : names);
  WEFT_REQUIRE(!tasks.empty() && server.task() == tasks.front(),
               "PipelineStrategy: the client (stage 0) must be task {}, the cluster's first training task; task {} "
               "serves its stage (a Server) instead", tasks.empty() ? "?" : tasks.front().ToString(),
               server.task().ToString());
  return o;
}

std::vector<std::string> Devices(const Server& server) {
  std::vector<std::string> out;
  for (const TaskId& t : server.cluster().TrainingTasks()) out.push_back(t.DeviceName() + "/device:CPU:0");
  return out;
}

// A DistributedSession holding a reference to its server, which it needs until it is destroyed
// (it deregisters its graphs through it).
class SharedServerSession : public RemoteRunner {
 public:
  SharedServerSession(Graph* g, std::shared_ptr<Server> server, const DistributedSessionOptions& options)
      : server_(std::move(server)), session_(g, server_.get(), options) {}
  std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                          const std::vector<Node*>& targets, std::chrono::milliseconds timeout) override {
    return session_.Run(feeds, fetches, targets, timeout);
  }
  void Cancel(const Status& why) override { session_.Cancel(why); }

 private:
  std::shared_ptr<Server> server_;  // destroyed after session_
  DistributedSession session_;
};

}  // namespace

ClusterPipelineStrategy::ClusterPipelineStrategy(std::shared_ptr<Server> server, PipelineOptions options,
                                                 DistributedSessionOptions session_options)
    : ClusterPipelineStrategy(server.get(), std::move(options), std::move(session_options)) {
  shared_ = std::move(server);
}

ClusterPipelineStrategy::ClusterPipelineStrategy(Server* server, PipelineOptions options,
                                                 DistributedSessionOptions session_options)
    : PipelineStrategy(WithStages(std::move(options), *server), Devices(*server)),
      server_(server),
      session_options_(std::move(session_options)) {
  // The stage tasks only: the others need not be up.
  if (session_options_.device_filters.empty()) {
    for (const std::string& t : stage_tasks()) {
      session_options_.device_filters.push_back(TaskId::Parse(t).DeviceName());
    }
  }
}

std::vector<std::string> ClusterPipelineStrategy::stage_tasks() const {
  std::vector<std::string> out;
  const std::vector<TaskId> tasks = server_->cluster().TrainingTasks();
  for (int s = 0; s < num_stages(); ++s) out.push_back(tasks[static_cast<size_t>(s)].ToString());
  return out;
}

std::function<std::unique_ptr<RemoteRunner>(Graph*)> ClusterPipelineStrategy::remote_runner() const {
  Server* server = server_;
  DistributedSessionOptions options = session_options_;
  if (shared_ != nullptr) {
    std::shared_ptr<Server> shared = shared_;
    return [shared, options](Graph* g) { return std::make_unique<SharedServerSession>(g, shared, options); };
  }
  return [server, options](Graph* g) { return std::make_unique<DistributedSession>(g, server, options); };
}

}  // namespace weft
