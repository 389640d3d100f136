#include "distributed/distributed_session.h"

#include <algorithm>
#include <condition_variable>
#include <random>

#include "graph/graph_io.h"
#include "graph/partition.h"
#include "graph/passes.h"
#include "graph/placer.h"

namespace weft {
namespace {

bool IsSecondary(const Status& s) { return s.code() == Code::kCancelled || s.code() == Code::kAborted; }

// "task worker:1: ..." unless the message names the task already.
Status NameTask(const Status& s, const std::string& task) {
  if (s.ok() || s.message().find("task " + task) != std::string::npos) return s;
  return s.WithContext("task " + task);
}

}  // namespace

struct DistributedSession::Compiled {
  struct TaskPart {
    int task = 0;  // global index
    std::string name;
    uint64_t handle = 0;
    std::vector<int64_t> args, rets;  // indices its partitions read and write
    std::vector<std::string> devices;
  };
  std::vector<TaskPart> tasks;
};

DistributedSession::DistributedSession(Graph* graph, Server* server, DistributedSessionOptions options)
    : graph_(graph), server_(server), options_(options) {
  std::random_device rd;
  next_step_id_ = (((uint64_t{rd()} << 20) ^ rd()) << 20) + 1;  // distinct from other clients' steps
  // This task's devices first (unconstrained nodes go there), then every other task's, as its
  // server reports them. These describe devices for placement; the servers run the kernels.
  auto add = [this](const std::string& name) { devices_.Add(std::make_unique<Device>(DeviceName::Parse(name), 1)); };
  for (const auto& d : server_->devices().devices()) add(d->name());
  const ClusterSpec& cluster = server_->cluster();
  std::vector<DeviceName> filters;
  for (const std::string& f : options_.device_filters) filters.push_back(DeviceName::Parse(f));
  auto used = [&](int t) {
    const DeviceName task = DeviceName::Parse(cluster.TaskAt(t).DeviceName());
    return filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const DeviceName& f) { return task.Matches(f); });
  };
  for (int t = 0; t < cluster.NumTasks(); ++t) {
    if (t == server_->task_index() || !used(t)) continue;
    ControlResult r = server_->control().Call(t, ControlMethod::kHealth, EncodeEmpty(), options_.control_timeout);
    if (r.status.ok()) {
      try {
        HealthReply h = DecodeHealthReply(r.body);
        for (const std::string& d : h.devices) {
          const std::optional<TaskId> of = cluster.TaskOfDevice(d);
          if (!of || cluster.GlobalIndex(*of) != t) {
            r.status = errors::DataLoss("Health reply: device '{}' is not task {}'s", d, cluster.TaskAt(t).ToString());
          }
          if (r.status.ok()) add(d);
        }
      } catch (const Error& e) {
        r.status = e.status();
      }
    }
    if (!r.status.ok()) throw Error(NameTask(r.status, cluster.TaskAt(t).ToString()).WithContext("DistributedSession"));
  }
}

DistributedSession::~DistributedSession() {
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& [key, compiled] : cache_) {
    for (const auto& part : compiled->tasks) {
      if (part.task == server_->task_index()) {
        server_->DeregisterGraph(part.handle);
      } else {
        server_->control().Call(part.task, ControlMethod::kDeregisterGraph, EncodeHandle(part.handle),
                                options_.control_timeout);  // a task that is gone has nothing to deregister
      }
    }
  }
}

std::shared_ptr<DistributedSession::Compiled> DistributedSession::Compile(const std::vector<Output>& feeds,
                                                                          const std::vector<Output>& fetches,
                                                                          const std::vector<Node*>& targets) {
  std::string key = "feeds:";
  for (const Output& f : feeds) key += f.name() + ",";
  key += "|fetches:";
  for (const Output& f : fetches) key += f.name() + ",";
  key += "|targets:";
  for (const Node* t : targets) key += t->name() + ",";
  std::lock_guard<std::mutex> l(mu_);  // one compile at a time: registering is a round trip per task
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::unique_ptr<Graph> g = PruneForStep(*graph_, feeds, fetches, targets);
  if (options_.constant_folding) FoldConstants(g.get(), server_->devices().client()->intra_op());
  if (options_.cse) EliminateCommonSubexpressions(g.get());
  if (options_.fuse_ops) FuseNnOps(g.get());
  Place(g.get(), devices_, {.soft_placement = options_.soft_placement});
  // Partitions by task.
  const ClusterSpec& cluster = server_->cluster();
  std::map<int, Compiled::TaskPart> by_task;
  std::map<int, RegisterGraphRequest> requests;
  for (auto& [device, part] : Partition(*g, devices_)) {
    const int t = cluster.GlobalIndex(*cluster.TaskOfDevice(device));
    Compiled::TaskPart& tp = by_task[t];
    tp.task = t;
    tp.name = cluster.TaskAt(t).ToString();
    tp.devices.push_back(device);
    for (const Node* n : part->nodes()) {
      if (n->op() == "_Arg") tp.args.push_back(n->attr<int64_t>("index"));
      if (n->op() == "_Retval") tp.rets.push_back(n->attr<int64_t>("index"));
    }
    requests[t].partitions.emplace_back(device, SerializeGraph(*part));
  }
  auto compiled = std::make_shared<Compiled>();
  for (auto& [t, tp] : by_task) {
    Status s;
    if (t == server_->task_index()) {
      s = server_->RegisterGraph(requests[t], &tp.handle);
    } else {
      ControlResult r = server_->control().Call(t, ControlMethod::kRegisterGraph, EncodeRegisterGraph(requests[t]),
                                                options_.control_timeout);
      s = r.status;
      if (s.ok()) {
        try {
          tp.handle = DecodeHandle(r.body, "RegisterGraph reply");
        } catch (const Error& e) {
          s = e.status();
        }
      }
    }
    if (!s.ok()) {
      for (const auto& done : compiled->tasks) {  // best effort: the graphs registered so far
        if (done.task == server_->task_index()) server_->DeregisterGraph(done.handle);
        else server_->control().Call(done.task, ControlMethod::kDeregisterGraph, EncodeHandle(done.handle), options_.control_timeout);
      }
      throw Error(NameTask(s, tp.name));
    }
    compiled->tasks.push_back(std::move(tp));
  }
  return cache_.emplace(key, std::move(compiled)).first->second;
}

std::vector<std::pair<std::string, std::string>> DistributedSession::Partitions(const std::vector<Output>& feeds,
                                                                                const std::vector<Output>& fetches,
                                                                                const std::vector<Node*>& targets) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& tp : Compile(feeds, fetches, targets)->tasks) {
    for (const std::string& d : tp.devices) out.emplace_back(d, tp.name);
  }
  return out;
}

void DistributedSession::AbortEverywhere(const Compiled& compiled, uint64_t step_id, const Status& status) {
  const std::string body = EncodeAbortStep({step_id, status});
  for (const auto& tp : compiled.tasks) {
    if (tp.task == server_->task_index()) {
      server_->AbortStep(step_id, status);
    } else {
      server_->control().CallAsync(tp.task, ControlMethod::kAbortStep, body, options_.control_timeout,
                                   [](ControlResult) {});  // a dead task needs no abort
    }
  }
}

Status DistributedSession::RunStep(const Compiled& compiled, uint64_t step_id, const std::vector<Tensor>& args,
                                   std::vector<Tensor>* rets, std::chrono::milliseconds timeout) {
  const std::chrono::milliseconds limit =
      timeout.count() > 0 ? std::min(timeout, options_.step_timeout) : options_.step_timeout;
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    size_t pending = 0;
    Status first;
    bool aborted = false;
  };
  auto state = std::make_shared<State>();
  state->pending = compiled.tasks.size();
  // Every task's answer comes here, once: the first error aborts the step everywhere.
  auto finish = [this, state, &compiled, step_id, rets](const Compiled::TaskPart& tp, Status s, RunStepReply reply) {
    s = NameTask(s, tp.name);
    bool abort = false;
    {
      std::lock_guard<std::mutex> l(state->mu);
      if (s.ok()) {
        for (auto& [index, value] : reply.rets) {
          if (index >= 0 && index < static_cast<int64_t>(rets->size())) (*rets)[index] = std::move(value);
        }
      } else {
        if (state->first.ok() || (IsSecondary(state->first) && !IsSecondary(s))) state->first = s;
        abort = !state->aborted;
        state->aborted = true;
      }
    }
    if (abort) AbortEverywhere(compiled, step_id, s);
    std::lock_guard<std::mutex> l(state->mu);
    if (--state->pending == 0) state->cv.notify_all();
  };
  // Cancel: the step fails with `why` (reported as its error) and is aborted everywhere.
  auto cancel = [this, state, &compiled, step_id](const Status& why) {
    bool abort = false;
    {
      std::lock_guard<std::mutex> l(state->mu);
      if (state->first.ok() || IsSecondary(state->first)) state->first = why;
      abort = !state->aborted;
      state->aborted = true;
    }
    if (abort) AbortEverywhere(compiled, step_id, why);
  };
  {
    std::lock_guard<std::mutex> l(mu_);
    running_[step_id] = cancel;
  }
  for (const auto& tp : compiled.tasks) {
    RunStepRequest q;
    q.step_id = step_id;
    q.handle = tp.handle;
    for (int64_t a : tp.args) q.feeds.emplace_back(a, args.at(a));
    q.fetches = tp.rets;
    if (tp.task == server_->task_index()) {
      server_->RunStep(std::move(q), [&tp, finish](const Status& s, RunStepReply r) { finish(tp, s, std::move(r)); });
    } else {
      server_->control().CallAsync(tp.task, ControlMethod::kRunStep, EncodeRunStep(q), limit,
                                   [&tp, finish](ControlResult r) {
                                     RunStepReply reply;
                                     if (r.status.ok()) {
                                       try {
                                         reply = DecodeRunStepReply(r.body);
                                       } catch (const Error& e) {
                                         r.status = e.status();
                                       }
                                     }
                                     finish(tp, r.status, std::move(reply));
                                   });
    }
  }
  // Remote calls complete by step_timeout; this task's partitions are aborted then if still running.
  std::unique_lock<std::mutex> l(state->mu);
  if (!state->cv.wait_for(l, limit + std::chrono::seconds(1), [&] { return state->pending == 0; })) {
    const Status late = errors::DeadlineExceeded("step {}: task {} did not finish within {} ms", step_id,
                                                 server_->task().ToString(), limit.count());
    if (state->first.ok()) state->first = late;
    l.unlock();
    AbortEverywhere(compiled, step_id, late);
    l.lock();
    state->cv.wait(l, [&] { return state->pending == 0; });  // cancelled kernels return promptly
  }
  Status s = state->first;
  l.unlock();
  {
    std::lock_guard<std::mutex> g(mu_);
    running_.erase(step_id);
  }
  if (!s.ok()) {
    for (const auto& tp : compiled.tasks) {
      if (tp.task == server_->task_index()) {
        server_->Cleanup(step_id);
      } else {
        server_->control().CallAsync(tp.task, ControlMethod::kCleanup, EncodeStepId(step_id), options_.control_timeout,
                                     [](ControlResult) {});
      }
    }
  }
  return s;
}

void DistributedSession::Cancel(const Status& why) {
  // Under mu_: a step's entry (and the compiled step its cancel uses) stays until RunStep erases it.
  // The cancel only posts AbortStep calls and never takes mu_.
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [id, cancel] : running_) cancel(why);
}

std::vector<Tensor> DistributedSession::Run(const std::vector<std::pair<Output, Tensor>>& feeds,
                                            const std::vector<Output>& fetches, const std::vector<Node*>& targets,
                                            std::chrono::milliseconds timeout) {
  std::vector<Output> feed_outputs;
  std::vector<Tensor> args;
  for (const auto& [out, value] : feeds) {
    WEFT_REQUIRE(out.valid() && graph_->FindNode(out.node->name()) == out.node, "feed of a tensor not in this graph");
    WEFT_REQUIRE(value.IsInitialized() && value.dtype() == out.dtype() && out.shape().IsCompatibleWith(value.shape()),
                 "feed for '{}' must be a {}{} tensor, got {}", out.name(), DTypeName(out.dtype()),
                 out.shape().ToString(), value.IsInitialized() ? value.DebugString() : "an uninitialized tensor");
    feed_outputs.push_back(out);
    args.push_back(value);
  }
  std::shared_ptr<Compiled> compiled = Compile(feed_outputs, fetches, targets);
  std::vector<Tensor> rets(fetches.size());
  const uint64_t step_id = next_step_id_.fetch_add(1);
  ThrowIfError(RunStep(*compiled, step_id, args, &rets, timeout));
  for (size_t i = 0; i < fetches.size(); ++i) {
    if (!rets[i].IsInitialized()) throw Error(errors::Internal("fetch '{}' produced no value", fetches[i].name()));
  }
  return rets;
}

}  // namespace weft
