// The cluster: which tasks exist (jobs chief, worker, ps, evaluator) and where each listens, read
// from TF_CONFIG exactly as TensorFlow writes it, or from command-line flags.
//
//   ClusterConfig c = ClusterConfig::FromTfConfig(
//       R"({"cluster": {"worker": ["127.0.0.1:10090", "127.0.0.1:10091"], "ps": ["127.0.0.1:10092"]},
//           "task": {"type": "worker", "index": 1}})");
//   c.cluster.Address(*c.task);              // "127.0.0.1:10091"
//   c.task->DeviceName();                     // "/job:worker/replica:0/task:1"
//   c.cluster.GlobalIndex({"ps", 0});         // 2: tasks are numbered chief, worker..., ps..., evaluator
//
//   // The same from flags: --cluster 'worker=127.0.0.1:10090,127.0.0.1:10091;ps=127.0.0.1:10092' --task worker:1
//   ClusterConfig f = ClusterConfig::FromFlags("worker=127.0.0.1:10090,127.0.0.1:10091;ps=127.0.0.1:10092", "worker:1");
//
// Every problem throws Error(InvalidArgument) naming it: bad JSON (with the byte offset), an unknown
// job, a malformed host:port, an address used twice, a task index out of range, a missing task.
// Immutable after parsing: thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace weft {

// One task of the cluster: a job name and an index in it.
struct TaskId {
  std::string job;
  int index = 0;
  // "/job:worker/replica:0/task:1": the prefix of the task's device names.
  std::string DeviceName() const;
  // "worker:1".
  std::string ToString() const;
  bool operator==(const TaskId&) const = default;
  auto operator<=>(const TaskId&) const = default;
  // Parses "worker:1" (the --task flag).
  static TaskId Parse(std::string_view text);
};

// "host:port" split and checked: host is a name, an IPv4 address, or a bracketed IPv6 address
// ("[::1]:80", host "::1"); port 1..65535.
struct HostPort {
  std::string host;
  int port = 0;
  std::string ToString() const;
  static HostPort Parse(std::string_view address);
};

// The jobs TensorFlow's TF_CONFIG knows, in the order tasks are numbered.
inline constexpr std::string_view kClusterJobs[] = {"chief", "worker", "ps", "evaluator"};

class ClusterSpec {
 public:
  ClusterSpec() = default;
  // jobs: job name -> addresses ("host:port"), checked as described above.
  explicit ClusterSpec(std::map<std::string, std::vector<std::string>> jobs);
  // The value of TF_CONFIG's "cluster" member: {"worker": ["h:p", ...], "ps": [...]}.
  static ClusterSpec FromJson(std::string_view json);
  // --cluster syntax: jobs separated by ';', each "job=address,address,...".
  static ClusterSpec FromFlag(std::string_view text);

  const std::map<std::string, std::vector<std::string>>& jobs() const { return jobs_; }
  bool empty() const { return jobs_.empty(); }
  int NumTasks() const;
  int NumTasks(std::string_view job) const;  // 0 for a job that is not there
  // All tasks, numbered chief, worker..., ps..., evaluator (the global index).
  std::vector<TaskId> Tasks() const;
  // The tasks that train: the chief (if any), then the workers.
  std::vector<TaskId> TrainingTasks() const;
  // Throws InvalidArgument naming the task and the job's size unless the task exists.
  void Check(const TaskId& task) const;
  const std::string& Address(const TaskId& task) const;
  int GlobalIndex(const TaskId& task) const;
  TaskId TaskAt(int global_index) const;
  // The task whose DeviceName() is a prefix of `device` ("/job:ps/replica:0/task:0/device:CPU:0");
  // nullopt when the device names no task of this cluster.
  std::optional<TaskId> TaskOfDevice(std::string_view device) const;
  // The same as a global index, -1 when none: a scan of names made once (no allocation), for
  // routing every message by its device.
  int GlobalIndexOfDevice(std::string_view device) const;
  // {"worker": ["h:p", ...], ...} (canonical JSON, parseable by FromJson).
  std::string ToJson() const;

 private:
  std::map<std::string, std::vector<std::string>> jobs_;
  std::vector<std::string> device_names_;  // TaskId::DeviceName() by global index
};

// TF_CONFIG's whole content: the cluster and (optionally) which task this process is.
struct ClusterConfig {
  ClusterSpec cluster;
  std::optional<TaskId> task;

  // {"cluster": {...}, "task": {"type": "worker", "index": 0}}; "environment" and "rpc_layer" are
  // accepted and ignored, as TensorFlow does; any other member is an error. The task, when given,
  // must exist in the cluster.
  static ClusterConfig FromTfConfig(std::string_view json);
  // From the --cluster and --task flags (task may be empty: no task).
  static ClusterConfig FromFlags(std::string_view cluster, std::string_view task);
  // From the environment variable TF_CONFIG; NotFound (as Error) when it is not set.
  static ClusterConfig FromEnvironment();
  // This process's task; FailedPrecondition naming where the config came from when there is none.
  const TaskId& RequireTask() const;
  // The TF_CONFIG text for `task` (what `weft-zoo launch` hands each process).
  std::string ToTfConfig(const TaskId& task) const;
};

}  // namespace weft
