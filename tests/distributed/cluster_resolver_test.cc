// ResolveCluster: TF_CONFIG first, else the rank of mpirun / PMI / srun with hosts from a list,
// a hostfile or (all ranks on this machine) loopback; every mistake named.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "distributed/cluster_resolver.h"

using namespace weft;

namespace {

ClusterResolverOptions WithEnv(std::map<std::string, std::string> vars) {
  ClusterResolverOptions o;
  o.getenv = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  return o;
}

std::string ErrorOf(const ClusterResolverOptions& o, Code code) {
  try {
    ResolveCluster(o);
  } catch (const Error& e) {
    CHECK(e.code() == code);
    return e.status().message();
  }
  FAIL("no error thrown");
  return "";
}

}  // namespace

TEST_CASE("cluster resolver: TF_CONFIG wins over ranks") {
  ClusterConfig c = ResolveCluster(WithEnv(
      {{"TF_CONFIG", R"({"cluster": {"worker": ["10.0.0.1:2222", "10.0.0.2:2222"]}, "task": {"type": "worker", "index": 1}})"},
       {"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}));
  CHECK(*c.task == TaskId{"worker", 1});
  CHECK(c.cluster.Address({"worker", 0}) == "10.0.0.1:2222");
}

TEST_CASE("cluster resolver: mpirun on one machine needs no hosts") {
  ClusterConfig c = ResolveCluster(WithEnv({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                                            {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}, {"WEFT_BASE_PORT", "30000"}}));
  CHECK(*c.task == TaskId{"worker", 1});
  CHECK(c.cluster.jobs().at("worker") == std::vector<std::string>{"127.0.0.1:30000", "127.0.0.1:30001"});
}

TEST_CASE("cluster resolver: srun and PMI ranks with a host list, ports base + rank or given") {
  ClusterResolverOptions o = WithEnv({{"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "3"}});
  o.hosts = {"node-a", "node-b:7000", "10.1.2.3"};
  o.base_port = 5000;
  ClusterConfig c = ResolveCluster(o);
  CHECK(*c.task == TaskId{"worker", 2});
  CHECK(c.cluster.jobs().at("worker") == std::vector<std::string>{"node-a:5000", "node-b:7000", "10.1.2.3:5002"});
  ClusterConfig p = ResolveCluster(WithEnv({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"WEFT_HOSTS", "h1, h2"}}));
  CHECK(*p.task == TaskId{"worker", 0});
  CHECK(p.cluster.jobs().at("worker") == std::vector<std::string>{"h1:23456", "h2:23457"});
}

TEST_CASE("cluster resolver: OpenMPI hostfile with slots") {
  const std::string path = "cluster_resolver_test.hostfile";
  std::ofstream(path) << "# two nodes\nnode-a slots=2\n\nnode-b:9000  # fixed port\n";
  ClusterResolverOptions o = WithEnv({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "3"}});
  o.hostfile = path;
  ClusterConfig c = ResolveCluster(o);
  CHECK(c.cluster.jobs().at("worker") == std::vector<std::string>{"node-a:23456", "node-a:23457", "node-b:9000"});
  CHECK(*c.task == TaskId{"worker", 2});
  std::ofstream(path) << "node-a cores=2\n";
  CHECK(ErrorOf(o, Code::kInvalidArgument).find("line 1: unexpected 'cores=2'") != std::string::npos);
  std::remove(path.c_str());
  CHECK(ErrorOf(o, Code::kNotFound).find("cannot read the hostfile 'cluster_resolver_test.hostfile'") !=
        std::string::npos);
}

TEST_CASE("cluster resolver: mistakes are named") {
  CHECK(ErrorOf(WithEnv({}), Code::kNotFound).find("set TF_CONFIG") != std::string::npos);
  CHECK(ErrorOf(WithEnv({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}), Code::kInvalidArgument)
            .find("OMPI_COMM_WORLD_RANK=2 is outside the OMPI_COMM_WORLD_SIZE 2 ranks") != std::string::npos);
  CHECK(ErrorOf(WithEnv({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}), Code::kInvalidArgument)
            .find("SLURM_PROCID must be a non-negative integer, got 'x'") != std::string::npos);
  CHECK(ErrorOf(WithEnv({{"SLURM_PROCID", "0"}}), Code::kNotFound).find("SLURM_PROCID is set but SLURM_NTASKS is not") !=
        std::string::npos);
  // Several machines and no addresses; too few addresses.
  CHECK(ErrorOf(WithEnv({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "4"},
                         {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}), Code::kNotFound)
            .find("--hosts") != std::string::npos);
  CHECK(ErrorOf(WithEnv({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}, {"WEFT_HOSTS", "a,b"}}), Code::kInvalidArgument)
            .find("WEFT_HOSTS names 2 address(es) but there are 3 ranks") != std::string::npos);
  CHECK(ErrorOf(WithEnv({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}, {"WEFT_HOSTS", "a:99999,b"}}), Code::kInvalidArgument)
            .find("a:99999") != std::string::npos);
}

TEST_CASE("cluster secret: from WEFT_CLUSTER_SECRET, a private file, or none; every mistake named") {
  auto resolve = [](std::map<std::string, std::string> vars) { return ResolveClusterSecret(WithEnv(vars).getenv); };
  auto error_of = [&](std::map<std::string, std::string> vars, Code code) -> std::string {
    try {
      resolve(vars);
    } catch (const Error& e) {
      CHECK(e.code() == code);
      return e.status().message();
    }
    FAIL("no error thrown");
    return "";
  };
  CHECK(resolve({}).secret.empty());
  CHECK_FALSE(resolve({}).insecure);
  CHECK(resolve({{"WEFT_INSECURE", "1"}}).insecure);
  CHECK(error_of({{"WEFT_INSECURE", "yes"}}, Code::kInvalidArgument).find("WEFT_INSECURE") != std::string::npos);
  CHECK(resolve({{"WEFT_CLUSTER_SECRET", "abc"}}).secret == "abc");
  const std::string path = fmt::format("/tmp/weft_secret_test_{}", getpid());
  {
    std::ofstream(path) << "from-a-file\n";
  }
  chmod(path.c_str(), 0600);
  CHECK(resolve({{"WEFT_CLUSTER_SECRET_FILE", path}}).secret == "from-a-file");  // the newline dropped
  chmod(path.c_str(), 0644);  // readable by others: refused, as ssh refuses such keys
  const std::string open_file = error_of({{"WEFT_CLUSTER_SECRET_FILE", path}}, Code::kFailedPrecondition);
  CHECK(open_file.find("chmod 600") != std::string::npos);
  CHECK(open_file.find(path) != std::string::npos);
  CHECK(error_of({{"WEFT_CLUSTER_SECRET_FILE", path}, {"WEFT_CLUSTER_SECRET", "x"}}, Code::kInvalidArgument)
            .find("both") != std::string::npos);
  std::remove(path.c_str());
  CHECK(error_of({{"WEFT_CLUSTER_SECRET_FILE", path}}, Code::kNotFound).find(path) != std::string::npos);
  CHECK(error_of({{"WEFT_CLUSTER_SECRET_FILE", "/tmp"}}, Code::kInvalidArgument).find("not a regular file") !=
        std::string::npos);
  // Launchers' secrets: 64 hex characters, different every time.
  const std::string a = GenerateClusterSecret(), b = GenerateClusterSecret();
  CHECK(a.size() == 64);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a != b);
}
