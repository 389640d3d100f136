#include "graph/gradients.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "ops/array.h"
#include "ops/math.h"

namespace weft {

namespace {

bool Differentiable(DType t) { return IsFloating(t); }

// Gradients only flow along floating-point edges.
bool GradEdge(const Node* n, int input) { return Differentiable(n->input(input).dtype()); }

}  // namespace

std::vector<Output> Gradients(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys) {
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
      if (in >= 0 && GradEdge(dst, in)) stack.push_back(dst);
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
      if (GradEdge(n, i) && from_x.count(n->input(i).node)) stack.push_back(n->input(i).node);
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

  std::vector<Node*> order;
  for (const Node* n : relevant) order.push_back(const_cast<Node*>(n));
  order = TopologicalOrder(order);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* n = *it;
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
    for (int k = 0; k < n->num_outputs(); ++k) {
      if (!dy[k].valid()) dy[k] = ops::ZerosLike(scope, Output(n, k));
    }
    std::vector<Output> dx;
    try {
      dx = n->def().grad_fn(scope, *n, dy);
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

}  // namespace weft
