#include "graph/session.h"

#include <fmt/format.h>

#include "graph/passes.h"

namespace weft {

struct Session::Compiled {
  std::unique_ptr<Executor> executor;
};

Session::Session(Graph* graph, SessionOptions options) : graph_(graph), options_(options) {
  const int inter = options_.inter_op_threads > 0 ? options_.inter_op_threads : HardwareThreads();
  const int intra = options_.intra_op_threads > 0 ? options_.intra_op_threads : HardwareThreads();
  inter_op_ = std::make_unique<ThreadPool>(inter, "inter-op");
  intra_op_ = std::make_unique<ThreadPool>(intra, "intra-op");
}

Session::~Session() {
  std::lock_guard<std::mutex> l(mu_);
  cache_.clear();  // executors go before the pools they use
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
  if (options_.constant_folding) FoldConstants(g.get(), intra_op_.get());
  if (options_.cse) EliminateCommonSubexpressions(g.get());
  if (options_.fuse_ops) FuseNnOps(g.get());
  DeviceContext device;
  device.intra_op = intra_op_.get();
  device.vars = &vars_;
  auto compiled = std::make_shared<Compiled>();
  compiled->executor = Executor::Create(std::move(g), std::move(device), inter_op_.get());
  std::lock_guard<std::mutex> l(mu_);
  return cache_.emplace(key, std::move(compiled)).first->second;
}

std::vector<Tensor> Session::Run(const std::vector<std::pair<Output, Tensor>>& feeds, const std::vector<Output>& fetches,
                                 const std::vector<Node*>& targets) {
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
  const int64_t step_id = next_step_id_.fetch_add(1);
  {
    std::lock_guard<std::mutex> l(mu_);
    running_[step_id] = &cm;
  }
  Status status = compiled->executor->Run({.step_id = step_id, .frame = &frame, .rendezvous = nullptr, .cancellation = &cm});
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
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [id, cm] : running_) cm->StartCancel(why);
}

}  // namespace weft
