// Model construction, Summary and Compile (the graph); the training loop is in train/fit.cc.
#include "train/model.h"

#include <chrono>
#include <cctype>
#include <cstring>
#include <functional>
#include <set>
#include <thread>

#include "graph/gradients.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"
#include "train/checkpoint.h"
#include "train/strategy.h"
#include "train/model_internal.h"
#include "train/pipeline.h"

namespace weft::train {
namespace {

std::string ShapeString(const TensorShape& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i > 0) s += ", ";
    s += shape.dim(i) < 0 ? "None" : std::to_string(shape.dim(i));
  }
  return s + (shape.rank() == 1 ? ",)" : ")");
}

// A call's output shapes: "(None, 16)", or "[(None, 16), (None, 16)]" for several.
std::string CallShapes(const SymNode& call) {
  const std::vector<Sym> outs = call.layer->Outputs(call.inputs);
  if (outs.size() == 1) return ShapeString(call.shape);
  std::string s = "[";
  for (size_t i = 0; i < outs.size(); ++i) s += (i > 0 ? ", " : "") + ShapeString(outs[i]->shape);
  return s + "] ";  // a space before the parameter count when it overflows its column
}

std::string Thousands(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

Model::Model(std::vector<Sym> inputs, std::vector<Sym> outputs, std::string name) {
  Init(std::move(inputs), std::move(outputs), std::move(name));
}

Model::~Model() = default;

void Model::Init(std::vector<Sym> inputs, std::vector<Sym> outputs, std::string name) {
  WEFT_REQUIRE(!inputs.empty() && !outputs.empty(), "Model '{}': needs at least one input and one output (got {} and {})",
               name, inputs.size(), outputs.size());
  std::set<const SymNode*> input_set;
  for (size_t i = 0; i < inputs.size(); ++i) {
    WEFT_REQUIRE(inputs[i] != nullptr && inputs[i]->layer == nullptr,
                 "Model '{}': input {} must come from Input() (not a layer's output)", name, i);
    WEFT_REQUIRE(input_set.insert(inputs[i].get()).second, "Model '{}': Input '{}' is given twice", name,
                 inputs[i]->name);
  }
  for (size_t i = 0; i < outputs.size(); ++i) WEFT_REQUIRE(outputs[i] != nullptr, "Model '{}': output {} is null", name, i);
  name_ = std::move(name);
  strategy_ = Strategy::Current();
  inputs_ = std::move(inputs);
  outputs_ = std::move(outputs);
  calls_.clear();
  layers_.clear();
  // Depth-first from the outputs: every call after its inputs (a call with several outputs once,
  // as its output 0); each must reach the model's inputs.
  std::set<const SymNode*> done;
  std::function<void(const Sym&)> visit = [&](const Sym& out) {
    const Sym& n = out->first ? out->first : out;
    if (done.count(n.get())) return;
    if (n->layer == nullptr) {
      WEFT_REQUIRE(input_set.count(n.get()), "Model '{}': Input '{}' is used but is not one of the model's inputs",
                   name_, n->name);
      done.insert(n.get());
      return;
    }
    for (const Sym& in : n->inputs) visit(in);
    done.insert(n.get());
    calls_.push_back(n);
  };
  for (const Sym& out : outputs_) visit(out);
  for (const Sym& in : inputs_) {
    WEFT_REQUIRE(done.count(in.get()), "Model '{}': input '{}' does not reach any output", name_, in->name);
  }
  std::set<std::string> names;
  std::set<const Layer*> seen;
  std::map<std::string, int> counters;
  for (const Sym& call : calls_) {
    if (!seen.insert(call->layer.get()).second) continue;
    layers_.push_back(call->layer);
    if (!call->layer->name().empty()) names.insert(call->layer->name());
  }
  for (const LayerPtr& layer : layers_) {
    if (layer->name().empty()) {
      const std::string base = DefaultLayerName(layer->type());
      std::string n = base;
      while (names.count(n)) n = base + "_" + std::to_string(++counters[base]);
      layer->set_name(n);
      names.insert(n);
    }
  }
  WEFT_REQUIRE(names.size() == layers_.size(), "Model '{}': two layers have the same name", name_);
}

LayerPtr Model::GetLayer(const std::string& name) const {
  for (const LayerPtr& l : layers_) {
    if (l->name() == name) return l;
  }
  throw Error(errors::NotFound("Model '{}' has no layer '{}'", name_, name));
}

TensorShape Model::input_shape() const { return inputs_[0]->shape; }
TensorShape Model::output_shape() const { return outputs_[0]->shape; }

int64_t Model::CountParams() const {
  int64_t n = 0;
  for (const LayerPtr& l : layers_) n += l->CountParams(true) + l->CountParams(false);
  return n;
}

void Model::Summary(std::ostream& os) const {
  const std::string rule(65, '_'), double_rule(65, '=');
  os << "Model: \"" << name_ << "\"\n" << rule << "\n";
  os << fmt::format(" {:<28}{:<26}{:<10}\n", "Layer (type)", "Output Shape", "Param #") << double_rule << "\n";
  int64_t trainable = 0, frozen = 0;
  for (size_t i = 0; i < calls_.size(); ++i) {
    const Layer& l = *calls_[i]->layer;
    // A shared layer's weights count once, at its first call.
    bool first = true;
    for (size_t j = 0; j < i; ++j) first = first && calls_[j]->layer.get() != &l;
    const int64_t params = first ? l.CountParams(true) + l.CountParams(false) : 0;
    if (first) {
      trainable += l.CountParams(true);
      frozen += l.CountParams(false);
    }
    // A name wider than its column continues on the next lines, as Keras wraps it, keeping at
    // least one space before the shape column.
    const std::string label = l.name() + " (" + l.type() + ")";
    constexpr size_t kWidth = 27;
    os << fmt::format(" {:<28}{:<26}{:<10}\n", label.substr(0, kWidth), CallShapes(*calls_[i]), params);
    for (size_t at = kWidth; at < label.size(); at += kWidth) {
      os << fmt::format(" {:<28}{:<26}{:<10}\n", label.substr(at, kWidth), "", "");
    }
    os << (i + 1 == calls_.size() ? double_rule : std::string(65, ' ')) << "\n";
  }
  os << "Total params: " << Thousands(trainable + frozen) << "\n";
  os << "Trainable params: " << Thousands(trainable) << "\n";
  os << "Non-trainable params: " << Thousands(frozen) << "\n" << rule << "\n";
}

std::vector<Output> Model::Forward(const Scope& scope, const std::vector<Output>& xs, bool training,
                                   const LayerVars& vars, std::vector<Output>* updates,
                                   std::vector<Output>* losses,
                                   std::vector<std::vector<const Node*>>* recompute) const {
  // Every output of every call, by the call's output-0 node.
  // and Keras' mask of each (invalid where none).
  std::map<const SymNode*, std::vector<Output>> values, masks;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    values[inputs_[i].get()] = {xs[i]};
    masks[inputs_[i].get()] = {Output()};
  }
  auto value = [&](const Sym& s) { return values.at(s->call()).at(static_cast<size_t>(s->index)); };
  for (const Sym& call : calls_) {
    Scope ls = scope.NewSubScope(call->layer->name());
    if (!call->layer->device().empty()) ls = ls.WithDevice(call->layer->device());
    if (auto stage = stage_device_.find(call->layer.get()); stage != stage_device_.end()) {
      ls = ls.WithDevice(stage->second);  // a pipeline stage (train/pipeline.h)
    }
    CallContext ctx{ls, training, vars.at(call->layer.get()), updates, losses};
    std::vector<Output> in;
    for (const Sym& s : call->inputs) {
      in.push_back(CastForLayer(ls, *call->layer, value(s)));
      ctx.masks.push_back(masks.at(s->call()).at(static_cast<size_t>(s->index)));
    }
    const bool block = recompute != nullptr && recompute_layers_.count(call->layer.get()) > 0;
    const int begin = block ? NextNodeId(*scope.graph()) : 0;
    values[call.get()] = call->layer->CallOutputs(ctx, in);
    if (block) {  // the call's nodes: those made since `begin` (ids grow)
      std::vector<const Node*>& nodes = recompute->emplace_back();
      for (const Node* n : scope.graph()->nodes()) {
        if (n->id() >= begin) nodes.push_back(n);
      }
    }
    masks[call.get()] = call->layer->OutputMasks(ctx, in, values[call.get()]);
  }
  std::vector<Output> out;
  for (const Sym& o : outputs_) {
    Output y = value(o);
    out.push_back(y.dtype() == DType::kFloat32 ? y : ops::Cast(scope, y, DType::kFloat32));
  }
  return out;
}

std::vector<Output> Model::Apply(const Scope& scope, const std::vector<Output>& xs, bool training,
                                 const std::vector<Output>& weights, std::vector<Output>* updates,
                                 std::vector<Output>* losses) const {
  WEFT_REQUIRE(xs.size() == inputs_.size(), "Model '{}': Apply got {} input tensors for {} inputs", name_, xs.size(),
               inputs_.size());
  std::vector<Output> in;
  for (size_t i = 0; i < xs.size(); ++i) {
    in.push_back(xs[i].dtype() == inputs_[i]->dtype ? xs[i] : ops::Cast(scope, xs[i], inputs_[i]->dtype));
  }
  LayerVars vars;
  size_t next = 0;
  for (const LayerPtr& layer : layers_) {
    std::vector<Output>& v = vars[layer.get()];
    for (const Weight& w : layer->weights()) {
      WEFT_REQUIRE(next < weights.size(), "Model '{}': Apply got {} weight tensors, but the layers have more ({} needs "
                   "'{}')", name_, weights.size(), layer->name(), w.name);
      WEFT_REQUIRE(weights[next].shape().IsCompatibleWith(w.shape),
                   "Model '{}': weight '{}/{}' has shape {}, but its tensor in Apply is {}", name_, layer->name(),
                   w.name, w.shape.ToString(), weights[next].shape().ToString());
      v.push_back(weights[next++]);
    }
  }
  WEFT_REQUIRE(next == weights.size(), "Model '{}': Apply got {} weight tensors for {} weights", name_,
               weights.size(), next);
  return Forward(scope, in, training, vars, updates, losses);
}

void Model::RequireCompiled(const char* what) const {
  if (!session_) throw Error(errors::FailedPrecondition("Model '{}': call Compile before {}", name_, what));
}

std::vector<std::string> Model::VariableNames() const {
  RequireCompiled("VariableNames");
  std::vector<std::string> names;
  for (const Output& v : c_->variables) names.push_back(v.node->name());
  return names;
}

bool Model::remote() const { return strategy_ != nullptr && static_cast<bool>(strategy_->remote_runner()); }

void Model::WaitForVariables(double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  for (;;) {
    std::vector<Tensor> values;
    try {
      values = session_->Run({}, c_->variables);
    } catch (const Error& e) {
      if (e.status().code() != Code::kFailedPrecondition) throw;  // only "uninitialized" is worth waiting for
      if (std::chrono::steady_clock::now() > deadline) {
        throw Error(errors::DeadlineExceeded(
            "Model '{}': the chief did not initialize the shared variables within {} s (last: {})", name_,
            timeout_seconds, e.status().ToString()));
      }
    }
    if (!values.empty() || c_->variables.empty()) {
      // The shared variables hold the chief's model: a worker whose model differs (a layer of
      // another size) fails here, before its first step, naming the first variable that differs.
      for (size_t i = 0; i < values.size(); ++i) {
        const Output& v = c_->variables[i];
        if (v.shape().IsCompatibleWith(values[i].shape())) continue;
        throw Error(errors::FailedPrecondition(
            "Model '{}': the shared variable '{}' is {} (as the chief initialized it) where this worker's model has {}: "
            "the workers run different programs",
            name_, v.node->name(), values[i].shape().ToString(), v.shape().ToString()));
      }
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void Model::SaveWeights(const std::string& path) {
  RequireCompiled("SaveWeights");
  if (optimizer_state_sharded()) {  // the full slots gathered from every replica's shard (a collective step)
    std::vector<std::pair<std::string, Tensor>> named = GatherShardedSlots();
    if (path.empty()) return;  // a worker that takes part without writing
    const std::vector<Tensor> values = session_->Run({}, c_->variables);
    for (size_t i = 0; i < values.size(); ++i) named.emplace_back(c_->variables[i].node->name(), values[i]);
    SaveCheckpoint(path, named);
    return;
  }
  if (!remote()) {
    SaveVariables(path, session_->vars(), VariableNames());
    return;
  }
  // The variables live on the cluster's tasks: fetch them through the session.
  const std::vector<Tensor> values = session_->Run({}, c_->variables);
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < values.size(); ++i) named.emplace_back(c_->variables[i].node->name(), values[i]);
  SaveCheckpoint(path, named);
}

void Model::LoadWeights(const std::string& path) {
  RequireCompiled("LoadWeights");
  std::map<std::string, Tensor> loaded = LoadCheckpoint(path);
  // Every variable must be in the file (extra entries are ignored: another optimizer's slots).
  std::map<std::string, Tensor> mine;
  for (const std::string& name : VariableNames()) {
    auto it = loaded.find(name);
    if (it == loaded.end()) {
      throw Error(errors::NotFound("Model '{}': checkpoint '{}' has no variable '{}' (is it from another model?)",
                                   name_, path, name));
    }
    mine.emplace(name, std::move(it->second));
  }
  // Sharded: each replica's shard of the full slots, checked before any variable changes.
  std::function<void()> assign_slots = optimizer_state_sharded() ? RestoreShardedSlots(loaded, path) : nullptr;
  SetVariables(mine, fmt::format("checkpoint '{}'", path));
  if (assign_slots) assign_slots();
}

Sequential::Sequential(TensorShape input_shape, std::vector<LayerPtr> layers, std::string name, DType input_dtype)
    : stack_(std::move(layers)), input_shape_(std::move(input_shape)), input_dtype_(input_dtype) {
  WEFT_REQUIRE(!stack_.empty(), "Sequential '{}': needs at least one layer", name);
  Sym x = Input(input_shape_, "input", input_dtype_);
  Sym y = x;
  for (const LayerPtr& l : stack_) y = (*l)(y);
  Init({x}, {y}, std::move(name));
}

void Sequential::Add(LayerPtr layer) {
  WEFT_REQUIRE(!compiled(), "Sequential '{}': cannot add layers after Compile", name());
  stack_.push_back(std::move(layer));
  Sym x = Input(input_shape_, "input", input_dtype_);
  Sym y = x;
  for (const LayerPtr& l : stack_) y = (*l)(y);
  Init({x}, {y}, name());
}

}  // namespace weft::train
