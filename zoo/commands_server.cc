// `weft-zoo server`: runs this task's server (distributed/server/server.h) until SIGTERM or SIGINT;
// and `--strategy parameter_server` for `weft-zoo train` (this process is the client's task).
//
//   TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:10090"], "ps": ["127.0.0.1:10091"]},
//               "task": {"type": "ps", "index": 0}}' weft-zoo server
//   weft-zoo server --cluster 'worker=127.0.0.1:10090;ps=127.0.0.1:10091' --task ps:0 [--devices N]
//       [--threads N] [--recv-timeout-ms MS]
#include <signal.h>

#include <cstdio>

#include "distributed/ps_strategy.h"
#include "distributed/server/server.h"
#include "zoo/commands.h"

namespace weft::zoo {

int ServerCommand(const std::vector<std::string>& args) {
  Flags f(args, {"cluster", "task", "devices", "threads", "recv-timeout-ms"}, {});
  if (!f.positional().empty()) throw UsageError("server takes no positional arguments");
  if (f.Has("task") && !f.Has("cluster")) throw UsageError("--task needs --cluster");
  const ClusterConfig config =
      f.Has("cluster") ? ClusterConfig::FromFlags(f.Str("cluster", ""), f.Str("task", "")) : ClusterConfig::FromEnvironment();
  ServerOptions options;
  options.num_cpu_devices = static_cast<int>(f.Int("devices", 1, 1));
  options.intra_op_threads = static_cast<int>(f.Int("threads", 0, 0));
  options.inter_op_threads = options.intra_op_threads;
  options.recv_timeout = std::chrono::milliseconds(f.Int("recv-timeout-ms", 30000, 1));
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
  sigwait(&stop, &sig);
  std::printf("weft-zoo server: task %s stopping (signal %d)\n", server.task().ToString().c_str(), sig);
  std::fflush(stdout);
  return 0;
}

namespace {

// ParameterServerStrategy with the server of this process's task (from TF_CONFIG) inside it.
struct ServerHolder {
  std::unique_ptr<Server> server;
};
class OwningParameterServerStrategy : private ServerHolder, public ParameterServerStrategy {
 public:
  explicit OwningParameterServerStrategy(std::unique_ptr<Server> s)
      : ServerHolder{std::move(s)}, ParameterServerStrategy(server.get()) {}
};

}  // namespace

std::unique_ptr<Strategy> MakeParameterServerStrategy() {
  return std::make_unique<OwningParameterServerStrategy>(std::make_unique<Server>(ClusterConfig::FromEnvironment()));
}

}  // namespace weft::zoo
