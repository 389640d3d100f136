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
std::unique_ptr<Strategy> MakeMultiWorkerStrategy(const Flags& f, int devices);

}  // namespace weft::zoo
