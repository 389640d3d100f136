// Cluster descriptions (distributed/cluster_spec.h): TF_CONFIG and the cluster-spec JSON that
// `weft-zoo server`, `weft.distribute.Server` and the launchers read, and the --cluster/--task flags.
// Input: one selector byte, then the text (for the flags: cluster, a newline, task).
#include "distributed/cluster_spec.h"
#include "../fuzz.h"

namespace weft::fuzz {
namespace {

enum Selector : char { kTfConfig, kClusterJson, kFlags, kSelectors };

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
  };
}

void Decode(std::string_view in) {
  if (in.empty()) throw Error(errors::InvalidArgument("empty input (no selector byte)"));
  const std::string_view text = in.substr(1);
  switch (static_cast<unsigned char>(in[0]) % kSelectors) {
    case kTfConfig: ClusterConfig::FromTfConfig(text); break;
    case kClusterJson: ClusterSpec::FromJson(text); break;
    default: {
      const size_t nl = text.find('\n');
      ClusterConfig::FromFlags(text.substr(0, nl), nl == std::string_view::npos ? "" : text.substr(nl + 1));
    }
  }
}

}  // namespace

WEFT_FUZZ_TARGET(cluster, {.seeds = Seeds, .decode = Decode});

}  // namespace weft::fuzz
