// Model construction, Summary and Compile (the graph); the training loop is in train/fit.cc.
#include "train/model.h"

#include <cstring>
#include <functional>
#include <set>

#include "graph/gradients.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"
#include "train/checkpoint.h"
#include "train/model_internal.h"

namespace weft::train {
namespace {

// Keras' default layer names: "conv2d", "max_pooling2d", "dense_1", ...
std::string BaseName(const std::string& type) {
  static const std::map<std::string, std::string> kNames = {
      {"MaxPool2D", "max_pooling2d"}, {"AvgPool2D", "average_pooling2d"},
      {"GlobalAveragePooling2D", "global_average_pooling2d"}, {"BatchNormalization", "batch_normalization"},
      {"ReLU", "re_lu"}};
  auto it = kNames.find(type);
  if (it != kNames.end()) return it->second;
  std::string out;
  for (char c : type) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ShapeString(const TensorShape& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i > 0) s += ", ";
    s += shape.dim(i) < 0 ? "None" : std::to_string(shape.dim(i));
  }
  return s + (shape.rank() == 1 ? ",)" : ")");
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
  WEFT_REQUIRE(inputs.size() == 1 && outputs.size() == 1 && inputs[0] && outputs[0],
               "Model '{}': needs exactly one input and one output (got {} and {})", name, inputs.size(),
               outputs.size());
  WEFT_REQUIRE(inputs[0]->layer == nullptr, "Model '{}': the input must come from Input()", name);
  name_ = std::move(name);
  inputs_ = std::move(inputs);
  outputs_ = std::move(outputs);
  calls_.clear();
  layers_.clear();
  // Depth-first from the output: every call after its inputs; each must reach the model input.
  std::set<const SymNode*> done;
  std::function<void(const Sym&)> visit = [&](const Sym& n) {
    if (done.count(n.get())) return;
    if (n->layer == nullptr) {
      WEFT_REQUIRE(n == inputs_[0], "Model '{}': Input '{}' is used but is not the model's input", name_, n->name);
      done.insert(n.get());
      return;
    }
    for (const Sym& in : n->inputs) visit(in);
    done.insert(n.get());
    calls_.push_back(n);
  };
  visit(outputs_[0]);
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
      const std::string base = BaseName(layer->type());
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
    os << fmt::format(" {:<28}{:<26}{:<10}\n", l.name() + " (" + l.type() + ")", ShapeString(calls_[i]->shape),
                      params);
    os << (i + 1 == calls_.size() ? double_rule : std::string(65, ' ')) << "\n";
  }
  os << "Total params: " << Thousands(trainable + frozen) << "\n";
  os << "Trainable params: " << Thousands(trainable) << "\n";
  os << "Non-trainable params: " << Thousands(frozen) << "\n" << rule << "\n";
}

Output Model::Forward(const Scope& scope, Output x, bool training, std::vector<Output>* updates) {
  std::map<const SymNode*, Output> values = {{inputs_[0].get(), x}};
  for (const Sym& call : calls_) {
    CallContext ctx{scope.NewSubScope(call->layer->name()), training, layer_vars_.at(call->layer.get()), updates};
    std::vector<Output> in;
    for (const Sym& s : call->inputs) in.push_back(values.at(s.get()));
    values[call.get()] = call->layer->Call(ctx, in);
  }
  return values.at(outputs_[0].get());
}

void Model::Compile(CompileOptions o) {
  for (const std::string& m : o.metrics) CanonicalMetricName(m);
  session_.reset();
  graph_ = std::make_unique<Graph>();
  graph_->set_seed(o.seed);
  c_ = std::make_unique<Compiled>();
  Scope root = Scope::Root(graph_.get());
  std::vector<Output> inits;
  auto make_var = [&](const std::string& name, const TensorShape& shape, Output initial_value_or_none,
                      const Initializer* init) {
    Output v = ops::Variable(root.WithOpName(name), shape, DType::kFloat32);
    Scope is = root.NewSubScope(name + "/init");
    inits.push_back(ops::Assign(is, v, init ? init->Build(is, shape) : initial_value_or_none));
    c_->variables.push_back(v);
    return v;
  };

  // Weights, in layer order; the trainable ones get gradients.
  layer_vars_.clear();
  std::vector<Output> trainable;
  std::vector<std::pair<Output, double>> l2_terms;
  for (const LayerPtr& layer : layers_) {
    std::vector<Output>& vars = layer_vars_[layer.get()];
    for (const Weight& w : layer->weights()) {
      Output v = make_var(layer->name() + "/" + w.name, w.shape, Output{}, &w.init);
      vars.push_back(v);
      if (w.trainable) trainable.push_back(v);
      if (w.l2 > 0.0) l2_terms.emplace_back(v, w.l2);
    }
  }
  c_->step = ops::Variable(root.WithOpName("step"), TensorShape{}, DType::kInt64);
  inits.push_back(ops::Assign(root.WithOpName("step/init"), c_->step, ops::Const(root, int64_t{0})));
  c_->variables.push_back(c_->step);

  // The training pass: loss (+ L2), metrics, gradients, updates.
  c_->x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, input_shape());
  c_->y = ops::Placeholder(root.WithOpName("y"), o.loss.label_dtype(), o.loss.LabelShape(output_shape()));
  c_->lr = ops::Placeholder(root.WithOpName("learning_rate"), DType::kFloat32, TensorShape{});
  std::vector<Output> updates;
  Output pred = Forward(root, c_->x, /*training=*/true, &updates);
  Scope ls = root.NewSubScope("loss");
  Output loss = ops::Mean(ls, o.loss.Build(ls, c_->y, pred));
  for (const auto& [w, l2] : l2_terms) {
    loss = ops::Add(ls, loss, ops::Mul(ls, ops::ScalarLike(ls, DType::kFloat32, l2), ops::Sum(ls, ops::Square(ls, w))));
  }
  c_->loss = loss;
  c_->metric_names.clear();
  for (const std::string& m : o.metrics) {
    c_->metric_names.push_back(CanonicalMetricName(m));
    Scope ms = root.NewSubScope("metrics");
    c_->metrics.push_back(ops::Mean(ms, BuildMetric(ms, m, o.loss, c_->y, pred)));
  }
  std::vector<Output> grads = Gradients(root, {loss}, trainable);
  for (size_t i = 0; i < grads.size(); ++i) {
    WEFT_REQUIRE(grads[i].valid(), "Model '{}': the loss does not depend on the trainable variable '{}'", name_,
                 trainable[i].node->name());
  }
  Scope opt = root.NewSubScope("optimizer");
  auto make_slot = [&](const Output& var, const std::string& slot) {
    return make_var(var.node->name() + "/" + slot, var.shape(),
                    ops::Const(opt, Tensor::Zeros(DType::kFloat32, var.shape())), nullptr);
  };
  std::vector<Output> applies = o.optimizer.Apply(opt, trainable, grads, c_->lr, c_->step, make_slot);
  applies.insert(applies.end(), updates.begin(), updates.end());
  Output increment = ops::AssignAdd(opt.WithControlDependencies(applies), c_->step, ops::Const(opt, int64_t{1}));
  c_->train = ops::Group(root.WithOpName("train"), {increment});

  // The inference pass, sharing the variables.
  Scope is = root.NewSubScope("inference");
  c_->pred = Forward(is, c_->x, /*training=*/false, nullptr);
  Scope es = is.NewSubScope("loss");
  c_->eval_loss = ops::Mean(es, o.loss.Build(es, c_->y, c_->pred));
  for (const auto& [w, l2] : l2_terms) {
    c_->eval_loss = ops::Add(es, c_->eval_loss,
                             ops::Mul(es, ops::ScalarLike(es, DType::kFloat32, l2), ops::Sum(es, ops::Square(es, w))));
  }
  for (const std::string& m : o.metrics) {
    Scope ms = is.NewSubScope("metrics");
    c_->eval_metrics.push_back(ops::Mean(ms, BuildMetric(ms, m, o.loss, c_->y, c_->pred)));
  }
  Node* init = ops::Group(root.WithOpName("init"), inits);
  c_->options = o;
  session_ = std::make_unique<Session>(graph_.get(), o.session);
  session_->Run({}, {}, {init});
  step_ = 0;
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

void Model::SaveWeights(const std::string& path) {
  RequireCompiled("SaveWeights");
  SaveVariables(path, session_->vars(), VariableNames());
}

void Model::LoadWeights(const std::string& path) {
  RequireCompiled("LoadWeights");
  RestoreVariables(path, session_->vars(), VariableNames());
  step_ = session_->Run({}, {c_->step})[0].scalar<int64_t>()();
}

Sequential::Sequential(TensorShape input_shape, std::vector<LayerPtr> layers, std::string name)
    : stack_(std::move(layers)), input_shape_(std::move(input_shape)) {
  WEFT_REQUIRE(!stack_.empty(), "Sequential '{}': needs at least one layer", name);
  Sym x = Input(input_shape_);
  Sym y = x;
  for (const LayerPtr& l : stack_) y = (*l)(y);
  Init({x}, {y}, std::move(name));
}

void Sequential::Add(LayerPtr layer) {
  WEFT_REQUIRE(!compiled(), "Sequential '{}': cannot add layers after Compile", name());
  stack_.push_back(std::move(layer));
  Sym x = Input(input_shape_);
  Sym y = x;
  for (const LayerPtr& l : stack_) y = (*l)(y);
  Init({x}, {y}, name());
}

}  // namespace weft::train
