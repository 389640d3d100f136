// The distributed commands of weft-zoo (zoo/commands.cc dispatches to them).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "train/strategy.h"
#include "zoo/commands.h"

namespace weft::zoo {

// weft-zoo launch -n N [--ps M] [--chief] [--host ADDR] [--grace SECONDS] -- COMMAND [ARGS...]
int LaunchCommand(const std::vector<std::string>& args);

// --strategy multi_worker: MultiWorkerMirroredStrategy over `devices` CPU devices per worker,
// the cluster from TF_CONFIG or the launcher's rank (--hosts, --hostfile, --base-port),
// --collective-timeout SECONDS (default 60). FailedPrecondition in a build without UCX.
// --trace-events N: the always-on trace ring's size (default 16384; 0: no trace).
std::unique_ptr<Strategy> MakeMultiWorkerStrategy(const Flags& f, int devices, int shard_optimizer_state = 0);

// `--dump-trace FILE`: writes the multi-worker strategy's trace ring (runtime/trace_ring.h) to
// FILE; returns the number of events written. UsageError for any other strategy.
size_t DumpStrategyTrace(Strategy* strategy, const std::string& path);

// weft-zoo trace merge DIR -o FILE: the trace dumps in DIR (weft-trace-*.json) merged into one
// timeline (runtime/trace_merge.h), clocks aligned.
int TraceCommand(const std::vector<std::string>& args);

}  // namespace weft::zoo
