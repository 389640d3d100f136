// Which task this process is when no TF_CONFIG was written for it: the rank that an existing
// launcher (mpirun, srun, a PMI launcher) hands every process, and the hosts from a list or a
// hostfile, so one command line starts every worker.
//
//   // mpirun -np 2 python3 train.py        (OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2)
//   ClusterConfig c = ResolveCluster({});   // worker:1 of {"worker": ["127.0.0.1:23456", "127.0.0.1:23457"]}
//   // srun -n 4 ... with --hosts a,b,c,d (or WEFT_HOSTS=a,b,c,d): worker:$SLURM_PROCID at b:23457 ...
//
// Order of precedence:
//   1. TF_CONFIG, when set: exactly as ClusterConfig::FromEnvironment reads it.
//   2. A rank and a size from OMPI_COMM_WORLD_RANK/SIZE (OpenMPI), PMI_RANK/SIZE (MPICH, Intel
//      MPI, PMI), SLURM_PROCID/SLURM_NTASKS (srun), in that order: task worker:RANK of a cluster
//      of SIZE workers. Addresses, one per rank in rank order: `hosts` (WEFT_HOSTS, comma-separated)
//      or the lines of `hostfile` (WEFT_HOSTFILE; "host", "host:port" or OpenMPI's "host slots=N",
//      which stands for N ranks on that host; '#' comments). An entry without a port gets
//      base_port + rank (WEFT_BASE_PORT, default 23456). With neither, and every rank on this
//      machine (OMPI_COMM_WORLD_LOCAL_SIZE == size, or size 1), all are 127.0.0.1.
//   3. Otherwise NotFound saying what to set.
// Errors name the variable or file at fault (a rank outside the size, fewer hosts than ranks, a
// malformed entry). Pure function of its inputs: thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "distributed/cluster_spec.h"

namespace weft {

struct ClusterResolverOptions {
  std::vector<std::string> hosts;  // empty: WEFT_HOSTS
  std::string hostfile;            // empty: WEFT_HOSTFILE
  int base_port = 0;               // 0: WEFT_BASE_PORT, else 23456
  // The environment to read (tests pass their own); null: the process's.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
};

inline constexpr int kDefaultBasePort = 23456;

ClusterConfig ResolveCluster(const ClusterResolverOptions& options = {});

// The cluster's secret, which every task must share (docs/security.md): WEFT_CLUSTER_SECRET (the
// secret itself) or WEFT_CLUSTER_SECRET_FILE (a file holding it; one trailing newline is dropped;
// refused when group or others may read it, as ssh refuses such keys). WEFT_INSECURE=1 says that
// running without one is intended. Neither: an empty secret and insecure false, which the
// transport refuses at start with a message naming these variables. `weft-zoo launch` and
// weft.spark.run make a random secret and hand it to every task; under mpirun / srun export it
// (`mpirun -x WEFT_CLUSTER_SECRET`) or put a file on a shared filesystem.
struct ClusterSecret {
  std::string secret;
  bool insecure = false;
};
// Errors (InvalidArgument / NotFound / FailedPrecondition) name the variable or file at fault.
ClusterSecret ResolveClusterSecret(
    const std::function<std::optional<std::string>(const std::string& name)>& getenv = {});
// 32 random bytes as 64 hex characters (what launchers hand their tasks).
std::string GenerateClusterSecret();

}  // namespace weft
