#include "distributed/ps_strategy.h"

#include <algorithm>

namespace weft {
namespace {

std::vector<std::string> JobDevices(const ClusterSpec& cluster, const std::string& job, const char* role) {
  const int n = cluster.NumTasks(job);
  WEFT_REQUIRE(n > 0, "ParameterServerStrategy: the cluster has no '{}' tasks (it needs them for {}): {}", job, role,
               cluster.ToJson());
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(TaskId{job, i}.DeviceName() + "/device:CPU:0");
  return out;
}

std::vector<std::string> ReplicaDevices(const Server& server, PsMode mode) {
  std::vector<std::string> workers = JobDevices(server.cluster(), "worker", "the computation");
  if (mode == PsMode::kSync) return workers;
  const std::vector<TaskId> training = server.cluster().TrainingTasks();
  WEFT_REQUIRE(std::find(training.begin(), training.end(), server.task()) != training.end(),
               "ParameterServerStrategy (async): task {} is not a worker or the chief; a ps task only serves "
               "(Server::Join)", server.task().ToString());
  return {server.task().DeviceName() + "/device:CPU:0"};
}

}  // namespace

PsMode ParsePsMode(std::string_view text) {
  if (text == "sync") return PsMode::kSync;
  if (text == "async") return PsMode::kAsync;
  throw Error(errors::InvalidArgument("parameter server mode must be 'sync' or 'async', got '{}'", text));
}

ParameterServerStrategy::ParameterServerStrategy(Server* server, DistributedSessionOptions options, PsMode mode)
    : Strategy(ReplicaDevices(*server, mode)),
      server_(server),
      options_(std::move(options)),
      mode_(mode),
      ps_devices_(JobDevices(server->cluster(), "ps", "the variables")) {
  if (mode_ == PsMode::kAsync) {
    const std::vector<TaskId> training = server->cluster().TrainingTasks();
    const int index = static_cast<int>(std::find(training.begin(), training.end(), server->task()) - training.begin());
    chief_ = index == 0;
    shard_ = {index, static_cast<int>(training.size())};
    // This worker's steps involve the ps tasks and itself only.
    options_.device_filters = {"/job:ps", server->task().DeviceName()};
  }
}

std::function<std::unique_ptr<RemoteRunner>(Graph*)> ParameterServerStrategy::remote_runner() const {
  Server* server = server_;
  DistributedSessionOptions options = options_;
  return [server, options](Graph* g) { return std::make_unique<DistributedSession>(g, server, options); };
}

}  // namespace weft
