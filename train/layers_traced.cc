#include "train/layers_traced.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include "graph/control_flow.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/state.h"

namespace weft::train {

std::vector<Output> CopyTraced(const Scope& s, const TracedCall& f, const std::vector<Output>& inputs,
                               const std::vector<Output>& weights, const std::vector<Output>& roots,
                               const std::string& what) {
  WEFT_REQUIRE(inputs.size() == f.inputs.size(), "{}: the trace takes {} input(s), got {}", what, f.inputs.size(),
               inputs.size());
  // The stand-ins and what replaces them (each is a one-output Placeholder or Variable).
  std::unordered_map<const Node*, Output> replaced;
  for (size_t i = 0; i < inputs.size(); ++i) replaced[f.inputs[i].node] = inputs[i];
  for (size_t i = 0; i < f.weight_vars.size(); ++i) {
    if (!f.weight_vars[i].valid()) continue;
    WEFT_REQUIRE(i < weights.size(), "{}: weight '{}' has no variable (the layer declares {} weights, the call got {})",
                 what, f.weights.at(i).name, f.weights.size(), weights.size());
    replaced[f.weight_vars[i].node] = weights[i];
  }
  std::unordered_set<Node*> needed;
  std::vector<Node*> stack;
  for (const Output& r : roots) stack.push_back(r.node);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    if (!needed.insert(n).second || replaced.count(n)) continue;
    for (const Output& i : n->inputs()) stack.push_back(i.node);
    for (Node* c : n->control_inputs()) stack.push_back(c);
    // A loop is copied whole: every loop variable keeps its Exit, which the loop's gradient
    // (graph/while_gradients.h) expects even where nothing reads it.
    if (IsSwitch(*n)) {
      for (const auto& [dst, index] : n->out_edges()) {
        if (IsExit(*dst)) stack.push_back(dst);
      }
    }
  }
  std::unordered_map<Node*, Node*> copies;
  auto value = [&](const Output& o) {
    auto it = replaced.find(o.node);
    return it != replaced.end() ? it->second : Output(copies.at(o.node), o.index);
  };
  // A while loop in the trace (tf.while_loop in a custom layer's call): its back edges
  // (NextIteration -> Merge) point at nodes copied later, so a Merge takes a stand-in of the
  // same shape there until they exist, as the loop builder does (ops/control_builders.cc); each
  // copy of a loop gets a frame name of its own (two copies sharing one would run as one frame).
  struct BackEdge {
    Node* merge;
    int input;
    Output from;
    Node* stand_in;
  };
  std::vector<BackEdge> back_edges;
  std::map<std::string, std::string> frames;
  for (Node* n : TopologicalOrder(std::vector<Node*>(needed.begin(), needed.end()))) {
    if (replaced.count(n)) continue;
    WEFT_REQUIRE(n->op() != "Placeholder", "{}: the function reads the tensor '{}', which is not its input (a tensor "
                 "made outside the function?)", what, n->name());
    WEFT_REQUIRE(n->op() != "Variable" && n->op() != "VarHandleOp",
                 "{}: the function uses the variable '{}', which is not one of its weights (create weights with "
                 "add_weight in build or __init__, or use them through the layers it calls)", what, n->name());
    std::vector<Output> ins;
    std::vector<BackEdge> pending;
    for (const Output& i : n->inputs()) {
      if (IsNextIteration(*i.node) && !copies.count(i.node)) {
        ins.push_back(ops::Placeholder(s.WithOpName("back_edge"), i.dtype(), n->output_shape(0)));
        pending.push_back({nullptr, static_cast<int>(ins.size() - 1), i, ins.back().node});
        continue;
      }
      ins.push_back(value(i));
    }
    std::vector<Node*> control;
    for (Node* c : n->control_inputs()) {
      if (!replaced.count(c)) control.push_back(copies.at(c));
    }
    AttrMap attrs = n->attrs();
    if (IsEnter(*n)) {
      const std::string frame = n->attr<std::string>("frame_name");
      auto [it, fresh] = frames.emplace(frame, "");
      if (fresh) it->second = UniqueFrameName(*s.graph(), frame);
      attrs["frame_name"] = it->second;
    }
    const Scope ns = control.empty() ? s : s.WithControlDependencies(control);
    copies[n] = ns.AddNode(n->op(), std::move(ins), std::move(attrs));
    for (BackEdge& e : pending) {
      e.merge = copies[n];
      back_edges.push_back(e);
    }
  }
  for (const BackEdge& e : back_edges) {
    s.graph()->UpdateInput(e.merge, e.input, value(e.from));
    s.graph()->RemoveNode(e.stand_in);
  }
  std::vector<Output> out;
  for (const Output& r : roots) out.push_back(value(r));
  return out;
}

// ---- TraceRecorder -----------------------------------------------------------------------------

void TraceRecorder::Begin(std::shared_ptr<Graph> graph) {
  WEFT_REQUIRE(graph != nullptr, "{}: no graph to trace into", what_);
  graph_ = std::move(graph);
  vars_.clear();
  losses_.clear();
  updates_.clear();
}

Output TraceRecorder::StandIn(size_t index) {
  WEFT_REQUIRE(graph_ != nullptr, "{}: a weight was used outside its trace", what_);
  auto it = vars_.find(index);
  if (it != vars_.end()) return it->second;
  const Weight& w = weights_.at(index);
  // A Variable node (so state updates can take it as their ref input) that never runs: Call
  // replaces it with the model's variable.
  Output v = ops::Variable(Scope::Root(graph_.get()).NewSubScope("weights").NewSubScope(w.name), w.shape,
                           DType::kFloat32);
  vars_[index] = v;
  return v;
}

Output TraceRecorder::OwnWeight(int64_t key, const Weight& weight) {
  const std::string k = "own:" + std::to_string(key);
  auto it = own_.find(k);
  if (it == own_.end()) {
    WEFT_REQUIRE(!by_name_.count(weight.name), "{}: two weights are named '{}' (give add_weight distinct names)", what_,
                 weight.name);
    it = own_.emplace(k, weights_.size()).first;
    by_name_[weight.name] = weights_.size();
    weights_.push_back(weight);
  }
  return StandIn(it->second);
}

Output TraceRecorder::Apply(const LayerPtr& layer, const std::vector<Output>& inputs, bool training) {
  return ApplyOutputs(layer, inputs, training)[0];
}

std::vector<Output> TraceRecorder::ApplyOutputs(const LayerPtr& layer, const std::vector<Output>& inputs,
                                                bool training) {
  WEFT_REQUIRE(graph_ != nullptr, "{}: a layer was applied outside its trace", what_);
  WEFT_REQUIRE(layer != nullptr, "{}: applies a null layer", what_);
  // Built on the tensors' shapes (its first call) and checked, as a call on KerasTensors is.
  std::vector<Sym> syms;
  for (const Output& x : inputs) {
    WEFT_REQUIRE(!x.shape().unknown_rank(), "{}: {} '{}' is applied to '{}', whose rank is unknown (give the op that "
                 "made it a static shape, e.g. tf.reshape with a known rank)", what_, layer->type(),
                 layer->name().empty() ? DefaultLayerName(layer->type()) : layer->name(), x.name());
    auto n = std::make_shared<SymNode>();
    n->shape = x.shape();
    n->name = x.name();
    syms.push_back(std::move(n));
  }
  layer->Outputs(syms);
  std::string& name = layer_names_[layer.get()];
  if (name.empty()) {
    std::set<std::string> taken;
    for (const auto& [l, n] : layer_names_) taken.insert(n);
    const std::string base = layer->name().empty() ? DefaultLayerName(layer->type()) : layer->name();
    name = base;
    for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
    // An unnamed layer takes the name; a named one (perhaps part of another model) keeps its own,
    // and `name` only makes its weights' names unique within this layer.
    if (layer->name().empty()) layer->set_name(name);
  }
  std::vector<Output> vars;
  for (const Weight& w : layer->weights()) {
    const std::string full = name + "/" + w.name;
    auto it = by_name_.find(full);
    if (it == by_name_.end()) {
      it = by_name_.emplace(full, weights_.size()).first;
      weights_.push_back(w);
      weights_.back().name = full;
    }
    vars.push_back(StandIn(it->second));
  }
  Scope s = Scope::Root(graph_.get()).NewSubScope(name);
  if (!layer->device().empty()) s = s.WithDevice(layer->device());
  std::vector<Output> updates, losses;
  CallContext ctx{s, training, vars, &updates, &losses};
  std::vector<Output> ys = layer->CallOutputs(ctx, inputs);
  losses_.insert(losses_.end(), losses.begin(), losses.end());
  updates_.insert(updates_.end(), updates.begin(), updates.end());
  return ys;
}

void TraceRecorder::AddLoss(Output loss) {
  WEFT_REQUIRE(graph_ != nullptr, "{}: add_loss outside its call", what_);
  WEFT_REQUIRE(loss.shape().rank() == 0 || loss.shape().num_elements() == 1,
               "{}: add_loss takes a scalar, got shape {} ('{}'); reduce it (tf.reduce_mean) first", what_,
               loss.shape().ToString(), loss.name());
  WEFT_REQUIRE(loss.dtype() == DType::kFloat32, "{}: add_loss takes a float32 scalar, got {}", what_,
               DTypeName(loss.dtype()));
  losses_.push_back(loss.shape().rank() == 0 ? loss
                                             : ops::Reshape(Scope::Root(graph_.get()), loss, std::vector<int64_t>{}));
}

void TraceRecorder::AddUpdate(Output update) {
  WEFT_REQUIRE(graph_ != nullptr, "{}: a state update outside its call", what_);
  updates_.push_back(update);
}

void TraceRecorder::Finish(bool training, std::vector<Output> inputs, std::vector<Output> outputs) {
  WEFT_REQUIRE(graph_ != nullptr, "{}: Finish without Begin", what_);
  WEFT_REQUIRE(!outputs.empty() && outputs[0].valid(), "{}: call returned no tensor", what_);
  for (const Output& output : outputs) {
    WEFT_REQUIRE(output.valid(), "{}: call returned an empty output", what_);
    WEFT_REQUIRE(output.dtype() == DType::kFloat32,
                 "{}: call must return float32 values (weft's Keras models compute in float32), got {} from '{}'; "
                 "cast it (tf.cast(x, 'float32'))", what_, DTypeName(output.dtype()), output.name());
  }
  for (const auto& [mode, pass] : passes_) {
    WEFT_REQUIRE(pass.more_outputs.size() + 1 == outputs.size(),
                 "{}: the {} pass returned {} outputs and the {} pass {}; every pass must return as many", what_,
                 mode ? "training" : "inference", pass.more_outputs.size() + 1, training ? "training" : "inference",
                 outputs.size());
  }
  TracedCall c;
  c.graph = graph_;
  c.inputs = std::move(inputs);
  c.output = outputs[0];
  c.more_outputs.assign(outputs.begin() + 1, outputs.end());
  for (const auto& [index, v] : vars_) {
    if (c.weight_vars.size() <= index) c.weight_vars.resize(index + 1);
    c.weight_vars[index] = v;
  }
  c.losses = losses_;
  c.updates = updates_;
  passes_[training] = std::move(c);
  graph_ = nullptr;
  vars_.clear();
}

TracedCall TraceRecorder::pass(bool training) const {
  TracedCall c = passes_.at(training);
  c.weights = weights_;
  c.weight_vars.resize(weights_.size());
  return c;
}

// ---- TracedLayer -------------------------------------------------------------------------------

void TracedLayer::SetTraces(const TraceRecorder& rec, int num_inputs) {
  WEFT_REQUIRE(!built(), "{}: is already built", Describe());
  WEFT_REQUIRE(rec.has(false) || rec.has(true), "{}: has no trace", Describe());
  inference_ = rec.pass(rec.has(false) ? false : true);
  training_ = rec.pass(rec.has(true) ? true : false);
  num_inputs_ = num_inputs;
  traced_ = true;
}

void TracedLayer::Build(const std::vector<TensorShape>& input_shapes) {
  WEFT_REQUIRE(traced_, "{}: its call has not been traced (call the layer from weft.keras)", Describe());
  WEFT_REQUIRE(input_shapes.size() == inference_.inputs.size(), "{}: traced for {} input(s), called on {}", Describe(),
               inference_.inputs.size(), input_shapes.size());
  for (const Weight& w : inference_.weights) {
    AddWeight(w.name, w.shape, w.init, w.trainable, w.l2, w.l1, w.constraint);
  }
}

Output TracedLayer::Call(CallContext& ctx, const std::vector<Output>& inputs) const {
  return CallOutputs(ctx, inputs)[0];
}

std::vector<Output> TracedLayer::CallOutputs(CallContext& ctx, const std::vector<Output>& inputs) const {
  const TracedCall& f = ctx.training ? training_ : inference_;
  std::vector<Output> roots = {f.output};
  roots.insert(roots.end(), f.more_outputs.begin(), f.more_outputs.end());
  roots.insert(roots.end(), f.losses.begin(), f.losses.end());
  roots.insert(roots.end(), f.updates.begin(), f.updates.end());
  const std::vector<Output> copies = CopyTraced(ctx.scope, f, inputs, ctx.weights, roots, Describe());
  std::vector<Output> ys(copies.begin(), copies.begin() + 1 + static_cast<std::ptrdiff_t>(f.more_outputs.size()));
  size_t k = ys.size();
  for (size_t i = 0; i < f.losses.size(); ++i, ++k) {
    if (ctx.losses != nullptr) ctx.losses->push_back(copies[k]);
  }
  std::vector<Node*> updates;
  for (size_t i = 0; i < f.updates.size(); ++i, ++k) {
    updates.push_back(copies[k].node);
    if (ctx.updates != nullptr) ctx.updates->push_back(copies[k]);
  }
  // The updates run whenever an output is computed, as a Keras call runs them.
  if (!updates.empty()) {
    for (Output& y : ys) y = ops::Identity(ctx.scope.WithControlDependencies(updates), y);
  }
  return ys;
}

}  // namespace weft::train
