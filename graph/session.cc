#include "graph/session.h"

#include <fmt/format.h>

#include <atomic>
#include <algorithm>
#include <condition_variable>
#include <cstdio>

#include "runtime/rendezvous.h"
#include "graph/partition.h"
#include "graph/passes.h"
#include "graph/placer.h"

namespace weft {
namespace {

// An abort caused by another device's failure says less than the failure itself.
bool IsSecondary(const Status& s) { return s.code() == Code::kCancelled || s.code() == Code::kAborted; }

// The collective nodes of a step's partitions, in the order every worker of one program has them.
std::vector<CollectiveSignature> CollectivesOf(const std::vector<const Graph*>& parts) {
  std::vector<CollectiveSignature> out;
  for (const Graph* g : parts) {
    for (const Node* n : g->nodes()) {
      if (!n->op().starts_with("Collective") || !n->has_attr("instance_key")) continue;
      CollectiveSignature s;
      s.op = n->op();
      s.node = n->name();
      s.group_key = n->attr<int64_t>("group_key");
      s.instance_key = n->attr<int64_t>("instance_key");
      s.dtype = n->num_inputs() > 0 ? n->input(0).dtype() : DType::kInvalid;
      if (n->num_inputs() > 0) s.shape = n->input(0).shape();
      if (n->has_attr("algorithm")) s.algorithm = n->attr<std::string>("algorithm");
      if (n->has_attr("label")) s.label = n->attr<std::string>("label");
      out.push_back(std::move(s));
    }
  }
  SortSignatures(&out);
  return out;
}

}  // namespace

struct Session::Compiled {
  struct Part {
    std::string device;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;
  std::vector<CollectiveSignature> collectives;  // CollectivesOf(parts)
  std::atomic<bool> collectives_checked{false};  // SessionOptions::check_collectives passed once
};

Session::Session(Graph* graph, SessionOptions options) : graph_(graph), options_(options) {
  const int inter = options_.inter_op_threads > 0 ? options_.inter_op_threads : HardwareThreads();
  const int intra = options_.intra_op_threads > 0 ? options_.intra_op_threads : HardwareThreads();
  inter_op_ = std::make_unique<ThreadPool>(inter, "inter-op");
  devices_ = DeviceSet::LocalDevices(options_.num_cpu_devices, intra, options_.use_gpus, options_.job, options_.task);
  WEFT_REQUIRE(options_.device_memory_limit >= 0, "SessionOptions: device_memory_limit must be >= 0 (0: none), got {}",
               options_.device_memory_limit);
  if (options_.device_memory_limit > 0) {
    for (const auto& d : devices_.devices()) {
      budgets_.emplace(d->name(), BudgetAllocator::Create(d->allocator(), d->name(), options_.device_memory_limit));
    }
  }
  collectives_ = std::make_unique<CollectiveContext>();
  collectives_->set_trace_ring(options_.trace_ring.get());
  if (options_.remote) remote_ = options_.remote(graph_);
  if (options_.lifetime_hook) options_.lifetime_hook(this, true);
}

Session::~Session() {
  if (options_.lifetime_hook) options_.lifetime_hook(this, false);
  std::lock_guard<std::mutex> l(mu_);
  cache_.clear();  // executors go before the pools they use
  // Every Run has returned; what of its collectives is still in flight (a pool task ending) is
  // waited for here, before the devices their reducers use go.
  collectives_.reset();
}

std::vector<std::string> Session::DescribeRunning() const {
  std::vector<std::string> out;
  const bool listed = ForEachRunning([&out](uint64_t step_id, const Node& node, std::string_view device) {
    out.push_back(fmt::format("step {}: {} on {}", step_id, node.Describe(), device));
  });
  if (!listed) return {"(a Session was busy: its running nodes are not listed)"};
  return out;
}

bool Session::ForEachRunning(const Executor::RunningVisitor& visit) const {
  // Never waits: a report may be taken on a thread that holds mu_ (Session::Cancel cancelling a
  // step whose abort reports).
  std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
  if (!l.owns_lock()) return false;
  for (const auto& [key, compiled] : cache_) {
    for (const auto& part : compiled->parts) part.executor->ForEachRunning(visit);
  }
  return true;
}

std::vector<std::pair<std::string, AllocatorStats>> Session::DeviceMemory() const {
  std::vector<std::pair<std::string, AllocatorStats>> out;
  for (const auto& [name, budget] : budgets_) out.emplace_back(name, budget->Stats());
  return out;
}

size_t Session::num_compiled() const {
  std::lock_guard<std::mutex> l(mu_);
  return cache_.size();
}

std::shared_ptr<Session::Compiled> Session::Compile(const std::vector<Output>& feeds, const std::vector<Output>& fetches,
                                                    const std::vector<Node*>& targets) {
  std::string key = "feeds:";
  for (const Output& f : feeds) key += f.name() + ",";
  key += "|fetches:";
  for (const Output& f : fetches) key += f.name() + ",";
  key += "|targets:";
  for (const Node* t : targets) key += t->name() + ",";
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
  }
  std::unique_ptr<Graph> g = PruneForStep(*graph_, feeds, fetches, targets);
  if (options_.constant_folding) FoldConstants(g.get(), devices_.client()->intra_op());
  if (options_.cse) EliminateCommonSubexpressions(g.get());
  // The fused nn ops have CPU kernels only: with a GPU, conv, bias and relu stay apart so that
  // each can run there (cuDNN and the .cu kernels).
  const bool has_gpu = devices_.size() > options_.num_cpu_devices;
  if (options_.fuse_ops && !has_gpu) {
    FoldBatchNormIntoConv(g.get());
    FuseNnOps(g.get());
  }
  Place(g.get(), devices_, {.soft_placement = options_.soft_placement});
  auto compiled = std::make_shared<Compiled>();
  for (auto& [device_name, part] : Partition(*g, devices_)) {
    const Device* d = devices_.Find(device_name);
    DeviceContext device;
    device.device_type = d->type();
    device.device_name = d->name();
    device.intra_op = d->intra_op();
    device.vars = &vars_;
    auto budget = budgets_.find(d->name());
    device.allocator = budget != budgets_.end() ? budget->second.get() : d->allocator();
    device.gpu = d->gpu();
    device.gpu_options = options_.gpu;
    compiled->parts.push_back({device_name, Executor::Create(std::move(part), std::move(device), inter_op_.get())});
  }
  std::vector<const Graph*> graphs;
  for (const auto& part : compiled->parts) graphs.push_back(&part.executor->graph());
  compiled->collectives = CollectivesOf(graphs);
  std::lock_guard<std::mutex> l(mu_);
  return cache_.emplace(key, std::move(compiled)).first->second;
}

std::vector<std::pair<std::string, const Graph*>> Session::Partitions(const std::vector<Output>& feeds,
                                                                      const std::vector<Output>& fetches,
                                                                      const std::vector<Node*>& targets) {
  std::vector<std::pair<std::string, const Graph*>> out;
  for (const auto& part : Compile(feeds, fetches, targets)->parts) out.emplace_back(part.device, &part.executor->graph());
  return out;
}

// Runs every partition of the step at once; the first failure aborts the rendezvous (so Recvs
// waiting for a device that failed complete with its error) and cancels the other partitions.
// A cancellation from outside (Session::Cancel, the step's timeout) aborts the rendezvous too:
// that is what ends a Recv whose Send will never come.
Status Session::RunPartitions(const Compiled& compiled, int64_t step_id, CallFrame* frame, CancellationManager* cm,
                              const RunOptions& options) {
  std::shared_ptr<Rendezvous> owned;
  try {
    owned = options_.rendezvous_factory ? options_.rendezvous_factory(static_cast<uint64_t>(step_id))
                                        : std::make_shared<LocalRendezvous>();
  } catch (const Error& e) {
    return e.status();
  }
  if (owned == nullptr) return errors::Internal("step {}: the session's rendezvous_factory returned null", step_id);
  Rendezvous& rendezvous = *owned;
  // The callback holds the rendezvous: a StartCancel racing with the end of the step may still be
  // running it after DeregisterCallback returns.
  const CancellationManager::Token abort_token =
      cm->RegisterCallback([owned](const Status& why) { owned->StartAbort(why); });
  const ExecutorArgs args{.step_id = step_id, .frame = frame, .rendezvous = &rendezvous, .cancellation = cm,
                          .collectives = collectives_.get(), .trace = options.trace,
                          .ring = options_.trace_ring.get()};
  std::mutex mu;
  std::condition_variable cv;
  // Partitions still running: changed under mu (for cv), read without it while driving.
  std::atomic<size_t> pending{compiled.parts.size()};
  Status first;
  for (const auto& part : compiled.parts) {
    part.executor->RunAsync(args, [&](Status s) {
      if (!s.ok()) {
        rendezvous.StartAbort(s);  // peers (other partitions, other processes) wait on this step's keys
        cm->StartCancel(s);
      }
      std::lock_guard<std::mutex> l(mu);
      if (!s.ok() && (first.ok() || (IsSecondary(first) && !IsSecondary(s)))) first = s;
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) cv.notify_all();
    });
  }
  // Across processes this thread polls the transport while it waits (Rendezvous::DriveUntil).
  auto ended = [&] { return pending.load(std::memory_order_acquire) == 0; };
  if (options.timeout.count() > 0) {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    rendezvous.DriveUntil([&] { return ended() || std::chrono::steady_clock::now() >= deadline; });
    bool in_time;
    {
      std::unique_lock<std::mutex> l(mu);
      in_time = cv.wait_until(l, deadline, ended);
    }
    if (!in_time) {
      // Described before the abort empties the rendezvous.
      const std::string waiting = rendezvous.DescribeWaiting();
      cm->StartCancel(errors::DeadlineExceeded("step {} did not finish within its timeout of {} ms (RunOptions.timeout){}",
                                               step_id, options.timeout.count(),
                                               waiting.empty() ? "" : "; still waiting for " + waiting));
    }
  }
  rendezvous.DriveUntil(ended);
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, ended);
  }
  cm->DeregisterCallback(abort_token);
  return first;
}

// The step's own event in the trace ring; a failed step dumps the ring (not masking the step's
// error when the dump cannot be written: that goes to stderr).
void Session::RecordStep(int64_t step_id, int64_t start_ns, bool collective, const Status& status) const {
  TraceRing& ring = *options_.trace_ring;
  char name[32];
  const int n = std::snprintf(name, sizeof(name), "step %lld", static_cast<long long>(step_id));
  ring.Record({.kind = TraceKind::kStep, .step = step_id, .start_ns = start_ns, .end_ns = TraceRing::NowNanos(),
               .name = std::string_view(name, static_cast<size_t>(std::max(n, 0))),
               .op = collective ? "collective step" : "local step", .detail = status.ok() ? "" : status.ToString(),
               .failed = !status.ok()});
  if (status.ok() || ring.dump_path().empty()) return;
  try {
    ring.Dump(fmt::format("step {} failed: {}", step_id, status.ToString()));
  } catch (const Error& e) {
    std::fprintf(stderr, "weft: could not dump the trace of failed step %lld: %s\n", static_cast<long long>(step_id),
                 e.what());
  }
}

std::vector<Tensor> Session::Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                                 const std::vector<Node*>& targets, const RunOptions& options) {
  if (remote_) return remote_->Run(feeds, fetches, targets, options.timeout);
  std::vector<Output> feed_outputs;
  CallFrame frame;
  for (const auto& [out, value] : feeds) {
    WEFT_REQUIRE(out.valid() && graph_->FindNode(out.node->name()) == out.node, "feed of a tensor not in this graph");
    WEFT_REQUIRE(value.IsInitialized(), "feed for '{}' is an uninitialized tensor", out.name());
    WEFT_REQUIRE(value.dtype() == out.dtype(), "feed for '{}' has dtype {}, expected {}", out.name(),
                 DTypeName(value.dtype()), DTypeName(out.dtype()));
    WEFT_REQUIRE(out.shape().IsCompatibleWith(value.shape()), "feed for '{}' has shape {}, expected {}", out.name(),
                 value.shape().ToString(), out.shape().ToString());
    feed_outputs.push_back(out);
    frame.args.push_back(value);
  }
  for (const Output& f : fetches) {
    WEFT_REQUIRE(f.valid() && graph_->FindNode(f.node->name()) == f.node, "fetch of a tensor not in this graph");
  }
  for (const Node* t : targets) {
    WEFT_REQUIRE(t != nullptr && graph_->FindNode(t->name()) == t, "target not in this graph");
  }
  std::shared_ptr<Compiled> compiled = Compile(feed_outputs, fetches, targets);
  frame.rets.resize(fetches.size());
  CancellationManager cm;
  const int64_t step_id = options_.next_step_id ? static_cast<int64_t>(options_.next_step_id(options.collective))
                                                : next_step_id_.fetch_add(1);
  last_step_id_ = step_id;
  for (auto& [name, budget] : budgets_) budget->ResetPeak();  // reports give this step's peak
  {
    std::lock_guard<std::mutex> l(mu_);
    running_[step_id] = &cm;
  }
  Status status;
  const int64_t start_ns = options_.trace_ring ? TraceRing::NowNanos() : 0;
  if (options.collective && options_.check_collectives && !compiled->collectives_checked.load()) {
    status = options_.check_collectives(static_cast<uint64_t>(step_id), compiled->collectives);
    if (status.ok()) compiled->collectives_checked = true;
  }
  if (status.ok()) status = RunPartitions(*compiled, step_id, &frame, &cm, options);
  if (options_.trace_ring) RecordStep(step_id, start_ns, options.collective, status);
  if (options_.rendezvous_cleanup) options_.rendezvous_cleanup(static_cast<uint64_t>(step_id));
  {
    std::lock_guard<std::mutex> l(mu_);
    running_.erase(step_id);
  }
  ThrowIfError(status);
  for (size_t i = 0; i < fetches.size(); ++i) {
    if (!frame.rets[i].IsInitialized()) {
      throw Error(errors::Internal("fetch '{}' produced no value", fetches[i].name()));
    }
  }
  return std::move(frame.rets);
}

std::vector<Tensor> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                 const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  std::vector<std::pair<Output, Tensor>> f;
  for (const auto& [name, value] : feeds) f.emplace_back(graph_->FindOutput(name), value);
  std::vector<Output> outs;
  for (const std::string& name : fetches) outs.push_back(graph_->FindOutput(name));
  std::vector<Node*> nodes;
  for (const std::string& name : targets) {
    Node* n = graph_->FindNode(name);
    if (n == nullptr) throw Error(errors::NotFound("no target node named '{}'", name));
    nodes.push_back(n);
  }
  return Run(f, outs, nodes);
}

void Session::Cancel(Status why) {
  if (why.ok()) why = errors::Cancelled("step cancelled by Session::Cancel");
  if (remote_) remote_->Cancel(why);
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [id, cm] : running_) cm->StartCancel(why);
}

}  // namespace weft
