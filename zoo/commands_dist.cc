// The distributed commands of weft-zoo: `launch` (a cluster of processes on this machine).
#include "zoo/commands_dist.h"

#include <algorithm>
#include <chrono>

#include "zoo/launch.h"

namespace weft::zoo {

// weft-zoo launch -n N [--ps M] [--chief] [--host ADDR] [--grace SECONDS] -- COMMAND [ARGS...]
int LaunchCommand(const std::vector<std::string>& args) {
  auto sep = std::find(args.begin(), args.end(), "--");
  if (sep == args.end() || sep + 1 == args.end()) {
    throw UsageError("launch needs the command after '--' (weft-zoo launch -n 2 -- python3 train.py)");
  }
  std::vector<std::string> own(args.begin(), sep);
  for (std::string& a : own) {
    if (a == "-n") a = "--n";
  }
  Flags f(own, {"n", "ps", "host", "grace"}, {"chief"});
  if (!f.positional().empty()) throw UsageError(fmt::format("launch: unexpected '{}' before '--'", f.positional()[0]));
  if (!f.Has("n")) throw UsageError("launch needs -n N (the number of workers)");
  LaunchOptions o;
  o.workers = static_cast<int>(f.Int("n", 1, 1));
  o.ps = static_cast<int>(f.Int("ps", 0, 0));
  o.chief = f.Has("chief");
  o.host = f.Str("host", "127.0.0.1");
  o.grace = std::chrono::milliseconds(static_cast<int64_t>(1000 * f.Float("grace", 10.0)));
  o.command.assign(sep + 1, args.end());
  return Launch(o);
}

}  // namespace weft::zoo
