#include "graph/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "core/memory_budget.h"
#include "graph/executor_frames.h"
#include "runtime/rendezvous.h"

namespace weft {

using internal::ExecItem;
using internal::FrameRunner;
using internal::Tagged;

struct Executor::Impl {
  std::unique_ptr<Graph> graph;
  DeviceContext device;
  ThreadPool* inter_op;
  std::vector<ExecItem> items;
  std::vector<int> roots;
  // Graphs with while loops run through a FrameRunner per step (graph/executor_frames.h);
  // others keep their inputs and pending counts in flat per-step arrays.
  StaticFrames frames;
  bool has_loops = false;

  struct Step {
    Impl* impl;
    ExecutorArgs args;
    std::unique_ptr<CancellationManager> own_cm;
    CancellationManager* cm;
    std::vector<std::vector<Tensor>> inputs;
    std::unique_ptr<std::atomic<int>[]> pending;
    std::unique_ptr<std::atomic<uint8_t>[]> running;  // per item: started, not ended (DescribeRunning)
    std::unique_ptr<std::atomic<uint8_t>[]> dead;     // per item: a dead input came (graphs without loops)
    std::unique_ptr<FrameRunner> frames;              // graphs with loops
    std::atomic<int64_t> outstanding{0};
    std::mutex mu;
    Status status;  // first error
    std::atomic<bool> aborted{false};
    std::function<void(Status)> done;
  };
  mutable std::mutex live_mu;
  std::set<Step*> live;  // steps started and not deleted (DescribeRunning reads them under live_mu)

  void Abort(Step* step, Status s) {
    {
      std::lock_guard<std::mutex> l(step->mu);
      if (!step->status.ok()) return;
      step->status = s;
    }
    step->aborted.store(true);
    step->cm->StartCancel(s);
  }

  // Runs one node (and, inline, what becomes ready after it).
  void Process(Step* step, Tagged first);
  void Record(StepTrace* trace, const Node& node, int64_t start_us, const Status& s) const;
  // Into the step's always-on ring (ExecutorArgs::ring): no allocation.
  void RecordRing(const Step* step, const ExecItem& it, int64_t start_ns, const Status& s) const {
    const std::string& detail = s.ok() ? it.trace_detail : s.message();
    step->args.ring->Record({.kind = it.trace_kind, .step = step->args.step_id, .start_ns = start_ns,
                             .end_ns = TraceRing::NowNanos(), .name = it.node->name(), .op = it.node->op(),
                             .detail = detail, .group = it.trace_group, .instance = it.trace_instance,
                             .failed = !s.ok()});
  }
  // Delivers the outputs of `t` (unset ones are dead where the op may leave them so; all are
  // when `skipped`); appends newly ready items to `ready`.
  void Propagate(Step* step, const Tagged& t, std::vector<Tensor>& outputs, bool skipped, std::deque<Tagged>& ready);
  // Schedules expensive ready items on the pool and returns the ones to run inline.
  void Finish(Step* step, std::deque<Tagged>& ready);
  void Schedule(Step* step, Tagged t) {
    if (t.inputs.empty()) {  // no inputs to carry (always so without loops): no allocation
      inter_op->Schedule([this, step, id = t.id, frame = t.frame, iter = t.iter, dead = t.dead] {
        Process(step, {.id = id, .frame = frame, .iter = iter, .dead = dead, .inputs = {}});
      });
      return;
    }
    auto shared = std::make_shared<Tagged>(std::move(t));
    inter_op->Schedule([this, step, shared] { Process(step, std::move(*shared)); });
  }
  void NodeDone(Step* step) {
    if (step->outstanding.fetch_sub(1) == 1) {
      Status s;
      {
        std::lock_guard<std::mutex> l(step->mu);
        s = step->status;
      }
      auto done = std::move(step->done);
      {
        std::lock_guard<std::mutex> l(live_mu);
        live.erase(step);
      }
      delete step;
      done(s);
    }
  }
  Status Wrap(const Node& n, const Status& s) {
    if (s.message().find(n.Describe()) != std::string::npos) return s;  // already names the node
    return s.WithContext(n.Describe());
  }
};

namespace {

// "/job:worker/replica:0/task:1/device:CPU:0" -> "task:1/CPU:0" (what fits a trace slot).
std::string ShortDeviceName(const std::string& full) {
  const size_t task = full.find("/task:"), device = full.find("/device:");
  if (device == std::string::npos) return full;
  const std::string dev = full.substr(device + 8);
  return task == std::string::npos ? dev : full.substr(task + 1, device - task - 1) + "/" + dev;
}

void SetTraceInfo(ExecItem& it) {
  const Node& n = *it.node;
  if (n.op() == "_Send" || n.op() == "_Recv") {
    it.trace_kind = n.op() == "_Send" ? TraceKind::kSend : TraceKind::kRecv;
    it.trace_detail = fmt::format("{} -> {} {}", ShortDeviceName(n.attr<std::string>("send_device")),
                                  ShortDeviceName(n.attr<std::string>("recv_device")), n.attr<std::string>("tensor_name"));
  } else if (n.op().rfind("Collective", 0) == 0) {
    it.trace_kind = TraceKind::kCollective;
    it.trace_group = static_cast<int32_t>(n.attr<int64_t>("group_key"));
    it.trace_instance = static_cast<int32_t>(n.attr<int64_t>("instance_key"));
    it.trace_detail = fmt::format("rank {} of {}", n.attr<int64_t>("rank"), n.attr<int64_t>("group_size"));
  }
}

}  // namespace

std::unique_ptr<Executor> Executor::Create(std::unique_ptr<Graph> graph, DeviceContext device, ThreadPool* inter_op) {
  auto impl = std::make_unique<Impl>();
  impl->device = std::move(device);
  impl->inter_op = inter_op;
  const std::vector<Node*> order = TopologicalOrder(graph->nodes());  // throws on cycles
  std::map<const Node*, int> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = static_cast<int>(i);
  impl->items.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    Node* n = order[i];
    ExecItem& it = impl->items[i];
    it.node = n;
    it.kernel = KernelRegistry::Global().Create(*n, impl->device.device_type);
    it.cheap = n->def().cheap;
    it.initial_pending = n->num_inputs() + static_cast<int>(n->control_inputs().size());
    it.out_by_output.resize(n->num_outputs());
    for (const auto& [dst, in] : n->out_edges()) {
      if (in < 0) {
        it.control_out.push_back(index.at(dst));
      } else {
        it.out_by_output[dst->input(in).index].emplace_back(index.at(dst), in);
      }
    }
    int k = 0;
    it.input_is_ref.assign(n->num_inputs(), false);
    for (const ArgDef& a : n->def().inputs) {
      const int count = a.number_attr.empty() ? 1 : n->attr<int>(a.number_attr);
      for (int j = 0; j < count && k < n->num_inputs(); ++j) it.input_is_ref[k++] = a.is_ref;
    }
    it.is_merge = IsMerge(*n);
    it.is_switch = IsSwitch(*n);
    // LoopStackPop of a value a cond branch did not push is dead; LoopStackPush runs on a dead
    // value (pushing nothing) so that its control edge, which a while loop's gradient waits on,
    // stays live (ops/control.h).
    it.may_output_dead = it.is_merge || it.is_switch || n->op() == "_Recv" || n->op() == "LoopStackPop";
    it.runs_dead = n->op() == "_Send" || n->op() == "LoopStackPush";
    it.is_retval = n->op() == "_Retval";
    SetTraceInfo(it);
    if (it.initial_pending == 0) impl->roots.push_back(static_cast<int>(i));
  }
  impl->frames = FindStaticFrames(order);
  impl->has_loops = impl->frames.has_loops();
  if (impl->has_loops) {
    // A ref input from another frame (a variable updated inside a loop) names the variable: its
    // kernel finds the variable by that name and never waits for the edge, which no iteration
    // of the consumer's frame would deliver.
    for (ExecItem& it : impl->items) {
      const int f = impl->frames.frame_of.at(it.node->id());
      for (auto& dsts : it.out_by_output) {
        std::erase_if(dsts, [&](const std::pair<int, int>& e) {
          const ExecItem& d = impl->items[e.first];
          if (!d.input_is_ref[e.second] || impl->frames.frame_of.at(d.node->id()) == f) return false;
          --impl->items[e.first].initial_pending;
          return true;
        });
      }
    }
    impl->roots.clear();
    for (size_t i = 0; i < impl->items.size(); ++i) {
      if (impl->items[i].initial_pending == 0) impl->roots.push_back(static_cast<int>(i));
    }
  }
  for (ExecItem& it : impl->items) {
    const Node& n = *it.node;
    it.frame = impl->frames.frame_of.at(n.id());
    if (IsEnter(n)) {
      it.kind = ExecItem::Kind::kEnter;
      it.is_constant = n.attr<bool>("is_constant");
      for (size_t f = 1; f < impl->frames.frames.size(); ++f) {
        const auto& enters = impl->frames.frames[f].enters;
        if (std::find(enters.begin(), enters.end(), &n) != enters.end()) it.child_frame = static_cast<int>(f);
      }
    } else if (IsExit(n)) {
      it.kind = ExecItem::Kind::kExit;
      const auto& exits = impl->frames.frames[static_cast<size_t>(it.frame)].exits;
      it.exit_index = static_cast<int>(std::find(exits.begin(), exits.end(), &n) - exits.begin());
    } else if (IsNextIteration(n)) {
      it.kind = ExecItem::Kind::kNextIteration;
    }
    for (const Output& in : n.inputs()) it.num_back_inputs += it.is_merge && IsNextIteration(*in.node);
    if (impl->has_loops && it.is_merge && !n.control_inputs().empty()) {
      throw Error(errors::InvalidArgument("{} has control inputs: a Merge in a graph with while loops takes data "
                                          "inputs only", n.Describe()));
    }
  }
  impl->graph = std::move(graph);
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;
const Graph& Executor::graph() const { return *impl_->graph; }

void Executor::RunAsync(const ExecutorArgs& args, std::function<void(Status)> done) {
  Impl* impl = impl_.get();
  auto* step = new Impl::Step();
  step->impl = impl;
  step->args = args;
  if (args.cancellation == nullptr) step->own_cm = std::make_unique<CancellationManager>();
  step->cm = args.cancellation ? args.cancellation : step->own_cm.get();
  step->done = std::move(done);
  const size_t n = impl->items.size();
  step->running.reset(new std::atomic<uint8_t>[n]);
  for (size_t i = 0; i < n; ++i) step->running[i].store(0, std::memory_order_relaxed);
  if (!impl->has_loops) {
    step->inputs.resize(n);
    step->pending.reset(new std::atomic<int>[n]);
    step->dead.reset(new std::atomic<uint8_t>[n]);
    for (size_t i = 0; i < n; ++i) {
      step->inputs[i].resize(impl->items[i].node->num_inputs());
      step->pending[i].store(impl->items[i].initial_pending);
      step->dead[i].store(0, std::memory_order_relaxed);
    }
  }
  if (impl->roots.empty()) {
    auto d = std::move(step->done);
    delete step;
    d(Status::OK());
    return;
  }
  {
    std::lock_guard<std::mutex> l(impl->live_mu);
    impl->live.insert(step);
  }
  std::deque<Tagged> ready;
  if (impl->has_loops) {
    step->frames = std::make_unique<FrameRunner>(impl->items, impl->frames);
    step->frames->Start(impl->roots, &ready);
  } else {
    for (int r : impl->roots) ready.push_back({.id = r, .frame = nullptr, .iter = 0, .dead = false, .inputs = {}});
  }
  step->outstanding.store(static_cast<int64_t>(ready.size()));
  Tagged first = std::move(ready.front());
  ready.pop_front();
  for (Tagged& t : ready) impl->Schedule(step, std::move(t));
  if (impl->has_loops) {
    // A loop may never end: its step runs on the pool, so that the caller's thread is free to
    // enforce RunOptions::timeout.
    impl->Schedule(step, std::move(first));
  } else {
    impl->Process(step, std::move(first));
  }
}

void Executor::ForEachRunning(const RunningVisitor& visit) const {
  std::lock_guard<std::mutex> l(impl_->live_mu);
  for (const Impl::Step* step : impl_->live) {
    for (size_t i = 0; i < impl_->items.size(); ++i) {
      if (step->running[i].load(std::memory_order_relaxed) != 0) {
        visit(step->args.step_id, *impl_->items[i].node, impl_->device.device_name);
      }
    }
  }
}

std::vector<std::string> Executor::DescribeRunning() const {
  std::vector<std::string> out;
  ForEachRunning([&out](uint64_t step_id, const Node& node, std::string_view device) {
    out.push_back(fmt::format("step {}: {} on {}", step_id, node.Describe(), device));
  });
  return out;
}

Status Executor::Run(const ExecutorArgs& args) {
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<bool> finished{false};  // set under mu (for cv), read without it while driving
  Status result;
  RunAsync(args, [&](Status s) {
    std::lock_guard<std::mutex> l(mu);
    result = std::move(s);
    finished.store(true, std::memory_order_release);
    cv.notify_all();
  });
  // Across processes this thread polls the transport while it waits (Rendezvous::DriveUntil).
  auto ended = [&] { return finished.load(std::memory_order_acquire); };
  if (args.rendezvous != nullptr) args.rendezvous->DriveUntil(ended);
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, ended);
  return result;
}

void Executor::Impl::Propagate(Step* step, const Tagged& t, std::vector<Tensor>& outputs, bool skipped,
                               std::deque<Tagged>& ready) {
  const ExecItem& it = items[t.id];
  // An unset output is dead where the op may leave it so (Switch's other side, a Merge or a
  // _Recv of dead values); from other ops it is an error (a ref input may stay unset).
  if (!skipped && !it.may_output_dead) {
    for (size_t o = 0; o < it.out_by_output.size(); ++o) {
      if (outputs[o].IsInitialized()) continue;
      for (const auto& [dst, in] : it.out_by_output[o]) {
        if (items[dst].input_is_ref[in]) continue;
        Abort(step, errors::Internal("{} produced no output {} (needed by {})", it.node->Describe(), o,
                                     items[dst].node->Describe()));
        return;
      }
    }
  }
  if (step->frames) {
    step->frames->Done(t, outputs, skipped, &ready);
    return;
  }
  auto arrived = [&](int dst, bool dead) {
    if (dead) step->dead[dst].store(1, std::memory_order_relaxed);  // ordered by the pending count's acq_rel
    if (step->pending[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // A Merge runs on whatever came (its kernel takes the first live input); other nodes with
      // a dead input do not run.
      const bool dead_input = step->dead[dst].load(std::memory_order_relaxed) != 0 && !items[dst].is_merge;
      ready.push_back({.id = dst, .frame = nullptr, .iter = 0, .dead = dead_input, .inputs = {}});
    }
  };
  const bool control_dead = it.ControlDead(outputs, skipped);  // before the outputs move
  for (size_t o = 0; o < it.out_by_output.size(); ++o) {
    const auto& dsts = it.out_by_output[o];
    const bool dead = skipped || (it.may_output_dead && !outputs[o].IsInitialized());
    for (size_t k = 0; k < dsts.size(); ++k) {
      const auto [dst, in] = dsts[k];
      // The last consumer takes the tensor; others share the buffer. Each input is set before
      // the count that may make its node ready drops.
      step->inputs[dst][in] = (k + 1 == dsts.size()) ? std::move(outputs[o]) : outputs[o];
      arrived(dst, dead);
    }
  }
  for (int dst : it.control_out) arrived(dst, control_dead);
}

void Executor::Impl::Finish(Step* step, std::deque<Tagged>& ready) {
  // Keep cheap items and the last expensive one inline; schedule the other expensive ones.
  step->outstanding.fetch_add(static_cast<int64_t>(ready.size()));
  std::deque<Tagged> inline_items;
  std::optional<Tagged> last_expensive;
  for (Tagged& r : ready) {
    if (items[r.id].cheap) {
      inline_items.push_back(std::move(r));
    } else {
      if (last_expensive) Schedule(step, std::move(*last_expensive));
      last_expensive = std::move(r);
    }
  }
  if (last_expensive) inline_items.push_back(std::move(*last_expensive));
  ready.swap(inline_items);
}

// One trace event for a kernel that ran from start_us until now; Send/Recv carry their key.
void Executor::Impl::Record(StepTrace* trace, const Node& node, int64_t start_us, const Status& s) const {
  TraceEvent e;
  e.name = node.name();
  e.op = node.op();
  e.device = device.device_name;
  e.start_us = start_us;
  e.end_us = trace->NowMicros();
  e.thread = CurrentThreadId();
  if (node.op() == "_Send" || node.op() == "_Recv") {
    e.detail = fmt::format("{};{};{}", node.attr<std::string>("send_device"), node.attr<std::string>("recv_device"),
                           node.attr<std::string>("tensor_name"));
  } else if (node.op().rfind("Collective", 0) == 0) {
    e.detail = fmt::format("instance {} rank {} of {}", node.attr<int64_t>("instance_key"), node.attr<int64_t>("rank"),
                           node.attr<int64_t>("group_size"));
  }
  if (!s.ok()) e.detail += (e.detail.empty() ? "" : "; ") + s.ToString();
  trace->Add(std::move(e));
}

void Executor::Impl::Process(Step* step, Tagged first) {
  std::deque<Tagged> work;
  work.push_back(std::move(first));
  while (!work.empty()) {
    Tagged t = std::move(work.front());
    work.pop_front();
    const int id = t.id;
    ExecItem& it = items[id];
    if (!step->aborted.load() && step->cm->IsCancelled()) Abort(step, step->cm->status());
    if (step->aborted.load()) {
      NodeDone(step);
      continue;
    }
    std::vector<Tensor> inputs = step->frames ? std::move(t.inputs) : std::move(step->inputs[id]);
    if (t.dead && !it.runs_dead) {
      // A dead input (a branch not taken, a loop's last iteration): the node does not run and
      // its outputs are dead, except that a fetch of a dead value is the caller's error.
      std::deque<Tagged> ready;
      if (it.is_retval) {
        Abort(step, errors::InvalidArgument("{}: the fetched tensor '{}' has no value in this step: it comes from a "
                                            "cond branch that was not taken", it.node->Describe(),
                                            it.node->input(0).name()));
      } else {
        std::vector<Tensor> none(static_cast<size_t>(it.node->num_outputs()));
        Propagate(step, t, none, /*skipped=*/true, ready);
      }
      Finish(step, ready);
      for (Tagged& r : ready) work.push_back(std::move(r));
      NodeDone(step);
      continue;
    }
    auto ctx = std::make_unique<OpKernelContext>(*it.node, device, std::move(inputs), step->args.step_id,
                                                 step->args.frame, step->args.rendezvous, step->cm,
                                                 step->args.collectives);
    ctx->set_frame_iter(t.frame != nullptr ? t.frame->id : 0, t.iter);
    ctx->set_input_dead(t.dead);
    const Tagged where{.id = id, .frame = t.frame, .iter = t.iter, .dead = t.dead, .inputs = {}};
    StepTrace* trace = step->args.trace;
    const int64_t start_us = trace != nullptr ? trace->NowMicros() : 0;
    const int64_t start_ns = step->args.ring != nullptr ? TraceRing::NowNanos() : 0;
    if (it.kernel->is_async()) {
      auto* async = static_cast<AsyncOpKernel*>(it.kernel.get());
      OpKernelContext* raw = ctx.release();
      step->running[id].store(1, std::memory_order_relaxed);
      auto on_done = [this, step, where, raw, start_us, start_ns](Status s) {
        const int id = where.id;
        step->running[id].store(0, std::memory_order_relaxed);
        if (step->args.trace != nullptr) Record(step->args.trace, *items[id].node, start_us, s);
        if (step->args.ring != nullptr) RecordRing(step, items[id], start_ns, s);
        std::unique_ptr<OpKernelContext> owned(raw);
        std::deque<Tagged> ready;
        if (!s.ok()) {
          Abort(step, Wrap(*items[id].node, s));
        } else if (!step->aborted.load()) {
          Propagate(step, where, owned->outputs(), /*skipped=*/false, ready);
        }
        owned.reset();
        Finish(step, ready);
        for (Tagged& r : ready) Schedule(step, std::move(r));  // never run nodes inline inside a kernel's callback
        NodeDone(step);
      };
      try {
        const ScopedAllocationNode label(&it.node->name());  // a memory budget's report names the node
        async->ComputeAsync(raw, std::move(on_done));
      } catch (const Error& e) {
        // A kernel that throws before taking ownership of `done` fails the step here.
        Abort(step, Wrap(*it.node, e.status()));
        delete raw;
        NodeDone(step);
      }
      continue;
    }
    Status status;
    step->running[id].store(1, std::memory_order_relaxed);
    try {
      const ScopedAllocationNode label(&it.node->name());
      it.kernel->Compute(ctx.get());
    } catch (const Error& e) {
      status = Wrap(*it.node, e.status());
    } catch (const std::bad_alloc&) {
      status = errors::ResourceExhausted("{}: out of memory", it.node->Describe());
    } catch (const std::exception& e) {
      status = errors::Internal("{}: {}", it.node->Describe(), e.what());
    }
    step->running[id].store(0, std::memory_order_relaxed);
    if (trace != nullptr) Record(trace, *it.node, start_us, status);
    if (step->args.ring != nullptr) RecordRing(step, it, start_ns, status);
    std::deque<Tagged> ready;
    if (!status.ok()) {
      Abort(step, status);
    } else {
      Propagate(step, where, ctx->outputs(), /*skipped=*/false, ready);
    }
    ctx.reset();
    Finish(step, ready);
    for (Tagged& r : ready) work.push_back(std::move(r));
    NodeDone(step);
  }
}

}  // namespace weft
