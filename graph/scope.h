// The C++ graph-building API. A Scope carries the graph, a name prefix, a device and control
// dependencies; op functions take a Scope and Outputs and return Outputs. Shape inference runs
// as each node is added, so a mismatch is reported where it was written.
//
//   Graph g;
//   Scope s = Scope::Root(&g);
//   Output x = Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 3});
//   Output w = Variable(s.WithOpName("w"), {3, 1}, DType::kFloat32);
//   Output y = MatMul(s, x, w);                     // node "MatMul", shape [?,1]
//   Scope layer = s.NewSubScope("dense");           // names become "dense/..."
//   Output z = Relu(layer.WithDevice("/device:CPU:0"), y);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace weft {

class Scope {
 public:
  static Scope Root(Graph* graph);  // graph: not owned

  Scope NewSubScope(std::string_view name) const;    // names "prefix/name/..."
  Scope WithOpName(std::string_view name) const;     // the next op's exact name (within prefix)
  Scope WithDevice(std::string_view device) const;   // merged over the current device
  Scope WithControlDependencies(const std::vector<Output>& deps) const;
  Scope WithControlDependencies(const std::vector<Node*>& deps) const;
  Scope WithNoControlDependencies() const;
  // Nodes added through the returned scope are placed on the device of `other`'s node
  // (a colocation group: graph/placer.h).
  Scope WithColocation(const Output& other) const;

  Graph* graph() const { return graph_; }
  const std::string& device() const { return device_; }
  const std::string& prefix() const { return prefix_; }
  const std::vector<Node*>& control_deps() const { return control_deps_; }

  // Adds a node of op `op` named after WithOpName or `op` (made unique), with this scope's
  // device and control dependencies. Throws Error naming the node on any problem.
  Node* AddNode(std::string_view op, std::vector<Output> inputs, AttrMap attrs = {}) const;
  // AddNode and return output 0.
  Output Op(std::string_view op, std::vector<Output> inputs, AttrMap attrs = {}) const {
    return Output(AddNode(op, std::move(inputs), std::move(attrs)), 0);
  }

 private:
  Graph* graph_ = nullptr;
  std::string prefix_;
  std::string op_name_;
  std::string device_;
  std::vector<Node*> control_deps_;
  std::string colocate_with_;
};

}  // namespace weft
