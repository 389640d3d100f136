// `weft-zoo server`: runs this task's server (distributed/server/server.h) until SIGTERM or SIGINT;
// and `--strategy parameter_server [--ps-mode sync|async]` for `weft-zoo train`.
//
//   TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:10090"], "ps": ["127.0.0.1:10091"]},
//               "task": {"type": "ps", "index": 0}}' weft-zoo server
//   weft-zoo server --cluster 'worker=127.0.0.1:10090;ps=127.0.0.1:10091' --task ps:0 [--devices N]
//       [--threads N] [--recv-timeout-ms MS] [--insecure]
//
// `weft-zoo train` run by every task (as `weft-zoo launch --ps 1 -n 2 -- weft-zoo train ...` does):
// ps tasks serve; in sync mode worker:0 is the client and the other workers serve until it is gone;
// in async mode every worker (and the chief) trains. `--strategy pipeline` under a cluster: the
// first training task is the client (stage 0), the other stage tasks serve until it is gone.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "distributed/cluster_resolver.h"
#include "distributed/pipeline_strategy.h"
#include "distributed/ps_strategy.h"
#include "distributed/server/server.h"
#include "zoo/commands.h"

namespace weft::zoo {
namespace {

// The cluster secret from the environment (weft-zoo launch hands its tasks one), or none with
// --insecure (docs/security.md).
ServerOptions WithSecret(ServerOptions o, bool insecure_flag) {
  const ClusterSecret s = ResolveClusterSecret();
  o.transport.cluster_secret = s.secret;
  o.transport.insecure = s.insecure || insecure_flag;
  return o;
}

// Serves `config`'s task until SIGTERM / SIGINT, or until `over(server)` gives a reason to stop
// (asked twice a second; empty: serve on). Returns the exit status.
int Serve(const ClusterConfig& config, const ServerOptions& options,
          const std::function<std::string(Server&)>& over = {}) {
  // Block the stop signals before any thread starts (threads inherit the mask); wait for them below.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  Server server(config, options);
  std::printf("weft-zoo server: task %s serving at %s (devices: %s); stop with SIGTERM or SIGINT\n",
              server.task().ToString().c_str(), server.target().c_str(), server.devices().ShortNames().c_str());
  std::fflush(stdout);
  int sig = 0;
  const timespec half_second{0, 500000000};
  while (true) {
    sig = over ? sigtimedwait(&stop, nullptr, &half_second) : sigwaitinfo(&stop, nullptr);
    if (sig > 0) break;
    if (!over) continue;
    if (const std::string why = over(server); !why.empty()) {
      std::printf("weft-zoo server: task %s stopping (%s)\n", server.task().ToString().c_str(), why.c_str());
      std::fflush(stdout);
      return 0;
    }
  }
  std::printf("weft-zoo server: task %s stopping (signal %d)\n", server.task().ToString().c_str(), sig);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int ServerCommand(const std::vector<std::string>& args) {
  Flags f(args, {"cluster", "task", "devices", "threads", "recv-timeout-ms"}, {"insecure"});
  if (!f.positional().empty()) throw UsageError("server takes no positional arguments");
  if (f.Has("task") && !f.Has("cluster")) throw UsageError("--task needs --cluster");
  const ClusterConfig config =
      f.Has("cluster") ? ClusterConfig::FromFlags(f.Str("cluster", ""), f.Str("task", "")) : ClusterConfig::FromEnvironment();
  ServerOptions options;
  options.num_cpu_devices = static_cast<int>(f.Int("devices", 1, 1));
  options.intra_op_threads = static_cast<int>(f.Int("threads", 0, 0));
  options.inter_op_threads = options.intra_op_threads;
  options.recv_timeout = std::chrono::milliseconds(f.Int("recv-timeout-ms", 30000, 1));
  return Serve(config, WithSecret(options, f.Has("insecure")));
}

namespace {

// Serves `config`'s task until `client` (global index) has been up (it answered, or it asked us
// something) and is gone. A client that leaves normally has deregistered its graphs here; one
// that is gone with graphs still registered died in the middle of training: exit status 1.
int ServeClient(const ClusterConfig& config, int client) {
  bool seen = false;
  const TaskId client_task = config.cluster.TaskAt(client);
  return Serve(config, WithSecret({}, false), [&](Server& server) -> std::string {
    const ControlResult r = server.control().Call(client, ControlMethod::kHealth, EncodeEmpty(), std::chrono::seconds(2));
    seen = seen || r.status.ok() || server.HeardFrom(client);
    if (!seen || r.status.ok()) return "";
    if (server.Health().graphs == 0) return "the client has finished";
    std::fprintf(stderr, "weft-zoo server: task %s: Unavailable: the client, task %s, is gone in the middle of "
                 "training (its graphs are still registered here): %s\n", server.task().ToString().c_str(),
                 client_task.ToString().c_str(), r.status.ToString().c_str());
    // The client's last step may still be unwinding here (its Recvs failing one by one); tearing the
    // server down under it crashed the process once in a CI run (exit 139 instead of 1). Nothing
    // of this task outlives its client, so it leaves at once with status 1 instead.
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(1);
  });
}

}  // namespace

int ServeParameterServerTask(const std::string& mode) {
  const PsMode m = ParsePsMode(mode);
  const ClusterConfig config = ClusterConfig::FromEnvironment();
  const TaskId task = config.RequireTask();
  if (task.job == "ps") return Serve(config, WithSecret({}, false));
  if (m == PsMode::kAsync || task == TaskId{"worker", 0}) return -1;  // a client: it trains
  // Sync: worker:0 drives this task's replica.
  return ServeClient(config, config.cluster.GlobalIndex({"worker", 0}));
}

int ServePipelineStage() {
  const ClusterConfig config = ClusterConfig::FromEnvironment();
  const TaskId task = config.RequireTask();
  const std::vector<TaskId> stages = config.cluster.TrainingTasks();
  if (!stages.empty() && task == stages.front()) return -1;  // the client: it trains
  if (stages.empty()) return -1;  // the strategy names the problem
  return ServeClient(config, config.cluster.GlobalIndex(stages.front()));
}

namespace {

// ParameterServerStrategy with the server of this process's task (from TF_CONFIG) inside it.
struct ServerHolder {
  std::unique_ptr<Server> server;
};
class OwningParameterServerStrategy : private ServerHolder, public ParameterServerStrategy {
 public:
  OwningParameterServerStrategy(std::unique_ptr<Server> s, PsMode mode)
      : ServerHolder{std::move(s)}, ParameterServerStrategy(ServerHolder::server.get(), {}, mode) {}
};

class OwningPipelineStrategy : private ServerHolder, public ClusterPipelineStrategy {
 public:
  OwningPipelineStrategy(std::unique_ptr<Server> s, const PipelineOptions& options)
      : ServerHolder{std::move(s)}, ClusterPipelineStrategy(ServerHolder::server.get(), options) {}
};

}  // namespace

std::unique_ptr<Strategy> MakeClusterPipelineStrategy(const PipelineOptions& options) {
  return std::make_unique<OwningPipelineStrategy>(
      std::make_unique<Server>(ClusterConfig::FromEnvironment(), WithSecret({}, false)), options);
}

std::unique_ptr<Strategy> MakeParameterServerStrategy(const std::string& mode) {
  return std::make_unique<OwningParameterServerStrategy>(
      std::make_unique<Server>(ClusterConfig::FromEnvironment(), WithSecret({}, false)), ParsePsMode(mode));
}

}  // namespace weft::zoo
