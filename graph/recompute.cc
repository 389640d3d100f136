#include "graph/recompute.h"

#include <fmt/format.h>

#include <algorithm>

namespace weft::internal {

Recomputation::Recomputation(Graph* g, const std::vector<std::vector<const Node*>>& blocks) : g_(g) {
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (const Node* n : blocks[b]) {
      WEFT_REQUIRE(n != nullptr, "recompute: block {} holds a null node", b);
      auto [it, fresh] = block_of_.emplace(n, static_cast<int>(b));
      WEFT_REQUIRE(fresh || it->second == static_cast<int>(b), "recompute: {} is in blocks {} and {}", n->Describe(),
                   it->second, b);
    }
  }
}

const Node& Recomputation::For(const Node& n, const std::vector<Output>& dy) {
  auto it = block_of_.find(&n);
  if (it == block_of_.end()) return n;
  const int b = it->second;
  if (!gate_.count(b)) {  // the walk reaches block b: its recomputation waits for these gradients
    std::vector<Node*>& gate = gate_[b];
    for (const Output& d : dy) {
      if (d.valid() && std::find(gate.begin(), gate.end(), d.node) == gate.end()) gate.push_back(d.node);
    }
  }
  return *Copy(&n, b);
}

Node* Recomputation::Copy(const Node* n, int block) {
  auto in_block = [&](const Node* m) {
    auto it = block_of_.find(m);
    return it != block_of_.end() && it->second == block;
  };
  // Kept, not copied: nodes outside the block, sources and stateful nodes (see the header).
  auto copied = [&](const Node* m) { return in_block(m) && m->num_inputs() > 0 && !m->def().is_stateful; };
  if (!copied(n)) return const_cast<Node*>(n);
  // Iterative post-order over the block's nodes that `n` reads (blocks may be deep).
  std::vector<std::pair<const Node*, bool>> stack{{n, false}};
  while (!stack.empty()) {
    auto [m, ready] = stack.back();
    stack.pop_back();
    if (copy_.count(m)) continue;
    if (!ready) {
      stack.push_back({m, true});
      for (const Output& in : m->inputs()) {
        if (copied(in.node) && !copy_.count(in.node)) stack.push_back({in.node, false});
      }
      continue;
    }
    std::vector<Output> ins;
    bool root = true;
    for (const Output& in : m->inputs()) {
      if (copied(in.node)) {
        ins.emplace_back(copy_.at(in.node), in.index);
        root = false;
      } else {
        ins.push_back(in);
      }
    }
    std::vector<Node*> ctrl = m->control_inputs();
    if (root) {
      const std::vector<Node*>& gate = gate_[block];
      ctrl.insert(ctrl.end(), gate.begin(), gate.end());
    }
    std::string name = "gradients/recompute/" + m->name();
    for (int k = 1; g_->FindNode(name) != nullptr; ++k) name = fmt::format("gradients/recompute/{}_{}", m->name(), k);
    copy_[m] = g_->CopyNode(*m, std::move(ins), std::move(ctrl), std::move(name));
  }
  return copy_.at(n);
}

}  // namespace weft::internal
