// The dataflow executor: runs one compiled graph (one device's partition) per step. Nodes
// whose inputs are ready run in parallel on the inter-op pool; cheap ones run inline; async
// kernels complete through a callback. The first error (or a cancellation from outside)
// aborts the step: no new node starts, pending async kernels are cancelled through the step's
// CancellationManager, and `done` is called once, after every started node has finished.
//
//   auto exec = Executor::Create(std::move(graph), device);   // creates kernels, checks cycles
//   CallFrame frame{{x_value}, {}};
//   Status s = exec->Run({.step_id = 1, .frame = &frame});
//
// Thread-safe: several steps may run at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "graph/step_trace.h"
#include "runtime/trace_ring.h"
#include "ops/kernel.h"

namespace weft {

struct ExecutorArgs {
  int64_t step_id = 0;
  CallFrame* frame = nullptr;               // not owned
  Rendezvous* rendezvous = nullptr;         // not owned
  CancellationManager* cancellation = nullptr;  // not owned; null: the executor makes one per step
  // Not owned; where the step's collective kernels run (their pool and watchdog). Must outlive
  // the step's collectives (CollectiveContext's destructor waits for them); null: a collective
  // kernel of more than one member fails with FailedPrecondition.
  CollectiveContext* collectives = nullptr;
  StepTrace* trace = nullptr;               // not owned; when set, every kernel's run is recorded
  TraceRing* ring = nullptr;                 // not owned; when set, every kernel's run goes into this ring too
};

class Executor {
 public:
  // Takes the graph (kernels keep references into it). `device.intra_op` and `inter_op` must
  // outlive the executor. Throws NotFound for a node without a kernel, InvalidArgument for a cycle.
  static std::unique_ptr<Executor> Create(std::unique_ptr<Graph> graph, DeviceContext device, ThreadPool* inter_op);
  ~Executor();

  void RunAsync(const ExecutorArgs& args, std::function<void(Status)> done);
  Status Run(const ExecutorArgs& args);  // blocks until the step finishes
  const Graph& graph() const;
  // The nodes of this executor's steps that have started and not ended (an async kernel until
  // its callback), as "step 5: CollectiveReduce 'all_reduce' on /job:worker/.../CPU:0": what a
  // hang report lists. Thread-safe; a step's bookkeeping costs two relaxed stores per kernel.
  std::vector<std::string> DescribeRunning() const;
  // The same nodes, each handed to visit(step_id, node, device) under the executor's lock (no
  // allocation: a hang report lists them when the process cannot allocate). `visit` must not
  // call back into the executor.
  using RunningVisitor = std::function<void(uint64_t step_id, const Node& node, std::string_view device)>;
  void ForEachRunning(const RunningVisitor& visit) const;

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace weft
