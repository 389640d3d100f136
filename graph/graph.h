// Graph: nodes (one op each) joined by data edges (an output of one node feeds an input of
// another) and control edges (run-before). The graph owns its nodes; Node* are non-owning.
// Build graphs with the Scope API (graph/scope.h); passes and the executor read them.
//
//   Graph g;
//   Node* x = g.AddNode({.name = "x", .op = "Placeholder",
//                        .attrs = {{"dtype", DType::kFloat32}, {"shape", TensorShape({-1, 3})}}});
//   Node* y = g.AddNode({.name = "y", .op = "Relu", .inputs = {Output(x)}});  // [?,3], inferred on adding
//   Output out = g.FindOutput("y:0");                    // out.node == y
//   for (Node* n : g.nodes()) fmt::print("{}\n", n->Describe());   // Placeholder 'x', Relu 'y'
//   g.AddNode({.name = "z", .op = "Relu"});  // throws InvalidArgument "Relu 'z': expects 1 inputs, got 0"
//
// Thread-safety: a Graph is not thread-safe; do not mutate it while a Session compiles it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace weft {

class Node;

// One output of a node: the handle ops take and return ("dense/MatMul:0").
struct Output {
  Node* node = nullptr;  // not owned
  int index = 0;

  Output() = default;
  Output(Node* n, int i = 0) : node(n), index(i) {}
  bool valid() const { return node != nullptr; }
  DType dtype() const;
  const TensorShape& shape() const;
  std::string name() const;  // "node:index"
  bool operator==(const Output& o) const { return node == o.node && index == o.index; }
  bool operator<(const Output& o) const;
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return name_; }
  const std::string& op() const { return def_->name; }
  const OpDef& def() const { return *def_; }
  const AttrMap& attrs() const { return attrs_; }
  template <typename T> T attr(std::string_view n) const { return GetAttr<T>(attrs_, n, Describe()); }
  bool has_attr(std::string_view n) const { return attrs_.find(std::string(n)) != attrs_.end(); }

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Output& input(int i) const { return inputs_.at(i); }
  const std::vector<Output>& inputs() const { return inputs_; }
  const std::vector<Node*>& control_inputs() const { return control_inputs_; }
  int num_outputs() const { return static_cast<int>(output_dtypes_.size()); }
  DType output_dtype(int i) const { return output_dtypes_.at(i); }
  const TensorShape& output_shape(int i) const { return output_shapes_.at(i); }
  const std::vector<DType>& input_dtypes() const { return input_dtypes_; }
  // Consumers, as (node, input index); control consumers use index -1.
  const std::vector<std::pair<Node*, int>>& out_edges() const { return out_edges_; }

  // The device the user asked for ("" = anywhere) and the one the placer chose.
  const std::string& requested_device() const { return requested_device_; }
  const std::string& assigned_device() const { return assigned_device_; }
  void set_assigned_device(std::string d) { assigned_device_ = std::move(d); }
  void set_requested_device(std::string d) { requested_device_ = std::move(d); }

  // "MatMul 'dense/MatMul'" — the prefix of every error about this node.
  std::string Describe() const;

 private:
  friend class Graph;
  int id_ = -1;
  std::string name_;
  const OpDef* def_ = nullptr;
  AttrMap attrs_;
  std::vector<Output> inputs_;
  std::vector<Node*> control_inputs_;
  std::vector<DType> input_dtypes_, output_dtypes_;
  std::vector<TensorShape> output_shapes_;
  std::vector<std::pair<Node*, int>> out_edges_;
  std::string requested_device_, assigned_device_;
};

// What it takes to add a node; Graph::AddNode checks it and infers types and shapes.
struct NodeSpec {
  std::string name;
  std::string op;
  std::vector<Output> inputs;  // list args take the remaining inputs (at most one list arg)
  std::vector<Node*> control_inputs;
  AttrMap attrs;
  std::string device;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Validates the op, attrs (defaults filled in), input dtypes (type attrs inferred), runs the
  // shape function and adds the node. Throws Error naming the node and op on any problem;
  // the graph is unchanged then.
  Node* AddNode(NodeSpec spec);
  // Adds a copy of `src` (attrs, types and shapes as they are; no checks) with new inputs, for
  // passes that rebuild graphs. The copy keeps src's name unless `name` is given.
  Node* CopyNode(const Node& src, std::vector<Output> inputs, std::vector<Node*> control_inputs,
                 std::string name = "");
  // Removes a node with no consumers left (passes use it).
  void RemoveNode(Node* n);
  // Points input `i` of `dst` at `src` (dtype must match).
  void UpdateInput(Node* dst, int i, Output src);
  void AddControlEdge(Node* src, Node* dst);
  // Moves every consumer of `from` (data and control) to `to`.
  void ReplaceUses(Output from, Output to);
  void ReplaceControlUses(Node* from, Node* to);

  Node* FindNode(std::string_view name) const;
  // Parses "name" or "name:i"; throws NotFound naming the tensor.
  Output FindOutput(std::string_view tensor_name) const;
  // Nodes in id order (removed ones skipped).
  std::vector<Node*> nodes() const;
  int num_nodes() const { return num_live_; }
  // A name not used yet: `base`, else `base_1`, `base_2`, ...
  std::string UniqueName(std::string_view base);

  // Graph-level random seed (0 = none): random ops without an op seed derive one from it.
  int64_t seed() const { return seed_; }
  void set_seed(int64_t s) { seed_ = s; }
  // The next op-level seed for a random op built in this graph (deterministic when seeded).
  int64_t NextOpSeed() { return ++op_seed_counter_; }
  // Bumped on every change; sessions use it to invalidate compiled executors.
  int64_t version() const { return version_; }

  // A copy of this graph (node ids and names preserved).
  std::unique_ptr<Graph> Clone() const;

 private:
  std::vector<std::unique_ptr<Node>> nodes_;  // index = id; null when removed
  std::map<std::string, Node*, std::less<>> by_name_;
  std::map<std::string, int, std::less<>> name_counters_;
  int num_live_ = 0;
  int64_t seed_ = 0;
  int64_t op_seed_counter_ = 0;
  int64_t version_ = 0;
};

// Copying a graph node by node in TopologicalOrder meets a while loop's Merge before the
// NextIteration that feeds it (the back edge). BackEdges gives the copy a stand-in for that input
// (the copy's input 0, of the same dtype) and sets the real one once every node is copied:
//
//   BackEdges back;
//   for (Node* n : TopologicalOrder(g.nodes())) {
//     std::vector<Output> ins = back.Inputs(*n, mapped);   // mapped(o): o's copy, invalid if none yet
//     back.Copied(out->CopyNode(*n, ins, ctrl));
//   }
//   back.Apply(out.get(), mapped);
class BackEdges {
 public:
  using Map = std::function<Output(const Output&)>;
  std::vector<Output> Inputs(const Node& n, const Map& mapped);
  void Copied(Node* copy);  // the copy of the node Inputs was last called for
  void Apply(Graph* g, const Map& mapped);

 private:
  std::vector<std::pair<int, Output>> last_;  // (input, original) stand-ins of the last Inputs
  struct Pending {
    Node* copy;
    int input;
    Output original;
  };
  std::vector<Pending> pending_;
};

// Nodes in a topological order (inputs before consumers); throws InvalidArgument naming the
// nodes of a cycle when there is one. A while loop's back edge (NextIteration -> Merge) is not
// followed, so loops are not cycles.
std::vector<Node*> TopologicalOrder(const std::vector<Node*>& nodes);

}  // namespace weft
