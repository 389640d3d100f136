#include "distributed/cluster_spec.h"

#include "core/json.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <set>

namespace weft {
namespace {

bool KnownJob(std::string_view job) {
  return std::find(std::begin(kClusterJobs), std::end(kClusterJobs), job) != std::end(kClusterJobs);
}

std::string KnownJobs() {
  std::string s;
  for (std::string_view j : kClusterJobs) s += fmt::format("{}{}", s.empty() ? "" : ", ", j);
  return s;
}

ClusterSpec ClusterFromJson(const Json& v, std::string_view what) {
  if (v.kind != Json::Kind::kObject) {
    throw Error(errors::InvalidArgument("{}: the cluster (offset {}) must be an object of job -> [\"host:port\", ...], "
                                        "not {}", what, v.offset, v.KindName()));
  }
  std::map<std::string, std::vector<std::string>> jobs;
  for (const auto& [job, list] : v.object) {
    if (list.kind != Json::Kind::kArray) {
      throw Error(errors::InvalidArgument("{}: job \"{}\" (offset {}) must be a list of \"host:port\" strings, not {}",
                                          what, job, list.offset, list.KindName()));
    }
    std::vector<std::string>& addresses = jobs[job];
    for (const Json& a : list.array) {
      if (a.kind != Json::Kind::kString) {
        throw Error(errors::InvalidArgument("{}: job \"{}\": an address (offset {}) must be a \"host:port\" string, "
                                            "not {}", what, job, a.offset, a.KindName()));
      }
      addresses.push_back(a.str);
    }
  }
  try {
    return ClusterSpec(std::move(jobs));
  } catch (const Error& e) {
    throw Error(e.status().WithContext(what));
  }
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string TaskId::DeviceName() const { return fmt::format("/job:{}/replica:0/task:{}", job, index); }
std::string TaskId::ToString() const { return fmt::format("{}:{}", job, index); }

TaskId TaskId::Parse(std::string_view text) {
  const size_t colon = text.rfind(':');
  TaskId t;
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
    throw Error(errors::InvalidArgument("task '{}': expected JOB:INDEX such as worker:0", text));
  }
  t.job = std::string(text.substr(0, colon));
  const std::string index(text.substr(colon + 1));
  if (!std::all_of(index.begin(), index.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
      index.size() > 6) {
    throw Error(errors::InvalidArgument("task '{}': the index '{}' is not a non-negative integer", text, index));
  }
  t.index = std::stoi(index);
  if (!KnownJob(t.job)) {
    throw Error(errors::InvalidArgument("task '{}': unknown job '{}' (known: {})", text, t.job, KnownJobs()));
  }
  return t;
}

std::string HostPort::ToString() const {
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

HostPort HostPort::Parse(std::string_view address) {
  auto bad = [&](std::string_view why) {
    return Error(errors::InvalidArgument("address '{}' is not host:port: {}", address, why));
  };
  HostPort hp;
  std::string_view port;
  if (!address.empty() && address[0] == '[') {
    const size_t close = address.find(']');
    if (close == std::string_view::npos) throw bad("'[' without ']'");
    hp.host = std::string(address.substr(1, close - 1));
    if (close + 1 >= address.size() || address[close + 1] != ':') throw bad("no ':PORT' after the bracketed host");
    port = address.substr(close + 2);
  } else {
    const size_t colon = address.find(':');
    if (colon == std::string_view::npos) throw bad("no ':PORT'");
    if (address.find(':', colon + 1) != std::string_view::npos) throw bad("more than one ':' (bracket IPv6 hosts)");
    hp.host = std::string(address.substr(0, colon));
    port = address.substr(colon + 1);
  }
  if (hp.host.empty()) throw bad("the host is empty");
  for (char c : hp.host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':')) {
      throw bad(fmt::format("the host has the character '{}'", c));
    }
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    throw bad(fmt::format("the port '{}' is not a number", port));
  }
  hp.port = std::stoi(std::string(port));
  if (hp.port < 1 || hp.port > 65535) throw bad(fmt::format("the port {} is outside 1..65535", hp.port));
  return hp;
}

ClusterSpec::ClusterSpec(std::map<std::string, std::vector<std::string>> jobs) : jobs_(std::move(jobs)) {
  std::map<std::string, std::string> seen;  // canonical address -> "job:index"
  for (const auto& [job, addresses] : jobs_) {
    if (!KnownJob(job)) {
      throw Error(errors::InvalidArgument("cluster spec: unknown job '{}' (known: {})", job, KnownJobs()));
    }
    if (addresses.empty()) throw Error(errors::InvalidArgument("cluster spec: job '{}' has no tasks", job));
    if ((job == "chief" || job == "evaluator") && addresses.size() > 1) {
      throw Error(errors::InvalidArgument("cluster spec: job '{}' has {} tasks; it may have at most one", job,
                                          addresses.size()));
    }
    for (size_t i = 0; i < addresses.size(); ++i) {
      HostPort hp;
      try {
        hp = HostPort::Parse(addresses[i]);
      } catch (const Error& e) {
        throw Error(e.status().WithContext(fmt::format("cluster spec: task {}:{}", job, i)));
      }
      const std::string canonical = hp.ToString();
      const std::string here = fmt::format("{}:{}", job, i);
      auto [it, fresh] = seen.emplace(canonical, here);
      if (!fresh) {
        throw Error(errors::InvalidArgument("cluster spec: address '{}' is used twice, by task {} and task {}",
                                            addresses[i], it->second, here));
      }
    }
  }
  for (const TaskId& t : Tasks()) device_names_.push_back(t.DeviceName());
}

ClusterSpec ClusterSpec::FromJson(std::string_view json) {
  return ClusterFromJson(ParseJson(json, "cluster spec"), "cluster spec");
}

ClusterSpec ClusterSpec::FromFlag(std::string_view text) {
  std::map<std::string, std::vector<std::string>> jobs;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(start, end - start);
    start = end + 1;
    if (part.empty()) {
      if (end == text.size() && !jobs.empty()) break;  // a trailing ';'
      throw Error(errors::InvalidArgument("--cluster '{}': an empty job (expected JOB=HOST:PORT,...;JOB=...)", text));
    }
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw Error(errors::InvalidArgument("--cluster '{}': '{}' is not JOB=HOST:PORT,HOST:PORT", text, part));
    }
    const std::string job(part.substr(0, eq));
    if (jobs.count(job)) throw Error(errors::InvalidArgument("--cluster '{}': job '{}' is given twice", text, job));
    std::vector<std::string>& addresses = jobs[job];
    std::string_view list = part.substr(eq + 1);
    size_t a = 0;
    while (a <= list.size()) {
      size_t comma = list.find(',', a);
      if (comma == std::string_view::npos) comma = list.size();
      addresses.emplace_back(list.substr(a, comma - a));
      a = comma + 1;
    }
  }
  try {
    return ClusterSpec(std::move(jobs));
  } catch (const Error& e) {
    throw Error(e.status().WithContext(fmt::format("--cluster '{}'", text)));
  }
}

int ClusterSpec::NumTasks() const {
  int n = 0;
  for (const auto& [job, addresses] : jobs_) n += static_cast<int>(addresses.size());
  return n;
}

int ClusterSpec::NumTasks(std::string_view job) const {
  auto it = jobs_.find(std::string(job));
  return it == jobs_.end() ? 0 : static_cast<int>(it->second.size());
}

std::vector<TaskId> ClusterSpec::Tasks() const {
  std::vector<TaskId> tasks;
  for (std::string_view job : kClusterJobs) {
    for (int i = 0; i < NumTasks(job); ++i) tasks.push_back({std::string(job), i});
  }
  return tasks;
}

std::vector<TaskId> ClusterSpec::TrainingTasks() const {
  std::vector<TaskId> out;
  for (const char* job : {"chief", "worker"}) {
    for (int i = 0; i < NumTasks(job); ++i) out.push_back({job, i});
  }
  return out;
}

void ClusterSpec::Check(const TaskId& task) const {
  auto it = jobs_.find(task.job);
  if (it == jobs_.end()) {
    std::string have;
    for (const auto& [job, unused] : jobs_) have += fmt::format("{}{}", have.empty() ? "" : ", ", job);
    throw Error(errors::InvalidArgument("task {}: the cluster has no job '{}' (jobs: {})", task.ToString(), task.job,
                                        have.empty() ? "none" : have));
  }
  if (task.index < 0 || task.index >= static_cast<int>(it->second.size())) {
    throw Error(errors::InvalidArgument("task {}: index {} is out of range: job '{}' has {} task(s)", task.ToString(),
                                        task.index, task.job, it->second.size()));
  }
}

const std::string& ClusterSpec::Address(const TaskId& task) const {
  Check(task);
  return jobs_.at(task.job)[task.index];
}

int ClusterSpec::GlobalIndex(const TaskId& task) const {
  Check(task);
  int base = 0;
  for (std::string_view job : kClusterJobs) {
    if (job == task.job) return base + task.index;
    base += NumTasks(job);
  }
  return -1;  // unreachable: Check accepted the job
}

TaskId ClusterSpec::TaskAt(int global_index) const {
  int base = 0;
  for (std::string_view job : kClusterJobs) {
    const int n = NumTasks(job);
    if (global_index >= base && global_index < base + n) return {std::string(job), global_index - base};
    base += n;
  }
  throw Error(errors::InvalidArgument("task number {} is out of range: the cluster has {} tasks", global_index,
                                      NumTasks()));
}

int ClusterSpec::GlobalIndexOfDevice(std::string_view device) const {
  for (size_t i = 0; i < device_names_.size(); ++i) {
    const std::string& name = device_names_[i];
    if (device.starts_with(name) && (device.size() == name.size() || device[name.size()] == '/')) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::optional<TaskId> ClusterSpec::TaskOfDevice(std::string_view device) const {
  const int i = GlobalIndexOfDevice(device);
  if (i < 0) return std::nullopt;
  return TaskAt(i);
}

std::string ClusterSpec::ToJson() const {
  std::string out = "{";
  for (const auto& [job, addresses] : jobs_) {
    if (out.size() > 1) out += ", ";
    out += JsonQuote(job) + ": [";
    for (size_t i = 0; i < addresses.size(); ++i) out += (i ? ", " : "") + JsonQuote(addresses[i]);
    out += "]";
  }
  return out + "}";
}

ClusterConfig ClusterConfig::FromTfConfig(std::string_view json) {
  const Json doc = ParseJson(json, "TF_CONFIG");
  if (doc.kind != Json::Kind::kObject) {
    throw Error(errors::InvalidArgument("TF_CONFIG must be a JSON object with \"cluster\" and \"task\", not {}",
                                        doc.KindName()));
  }
  ClusterConfig config;
  const Json* cluster = nullptr;
  const Json* task = nullptr;
  for (const auto& [name, value] : doc.object) {
    if (name == "cluster") cluster = &value;
    else if (name == "task") task = &value;
    else if (name != "environment" && name != "rpc_layer") {
      throw Error(errors::InvalidArgument("TF_CONFIG: unknown member \"{}\" at offset {} (expected cluster, task, "
                                          "environment, rpc_layer)", name, value.offset));
    }
  }
  if (cluster == nullptr) throw Error(errors::InvalidArgument("TF_CONFIG has no \"cluster\" member"));
  config.cluster = ClusterFromJson(*cluster, "TF_CONFIG cluster");
  if (task != nullptr) {
    if (task->kind != Json::Kind::kObject) {
      throw Error(errors::InvalidArgument("TF_CONFIG: \"task\" (offset {}) must be an object "
                                          "{{\"type\": JOB, \"index\": N}}, not {}", task->offset, task->KindName()));
    }
    const Json* type = nullptr;
    const Json* index = nullptr;
    for (const auto& [name, value] : task->object) {
      if (name == "type") type = &value;
      else if (name == "index") index = &value;
      else if (name != "trial") {
        throw Error(errors::InvalidArgument("TF_CONFIG: unknown task member \"{}\" at offset {} (expected type, "
                                            "index)", name, value.offset));
      }
    }
    if (type == nullptr || type->kind != Json::Kind::kString) {
      throw Error(errors::InvalidArgument("TF_CONFIG: the task needs \"type\": a job name string"));
    }
    if (index == nullptr || index->kind != Json::Kind::kNumber || !index->is_integer || index->number < 0 ||
        index->number > 1e6) {
      throw Error(errors::InvalidArgument("TF_CONFIG: the task needs \"index\": a non-negative integer"));
    }
    TaskId t{type->str, static_cast<int>(index->number)};
    if (!KnownJob(t.job)) {
      throw Error(errors::InvalidArgument("TF_CONFIG: task type '{}' is an unknown job (known: {})", t.job,
                                          KnownJobs()));
    }
    try {
      config.cluster.Check(t);
    } catch (const Error& e) {
      throw Error(e.status().WithContext("TF_CONFIG"));
    }
    config.task = t;
  }
  return config;
}

ClusterConfig ClusterConfig::FromFlags(std::string_view cluster, std::string_view task) {
  ClusterConfig config;
  config.cluster = ClusterSpec::FromFlag(cluster);
  if (!task.empty()) {
    TaskId t = TaskId::Parse(task);
    try {
      config.cluster.Check(t);
    } catch (const Error& e) {
      throw Error(e.status().WithContext("--task"));
    }
    config.task = t;
  }
  return config;
}

ClusterConfig ClusterConfig::FromEnvironment() {
  const char* env = std::getenv("TF_CONFIG");
  if (env == nullptr || *env == '\0') throw Error(errors::NotFound("TF_CONFIG is not set"));
  return FromTfConfig(env);
}

const TaskId& ClusterConfig::RequireTask() const {
  if (!task) {
    throw Error(errors::FailedPrecondition("this process has no task: set TF_CONFIG's \"task\" or pass --task "
                                           "JOB:INDEX (cluster: {})", cluster.ToJson()));
  }
  return *task;
}

std::string ClusterConfig::ToTfConfig(const TaskId& t) const {
  cluster.Check(t);
  return fmt::format("{{\"cluster\": {}, \"task\": {{\"type\": {}, \"index\": {}}}}}", cluster.ToJson(),
                     JsonQuote(t.job), t.index);
}

}  // namespace weft
