// Cluster descriptions (distributed/cluster_spec.h, cluster_resolver.h): TF_CONFIG and the
// cluster-spec JSON that `weft-zoo server`, `weft.distribute.Server` and the launchers read, the
// --cluster/--task flags, and the host lists of mpirun/srun ranks (WEFT_HOSTS, a hostfile).
// Input: one selector byte, then the text (for the flags: cluster, a newline, task).
#include "distributed/cluster_resolver.h"
#include "distributed/cluster_spec.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

enum Selector : char { kTfConfig, kClusterJson, kFlags, kHosts, kHostfile, kSelectors };

std::vector<std::string> Seeds() {
  const ClusterConfig c = ClusterConfig::FromFlags(
      "chief=localhost:2222;worker=127.0.0.1:2223,[::1]:2224;ps=host.example:2225;evaluator=10.0.0.1:2226",
      "worker:1");
  return {
      Selected(kTfConfig, c.ToTfConfig({"ps", 0})),
      Selected(kTfConfig, R"({"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 0},)"
          R"( "environment": "cloud", "rpc_layer": "grpc"})"),
      Selected(kClusterJson, c.cluster.ToJson()),
      Selected(kClusterJson, R"({"worker": ["a:1", "b:2"], "ps": ["\u0063:3"]})"),
      Selected(kFlags, "worker=127.0.0.1:10090,127.0.0.1:10091;ps=127.0.0.1:10092\nworker:1"),
      Selected(kHosts, "node1,node2:7000,[::1]:7001,10.0.0.4"),
      Selected(kHostfile, "# OpenMPI hostfile\nnode1 slots=2\nnode2:7000\n\n10.0.0.4  # last\n"),
  };
}

void Decode(std::string_view in) {
  if (in.empty()) throw Error(errors::InvalidArgument("empty input (no selector byte)"));
  const std::string_view text = in.substr(1);
  const int selector = static_cast<unsigned char>(in[0]) % kSelectors;
  switch (selector) {
    case kTfConfig: ClusterConfig::FromTfConfig(text); break;
    case kClusterJson: ClusterSpec::FromJson(text); break;
    case kHosts:
    case kHostfile: {  // rank 1 of 4 under mpirun, the hosts from the input
      const TempFile hostfile(text);
      ClusterResolverOptions o;
      o.getenv = [&](const std::string& name) -> std::optional<std::string> {
        if (name == "OMPI_COMM_WORLD_RANK") return "1";
        if (name == "OMPI_COMM_WORLD_SIZE") return "4";
        if (name == "WEFT_HOSTS" && selector == kHosts) return std::string(text);
        if (name == "WEFT_HOSTFILE" && selector == kHostfile) return hostfile.path();
        return std::nullopt;
      };
      ResolveCluster(o);
      break;
    }
    default: {
      const size_t nl = text.find('\n');
      ClusterConfig::FromFlags(text.substr(0, nl), nl == std::string_view::npos ? "" : text.substr(nl + 1));
    }
  }
}

}  // namespace

WEFT_FUZZ_TARGET(cluster, {.seeds = Seeds, .decode = Decode});

}  // namespace weft::fuzz
