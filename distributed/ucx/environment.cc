#include "distributed/ucx/environment.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace weft {
namespace {

enum class Kind { kBool, kCount };

struct Variable {
  const char* name;
  Kind kind;
  const char* what;
  std::function<void(UcxTransportOptions*, uint64_t)> apply;
};

const std::vector<Variable>& Variables() {
  using us = std::chrono::microseconds;
  static const std::vector<Variable> kVariables = {
      {"WEFT_UCX_LEND", Kind::kBool, "UcxWorkerOptions::lend: a waiting thread drives the worker",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.lend = v != 0; }},
      {"WEFT_UCX_LEND_PARK_US", Kind::kCount, "UcxWorkerOptions::lend_park: the parked progress thread looks again after",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.lend_park = us(v); }},
      {"WEFT_UCX_SPIN_US", Kind::kCount, "UcxWorkerOptions::spin: polling after the last activity",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.spin = us(v); }},
      {"WEFT_UCX_BUSY_SPIN_US", Kind::kCount, "UcxWorkerOptions::busy_spin: polling while work is outstanding",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.busy_spin = us(v); }},
      {"WEFT_UCX_YIELD", Kind::kBool, "UcxWorkerOptions::yield_while_busy",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.yield_while_busy = v != 0; }},
      {"WEFT_UCX_CM_WORKER", Kind::kBool, "UcxWorkerOptions::cm_worker: a second ucp worker for the connection manager",
       [](UcxTransportOptions* o, uint64_t v) { o->worker.cm_worker = v != 0; }},
      {"WEFT_UCX_EAGER", Kind::kCount, "UcxTransportOptions::eager_threshold (bytes; the measured one's upper bound)",
       [](UcxTransportOptions* o, uint64_t v) { o->eager_threshold = v; }},
      {"WEFT_UCX_MEASURE", Kind::kBool, "UcxTransportOptions::measure_eager_threshold",
       [](UcxTransportOptions* o, uint64_t v) { o->measure_eager_threshold = v != 0; }},
      {"WEFT_UCX_SLOTS", Kind::kBool, "UcxTransportOptions::receive_slots: small tensors to receives posted ahead",
       [](UcxTransportOptions* o, uint64_t v) { o->receive_slots = v != 0; }},
      {"WEFT_UCX_COLLECTIVE_CHANNEL", Kind::kBool,
       "UcxTransportOptions::collective_channel: small collectives' messages over the persistent channel",
       [](UcxTransportOptions* o, uint64_t v) { o->collective_channel = v != 0; }},
      {"WEFT_UCX_WINDOW", Kind::kCount, "UcxTransportOptions::rendezvous_window_bytes",
       [](UcxTransportOptions* o, uint64_t v) { o->rendezvous_window_bytes = v; }},
      {"WEFT_UCX_LOG", Kind::kBool, "UcxTransportOptions::log_thresholds: print each settled threshold on stderr",
       [](UcxTransportOptions* o, uint64_t v) { o->log_thresholds = v != 0; }},
  };
  return kVariables;
}

// A non-negative decimal integer filling the whole string; nullopt otherwise.
std::optional<uint64_t> ParseCount(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return std::nullopt;
  return std::strtoull(s.c_str(), nullptr, 10);
}

// getenv through the caller's function when given, else the process's.
std::optional<std::string> Lookup(const GetEnv& getenv, const std::string& name) {
  if (getenv) return getenv(name);
  if (const char* v = std::getenv(name.c_str())) return std::string(v);
  return std::nullopt;
}

// An IPv4 or IPv6 address, comparable by its bytes.
struct IpAddress {
  int family = 0;
  unsigned char bytes[16] = {};
  bool operator==(const IpAddress& o) const {
    return family == o.family && std::memcmp(bytes, o.bytes, family == AF_INET ? 4 : 16) == 0;
  }
  bool IsWildcard() const {
    static const unsigned char zero[16] = {};
    return std::memcmp(bytes, zero, family == AF_INET ? 4 : 16) == 0;
  }
  bool IsLoopback() const {
    static const unsigned char v6_loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return family == AF_INET ? bytes[0] == 127 : std::memcmp(bytes, v6_loopback, 16) == 0;
  }
};

std::optional<IpAddress> FromSockaddr(const sockaddr* sa) {
  if (sa == nullptr) return std::nullopt;
  IpAddress a;
  a.family = sa->sa_family;
  if (sa->sa_family == AF_INET) {
    std::memcpy(a.bytes, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    std::memcpy(a.bytes, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
  } else {
    return std::nullopt;
  }
  return a;
}

// The host's addresses: itself when numeric, else what the resolver says (in its order).
std::vector<IpAddress> Addresses(const std::string& host) {
  std::string h = host;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);  // "[::1]"
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::vector<IpAddress> out;
  if (getaddrinfo(h.c_str(), nullptr, &hints, &res) != 0) return out;
  for (const addrinfo* r = res; r != nullptr; r = r->ai_next) {
    if (auto a = FromSockaddr(r->ai_addr)) out.push_back(*a);
  }
  freeaddrinfo(res);
  return out;
}

// The RDMA ports ("mlx5_0:1") whose network device is interface `name`, from sysfs.
std::vector<std::string> RdmaPortsOf(const std::string& name, const std::string& sysfs_root) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path ib = fs::path(sysfs_root) / "class/net" / name / "device/infiniband";
  for (const auto& dev : fs::directory_iterator(ib, ec)) {
    std::vector<std::string> ports;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec)) {
      ports.push_back(dev.path().filename().string() + ":" + port.path().filename().string());
    }
    std::sort(ports.begin(), ports.end());
    out.insert(out.end(), ports.begin(), ports.end());
  }
  return out;
}


}  // namespace

void ApplyUcxEnvironment(UcxTransportOptions* options, const GetEnv& getenv) {
  for (const Variable& var : Variables()) {
    const std::optional<std::string> value = Lookup(getenv, var.name);
    if (!value) continue;
    const std::optional<uint64_t> n = ParseCount(*value);
    if (!n || (var.kind == Kind::kBool && *n > 1)) {
      throw Error(errors::InvalidArgument("{}='{}': expected {}", var.name, *value,
                                          var.kind == Kind::kBool ? "0 or 1" : "a non-negative integer"));
    }
    var.apply(options, *n);
  }
}

std::string UcxEnvironmentHelp() {
  std::string out;
  for (const Variable& var : Variables()) {
    out += fmt::format("  {:<24} {}\n", fmt::format("{}={}", var.name, var.kind == Kind::kBool ? "0|1" : "N"), var.what);
  }
  return out;
}

std::optional<std::string> NetDevicesForHost(const std::string& host, const std::string& sysfs_root) {
  const std::vector<IpAddress> wanted = Addresses(host);
  for (const IpAddress& a : wanted) {
    if (a.IsWildcard()) return std::nullopt;  // every interface, as asked
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::string> exact, loopback;
  for (const IpAddress& a : wanted) {
    for (const ifaddrs* i = list; i != nullptr && !exact; i = i->ifa_next) {
      const std::optional<IpAddress> held = FromSockaddr(i->ifa_addr);
      if (held && *held == a) exact = i->ifa_name;
      if (held && !loopback && a.IsLoopback() && (i->ifa_flags & IFF_LOOPBACK) != 0) loopback = i->ifa_name;
    }
    if (exact) break;
  }
  freeifaddrs(list);
  const std::optional<std::string> name = exact ? exact : loopback;
  if (!name) return std::nullopt;
  std::string devices = *name;
  for (const std::string& port : RdmaPortsOf(*name, sysfs_root)) devices += "," + port;
  return devices;
}

std::optional<std::string> SetNetDevicesFromAddress(std::map<std::string, std::string>* config, const std::string& host,
                                                    const GetEnv& getenv) {
  if (config->count("NET_DEVICES") != 0 || Lookup(getenv, "UCX_NET_DEVICES")) return std::nullopt;
  std::optional<std::string> devices = NetDevicesForHost(host);
  if (devices) (*config)["NET_DEVICES"] = *devices;
  return devices;
}

}  // namespace weft
