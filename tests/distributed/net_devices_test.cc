// Listening only where told (issue 17, finding 2): UCX's network transports use only the interface
// that owns the task's cluster-spec address. NetDevicesForHost maps an address to that interface
// (and its RDMA ports, from a sysfs tree made here), SetNetDevicesFromAddress leaves a user's own
// choice alone, and a running transport's process listens on no TCP port of another interface: its
// listening sockets are read from /proc/net/tcp{,6} (those whose inode is one of this process's
// file descriptors), as `ss -ltnp` shows them.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "distributed/ucx/environment.h"
#include "distributed/ucx/transport.h"
#include "tests/distributed/listening_sockets.h"

namespace weft {
namespace {

// The addresses ("127.0.0.1:43155", "[::1]:5000") of the TCP sockets this process listens on.
std::vector<std::string> OwnListeningAddresses() {
  std::vector<std::string> out;
  for (const testing::ListeningSocket& l : testing::OwnListeningSockets()) out.push_back(l.ToString());
  return out;
}

// A non-loopback IPv4 address of this machine and its interface, when it has one that is up.
// `for_ucx`: one UCX's tcp transport uses by default (running, not a bridge: UCX >= 1.16 leaves
// bridges out unless UCX_TCP_BRIDGE_DEVICES says otherwise).
std::optional<std::pair<std::string, std::string>> ExternalIpv4(bool for_ucx = false) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<std::pair<std::string, std::string>> out;
  for (const ifaddrs* i = list; i != nullptr && !out; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    if ((i->ifa_flags & IFF_UP) == 0) continue;
    if (for_ucx && ((i->ifa_flags & IFF_RUNNING) == 0 ||
                    std::filesystem::exists(std::filesystem::path("/sys/class/net") / i->ifa_name / "bridge"))) {
      continue;
    }
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof(text));
    out = std::make_pair(std::string(text), std::string(i->ifa_name));
  }
  freeifaddrs(list);
  return out;
}

UcxTransportOptions LoopbackTask() {
  UcxTransportOptions o;
  o.cluster = ClusterSpec::FromFlag("worker=127.0.0.1:1,127.0.0.1:2");
  o.task = {"worker", 0};
  o.listen_port_override = 0;
  o.measure_eager_threshold = false;
  o.context.config["TLS"] = "tcp,self";
  o.cluster_secret = "net-devices-test-secret";
  return o;
}

}  // namespace

TEST_CASE("net devices: an address maps to the interface that holds it") {
  // Linux names its loopback interface "lo"; the whole 127.0.0.0/8 range and "localhost" are it.
  CHECK(NetDevicesForHost("127.0.0.1") == std::optional<std::string>("lo"));
  CHECK(NetDevicesForHost("127.0.0.5") == std::optional<std::string>("lo"));
  CHECK(NetDevicesForHost("localhost") == std::optional<std::string>("lo"));
  // Wildcards ask for every interface: no restriction.
  CHECK_FALSE(NetDevicesForHost("0.0.0.0").has_value());
  CHECK_FALSE(NetDevicesForHost("::").has_value());
  // An address no interface here holds (TEST-NET-2, RFC 5737) and a name that does not resolve.
  CHECK_FALSE(NetDevicesForHost("198.51.100.7").has_value());
  CHECK_FALSE(NetDevicesForHost("no-such-host.invalid").has_value());
  if (auto ext = ExternalIpv4()) {
    CHECK(NetDevicesForHost(ext->first) == std::optional<std::string>(ext->second));
  }
}

TEST_CASE("net devices: the RDMA ports of the interface come with it") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / fmt::format("weft-sysfs-{}", getpid());
  fs::remove_all(root);
  for (const char* port : {"mlx5_0/ports/1", "mlx5_0/ports/2", "mlx5_1/ports/1"}) {
    fs::create_directories(root / "class/net/lo/device/infiniband" / port);
  }
  CHECK(NetDevicesForHost("127.0.0.1", root.string()) ==
        std::optional<std::string>("lo,mlx5_0:1,mlx5_0:2,mlx5_1:1"));
  fs::remove_all(root);
}

TEST_CASE("net devices: the user's own choice stays") {
  auto env = [](std::optional<std::string> value) {
    return [value](const std::string& name) { return name == "UCX_NET_DEVICES" ? value : std::nullopt; };
  };
  std::map<std::string, std::string> config;
  CHECK(SetNetDevicesFromAddress(&config, "127.0.0.1", env(std::nullopt)) == std::optional<std::string>("lo"));
  CHECK(config["NET_DEVICES"] == "lo");
  config.clear();
  CHECK_FALSE(SetNetDevicesFromAddress(&config, "127.0.0.1", env("eth1")).has_value());
  CHECK(config.count("NET_DEVICES") == 0);  // UCX reads UCX_NET_DEVICES itself
  config = {{"NET_DEVICES", "all"}};
  CHECK_FALSE(SetNetDevicesFromAddress(&config, "127.0.0.1", env(std::nullopt)).has_value());
  CHECK(config["NET_DEVICES"] == "all");
}

TEST_CASE("net devices: a task on 127.0.0.1 listens on no other interface's address") {
  if (std::getenv("UCX_NET_DEVICES") != nullptr) {
    MESSAGE("skipped: UCX_NET_DEVICES is set in the environment (the user's choice wins)");
    return;
  }
  const std::vector<std::string> before = OwnListeningAddresses();
  std::vector<std::string> listening;
  {
    UcxTransport t(LoopbackTask(), nullptr, nullptr);
    for (const std::string& a : OwnListeningAddresses()) {
      if (std::find(before.begin(), before.end(), a) == before.end()) listening.push_back(a);
    }
    // The listener on the spec's host, and UCX's tcp transport on lo: nothing anywhere else.
    CHECK(std::find(listening.begin(), listening.end(), fmt::format("127.0.0.1:{}", t.port())) != listening.end());
    for (const std::string& a : listening) {
      CHECK_MESSAGE(a.rfind("127.0.0.1:", 0) == 0, "listening on ", a, " besides 127.0.0.1");
    }
  }
  // The check sees other interfaces when UCX is told to use them (where the machine has one):
  // NET_DEVICES=all is UCX's default, what a task listened on before.
  if (auto ext = ExternalIpv4(/*for_ucx=*/true)) {
    UcxTransportOptions o = LoopbackTask();
    o.context.config["NET_DEVICES"] = "all";
    UcxTransport t(o, nullptr, nullptr);
    const std::vector<std::string> all = OwnListeningAddresses();
    const bool external = std::any_of(all.begin(), all.end(),
                                      [&](const std::string& a) { return a.rfind(ext->first + ":", 0) == 0; });
    CHECK_MESSAGE(external,
                  "UCX's tcp transport should listen on ", ext->first, " (", ext->second, ") with NET_DEVICES=all");
  }
}

}  // namespace weft
