#include "graph/scope.h"

#include "core/device_name.h"

namespace weft {

Scope Scope::Root(Graph* graph) {
  Scope s;
  s.graph_ = graph;
  return s;
}

Scope Scope::NewSubScope(std::string_view name) const {
  Scope s = *this;
  s.op_name_.clear();
  if (!name.empty()) s.prefix_ = prefix_ + std::string(name) + "/";
  return s;
}

Scope Scope::WithOpName(std::string_view name) const {
  Scope s = *this;
  s.op_name_ = std::string(name);
  return s;
}

Scope Scope::WithDevice(std::string_view device) const {
  Scope s = *this;
  DeviceName merged = device_.empty() ? DeviceName() : DeviceName::Parse(device_);
  merged.OverrideFrom(DeviceName::Parse(device));  // the inner device scope wins, as in TF
  s.device_ = merged.ToString();
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Output>& deps) const {
  Scope s = *this;
  for (const Output& o : deps) s.control_deps_.push_back(o.node);
  return s;
}

Scope Scope::WithControlDependencies(const std::vector<Node*>& deps) const {
  Scope s = *this;
  s.control_deps_.insert(s.control_deps_.end(), deps.begin(), deps.end());
  return s;
}

Scope Scope::WithNoControlDependencies() const {
  Scope s = *this;
  s.control_deps_.clear();
  return s;
}

Scope Scope::WithColocation(const Output& other) const {
  Scope s = *this;
  s.colocate_with_ = other.node->name();
  return s;
}

Node* Scope::AddNode(std::string_view op, std::vector<Output> inputs, AttrMap attrs) const {
  WEFT_REQUIRE(graph_ != nullptr, "Scope has no graph (use Scope::Root(&graph))");
  NodeSpec spec;
  spec.op = std::string(op);
  spec.name = graph_->UniqueName(prefix_ + (op_name_.empty() ? std::string(op) : op_name_));
  spec.inputs = std::move(inputs);
  spec.control_inputs = control_deps_;
  spec.attrs = std::move(attrs);
  if (!colocate_with_.empty()) spec.attrs["_colocate_with"] = colocate_with_;
  spec.device = device_;
  return graph_->AddNode(std::move(spec));
}

}  // namespace weft
