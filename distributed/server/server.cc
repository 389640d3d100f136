#include "distributed/server/server.h"

#include <unistd.h>

#include "core/gpu.h"
#include "distributed/cluster_resolver.h"
#include "distributed/ucx/environment.h"
#include "distributed/ucx/staging.h"
#include "graph/graph_io.h"

namespace weft {
namespace {

bool IsSecondary(const Status& s) { return s.code() == Code::kCancelled || s.code() == Code::kAborted; }
constexpr size_t kMaxAbortRecords = 4096;

}  // namespace

struct Server::Registered {
  std::vector<std::unique_ptr<Executor>> parts;
  int64_t num_args = 0, num_rets = 0;
};

struct Server::Step {
  uint64_t id = 0;
  CancellationManager cm;
  std::shared_ptr<UcxRendezvous> rendezvous;
  // Keeps the executors alive while the step runs, even if the graph is deregistered meanwhile;
  // released off the executor's thread (FinishStep), never inside the executor's own callback.
  std::shared_ptr<Registered> graph;
};

Server::Server(ClusterSpec cluster, TaskId task, ServerOptions options) : options_(std::move(options)) {
  cluster.Check(task);
  const int inter = options_.inter_op_threads > 0 ? options_.inter_op_threads : HardwareThreads();
  const int intra = options_.intra_op_threads > 0 ? options_.intra_op_threads : HardwareThreads();
  devices_ = DeviceSet::LocalCpus(options_.num_cpu_devices, intra, task.job, task.index);
  inter_op_ = std::make_unique<ThreadPool>(inter, "inter-op");
  collectives_ = std::make_unique<CollectiveContext>();
  callback_pool_ = std::make_unique<ThreadPool>(1, "recv-callbacks");
  control_pool_ = std::make_unique<ThreadPool>(1, "control");
  UcxTransportOptions t = options_.transport;
  ApplyUcxEnvironment(&t);  // WEFT_UCX_* overrides: whole programs A/B'd without recompiling
  // Options that name no secret and do not say insecure take the environment's, where TF_CONFIG
  // comes from (as MultiWorkerOptions::secret does): a C++ program's `Server server(config)`
  // works under weft-zoo launch, mpirun -x WEFT_CLUSTER_SECRET or a secret file.
  if (t.cluster_secret.empty() && !t.insecure) {
    const ClusterSecret secret = ResolveClusterSecret();
    t.cluster_secret = secret.secret;
    t.insecure = secret.insecure;
  }
  t.cluster = std::move(cluster);
  t.task = std::move(task);
  if (!t.device_copier) t.device_copier = SelectDeviceCopier(OpenGpus());  // docs/cuda.md
  task_name_ = t.task.ToString();
  auto beside_reports = [&](const char* kind, const char* ext) {
    const std::string name = fmt::format("weft-{}-{}-{}.{}", kind, t.task.job, t.task.index, ext);
    return options_.hang_report_dir.empty() ? name : options_.hang_report_dir + "/" + name;
  };
  if (options_.trace_events > 0) {
    trace_ring_ = std::make_unique<TraceRing>(TraceRingOptions{
        .capacity = options_.trace_events, .process = task_name_, .dump_path = beside_reports("trace", "json")});
  }
  if (trace_ring_) collectives_->set_trace_ring(trace_ring_.get());
  waits_ = std::make_unique<WaitDescriber>(t.cluster);
  reporter_ = std::make_unique<HangReporter>(
      HangReportOptions{.path = beside_reports("hang", "txt"), .on_signal = options_.hang_report_on_signal},
      [this](std::string_view why, ReportText* out) {
        DescribeWaits(why, out);
        if (trace_ring_) AppendTraceDump(*trace_ring_, why, out);
      });
  mgr_ = std::make_unique<UcxRendezvousMgr>(
      std::move(t), UcxRendezvousOptions{.recv_timeout = options_.recv_timeout,
                                         .callback_pool = callback_pool_.get(),
                                         .on_stall = [this](uint64_t step, const Status& why) {
                                           ReportStall(*reporter_, step, why);
                                         }});
  control_ = std::make_unique<ControlChannel>(
      &mgr_->transport(), [this](int src, const std::string& method, const Status& s, std::string body,
                                 ControlChannel::Reply reply) {
        control_pool_->Schedule([this, src, method, s, body = std::move(body), reply = std::move(reply)]() mutable {
          Serve(src, method, s, std::move(body), std::move(reply));
        });
      });
}

Server::~Server() {
  std::vector<std::shared_ptr<Step>> running;
  {
    std::unique_lock<std::mutex> l(mu_);
    stopped_ = true;
    for (auto& [id, step] : running_) running.push_back(step);
  }
  stopped_cv_.notify_all();
  for (auto& step : running) AbortStep(step->id, errors::Cancelled("task {}: the server is shutting down", task().ToString()));
  {
    std::unique_lock<std::mutex> l(mu_);
    stopped_cv_.wait_for(l, std::chrono::seconds(10), [this] { return running_.empty(); });
  }
  control_.reset();       // no new requests; replies still go (they hold the transport)
  control_pool_.reset();  // drains requests already queued (they fail fast now)
  mgr_.reset();
  reporter_.reset();  // after mgr_: no stall can be reported any more
  callback_pool_.reset();
  // The steps have ended (or were cancelled above) and their rendezvous, which held what their
  // collectives still waited for, are gone: the context's wait for its collectives is short.
  collectives_.reset();
  graphs_.clear();
  inter_op_.reset();
}

std::string Server::target() const {
  const HostPort hp = HostPort::Parse(cluster().Address(task()));
  return fmt::format("ucx://{}:{}", hp.host, mgr_->transport().port());
}

Status Server::RegisterGraph(const RegisterGraphRequest& request, uint64_t* handle) {
  auto reg = std::make_shared<Registered>();
  try {
    for (const auto& [device_name, bytes] : request.partitions) {
      const Device* d = devices_.Find(device_name);
      if (d == nullptr || d->name() != device_name) {
        return errors::InvalidArgument("task {}: RegisterGraph: '{}' is not a device of this task (it has {})",
                                       task().ToString(), device_name, devices_.ShortNames());
      }
      std::unique_ptr<Graph> g = ParseGraph(bytes, device_name);
      for (const Node* n : g->nodes()) {
        if (n->op() == "_Arg") reg->num_args = std::max(reg->num_args, n->attr<int64_t>("index") + 1);
        if (n->op() == "_Retval") reg->num_rets = std::max(reg->num_rets, n->attr<int64_t>("index") + 1);
      }
      DeviceContext device;
      device.device_type = d->type();
      device.device_name = d->name();
      device.intra_op = d->intra_op();
      device.vars = &vars_;
      reg->parts.push_back(Executor::Create(std::move(g), std::move(device), inter_op_.get()));
    }
  } catch (const Error& e) {
    return e.status().WithContext(fmt::format("task {}: RegisterGraph", task().ToString()));
  }
  if (reg->parts.empty()) return errors::InvalidArgument("task {}: RegisterGraph: no partitions", task().ToString());
  std::lock_guard<std::mutex> l(mu_);
  *handle = next_handle_++;
  graphs_[*handle] = std::move(reg);
  return Status();
}

Status Server::DeregisterGraph(uint64_t handle) {
  std::lock_guard<std::mutex> l(mu_);
  if (graphs_.erase(handle) == 0) {
    return errors::NotFound("task {}: graph handle {} is not registered", task().ToString(), handle);
  }
  return Status();  // running steps keep their executors alive (shared_ptr)
}

std::shared_ptr<Server::Step> Server::StartStep(uint64_t step_id, Status* aborted) {
  std::lock_guard<std::mutex> l(mu_);
  if (stopped_) {
    *aborted = errors::Cancelled("task {}: the server is shutting down", task().ToString());
    return nullptr;
  }
  auto it = aborted_.find(step_id);
  if (it != aborted_.end()) {
    *aborted = it->second;
    return nullptr;
  }
  if (running_.count(step_id)) {
    *aborted = errors::AlreadyExists("task {}: step {} is already running here", task().ToString(), step_id);
    return nullptr;
  }
  auto step = std::make_shared<Step>();
  step->id = step_id;
  step->rendezvous = mgr_->Find(step_id);
  running_[step_id] = step;
  return step;
}

void Server::FinishStep(uint64_t step_id) {
  std::shared_ptr<Registered> graph;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = running_.find(step_id);
    if (it != running_.end()) {
      graph = std::move(it->second->graph);
      running_.erase(it);
    }
  }
  if (graph.use_count() == 1) control_pool_->Schedule([graph] {});  // deregistered meanwhile: destroy elsewhere
  stopped_cv_.notify_all();
  mgr_->Cleanup(step_id);  // every Recv of this task's partitions has completed
}

void Server::RunStep(RunStepRequest request, std::function<void(const Status&, RunStepReply)> done) {
  std::shared_ptr<Registered> reg;
  {
    std::lock_guard<std::mutex> l(mu_);
    auto it = graphs_.find(request.handle);
    if (it != graphs_.end()) reg = it->second;
  }
  if (reg == nullptr) {
    done(errors::NotFound("task {}: graph handle {} is not registered (RegisterGraph first)", task().ToString(),
                          request.handle),
         {});
    return;
  }
  // The frame: args at their indices (every one the partitions read must be there).
  auto frame = std::make_shared<CallFrame>();
  frame->args.resize(reg->num_args);
  frame->rets.resize(reg->num_rets);
  for (auto& [index, value] : request.feeds) {
    if (index >= reg->num_args) {
      done(errors::InvalidArgument("task {}: feed index {} but the graph reads {} args", task().ToString(), index,
                                   reg->num_args),
           {});
      return;
    }
    frame->args[index] = std::move(value);
  }
  for (int64_t i = 0; i < reg->num_args; ++i) {
    bool read = false;
    for (const auto& part : reg->parts) {
      for (const Node* n : part->graph().nodes()) read = read || (n->op() == "_Arg" && n->attr<int64_t>("index") == i);
    }
    if (read && !frame->args[i].IsInitialized()) {
      done(errors::InvalidArgument("task {}: step {}: arg {} is not fed", task().ToString(), request.step_id, i), {});
      return;
    }
  }
  Status aborted;
  std::shared_ptr<Step> step = StartStep(request.step_id, &aborted);
  if (step == nullptr) {
    done(aborted, {});
    return;
  }
  step->graph = reg;
  struct State {
    std::mutex mu;
    size_t pending;
    Status first;
  };
  auto state = std::make_shared<State>();
  state->pending = reg->parts.size();
  auto fetches = std::make_shared<std::vector<int64_t>>(std::move(request.fetches));
  const std::vector<Executor*> parts = [&] {
    std::vector<Executor*> p;
    for (const auto& e : reg->parts) p.push_back(e.get());
    return p;
  }();
  reg.reset();  // the step holds the graph now
  const int64_t start_ns = trace_ring_ ? TraceRing::NowNanos() : 0;
  for (Executor* part : parts) {
    part->RunAsync({.step_id = static_cast<int64_t>(step->id), .frame = frame.get(), .rendezvous = step->rendezvous.get(),
                    .cancellation = &step->cm, .collectives = collectives_.get(), .ring = trace_ring_.get()},
                   [this, step, frame, state, fetches, done, start_ns](Status s) {
                     if (!s.ok()) {
                       step->rendezvous->StartAbort(s);
                       step->cm.StartCancel(s);
                     }
                     {
                       std::lock_guard<std::mutex> l(state->mu);
                       if (!s.ok() && (state->first.ok() || (IsSecondary(state->first) && !IsSecondary(s)))) {
                         state->first = s;
                       }
                       if (--state->pending > 0) return;
                     }
                     Status status = state->first;
                     RunStepReply reply;
                     for (int64_t index : *fetches) {
                       if (!status.ok()) break;
                       if (index >= static_cast<int64_t>(frame->rets.size()) || !frame->rets[index].IsInitialized()) {
                         status = errors::InvalidArgument("task {}: step {}: fetch {} is produced by no partition here",
                                                          task().ToString(), step->id, index);
                         break;
                       }
                       reply.rets.emplace_back(index, frame->rets[index]);
                     }
                     if (!status.ok()) reply.rets.clear();
                     if (status.ok()) {
                       for (uint64_t last = last_completed_.load(); last < step->id && !last_completed_.compare_exchange_weak(last, step->id);) {
                       }
                     }
                     if (trace_ring_) RecordStep(step->id, start_ns, status);
                     FinishStep(step->id);
                     done(status, std::move(reply));
                   });
  }
}

void Server::RecordStep(uint64_t step_id, int64_t start_ns, const Status& status) {
  trace_ring_->Record({.kind = TraceKind::kStep, .step = static_cast<int64_t>(step_id), .start_ns = start_ns,
                       .end_ns = TraceRing::NowNanos(), .name = "step", .op = "RunStep",
                       .detail = status.ok() ? std::string_view() : std::string_view(status.message()),
                       .failed = !status.ok()});
  // A step that failed here first (not one aborted because another task failed) dumps the trace.
  if (!status.ok() && !IsSecondary(status)) {
    const std::string why = fmt::format("step {} failed on task {}: {}", step_id, task_name_, status.ToString());
    (void)trace_ring_->DumpReserved(why);
  }
}

std::string Server::DescribeWaits(std::string_view why) const {
  ReportText text(256 * 1024);
  DescribeWaits(why, &text);
  return std::string(text.view());
}

void Server::DescribeWaits(std::string_view why, ReportText* out) const {
  std::lock_guard<std::mutex> describing(describe_mu_);
  out->Append("=== weft hang report: {} (pid {}) ===\nwhy: {}\nlast completed step: {}\n", task_name_, getpid(), why,
              last_completed_.load());
  const size_t n = mgr_ ? waits_->AppendWaiting(*mgr_, ~uint64_t{0}, out) : 0;
  {
    // Never waits for mu_: a report may come from a thread that holds it.
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    if (!l.owns_lock()) {
      out->Append("running: (the server was busy: its running nodes are not listed)\n");
    } else {
      for (const auto& [id, step] : running_) {
        out->Append("step {}: running here\n", id);
        if (step->graph == nullptr) continue;
        for (const auto& part : step->graph->parts) {
          part->ForEachRunning([out](uint64_t step_id, const Node& node, std::string_view device) {
            out->Append("running: step {}: {} '{}' on {}\n", step_id, node.op(), node.name(), device);
          });
        }
      }
    }
  }
  if (n == 0) out->Append("no Recv of a step is waiting\n");
  waits_->AppendWaitsFor(out);
}

void Server::AbortStep(uint64_t step_id, const Status& status) {
  std::shared_ptr<Step> step;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (aborted_.size() >= kMaxAbortRecords) aborted_.erase(aborted_.begin());  // the oldest ids
    aborted_.emplace(step_id, status);
    auto it = running_.find(step_id);
    if (it != running_.end()) step = it->second;
  }
  if (step != nullptr) {
    step->rendezvous->StartAbort(status);
    step->cm.StartCancel(status);
  }
}

void Server::Cleanup(uint64_t step_id) {
  {
    std::lock_guard<std::mutex> l(mu_);
    aborted_.erase(step_id);
  }
  mgr_->Cleanup(step_id);
}

HealthReply Server::Health() const {
  HealthReply h;
  h.task = task().ToString();
  for (const auto& d : devices_.devices()) h.devices.push_back(d->name());
  std::lock_guard<std::mutex> l(mu_);
  h.graphs = static_cast<int64_t>(graphs_.size());
  h.steps_running = static_cast<int64_t>(running_.size());
  return h;
}

void Server::Join() {
  std::unique_lock<std::mutex> l(mu_);
  stopped_cv_.wait(l, [this] { return stopped_; });
}

void Server::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
  }
  stopped_cv_.notify_all();
}

// Runs on the control pool. Every request gets exactly one reply.
bool Server::HeardFrom(int task) const {
  std::lock_guard<std::mutex> l(mu_);
  return heard_from_.count(task) > 0;
}

void Server::Serve(int src_task, const std::string& method_name, const Status& status, std::string body,
                   ControlChannel::Reply reply) {
  if (status.ok() && src_task >= 0 && src_task < cluster().NumTasks()) {
    std::lock_guard<std::mutex> l(mu_);
    heard_from_.insert(src_task);
  }
  if (!status.ok()) {
    reply(status.WithContext(fmt::format("task {}: rejected a {} request", task().ToString(), method_name)), "");
    return;
  }
  ControlMethod method;
  Status s = ParseControlMethod(method_name, &method);
  if (!s.ok()) {
    reply(s.WithContext(fmt::format("task {}", task().ToString())), "");
    return;
  }
  try {
    switch (method) {
      case ControlMethod::kRegisterGraph: {
        uint64_t handle = 0;
        s = RegisterGraph(DecodeRegisterGraph(body), &handle);
        reply(s, s.ok() ? EncodeHandle(handle) : "");
        return;
      }
      case ControlMethod::kDeregisterGraph:
        reply(DeregisterGraph(DecodeHandle(body, "DeregisterGraph request")), EncodeEmpty());
        return;
      case ControlMethod::kRunStep:
        RunStep(DecodeRunStep(body), [reply](const Status& st, RunStepReply r) {
          reply(st, st.ok() ? EncodeRunStepReply(r) : "");
        });
        return;
      case ControlMethod::kAbortStep: {
        const AbortStepRequest q = DecodeAbortStep(body);
        AbortStep(q.step_id, q.status);
        reply(Status(), EncodeEmpty());
        return;
      }
      case ControlMethod::kCleanup:
        Cleanup(DecodeStepId(body, "Cleanup request"));
        reply(Status(), EncodeEmpty());
        return;
      case ControlMethod::kHealth:
        DecodeEmpty(body, "Health request");
        reply(Status(), EncodeHealthReply(Health()));
        return;
    }
  } catch (const Error& e) {
    reply(e.status().WithContext(fmt::format("task {}", task().ToString())), "");
  }
}

}  // namespace weft
