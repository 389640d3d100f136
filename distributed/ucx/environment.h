// The WEFT_UCX_* environment overrides of UcxTransportOptions, read in this one place, so that a
// whole program (weft-zoo, a Python script, a benchmark) can be A/B'd without recompiling. The
// library never reads them on its own: the top-level users call ApplyUcxEnvironment on the options
// they build (Server, MultiWorkerMirroredStrategy, bench/ucx_sendrecv, bench/allreduce).
//
//   UcxTransportOptions o;                      // defaults, then the program's own choices
//   o.eager_threshold = 16 << 10;
//   ApplyUcxEnvironment(&o);                    // WEFT_UCX_EAGER=8192 in the environment wins
//   std::fputs(UcxEnvironmentHelp().c_str(), stdout);   // the list, for --help texts
//
// Variables (docs/ucx.md lists the same): booleans are 0 or 1, the rest non-negative integers.
//   WEFT_UCX_LEND=0|1           UcxWorkerOptions::lend (a waiting thread drives the worker)
//   WEFT_UCX_LEND_PARK_US=N     UcxWorkerOptions::lend_park
//   WEFT_UCX_SPIN_US=N          UcxWorkerOptions::spin
//   WEFT_UCX_BUSY_SPIN_US=N     UcxWorkerOptions::busy_spin
//   WEFT_UCX_YIELD=0|1          UcxWorkerOptions::yield_while_busy
//   WEFT_UCX_CM_WORKER=0|1      UcxWorkerOptions::cm_worker
//   WEFT_UCX_EAGER=BYTES        UcxTransportOptions::eager_threshold
//   WEFT_UCX_MEASURE=0|1        UcxTransportOptions::measure_eager_threshold
//   WEFT_UCX_WINDOW=BYTES       UcxTransportOptions::rendezvous_window_bytes
//   WEFT_UCX_LOG=0|1            UcxTransportOptions::log_thresholds
//
// Thread-safe as getenv is (call it before starting threads that set the environment).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "distributed/ucx/transport_options.h"

namespace weft {

// Reads the environment (or `getenv`, for tests) and overrides the fields whose variable is set.
// Throws Error (InvalidArgument naming the variable and its value) when a value does not parse.
void ApplyUcxEnvironment(UcxTransportOptions* options,
                         const std::function<std::optional<std::string>(const std::string& name)>& getenv = {});

// One line per variable: "WEFT_UCX_LEND=0|1  <what it sets>".
std::string UcxEnvironmentHelp();

}  // namespace weft
