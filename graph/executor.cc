#include "graph/executor.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <set>

#include "runtime/rendezvous.h"

namespace weft {

namespace {

struct Item {
  Node* node = nullptr;
  std::unique_ptr<OpKernel> kernel;
  int initial_pending = 0;
  bool cheap = false;
  std::vector<std::vector<std::pair<int, int>>> out_by_output;  // [output] -> (dst item, dst input)
  std::vector<int> control_out;                                 // dst items
  std::vector<bool> input_is_ref;
};

}  // namespace

struct Executor::Impl {
  std::unique_ptr<Graph> graph;
  DeviceContext device;
  ThreadPool* inter_op;
  std::vector<Item> items;
  std::vector<int> roots;

  struct Step {
    Impl* impl;
    ExecutorArgs args;
    std::unique_ptr<CancellationManager> own_cm;
    CancellationManager* cm;
    std::vector<std::vector<Tensor>> inputs;
    std::unique_ptr<std::atomic<int>[]> pending;
    std::unique_ptr<std::atomic<uint8_t>[]> running;  // per item: started, not ended (DescribeRunning)
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

  // Runs one node (and, inline, what becomes ready after it); `ready` holds inline work.
  void Process(Step* step, int id);
  void Record(StepTrace* trace, const Node& node, int64_t start_us, const Status& s) const;
  // Delivers outputs of item `id`; appends newly ready items to `ready`.
  void Propagate(Step* step, int id, std::vector<Tensor>& outputs, std::deque<int>& ready);
  // Schedules expensive ready items on the pool and returns the ones to run inline.
  void Finish(Step* step, std::deque<int>& ready);
  void Schedule(Step* step, int id) {
    inter_op->Schedule([this, step, id] { Process(step, id); });
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
    Item& it = impl->items[i];
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
    if (it.initial_pending == 0) impl->roots.push_back(static_cast<int>(i));
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
  step->inputs.resize(n);
  step->pending.reset(new std::atomic<int>[n]);
  step->running.reset(new std::atomic<uint8_t>[n]);
  for (size_t i = 0; i < n; ++i) {
    step->inputs[i].resize(impl->items[i].node->num_inputs());
    step->pending[i].store(impl->items[i].initial_pending);
    step->running[i].store(0, std::memory_order_relaxed);
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
  step->outstanding.store(static_cast<int64_t>(impl->roots.size()));
  for (size_t i = 1; i < impl->roots.size(); ++i) impl->Schedule(step, impl->roots[i]);
  impl->Process(step, impl->roots[0]);
}

std::vector<std::string> Executor::DescribeRunning() const {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> l(impl_->live_mu);
  for (const Impl::Step* step : impl_->live) {
    for (size_t i = 0; i < impl_->items.size(); ++i) {
      if (step->running[i].load(std::memory_order_relaxed) == 0) continue;
      out.push_back(fmt::format("step {}: {} on {}", step->args.step_id, impl_->items[i].node->Describe(),
                                impl_->device.device_name));
    }
  }
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

void Executor::Impl::Propagate(Step* step, int id, std::vector<Tensor>& outputs, std::deque<int>& ready) {
  const Item& it = items[id];
  for (size_t o = 0; o < it.out_by_output.size(); ++o) {
    const auto& dsts = it.out_by_output[o];
    for (size_t k = 0; k < dsts.size(); ++k) {
      const auto [dst, in] = dsts[k];
      if (!outputs[o].IsInitialized() && !items[dst].input_is_ref[in]) {
        Abort(step, errors::Internal("{} produced no output {} (needed by {})", it.node->Describe(), o,
                                     items[dst].node->Describe()));
        return;
      }
      // The last consumer takes the tensor; others share the buffer.
      step->inputs[dst][in] = (k + 1 == dsts.size()) ? std::move(outputs[o]) : outputs[o];
    }
  }
  for (const auto& dsts : it.out_by_output) {
    for (const auto& [dst, in] : dsts) {
      if (step->pending[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(dst);
    }
  }
  for (int dst : it.control_out) {
    if (step->pending[dst].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(dst);
  }
}

void Executor::Impl::Finish(Step* step, std::deque<int>& ready) {
  // Keep cheap items and the last expensive one inline; schedule the other expensive ones.
  step->outstanding.fetch_add(static_cast<int64_t>(ready.size()));
  std::deque<int> inline_items;
  int last_expensive = -1;
  for (int r : ready) {
    if (items[r].cheap) {
      inline_items.push_back(r);
    } else {
      if (last_expensive >= 0) Schedule(step, last_expensive);
      last_expensive = r;
    }
  }
  if (last_expensive >= 0) inline_items.push_back(last_expensive);
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

void Executor::Impl::Process(Step* step, int first) {
  std::deque<int> work{first};
  while (!work.empty()) {
    const int id = work.front();
    work.pop_front();
    Item& it = items[id];
    if (!step->aborted.load() && step->cm->IsCancelled()) Abort(step, step->cm->status());
    if (step->aborted.load()) {
      NodeDone(step);
      continue;
    }
    auto ctx = std::make_unique<OpKernelContext>(*it.node, device, std::move(step->inputs[id]), step->args.step_id,
                                                 step->args.frame, step->args.rendezvous, step->cm,
                                                 step->args.collectives);
    StepTrace* trace = step->args.trace;
    const int64_t start_us = trace != nullptr ? trace->NowMicros() : 0;
    if (it.kernel->is_async()) {
      auto* async = static_cast<AsyncOpKernel*>(it.kernel.get());
      OpKernelContext* raw = ctx.release();
      step->running[id].store(1, std::memory_order_relaxed);
      auto on_done = [this, step, id, raw, start_us](Status s) {
        step->running[id].store(0, std::memory_order_relaxed);
        if (step->args.trace != nullptr) Record(step->args.trace, *items[id].node, start_us, s);
        std::unique_ptr<OpKernelContext> owned(raw);
        std::deque<int> ready;
        if (!s.ok()) {
          Abort(step, Wrap(*items[id].node, s));
        } else if (!step->aborted.load()) {
          Propagate(step, id, owned->outputs(), ready);
        }
        owned.reset();
        Finish(step, ready);
        for (int r : ready) Schedule(step, r);  // never run nodes inline inside a kernel's callback
        NodeDone(step);
      };
      try {
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
    std::deque<int> ready;
    if (!status.ok()) {
      Abort(step, status);
    } else {
      Propagate(step, id, ctx->outputs(), ready);
    }
    ctx.reset();
    Finish(step, ready);
    for (int r : ready) work.push_back(r);
    NodeDone(step);
  }
}

}  // namespace weft
