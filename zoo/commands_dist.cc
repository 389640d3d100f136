// The distributed commands of weft-zoo: `launch` (a cluster of processes on this machine).
#include "zoo/commands_dist.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#ifdef WEFT_HAVE_UCX
#include "distributed/multi_worker_strategy.h"
#include "zoo/launch.h"
#endif

namespace weft::zoo {

#ifdef WEFT_HAVE_UCX

// weft-zoo launch -n N [--ps M] [--chief] [--host ADDR] [--grace SECONDS] [--max-restarts K] [--status] -- COMMAND [ARGS...]
int LaunchCommand(const std::vector<std::string>& args) {
  auto sep = std::find(args.begin(), args.end(), "--");
  if (sep == args.end() || sep + 1 == args.end()) {
    throw UsageError("launch needs the command after '--' (weft-zoo launch -n 2 -- python3 train.py)");
  }
  std::vector<std::string> own(args.begin(), sep);
  for (std::string& a : own) {
    if (a == "-n") a = "--n";
  }
  Flags f(own, {"n", "ps", "host", "grace", "max-restarts"}, {"chief", "status"});
  if (!f.positional().empty()) throw UsageError(fmt::format("launch: unexpected '{}' before '--'", f.positional()[0]));
  if (!f.Has("n")) throw UsageError("launch needs -n N (the number of workers)");
  LaunchOptions o;
  o.workers = static_cast<int>(f.Int("n", 1, 1));
  o.ps = static_cast<int>(f.Int("ps", 0, 0));
  o.chief = f.Has("chief");
  o.host = f.Str("host", "127.0.0.1");
  o.grace = std::chrono::milliseconds(static_cast<int64_t>(1000 * f.Float("grace", 10.0)));
  o.max_restarts = static_cast<int>(f.Int("max-restarts", 0, 0));
  o.status = f.Has("status");
  o.command.assign(sep + 1, args.end());
  return Launch(o);
}
#endif

std::unique_ptr<Strategy> MakeMultiWorkerStrategy(const Flags& f, int devices) {
#ifdef WEFT_HAVE_UCX
  ClusterResolverOptions r;
  std::stringstream hosts(f.Str("hosts", ""));
  for (std::string h; std::getline(hosts, h, ',');) {
    if (!h.empty()) r.hosts.push_back(h);
  }
  r.hostfile = f.Str("hostfile", "");
  r.base_port = static_cast<int>(f.Int("base-port", 0, 0));
  MultiWorkerOptions o;
  o.cluster = ResolveCluster(r);
  o.devices_per_worker = devices;
  o.collective_timeout = std::chrono::milliseconds(static_cast<int64_t>(1000 * f.Float("collective-timeout", 60)));
  auto s = std::make_unique<MultiWorkerMirroredStrategy>(o);
  std::printf("worker %d of %d (task %s)%s\n", s->worker_index(), s->num_workers(), s->task().ToString().c_str(),
              s->is_chief() ? ", chief" : "");
  return s;
#else
  (void)f;
  (void)devices;
  throw Error(errors::FailedPrecondition("--strategy multi_worker needs UCX: this weft-zoo was built without it"));
#endif
}

}  // namespace weft::zoo
