// A compiled model's state from outside the training loop: the layers' weights by name
// (Keras' get_weights / set_weights order), assigning variables from values checked first
// (LoadWeights, set_weights, whole-model files), and the learning-rate override Keras'
// callbacks use (ReduceLROnPlateau, LearningRateScheduler).
#include <set>

#include "ops/framework.h"
#include "ops/kernel.h"
#include "ops/state.h"
#include "train/model.h"
#include "train/model_internal.h"

namespace weft::train {

std::vector<std::string> Model::LayerWeightNames() const {
  RequireCompiled("LayerWeightNames");
  std::vector<std::string> names;
  for (const LayerPtr& l : layers_) {
    for (const Weight& w : l->weights()) names.push_back(l->name() + "/" + w.name);
  }
  return names;
}

void Model::SetVariables(const std::map<std::string, Tensor>& values, const std::string& source) {
  RequireCompiled("SetVariables");
  std::set<std::string> known;
  for (const Output& v : c_->variables) known.insert(v.node->name());
  // Everything is checked before anything is assigned: on error the model is unchanged.
  for (const auto& [name, t] : values) {
    if (known.count(name) != 0) continue;
    std::string names;
    for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
    throw Error(errors::NotFound("Model '{}': {} names variable '{}', which the model does not have (it has {})",
                                 name_, source, name, names));
  }
  for (const Output& v : c_->variables) {  // in the model's order: the first layer's mismatch is reported
    auto it = values.find(v.node->name());
    if (it == values.end()) continue;
    const Tensor& t = it->second;
    if (t.dtype() != v.dtype() || t.shape() != v.shape()) {
      throw Error(errors::InvalidArgument("Model '{}': {} gives variable '{}' as {} {}, but the model's is {} {}",
                                          name_, source, it->first, DTypeName(t.dtype()), t.shape().ToString(),
                                          DTypeName(v.dtype()), v.shape().ToString()));
    }
  }
  if (!remote()) {
    for (const auto& [name, t] : values) {
      Tensor fresh = t.Clone();  // the caller's buffer stays the caller's
      Var* var = session_->vars().LookupOrCreate(name);
      std::lock_guard<std::mutex> l(var->mu);
      var->value = std::move(fresh);
    }
  } else {
    // The variables live on the cluster's tasks: every one is assigned where it lives, through
    // placeholders fed with the new values (the current ones for those not given).
    std::vector<Tensor> current = session_->Run({}, c_->variables);
    if (c_->restore == nullptr) {
      Scope s = Scope::Root(graph_.get()).NewSubScope("restore");
      std::vector<Output> assigns;
      for (const Output& v : c_->variables) {
        Output value = ops::Placeholder(s.WithOpName(v.node->name() + "/value"), v.dtype(), v.shape());
        c_->restore_values.push_back(value);
        assigns.push_back(ops::Assign(s.NewSubScope(v.node->name()), v, value));
      }
      c_->restore = ops::Group(s.WithOpName("all"), assigns);
    }
    std::vector<std::pair<Output, Tensor>> feeds;
    for (size_t i = 0; i < c_->variables.size(); ++i) {
      auto it = values.find(c_->variables[i].node->name());
      feeds.emplace_back(c_->restore_values[i], it != values.end() ? it->second : current[i]);
    }
    session_->Run(feeds, {}, {c_->restore});
  }
  if (c_->broadcast != nullptr) {  // across workers (each assigns): the chief's values win
    session_->Run({}, {}, {c_->broadcast}, RunOptions{.collective = true});
  }
  if (c_->sync_mirrors != nullptr) session_->Run({}, {}, {c_->sync_mirrors});  // copy 0 -> every replica
  step_ = session_->Run({}, {c_->step})[0].scalar<int64_t>()();
}

}  // namespace weft::train
