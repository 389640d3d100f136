#include "distributed/ps_strategy.h"

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

}  // namespace

ParameterServerStrategy::ParameterServerStrategy(Server* server, DistributedSessionOptions options)
    : Strategy(JobDevices(server->cluster(), "worker", "the computation")),
      server_(server),
      options_(options),
      ps_devices_(JobDevices(server->cluster(), "ps", "the variables")) {}

std::function<std::unique_ptr<RemoteRunner>(Graph*)> ParameterServerStrategy::remote_runner() const {
  Server* server = server_;
  DistributedSessionOptions options = options_;
  return [server, options](Graph* g) { return std::make_unique<DistributedSession>(g, server, options); };
}

}  // namespace weft
