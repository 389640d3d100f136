#include "graph/gradients.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "graph/recompute.h"
#include "graph/while_gradients.h"
#include "ops/array.h"
#include "ops/math.h"

namespace weft {

namespace {

bool Differentiable(DType t) { return IsFloating(t); }

// Gradients only flow along floating-point edges.
bool GradEdge(const Node* n, int input) { return Differentiable(n->input(input).dtype()); }

// What the backward walk visits, in order: a node, or a whole while loop (`loop`: its static frame,
// standing for its Enter nodes, body and Exits, differentiated at once by WhileLoopGradient).
struct Item {
  const Node* node = nullptr;
  int loop = 0;
  int key() const { return loop > 0 ? -loop : node->id(); }
};

// Relevant nodes and loops, each after everything it reads: a loop after the inputs of its Enter
// nodes, and before whatever reads its Exits. Iterative (deep graphs).
std::vector<Item> WalkOrder(const std::set<const Node*>& relevant, const StaticFrames* frames,
                            const std::map<const Node*, int>& loop_of) {
  if (loop_of.empty()) {  // no loop: the graph's own topological order
    std::vector<Node*> nodes;
    for (const Node* n : relevant) nodes.push_back(const_cast<Node*>(n));
    std::vector<Item> order;
    for (const Node* n : TopologicalOrder(nodes)) order.push_back({n, 0});
    return order;
  }
  auto item = [&](const Node* n) {
    auto it = loop_of.find(n);
    return it == loop_of.end() ? Item{n, 0} : Item{nullptr, it->second};
  };
  auto deps = [&](const Item& it) {
    std::vector<Item> d;
    auto add_inputs = [&](const Node* n) {
      for (const Output& in : n->inputs()) {
        if (relevant.count(in.node)) d.push_back(item(in.node));
      }
    };
    if (it.loop == 0) {
      add_inputs(it.node);
    } else {
      for (const Node* e : frames->frames[static_cast<size_t>(it.loop)].enters) add_inputs(e);
    }
    return d;
  };
  std::vector<const Node*> starts(relevant.begin(), relevant.end());
  std::sort(starts.begin(), starts.end(), [](const Node* a, const Node* b) { return a->id() < b->id(); });
  std::vector<Item> order;
  std::set<int> seen;
  for (const Node* start : starts) {
    const Item first = item(start);
    if (!seen.insert(first.key()).second) continue;
    std::vector<std::pair<Item, std::vector<Item>>> stack{{first, deps(first)}};
    while (!stack.empty()) {
      auto& [top, pending] = stack.back();
      if (pending.empty()) {
        order.push_back(top);
        stack.pop_back();
        continue;
      }
      const Item next = pending.back();
      pending.pop_back();
      if (next.loop > 0 && next.loop == top.loop) continue;
      if (seen.insert(next.key()).second) stack.emplace_back(next, deps(next));
    }
  }
  return order;
}

}  // namespace

std::vector<Output> Gradients(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys) {
  return internal::GradientsWithin(s, ys, xs, grad_ys, nullptr);
}

std::vector<Output> Gradients(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys, const GradientOptions& options) {
  internal::Recomputation recompute(s.graph(), options.recompute);
  return internal::GradientsWithin(s, ys, xs, grad_ys, nullptr, recompute.empty() ? nullptr : &recompute);
}

namespace internal {

std::vector<Output> GradientsWithin(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                                    const std::vector<Output>& grad_ys, const LoopBody* body,
                                    Recomputation* recompute) {
  const std::set<const Node*>* within = body != nullptr ? &body->nodes : nullptr;
  WEFT_REQUIRE(grad_ys.empty() || grad_ys.size() == ys.size(), "Gradients: {} grad_ys for {} ys", grad_ys.size(),
               ys.size());
  for (const Output& y : ys) {
    WEFT_REQUIRE(y.valid(), "Gradients: null y");
    WEFT_REQUIRE(Differentiable(y.dtype()), "Gradients: y '{}' has dtype {}; only floating tensors can be differentiated",
                 y.name(), DTypeName(y.dtype()));
  }
  for (const Output& x : xs) WEFT_REQUIRE(x.valid(), "Gradients: null x");

  // Nodes forward-reachable from xs along gradient edges...
  std::set<const Node*> from_x;
  std::vector<const Node*> stack;
  for (const Output& x : xs) stack.push_back(x.node);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!from_x.insert(n).second) continue;
    for (const auto& [dst, in] : n->out_edges()) {
      if (in >= 0 && GradEdge(dst, in) && (within == nullptr || within->count(dst))) stack.push_back(dst);
    }
  }
  // ...and backward-reachable from ys: the nodes gradients pass through.
  std::set<const Node*> relevant;
  for (const Output& y : ys) if (from_x.count(y.node)) stack.push_back(y.node);
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!relevant.insert(n).second) continue;
    if (n->op() == "StopGradient" || n->def().no_gradient) continue;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Node* in = n->input(i).node;
      if (GradEdge(n, i) && from_x.count(in) && (within == nullptr || within->count(in))) stack.push_back(in);
    }
  }

  std::map<Output, std::vector<Output>> contributions;
  const Scope base = s.WithNoControlDependencies().NewSubScope("gradients");
  for (size_t i = 0; i < ys.size(); ++i) {
    Output g = grad_ys.empty() ? ops::OnesLike(base, ys[i])
                               : grad_ys[i];
    WEFT_REQUIRE(g.dtype() == ys[i].dtype(), "Gradients: grad_y for '{}' has dtype {}, expected {}", ys[i].name(),
                 DTypeName(g.dtype()), DTypeName(ys[i].dtype()));
    contributions[ys[i]].push_back(g);
  }
  std::map<Output, Output> summed;
  auto total = [&](const Output& o, const Scope& scope) -> Output {
    auto it = summed.find(o);
    if (it != summed.end()) return it->second;
    auto c = contributions.find(o);
    Output r;
    if (c != contributions.end() && !c->second.empty()) {
      r = c->second.size() == 1 ? c->second[0] : ops::AddN(scope, c->second);
    }
    summed[o] = r;
    return r;
  };

  // A while loop on the path is differentiated as a whole (graph/while_gradients.h): its nodes
  // belong to the loop of their outermost frame below the walk's own (the root frame, or the body
  // of the loop whose one iteration this walk differentiates).
  StaticFrames own_frames;
  const StaticFrames* frames = body != nullptr ? body->frames : &own_frames;
  const int top = body != nullptr ? body->frame : 0;
  std::map<const Node*, int> loop_of;
  const bool loops =
      std::any_of(relevant.begin(), relevant.end(), [](const Node* n) { return IsEnter(*n) || IsExit(*n); });
  if (loops) {
    if (body == nullptr) own_frames = FindStaticFrames(s.graph()->nodes());
    auto outermost = [&](int f) {  // -1: `top` itself or not below it
      if (f == top) return -1;
      auto parent = [&](int c) { return frames->frames[static_cast<size_t>(c)].parent; };
      while (f > 0 && parent(f) != top) f = parent(f);
      return f > 0 ? f : -1;
    };
    std::map<const Node*, int> entering;
    for (size_t f = 1; f < frames->frames.size(); ++f) {
      for (const Node* e : frames->frames[f].enters) entering[e] = static_cast<int>(f);
    }
    for (const Node* n : relevant) {
      auto it = frames->frame_of.find(n->id());
      if (it == frames->frame_of.end()) continue;
      const int f = entering.count(n) ? outermost(entering.at(n)) : outermost(it->second);
      if (f > 0) loop_of[n] = f;
    }
  }
  std::map<const Node*, int> forward_added;
  const std::vector<Item> order = WalkOrder(relevant, frames, loop_of);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (it->loop > 0) {
      std::vector<Output> dy;
      bool any = false;
      for (Node* e : frames->frames[static_cast<size_t>(it->loop)].exits) {
        dy.push_back(relevant.count(e) ? total(Output(e, 0), base) : Output());
        any |= dy.back().valid();
      }
      if (!any) continue;
      auto wanted = [&](const Output& x) { return Differentiable(x.dtype()) && relevant.count(x.node) > 0; };
      for (const auto& [x, dx] : WhileLoopGradient(base, *frames, it->loop, dy, wanted,
                                                   body != nullptr ? body->forward_added : &forward_added)) {
        contributions[x].push_back(dx);
      }
      continue;
    }
    Node* n = const_cast<Node*>(it->node);
    if (n->op() == "StopGradient" || n->def().no_gradient) continue;
    bool has_grad_input = false;
    for (int i = 0; i < n->num_inputs(); ++i) {
      has_grad_input |= GradEdge(n, i) && relevant.count(n->input(i).node) > 0;
    }
    if (!has_grad_input) continue;
    Scope scope = base.NewSubScope(n->name() + "_grad");
    if (!n->requested_device().empty()) scope = scope.WithDevice(n->requested_device());
    std::vector<Output> dy(n->num_outputs());
    bool any = false;
    for (int k = 0; k < n->num_outputs(); ++k) {
      dy[k] = total(Output(n, k), scope);
      any |= dy[k].valid();
    }
    if (!any) continue;
    if (!n->def().grad_fn) {
      throw Error(errors::NotFound("no gradient defined for {} (on the path from {} to {})", n->Describe(),
                                   ys[0].name(), xs.empty() ? std::string("?") : xs[0].name()));
    }
    // A node of a recomputed block is differentiated through its recomputed copy (graph/recompute.h):
    // the copy has n's inputs' indices, so dx still goes to n's inputs.
    const Node& at = recompute != nullptr ? recompute->For(*n, dy) : *n;
    for (int k = 0; k < n->num_outputs(); ++k) {
      if (!dy[k].valid()) dy[k] = ops::ZerosLike(scope, Output(const_cast<Node*>(&at), k));
    }
    std::vector<Output> dx;
    try {
      dx = n->def().grad_fn(scope, at, dy);
    } catch (const Error& e) {
      throw Error(e.status().WithContext(fmt::format("gradient of {}", n->Describe())));
    }
    if (static_cast<int>(dx.size()) != n->num_inputs()) {
      throw Error(errors::Internal("gradient of {} returned {} values for {} inputs", n->Describe(), dx.size(),
                                   n->num_inputs()));
    }
    for (int i = 0; i < n->num_inputs(); ++i) {
      if (!dx[i].valid() || !GradEdge(n, i) || !relevant.count(n->input(i).node)) continue;
      if (dx[i].dtype() != n->input(i).dtype()) {
        throw Error(errors::Internal("gradient of {} for input {} has dtype {}, expected {}", n->Describe(), i,
                                     DTypeName(dx[i].dtype()), DTypeName(n->input(i).dtype())));
      }
      contributions[n->input(i)].push_back(dx[i]);
    }
  }
  std::vector<Output> result;
  for (const Output& x : xs) result.push_back(total(x, base));
  return result;
}

}  // namespace internal

}  // namespace weft
