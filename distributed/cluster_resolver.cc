#include "distributed/cluster_resolver.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/sha256.h"
#include "distributed/ucx/handshake.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace weft {
namespace {

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = Trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int ParseInt(const std::string& text, const std::string& what) {
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < 0 || v > 1000000) {
    throw Error(errors::InvalidArgument("{} must be a non-negative integer, got '{}'", what, text));
  }
  return static_cast<int>(v);
}

// Hostfile lines: "host", "host:port", "host slots=N" (N ranks), '#' comments, blank lines.
std::vector<std::string> ReadHostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(errors::NotFound("cannot read the hostfile '{}'", path));
  std::vector<std::string> hosts;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string host, word;
    ss >> host;
    int slots = 1;
    while (ss >> word) {
      if (word.rfind("slots=", 0) == 0) {
        slots = ParseInt(word.substr(6), fmt::format("hostfile {} line {}: slots", path, line_no));
      } else if (word.rfind("max_slots=", 0) != 0) {
        throw Error(errors::InvalidArgument("hostfile {} line {}: unexpected '{}' (expected 'host', 'host:port' or "
                                            "'host slots=N')", path, line_no, word));
      }
    }
    for (int i = 0; i < slots; ++i) hosts.push_back(host);
  }
  return hosts;
}

// "host" -> "host:base+rank"; "host:port" and "[v6]:port" kept (checked by the ClusterSpec).
std::string WithPort(const std::string& entry, int base_port, int rank) {
  const bool bracketed = !entry.empty() && entry[0] == '[';
  const size_t colon = entry.rfind(':');
  const bool has_port = bracketed ? entry.find("]:") != std::string::npos
                                  : colon != std::string::npos && entry.find(':') == colon;
  if (has_port) return entry;
  if (!bracketed && colon != std::string::npos) return fmt::format("[{}]:{}", entry, base_port + rank);  // bare IPv6
  return fmt::format("{}:{}", entry, base_port + rank);
}

}  // namespace

ClusterConfig ResolveCluster(const ClusterResolverOptions& o) {
  auto env = [&](const std::string& name) -> std::optional<std::string> {
    if (o.getenv) return o.getenv(name);
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  if (auto tf = env("TF_CONFIG"); tf && !tf->empty()) return ClusterConfig::FromTfConfig(*tf);

  static const char* kRankVars[][2] = {
      {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"}, {"SLURM_PROCID", "SLURM_NTASKS"}};
  std::string rank_var, size_var;
  for (const auto& [r, s] : kRankVars) {
    if (env(r)) {
      rank_var = r;
      size_var = s;
      break;
    }
  }
  if (rank_var.empty()) {
    throw Error(errors::NotFound("no cluster: set TF_CONFIG, or start the processes with weft-zoo launch, mpirun "
                                 "(OMPI_COMM_WORLD_RANK), a PMI launcher (PMI_RANK) or srun (SLURM_PROCID)"));
  }
  const int rank = ParseInt(*env(rank_var), rank_var);
  const auto size_text = env(size_var);
  if (!size_text) throw Error(errors::NotFound("{} is set but {} is not", rank_var, size_var));
  const int size = ParseInt(*size_text, size_var);
  if (size < 1 || rank >= size) {
    throw Error(errors::InvalidArgument("{}={} is outside the {} {} ranks", rank_var, rank, size_var, size));
  }

  int base_port = o.base_port;
  if (base_port == 0) base_port = env("WEFT_BASE_PORT") ? ParseInt(*env("WEFT_BASE_PORT"), "WEFT_BASE_PORT")
                                                         : kDefaultBasePort;
  std::vector<std::string> hosts = o.hosts;
  std::string source = "--hosts";
  if (hosts.empty() && !o.hostfile.empty()) {
    hosts = ReadHostfile(o.hostfile);
    source = "hostfile " + o.hostfile;
  }
  if (hosts.empty() && env("WEFT_HOSTS")) {
    hosts = SplitComma(*env("WEFT_HOSTS"));
    source = "WEFT_HOSTS";
  }
  if (hosts.empty() && env("WEFT_HOSTFILE")) {
    hosts = ReadHostfile(*env("WEFT_HOSTFILE"));
    source = "hostfile " + *env("WEFT_HOSTFILE") + " (WEFT_HOSTFILE)";
  }
  if (hosts.empty()) {
    const auto local = env("OMPI_COMM_WORLD_LOCAL_SIZE");
    const bool all_local = size == 1 || (local && ParseInt(*local, "OMPI_COMM_WORLD_LOCAL_SIZE") == size);
    if (!all_local) {
      throw Error(errors::NotFound("{}={} of {}: the ranks run on several machines; give their addresses with --hosts "
                                   "h1,h2,... (WEFT_HOSTS) or a hostfile (WEFT_HOSTFILE)", rank_var, rank, size));
    }
    hosts.assign(static_cast<size_t>(size), "127.0.0.1");
    source = "this machine";
  }
  if (static_cast<int>(hosts.size()) < size) {
    throw Error(errors::InvalidArgument("{} names {} address(es) but there are {} ranks ({}): list one per rank "
                                        "(a hostfile line 'host slots=N' counts N)", source, hosts.size(), size,
                                        size_var));
  }
  std::vector<std::string> addresses;
  for (int r = 0; r < size; ++r) addresses.push_back(WithPort(hosts[static_cast<size_t>(r)], base_port, r));
  return ClusterConfig{ClusterSpec({{"worker", addresses}}), TaskId{"worker", rank}};
}

ClusterSecret ResolveClusterSecret(const std::function<std::optional<std::string>(const std::string& name)>& getenv) {
  auto env = [&](const std::string& name) -> std::optional<std::string> {
    if (getenv) return getenv(name);
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  ClusterSecret out;
  if (auto v = env("WEFT_INSECURE"); v && !v->empty()) {
    if (*v != "0" && *v != "1") throw Error(errors::InvalidArgument("WEFT_INSECURE='{}': expected 0 or 1", *v));
    out.insecure = *v == "1";
  }
  const auto secret = env("WEFT_CLUSTER_SECRET");
  const auto file = env("WEFT_CLUSTER_SECRET_FILE");
  if (secret && !secret->empty() && file && !file->empty()) {
    throw Error(errors::InvalidArgument("both WEFT_CLUSTER_SECRET and WEFT_CLUSTER_SECRET_FILE are set: set one"));
  }
  if (secret && !secret->empty()) {
    out.secret = *secret;
  } else if (file && !file->empty()) {
    struct stat st{};
    if (stat(file->c_str(), &st) != 0) {
      throw Error(errors::NotFound("WEFT_CLUSTER_SECRET_FILE={}: {}", *file, std::strerror(errno)));
    }
    if (!S_ISREG(st.st_mode)) {
      throw Error(errors::InvalidArgument("WEFT_CLUSTER_SECRET_FILE={} is not a regular file", *file));
    }
    if ((st.st_mode & 077) != 0) {
      throw Error(errors::FailedPrecondition(
          "WEFT_CLUSTER_SECRET_FILE={} may be read by group or others (mode {:04o}): chmod 600 it", *file,
          st.st_mode & 07777));
    }
    std::ifstream in(*file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) throw Error(errors::NotFound("WEFT_CLUSTER_SECRET_FILE={}: cannot read it", *file));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) throw Error(errors::InvalidArgument("WEFT_CLUSTER_SECRET_FILE={} is empty", *file));
    out.secret = std::move(text);
  }
  return out;
}

std::string GenerateClusterSecret() {
  unsigned char bytes[32];
  SecureRandomBytes(bytes, sizeof(bytes));
  return HexString(bytes, sizeof(bytes));
}

}  // namespace weft
