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
//
// Also here: which network devices UCX may use, from the task's cluster-spec address
// (NetDevicesForHost, SetNetDevicesFromAddress; UcxTransport calls the latter for every task), so
// that UCX's transports listen only on the interface the cluster spec names (docs/ucx.md,
// "Listening only where told").
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "distributed/ucx/transport_options.h"

namespace weft {

using GetEnv = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the environment (or `getenv`, for tests) and overrides the fields whose variable is set.
// Throws Error (InvalidArgument naming the variable and its value) when a value does not parse.
void ApplyUcxEnvironment(UcxTransportOptions* options, const GetEnv& getenv = {});

// One line per variable: "WEFT_UCX_LEND=0|1  <what it sets>".
std::string UcxEnvironmentHelp();

// The value for UCX's NET_DEVICES that keeps a task whose cluster-spec host is `host` on the
// interface owning that address: the interface's name ("lo" for 127.0.0.1, "eth0"), followed by the
// RDMA ports (verbs, "mlx5_0:1") whose network device it is, so RoCE and IPoIB stay usable; found
// with getifaddrs and <sysfs_root>/class/net/<if>/device/infiniband/. An address of the loopback
// range (127.0.0.0/8, ::1) that no interface holds exactly is the loopback interface's; a host name
// is resolved and its first address held by an interface here is used.
// nullopt (no restriction: UCX's default, every device) when the host is a wildcard (0.0.0.0, ::: the
// user asked for every interface) or when no interface here holds it (the listener's bind then
// fails naming the address). Shared-memory and self transports are not network devices: unaffected.
std::optional<std::string> NetDevicesForHost(const std::string& host, const std::string& sysfs_root = "/sys");

// Sets config["NET_DEVICES"] from NetDevicesForHost(host) unless the user chose devices already:
// UCX_NET_DEVICES in the environment (read through `getenv`, default the process's) or NET_DEVICES
// in `config`. Returns the value it set (nullopt: left alone).
std::optional<std::string> SetNetDevicesFromAddress(std::map<std::string, std::string>* config, const std::string& host,
                                                    const GetEnv& getenv = {});

}  // namespace weft
