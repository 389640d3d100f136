#include "graph/passes.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "graph/executor.h"

namespace weft {

std::unique_ptr<Graph> PruneForStep(const Graph& g, const std::vector<Output>& feeds, const std::vector<Output>& fetches,
                                    const std::vector<Node*>& targets) {
  std::map<Output, int> fed;
  for (size_t i = 0; i < feeds.size(); ++i) {
    if (!fed.emplace(feeds[i], static_cast<int>(i)).second) {
      throw Error(errors::InvalidArgument("tensor '{}' is fed twice", feeds[i].name()));
    }
  }
  // Walk back from fetches and targets, stopping at fed tensors.
  std::set<const Node*> needed;
  std::vector<const Node*> stack;
  for (const Output& f : fetches) if (!fed.count(f)) stack.push_back(f.node);
  for (const Node* t : targets) stack.push_back(t);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!needed.insert(n).second) continue;
    for (const Output& in : n->inputs()) if (!fed.count(in)) stack.push_back(in.node);
    for (const Node* c : n->control_inputs()) stack.push_back(c);
  }
  for (const Node* n : needed) {
    if (n->op() == "Placeholder") {
      bool any_output_fed = false;
      for (int i = 0; i < n->num_outputs(); ++i) any_output_fed |= fed.count(Output(const_cast<Node*>(n), i)) > 0;
      if (!any_output_fed) {
        throw Error(errors::InvalidArgument("placeholder '{}' ({}{}) must be fed", n->name(),
                                            DTypeName(n->output_dtype(0)), n->output_shape(0).ToString()));
      }
    }
  }
  auto out = std::make_unique<Graph>();
  out->set_seed(g.seed());
  std::map<Output, Output> mapped;  // old output -> new output
  for (size_t i = 0; i < feeds.size(); ++i) {
    const Output& f = feeds[i];
    NodeSpec spec;
    spec.op = "_Arg";
    spec.name = out->UniqueName(fmt::format("_arg_{}_{}", f.node->name(), f.index));
    spec.attrs = {{"T", f.dtype()}, {"index", static_cast<int64_t>(i)}, {"shape", f.shape()}};
    spec.device = f.node->requested_device();
    mapped[f] = Output(out->AddNode(std::move(spec)), 0);
  }
  std::map<const Node*, Node*> node_map;
  std::vector<Node*> order;
  for (Node* n : g.nodes()) if (needed.count(n)) order.push_back(n);
  for (Node* n : TopologicalOrder(order)) {
    std::vector<Output> ins;
    for (const Output& in : n->inputs()) {
      auto it = mapped.find(in);
      ins.push_back(it != mapped.end() ? it->second : Output(node_map.at(in.node), in.index));
    }
    std::vector<Node*> ctrl;
    for (Node* c : n->control_inputs()) ctrl.push_back(node_map.at(c));
    node_map[n] = out->CopyNode(*n, std::move(ins), std::move(ctrl));
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    const Output& f = fetches[i];
    auto it = mapped.find(f);
    Output src = it != mapped.end() ? it->second : Output(node_map.at(f.node), f.index);
    NodeSpec spec;
    spec.op = "_Retval";
    spec.name = out->UniqueName(fmt::format("_retval_{}_{}", f.node->name(), f.index));
    spec.inputs = {src};
    spec.attrs = {{"index", static_cast<int64_t>(i)}};
    spec.device = src.node->requested_device();
    out->AddNode(std::move(spec));
  }
  return out;
}

namespace {

bool IsFoldable(const Node* n) {
  const OpDef& d = n->def();
  if (d.is_stateful || n->op() == "Const" || n->num_inputs() == 0 || !n->control_inputs().empty()) return false;
  for (const ArgDef& a : d.inputs) if (a.is_ref) return false;
  return true;
}

// The value of Shape/Size/Rank when the input's shape is known at build time.
std::optional<Tensor> StaticShapeValue(const Node* n) {
  if (n->op() != "Shape" && n->op() != "Size" && n->op() != "Rank") return std::nullopt;
  const TensorShape& s = n->input(0).shape();
  const DType out = n->output_dtype(0);
  if (n->op() == "Rank") {
    if (s.unknown_rank()) return std::nullopt;
    return Tensor::Scalar<int32_t>(s.rank());
  }
  if (!s.IsFullyDefined()) return std::nullopt;
  std::vector<int64_t> values = n->op() == "Shape" ? s.dims() : std::vector<int64_t>{s.num_elements()};
  Tensor t(out, n->op() == "Shape" ? TensorShape({static_cast<int64_t>(values.size())}) : TensorShape{});
  for (size_t i = 0; i < values.size(); ++i) {
    if (out == DType::kInt32) {
      if (values[i] > INT32_MAX) return std::nullopt;
      t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.data<int64_t>()[i] = values[i];
    }
  }
  return t;
}

// Runs `n` on constant inputs; returns its outputs, or nothing if it fails (the error then
// surfaces at run time, where it names the node).
std::optional<std::vector<Tensor>> Evaluate(const Node* n, ThreadPool* pool) {
  auto g = std::make_unique<Graph>();
  std::vector<Output> ins;
  std::map<const Node*, Node*> copies;  // an input used twice (x + x) is copied once
  for (const Output& in : n->inputs()) {
    Node*& c = copies[in.node];
    if (c == nullptr) c = g->CopyNode(*in.node, {}, {});
    ins.emplace_back(c, in.index);
  }
  Node* copy = g->CopyNode(*n, ins, {});
  for (int i = 0; i < n->num_outputs(); ++i) {
    NodeSpec spec{fmt::format("_retval_{}", i), "_Retval", {Output(copy, i)}, {}, {{"index", int64_t{i}}}, ""};
    g->AddNode(std::move(spec));
  }
  DeviceContext device;
  device.intra_op = pool;
  try {
    // Async kernels wait on something outside the graph (a peer, a timer): never run them here.
    if (KernelRegistry::Global().Create(*n, "CPU")->is_async()) return std::nullopt;
    auto exec = Executor::Create(std::move(g), device, pool);
    CallFrame frame;
    frame.rets.resize(n->num_outputs());
    if (!exec->Run({.step_id = 0, .frame = &frame}).ok()) return std::nullopt;
    return frame.rets;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

int FoldConstants(Graph* g, ThreadPool* pool, size_t max_bytes) {
  int folded = 0;
  for (Node* n : TopologicalOrder(g->nodes())) {
    if (!IsFoldable(n)) continue;
    std::optional<std::vector<Tensor>> values;
    if (auto v = StaticShapeValue(n)) {
      values = std::vector<Tensor>{*v};
    } else {
      bool all_const = true;
      for (const Output& in : n->inputs()) all_const &= in.node->op() == "Const";
      if (!all_const || !KernelRegistry::Global().HasKernel(*n, "CPU")) continue;
      values = Evaluate(n, pool);
    }
    if (!values) continue;
    size_t bytes = 0;
    for (const Tensor& t : *values) bytes += t.IsInitialized() ? t.bytes() : max_bytes + 1;
    if (bytes > max_bytes) continue;
    std::vector<Node*> inputs;
    for (const Output& in : n->inputs()) inputs.push_back(in.node);
    Node* first = nullptr;
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Tensor& t = (*values)[i];
      NodeSpec spec{g->UniqueName(fmt::format("{}/folded_{}", n->name(), i)), "Const", {}, {},
                    {{"value", t}, {"dtype", t.dtype()}}, n->requested_device()};
      Node* c = g->AddNode(std::move(spec));
      if (!first) first = c;
      g->ReplaceUses(Output(n, i), Output(c, 0));
    }
    if (first) g->ReplaceControlUses(n, first);
    if (n->out_edges().empty()) g->RemoveNode(n);
    for (Node* in : inputs) {
      if (g->FindNode(in->name()) == in && in->out_edges().empty() && in->op() == "Const") g->RemoveNode(in);
    }
    ++folded;
  }
  return folded;
}

int EliminateCommonSubexpressions(Graph* g) {
  std::map<std::string, std::vector<Node*>> seen;
  int removed = 0;
  for (Node* n : TopologicalOrder(g->nodes())) {
    if (n->def().is_stateful || n->num_outputs() == 0) continue;
    std::string key = fmt::format("{}|{}|", n->op(), n->requested_device());
    for (const Output& in : n->inputs()) key += fmt::format("{}:{},", in.node->id(), in.index);
    key += "|";
    std::vector<int> ctrl;
    for (Node* c : n->control_inputs()) ctrl.push_back(c->id());
    std::sort(ctrl.begin(), ctrl.end());
    for (int c : ctrl) key += fmt::format("{},", c);
    for (const auto& [name, value] : n->attrs()) {
      key += name + "=" + (std::holds_alternative<Tensor>(value) ? std::get<Tensor>(value).DebugString()
                                                                : AttrValueString(value)) + ";";
    }
    Node* same = nullptr;
    for (Node* cand : seen[key]) {
      bool equal = true;
      for (const auto& [name, value] : n->attrs()) equal &= AttrValueEquals(value, cand->attrs().at(name));
      if (equal) {
        same = cand;
        break;
      }
    }
    if (!same) {
      seen[key].push_back(n);
      continue;
    }
    for (int i = 0; i < n->num_outputs(); ++i) g->ReplaceUses(Output(n, i), Output(same, i));
    g->ReplaceControlUses(n, same);
    g->RemoveNode(n);
    ++removed;
  }
  return removed;
}

}  // namespace weft
