// A Session over a cluster: the client's graph may pin nodes to any task ("/job:ps/task:0",
// "/job:worker/task:1/device:CPU:0"); each signature is placed over the devices of every task,
// partitioned per device with _Send/_Recv pairs, and each task's partitions are registered on its
// server (distributed/server/server.h). A step runs every task's partitions at once (RunStep), the
// Send/Recv pairs between tasks meeting in UcxRendezvous over UCX.
//
//   Server server(cluster, {"worker", 0});        // this process's task (it runs partitions too)
//   Graph g;  Scope s(&g);
//   auto w = Variable(s.WithDevice("/job:ps/task:0"), ...);
//   DistributedSession sess(&g, &server);        // asks every task's server for its devices
//   auto out = sess.Run({{x, x_value}}, {loss});
//
// Failures: any task's error (a kernel's, a peer that dies, a step that takes longer than
// `step_timeout`) aborts the step on every task (AbortStep: pending Recvs fail, kernels are
// cancelled) and Run throws the first primary error, naming the task, within step_timeout plus
// a bounded grace. Unconstrained nodes (and feeds and fetches) go to the client's task's CPU:0.
// Thread-safe like Session. Also a Session's RemoteRunner (SessionOptions::remote): a Session
// whose steps run on the cluster, as ParameterServerStrategy's models use.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "distributed/server/server.h"
#include "graph/graph.h"
#include "graph/session.h"

namespace weft {

struct DistributedSessionOptions {
  bool constant_folding = true;
  bool cse = true;
  bool fuse_ops = true;
  bool soft_placement = true;
  // The longest a step may take (every task's RunStep reply must come by then).
  std::chrono::milliseconds step_timeout{30000};
  // Health, RegisterGraph, AbortStep, Cleanup and DeregisterGraph calls.
  std::chrono::milliseconds control_timeout{10000};
  // The tasks this session uses, as TF's ConfigProto.device_filters: a task is used when its
  // name matches one of these ("/job:ps", "/job:worker/task:1"); empty: every task. The client's
  // own task is always used. Tasks filtered out are never contacted (they need not be up).
  std::vector<std::string> device_filters;
};

class DistributedSession : public RemoteRunner {
 public:
  // server: this process's task, not owned, outlives the session. Asks every other task for its
  // devices (Health): throws Unavailable / DeadlineExceeded naming a task that does not answer.
  DistributedSession(Graph* graph, Server* server, DistributedSessionOptions options = {});
  ~DistributedSession() override;  // deregisters the graphs on every task (bounded)

  std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                          const std::vector<Node*>& targets = {}) {
    return Run(feeds, fetches, targets, std::chrono::milliseconds(0));
  }
  // `timeout` > 0: the step's limit is the smaller of it and step_timeout.
  std::vector<Tensor> Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                          const std::vector<Node*>& targets, std::chrono::milliseconds timeout) override;
  // Aborts the running steps on every task (AbortStep); their Run throws `why`.
  void Cancel(const Status& why) override;
  // The devices of the cluster (this task's first) and the task each compiled partition went to.
  const DeviceSet& devices() const { return devices_; }
  std::vector<std::pair<std::string, std::string>> Partitions(const std::vector<Output>& feeds,
                                                              const std::vector<Output>& fetches,
                                                              const std::vector<Node*>& targets = {});
  int64_t last_step_id() const { return static_cast<int64_t>(next_step_id_.load()) - 1; }

 private:
  struct Compiled;
  std::shared_ptr<Compiled> Compile(const std::vector<Output>& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Node*>& targets);
  Status RunStep(const Compiled& compiled, uint64_t step_id, const std::vector<Tensor>& args, std::vector<Tensor>* rets,
                 std::chrono::milliseconds timeout);
  void AbortEverywhere(const Compiled& compiled, uint64_t step_id, const Status& status);

  Graph* graph_;
  Server* server_;
  DistributedSessionOptions options_;
  DeviceSet devices_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Compiled>> cache_;
  std::atomic<uint64_t> next_step_id_;
  // The running steps' cancel functions (Cancel), under mu_.
  std::map<uint64_t, std::function<void(const Status&)>> running_;
};

}  // namespace weft
