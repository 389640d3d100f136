// The distributed commands of weft-zoo: `launch` (a cluster of processes on this machine).
#include "zoo/commands_dist.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

#include "core/file.h"
#include "runtime/trace_merge.h"

#ifdef WEFT_HAVE_UCX
#include "distributed/multi_worker_strategy.h"
#include "distributed/ps_strategy.h"
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

std::unique_ptr<Strategy> MakeMultiWorkerStrategy(const Flags& f, int devices, int shard_optimizer_state) {
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
  o.shard_optimizer_state = shard_optimizer_state;
  o.collective_timeout = std::chrono::milliseconds(static_cast<int64_t>(1000 * f.Float("collective-timeout", 60)));
  o.trace_events = static_cast<size_t>(f.Int("trace-events", static_cast<int64_t>(o.trace_events), 0));
  auto s = std::make_unique<MultiWorkerMirroredStrategy>(o);
  std::printf("worker %d of %d (task %s)%s\n", s->worker_index(), s->num_workers(), s->task().ToString().c_str(),
              s->is_chief() ? ", chief" : "");
  return s;
#else
  (void)f;
  (void)devices;
  (void)shard_optimizer_state;
  throw Error(errors::FailedPrecondition("--strategy multi_worker needs UCX: this weft-zoo was built without it"));
#endif
}

size_t DumpStrategyTrace(Strategy* strategy, const std::string& path) {
#ifdef WEFT_HAVE_UCX
  if (auto* mw = dynamic_cast<MultiWorkerMirroredStrategy*>(strategy); mw != nullptr && mw->trace_ring() != nullptr) {
    return mw->trace_ring()->Dump(path, "--dump-trace at the end of the run");
  }
  if (auto* ps = dynamic_cast<ParameterServerStrategy*>(strategy); ps != nullptr && ps->server()->trace_ring() != nullptr) {
    return ps->server()->trace_ring()->Dump(path, "--dump-trace at the end of the run");
  }
#else
  (void)strategy;
  (void)path;
#endif
  throw UsageError("--dump-trace needs --strategy multi_worker (with --trace-events > 0) or parameter_server");
}

int TraceCommand(const std::vector<std::string>& args) {
  Flags f(args, {"o"}, {});
  if (f.positional().size() != 2 || f.positional()[0] != "merge" || !f.Has("o")) {
    throw UsageError("usage: weft-zoo trace merge DIR -o FILE");
  }
  const std::string dir = f.positional()[1];
  if (!std::filesystem::is_directory(dir)) throw Error(errors::NotFound("trace merge: '{}' is not a directory", dir));
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("weft-trace-") && name.ends_with(".json")) paths.push_back(entry.path().string());
  }
  if (paths.empty()) throw Error(errors::NotFound("trace merge: no weft-trace-*.json in '{}'", dir));
  std::vector<TraceDump> dumps;
  for (const std::string& p : paths) {
    dumps.push_back(ReadTraceDump(ReadRegularFile(p, "trace dump"), p));
  }
  // Rank order: chief, then workers by index ("worker:10" after "worker:9").
  std::vector<size_t> order(dumps.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rank_key = [&](size_t i) {
    const std::string& p = dumps[i].process;
    const size_t colon = p.rfind(':');
    const int index = colon == std::string::npos ? 0 : std::atoi(p.c_str() + colon + 1);
    return std::make_tuple(p.starts_with("chief") ? 0 : 1, p.substr(0, colon), index, paths[i]);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank_key(a) < rank_key(b); });
  std::vector<TraceDump> sorted;
  for (size_t i : order) {
    const TraceDump& d = dumps[i];
    std::printf("%s: %s: %zu events%s, clock %+.1f us from %s (round trip %.1f us); dumped: %s\n", paths[i].c_str(),
                d.process.c_str(), d.events.size(), d.complete ? "" : (" (cut short: " + d.problem + ")").c_str(),
                static_cast<double>(d.offset_ns) / 1000.0, d.reference.empty() ? "?" : d.reference.c_str(),
                static_cast<double>(d.rtt_ns) / 1000.0, d.why.c_str());
    sorted.push_back(d);
  }
  const std::string out_path = f.Str("o", "");
  std::ofstream out(out_path, std::ios::binary);
  if (!out) throw Error(errors::NotFound("trace merge: cannot write '{}'", out_path));
  out << MergeTraceDumps(sorted);
  if (!out.flush()) throw Error(errors::NotFound("trace merge: cannot write '{}'", out_path));
  std::printf("merged %zu dumps into %s\n", sorted.size(), out_path.c_str());
  return 0;
}

}  // namespace weft::zoo
