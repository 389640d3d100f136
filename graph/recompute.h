// Activation recomputation, as TensorFlow's tf.recompute_grad: the gradient graph of a block of
// forward nodes reads recomputed copies of the block's activations instead of the forward pass's,
// so the block's inner activations die with the forward pass and the backward pass remakes them
// when it reaches the block. Memory for compute: the block runs forward twice.
//
//   Output h = ..., y = ...;                        // the block: the nodes made from h to y
//   GradientOptions go;
//   go.recompute.push_back(NodesBetween(first_id, NextNodeId(g)));
//   std::vector<Output> g = Gradients(s, {loss}, {w}, {}, go);   // same values, lower peak memory
//
// The rewrite happens inside Gradients' backward walk: when the walk reaches a node of a block,
// the node's gradient function is called on a copy of it whose inputs are the copies of the block
// nodes it reads (recursively; inputs from outside the block are the forward pass's own). The
// copies whose inputs all come from outside the block carry control edges from the gradients that
// first reached the block, so the recomputation runs only once the backward pass needs it, and
// has control inputs that keep CSE from merging it back into the forward pass. Nodes without inputs
// (constants, variables, placeholders) and stateful nodes (random ops, variable reads with side
// effects) are never copied: their forward outputs are kept, so dropout masks stay the same and a
// recomputed block computes exactly what its forward pass did.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace weft {

struct GradientOptions {
  // Blocks of forward nodes whose activations the backward pass recomputes. A node may be in one
  // block at most (InvalidArgument naming it otherwise). Nodes inside while loops are left alone.
  std::vector<std::vector<const Node*>> recompute;
};

namespace internal {

// The backward walk's side of recomputation (graph/gradients.cc). Not thread-safe; lives for one
// Gradients call.
class Recomputation {
 public:
  Recomputation(Graph* g, const std::vector<std::vector<const Node*>>& blocks);
  bool empty() const { return block_of_.empty(); }
  // The node whose gradient function the walk calls for forward node `n`: `n` itself outside every
  // block, else its recomputed copy, gated on `dy` (n's incoming gradients; the first block node
  // the walk reaches gates the block's recomputation).
  const Node& For(const Node& n, const std::vector<Output>& dy);
  // How many copies were made (tests and logs).
  int copies() const { return static_cast<int>(copy_.size()); }

 private:
  Node* Copy(const Node* n, int block);
  Graph* g_;
  std::map<const Node*, int> block_of_;
  std::map<int, std::vector<Node*>> gate_;  // per block: the control inputs of its root copies
  std::map<const Node*, Node*> copy_;
};

}  // namespace internal
}  // namespace weft
