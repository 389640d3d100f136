#include "graph/passes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "graph/control_flow.h"
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
  auto copy_of = [&](const Output& in) {
    if (auto it = mapped.find(in); it != mapped.end()) return it->second;
    auto it = node_map.find(in.node);
    return it == node_map.end() ? Output() : Output(it->second, in.index);
  };
  BackEdges back;
  for (Node* n : TopologicalOrder(order)) {
    std::vector<Output> ins = back.Inputs(*n, copy_of);
    std::vector<Node*> ctrl;
    for (Node* c : n->control_inputs()) ctrl.push_back(node_map.at(c));
    node_map[n] = out->CopyNode(*n, std::move(ins), std::move(ctrl));
    back.Copied(node_map[n]);
  }
  back.Apply(out.get(), copy_of);
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
  bool control_flow = false;
  for (const Node* n : g->nodes()) control_flow = control_flow || IsControlFlow(*n);
  for (Node* n : TopologicalOrder(g->nodes())) {
    if (!IsFoldable(n)) continue;
    std::optional<std::vector<Tensor>> values;
    // A folded static shape keeps a control input from the tensor it describes, so that it stays
    // in that tensor's cond branch or loop frame (dead when the branch is not taken).
    std::vector<Node*> keep_with;
    if (auto v = StaticShapeValue(n)) {
      values = std::vector<Tensor>{*v};
      if (control_flow) keep_with.push_back(n->input(0).node);
    } else {
      bool all_const = true;
      // A Const with a control input belongs to a cond branch or loop body (ops/control.h): a
      // folded value would lose that input and run outside it.
      for (const Output& in : n->inputs()) all_const &= in.node->op() == "Const" && in.node->control_inputs().empty();
      if (!all_const || !KernelRegistry::Global().HasKernel(*n, "CPU")) continue;
      values = Evaluate(n, pool);
    }
    if (!values) continue;
    size_t bytes = 0;
    for (const Tensor& t : *values) bytes += t.IsInitialized() ? t.bytes() : max_bytes + 1;
    if (bytes > max_bytes) continue;
    // Each input node once: a node used twice (x * x) must not be looked at after its removal.
    std::vector<Node*> inputs;
    for (const Output& in : n->inputs()) {
      if (std::find(inputs.begin(), inputs.end(), in.node) == inputs.end()) inputs.push_back(in.node);
    }
    Node* first = nullptr;
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Tensor& t = (*values)[i];
      NodeSpec spec{g->UniqueName(fmt::format("{}/folded_{}", n->name(), i)), "Const", {}, keep_with,
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

namespace {

// The only consumer of `n`'s output 0 when it has exactly one edge out, a data edge from output 0
// into input `input` of a node of op `op`; else null.
Node* SoleConsumer(const Node* n, std::string_view op, int input) {
  if (n->out_edges().size() != 1) return nullptr;
  const auto& [dst, in] = n->out_edges()[0];
  if (in != input || dst->op() != op || dst->input(in).index != 0) return nullptr;
  return dst;
}

// True when the nodes are placed alike on a device the fused kernels exist for (the CPU).
bool SameCpuPlacement(const std::vector<const Node*>& nodes) {
  for (const Node* n : nodes) {
    if (n->requested_device() != nodes[0]->requested_device() ||
        n->assigned_device() != nodes[0]->assigned_device() || n->attr<DType>("T") != nodes[0]->attr<DType>("T")) {
      return false;
    }
    for (const std::string* d : {&n->requested_device(), &n->assigned_device()}) {
      if (!d->empty() && d->find("CPU") == std::string::npos) return false;
    }
  }
  return true;
}

// Adds `spec` in place of `last` (its consumers move over; the control inputs of `group` carry
// over) and removes `group`, which ends with `last`.
void ReplaceWithFused(Graph* g, NodeSpec spec, const std::vector<Node*>& group) {
  Node* last = group.back();
  std::set<Node*> ctrl;
  for (Node* n : group) ctrl.insert(n->control_inputs().begin(), n->control_inputs().end());
  spec.control_inputs.assign(ctrl.begin(), ctrl.end());
  spec.device = last->requested_device();
  Node* fused = g->AddNode(std::move(spec));
  fused->set_assigned_device(last->assigned_device());
  g->ReplaceUses(Output(last, 0), Output(fused, 0));
  g->ReplaceControlUses(last, fused);
  for (auto it = group.rbegin(); it != group.rend(); ++it) g->RemoveNode(*it);
}

}  // namespace

int FuseNnOps(Graph* g) {
  int fused = 0;
  // Relu(BiasAdd(Conv2D(x, f), b)) and BiasAdd(Conv2D(x, f), b) -> _FusedConv2D(x, f, b).
  // Nodes of the current loop's order that a fusion deleted (cleared per loop: a node added later
  // may reuse a deleted node's address).
  std::set<const Node*> removed;
  for (Node* conv : TopologicalOrder(g->nodes())) {
    if (removed.count(conv) || conv->op() != "Conv2D") continue;
    Node* bias = SoleConsumer(conv, "BiasAdd", 0);
    if (bias == nullptr) continue;
    Node* relu = SoleConsumer(bias, "Relu", 0);
    std::vector<Node*> group = {conv, bias};
    if (relu != nullptr) group.push_back(relu);
    if (!SameCpuPlacement({group.begin(), group.end()})) continue;
    NodeSpec spec{g->UniqueName(group.back()->name() + "/fused_conv"), "_FusedConv2D",
                  {conv->input(0), conv->input(1), bias->input(1)}, {},
                  {{"strides", conv->attr<std::vector<int64_t>>("strides")},
                   {"padding", conv->attr<std::string>("padding")},
                   {"dilations", conv->attr<std::vector<int64_t>>("dilations")},
                   {"activation", std::string(relu != nullptr ? "Relu" : "None")}},
                  ""};
    removed.insert(group.begin(), group.end());
    ReplaceWithFused(g, std::move(spec), group);
    ++fused;
  }
  // ReluGrad(MaxPoolGrad(y, p, dp), y), y a Relu's output, -> _MaxPoolGradRelu(y, p, dp).
  removed.clear();
  for (Node* grad : TopologicalOrder(g->nodes())) {
    if (removed.count(grad) || grad->op() != "MaxPoolGrad") continue;
    Node* relu_grad = SoleConsumer(grad, "ReluGrad", 0);
    if (relu_grad == nullptr || !(relu_grad->input(1) == grad->input(0))) continue;
    if (!SameCpuPlacement({grad, relu_grad})) continue;
    NodeSpec spec{g->UniqueName(relu_grad->name() + "/fused_pool_grad"), "_MaxPoolGradRelu",
                  {grad->input(0), grad->input(1), grad->input(2)}, {},
                  {{"ksize", grad->attr<std::vector<int64_t>>("ksize")},
                   {"strides", grad->attr<std::vector<int64_t>>("strides")},
                   {"padding", grad->attr<std::string>("padding")}},
                  ""};
    removed.insert(relu_grad);
    ReplaceWithFused(g, std::move(spec), {grad, relu_grad});
    ++fused;
  }
  // MaxPool(_FusedConv2D) -> _FusedConv2DMaxPool, its grads (_MaxPoolGradRelu or MaxPoolGrad of
  // that pool) -> _MaxPoolGradWithArgmax: the conv output is never stored. The CPU kernel's limits:
  // at most 4 input channels, no pointwise filter, a VALID pool whose windows do not overlap, and
  // the conv output's height and width known here (the grad's output size).
  removed.clear();
  for (Node* pool : TopologicalOrder(g->nodes())) {
    if (removed.count(pool) || pool->op() != "MaxPool" || pool->input(0).index != 0) continue;
    Node* conv = pool->input(0).node;
    if (conv->op() != "_FusedConv2D" || !SameCpuPlacement({conv, pool})) continue;
    const std::vector<int64_t> k = pool->attr<std::vector<int64_t>>("ksize");
    const std::vector<int64_t> st = pool->attr<std::vector<int64_t>>("strides");
    if (pool->attr<std::string>("padding") != "VALID" || k.size() != 2 || st.size() != 2 || st[0] < k[0] ||
        st[1] < k[1]) {
      continue;
    }
    const TensorShape& in = conv->input(0).shape();
    const TensorShape& f = conv->input(1).shape();
    const TensorShape& y = conv->output_shape(0);
    const std::vector<int64_t> cs = conv->attr<std::vector<int64_t>>("strides");
    // A 1x1 filter with stride 1 pads nothing under either padding: the kernel's pointwise case.
    const bool pointwise = f.rank() == 4 && f.dim(0) == 1 && f.dim(1) == 1 && cs == std::vector<int64_t>{1, 1};
    if (in.rank() != 4 || in.dim(3) < 0 || in.dim(3) > 4 || f.rank() != 4 || f.dim(0) < 0 || f.dim(1) < 0 ||
        pointwise || y.rank() != 4 || y.dim(1) < 0 ||
        y.dim(2) < 0) {
      continue;
    }
    const bool relu = conv->attr<std::string>("activation") == "Relu";
    const std::string grad_op = relu ? "_MaxPoolGradRelu" : "MaxPoolGrad";
    std::vector<Node*> grads;
    bool ok = true;
    for (const auto& [dst, i] : conv->out_edges()) {
      if (dst == pool && i == 0) continue;
      ok &= i == 0 && dst->op() == grad_op && dst->input(1) == Output(pool, 0) && SameCpuPlacement({conv, dst}) &&
            dst->attr<std::vector<int64_t>>("ksize") == k && dst->attr<std::vector<int64_t>>("strides") == st &&
            dst->attr<std::string>("padding") == "VALID";
      grads.push_back(dst);
    }
    if (!ok) continue;
    AttrMap attrs = conv->attrs();
    attrs.erase("T");
    attrs["ksize"] = k;
    attrs["pool_strides"] = st;
    attrs["pool_padding"] = std::string("VALID");
    std::set<Node*> ctrl(conv->control_inputs().begin(), conv->control_inputs().end());
    ctrl.insert(pool->control_inputs().begin(), pool->control_inputs().end());
    Node* fp = g->AddNode({g->UniqueName(pool->name() + "/fused_conv_pool"), "_FusedConv2DMaxPool",
                           {conv->input(0), conv->input(1), conv->input(2)},
                           std::vector<Node*>(ctrl.begin(), ctrl.end()), attrs, pool->requested_device()});
    fp->set_assigned_device(pool->assigned_device());
    g->ReplaceUses(Output(pool, 0), Output(fp, 0));
    g->ReplaceControlUses(pool, fp);
    g->ReplaceControlUses(conv, fp);
    for (Node* gr : grads) {
      Node* ga = g->AddNode({g->UniqueName(gr->name() + "/fused_pool_grad"), "_MaxPoolGradWithArgmax",
                             {Output(fp, 1), Output(fp, 0), gr->input(2)}, gr->control_inputs(),
                             {{"ksize", k}, {"strides", st}, {"input_hw", std::vector<int64_t>{y.dim(1), y.dim(2)}},
                              {"relu", relu}},
                             gr->requested_device()});
      ga->set_assigned_device(gr->assigned_device());
      g->ReplaceUses(Output(gr, 0), Output(ga, 0));
      g->ReplaceControlUses(gr, ga);
      removed.insert(gr);
      g->RemoveNode(gr);
    }
    removed.insert(pool);
    removed.insert(conv);
    g->RemoveNode(pool);
    g->RemoveNode(conv);
    ++fused;
  }
  // Conv2DBackpropFilter(x, sizes, dz) and BiasAddGrad(dz) of dz = _MaxPoolGradWithArgmax of a
  // _FusedConv2DMaxPool of x, when nothing else reads dz (no gradient for x is needed)
  // -> _ConvPoolBackpropFilterBias: dz is never stored.
  removed.clear();
  for (Node* dz : TopologicalOrder(g->nodes())) {
    if (removed.count(dz) || dz->op() != "_MaxPoolGradWithArgmax" || dz->input(0).index != 1) continue;
    Node* fp = dz->input(0).node;
    if (fp->op() != "_FusedConv2DMaxPool" || !(dz->input(1) == Output(fp, 0))) continue;
    Node* filter_grad = nullptr;
    Node* bias_grad = nullptr;
    bool ok = dz->out_edges().size() == 2;
    for (const auto& [dst, i] : dz->out_edges()) {
      if (dst->op() == "Conv2DBackpropFilter" && i == 2 && dst->input(0) == fp->input(0) && !filter_grad) {
        filter_grad = dst;
        for (const char* a : {"strides", "padding", "dilations"}) {
          ok &= AttrValueEquals(dst->attrs().at(a), fp->attrs().at(a));
        }
      } else if (dst->op() == "BiasAddGrad" && i == 0 && !bias_grad) {
        bias_grad = dst;
      } else {
        ok = false;
      }
    }
    if (!ok || !filter_grad || !bias_grad || !SameCpuPlacement({dz, filter_grad, bias_grad})) continue;
    AttrMap attrs = {{"strides", fp->attrs().at("strides")}, {"padding", fp->attrs().at("padding")},
                     {"dilations", fp->attrs().at("dilations")}, {"ksize", fp->attrs().at("ksize")},
                     {"pool_strides", fp->attrs().at("pool_strides")}, {"relu", dz->attrs().at("relu")}};
    std::set<Node*> ctrl;
    for (Node* n : {dz, filter_grad, bias_grad}) ctrl.insert(n->control_inputs().begin(), n->control_inputs().end());
    Node* both = g->AddNode({g->UniqueName(filter_grad->name() + "/fused_pool_backprop"), "_ConvPoolBackpropFilterBias",
                             {filter_grad->input(0), filter_grad->input(1), dz->input(0), dz->input(1), dz->input(2)},
                             std::vector<Node*>(ctrl.begin(), ctrl.end()), attrs, filter_grad->requested_device()});
    both->set_assigned_device(filter_grad->assigned_device());
    g->ReplaceUses(Output(filter_grad, 0), Output(both, 0));
    g->ReplaceUses(Output(bias_grad, 0), Output(both, 1));
    g->ReplaceControlUses(filter_grad, both);
    g->ReplaceControlUses(bias_grad, both);
    for (Node* n : {filter_grad, bias_grad, dz}) {
      removed.insert(n);
      g->RemoveNode(n);
    }
    ++fused;
  }
  // Conv2DBackpropFilter(x, sizes, dz) and BiasAddGrad(dz) of the same dz (the conv layers with a
  // bias that the fusions above left) -> _Conv2DBackpropFilterBias: oneDNN's filter gradient sums
  // the bias from its own reads of dz, one pass over dz fewer. Only for dz of 32 or more channels in
  // whole 16-channel blocks: with fewer (lenet5's 6 and 16) oneDNN's bias sums cost more than the
  // pass they save, and two separate nodes can run at once (bench/README.md, "Where vgg_small's step goes").
  removed.clear();
  for (Node* bias_grad : TopologicalOrder(g->nodes())) {
    if (removed.count(bias_grad) || bias_grad->op() != "BiasAddGrad") continue;
    const Output dz = bias_grad->input(0);
    const TensorShape& dz_shape = dz.shape();
    if (dz_shape.rank() != 4 || dz_shape.dim(3) < 32 || dz_shape.dim(3) % 16 != 0) continue;
    Node* filter_grad = nullptr;
    for (const auto& [dst, i] : dz.node->out_edges()) {
      if (i == 2 && dst->op() == "Conv2DBackpropFilter" && dst->input(2) == dz && !removed.count(dst)) {
        filter_grad = dst;
        break;
      }
    }
    if (filter_grad == nullptr || !SameCpuPlacement({filter_grad, bias_grad})) continue;
    std::set<Node*> ctrl;
    for (Node* n : {filter_grad, bias_grad}) ctrl.insert(n->control_inputs().begin(), n->control_inputs().end());
    Node* both = g->AddNode({g->UniqueName(filter_grad->name() + "/fused_bias_grad"), "_Conv2DBackpropFilterBias",
                             {filter_grad->input(0), filter_grad->input(1), dz},
                             std::vector<Node*>(ctrl.begin(), ctrl.end()),
                             {{"strides", filter_grad->attrs().at("strides")},
                              {"padding", filter_grad->attrs().at("padding")},
                              {"dilations", filter_grad->attrs().at("dilations")}},
                             filter_grad->requested_device()});
    both->set_assigned_device(filter_grad->assigned_device());
    g->ReplaceUses(Output(filter_grad, 0), Output(both, 0));
    g->ReplaceUses(Output(bias_grad, 0), Output(both, 1));
    g->ReplaceControlUses(filter_grad, both);
    g->ReplaceControlUses(bias_grad, both);
    for (Node* n : {filter_grad, bias_grad}) {
      removed.insert(n);
      g->RemoveNode(n);
    }
    ++fused;
  }
  fused += FuseBatchNormRelu(g);
  return fused;
}

int FuseBatchNormRelu(Graph* g) {
  int fused = 0;
  // Relu(FusedBatchNorm(...):0) -> _FusedBatchNormRelu, when the Relu is the only reader of the
  // normalized output (the statistics, outputs 1 and 2, may go anywhere).
  std::set<const Node*> removed;
  for (Node* bn : TopologicalOrder(g->nodes())) {
    if (removed.count(bn) || bn->op() != "FusedBatchNorm") continue;
    Node* relu = nullptr;
    bool ok = true;
    for (const auto& [dst, i] : bn->out_edges()) {
      if (dst->input(i).index != 0) continue;
      ok &= relu == nullptr && dst->op() == "Relu";
      relu = dst;
    }
    if (!ok || relu == nullptr || !SameCpuPlacement({bn, relu})) continue;
    std::set<Node*> ctrl;
    for (Node* n : {bn, relu}) ctrl.insert(n->control_inputs().begin(), n->control_inputs().end());
    Node* f = g->AddNode({g->UniqueName(relu->name() + "/fused_batch_norm"), "_FusedBatchNormRelu", bn->inputs(),
                          std::vector<Node*>(ctrl.begin(), ctrl.end()), bn->attrs(), bn->requested_device()});
    f->set_assigned_device(bn->assigned_device());
    g->ReplaceUses(Output(relu, 0), Output(f, 0));
    for (int i : {1, 2}) g->ReplaceUses(Output(bn, i), Output(f, i));
    g->ReplaceControlUses(bn, f);
    g->ReplaceControlUses(relu, f);
    for (Node* n : {relu, bn}) {
      removed.insert(n);
      g->RemoveNode(n);
    }
    ++fused;
  }
  // FusedBatchNormGrad(ReluGrad(dr, r), x, ...) -> _FusedBatchNormGradRelu(dr, r, x, ...), when the
  // batch-norm gradient is the ReluGrad's only reader: dr * (r > 0) is never stored.
  removed.clear();
  for (Node* bg : TopologicalOrder(g->nodes())) {
    if (removed.count(bg) || bg->op() != "FusedBatchNormGrad" || bg->input(0).index != 0) continue;
    Node* rg = bg->input(0).node;
    if (rg->op() != "ReluGrad" || rg->out_edges().size() != 1 || !SameCpuPlacement({rg, bg})) continue;
    std::vector<Output> inputs = {rg->input(0), rg->input(1)};
    for (int i = 1; i < bg->num_inputs(); ++i) inputs.push_back(bg->input(i));
    std::set<Node*> ctrl;
    for (Node* n : {rg, bg}) ctrl.insert(n->control_inputs().begin(), n->control_inputs().end());
    Node* f = g->AddNode({g->UniqueName(bg->name() + "/fused_relu_grad"), "_FusedBatchNormGradRelu", inputs,
                          std::vector<Node*>(ctrl.begin(), ctrl.end()), bg->attrs(), bg->requested_device()});
    f->set_assigned_device(bg->assigned_device());
    for (int i = 0; i < bg->num_outputs(); ++i) g->ReplaceUses(Output(bg, i), Output(f, i));
    g->ReplaceControlUses(bg, f);
    g->ReplaceControlUses(rg, f);
    for (Node* n : {bg, rg}) {
      removed.insert(n);
      g->RemoveNode(n);
    }
    ++fused;
  }
  return fused;
}

int FoldBatchNormIntoConv(Graph* g) {
  int folded = 0;
  std::set<const Node*> removed;
  for (Node* bn : TopologicalOrder(g->nodes())) {
    if (removed.count(bn) || bn->op() != "FusedBatchNorm" || bn->attr<bool>("is_training")) continue;
    Node* conv = bn->input(0).node;
    if (bn->input(0).index != 0 || conv->op() != "Conv2D" || SoleConsumer(conv, "FusedBatchNorm", 0) != bn) continue;
    bool stats_read = false;  // outputs 1 and 2 (the statistics passed through) must be unread
    for (const auto& [dst, i] : bn->out_edges()) stats_read |= dst->input(i).index != 0;
    const TensorShape& f = conv->input(1).node->output_shape(conv->input(1).index);
    if (stats_read || f.rank() != 4 || !SameCpuPlacement({conv, bn})) continue;
    const DType t = bn->attr<DType>("T");
    const std::string base = bn->name() + "/folded";
    const std::string& device = bn->requested_device();
    auto add = [&](const std::string& suffix, const std::string& op, std::vector<Output> in, AttrMap attrs = {}) {
      Node* n = g->AddNode({g->UniqueName(base + "/" + suffix), op, std::move(in), {}, std::move(attrs), device});
      n->set_assigned_device(bn->assigned_device());
      return Output(n, 0);
    };
    // a = scale / sqrt(variance + epsilon) per output channel, as the inference kernel computes it.
    Tensor eps(t, TensorShape({}));
    if (t == DType::kFloat32) {
      eps.data<float>()[0] = static_cast<float>(bn->attr<double>("epsilon"));
    } else {
      eps.data<double>()[0] = bn->attr<double>("epsilon");
    }
    const Output e = add("epsilon", "Const", {}, {{"value", eps}, {"dtype", t}});
    const Output a = add("scale", "Mul", {bn->input(1), add("rsqrt", "Rsqrt", {add("var_eps", "Add", {bn->input(4), e})})});
    // conv(x, f) * a + (offset - mean * a) = conv(x, f * a) + b: f's last axis is the output channel.
    const Output filter = add("filter", "Mul", {conv->input(1), a});
    const Output bias = add("bias", "Sub", {bn->input(2), add("mean_scale", "Mul", {bn->input(3), a})});
    std::set<Node*> ctrl(conv->control_inputs().begin(), conv->control_inputs().end());
    ctrl.insert(bn->control_inputs().begin(), bn->control_inputs().end());
    Node* c = g->AddNode({g->UniqueName(base + "/conv"), "Conv2D", {conv->input(0), filter},
                          std::vector<Node*>(ctrl.begin(), ctrl.end()), conv->attrs(), conv->requested_device()});
    c->set_assigned_device(conv->assigned_device());
    const Output y = add("bias_add", "BiasAdd", {Output(c, 0), bias});
    g->ReplaceUses(Output(bn, 0), y);
    g->ReplaceControlUses(bn, y.node);
    g->ReplaceControlUses(conv, c);
    for (Node* n : {bn, conv}) {
      removed.insert(n);
      g->RemoveNode(n);
    }
    ++folded;
  }
  return folded;
}

}  // namespace weft
