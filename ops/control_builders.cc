// ops::Cond and ops::WhileLoop (ops/control.h): TensorFlow's v1 control-flow construction.
#include <fmt/format.h>

#include <map>
#include <set>

#include "graph/control_flow.h"
#include "ops/array.h"
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"

namespace weft::ops {

namespace {

// The id the next node added to `g` gets (ids only grow).
int NextId(const Scope& s) {
  Node* probe = s.graph()->AddNode({.name = s.graph()->UniqueName("_probe"), .op = "NoOp"});
  const int id = probe->id();
  s.graph()->RemoveNode(probe);
  return id + 1;
}

// Makes the nodes built by a branch or loop body (ids >= start, except `keep`) belong to it:
// an input built before `outer` (outside the construct) goes through route(x); a node with no
// inputs at all gets a control input from `pivot` so it runs once per branch taken / iteration.
void Adopt(Graph* g, int start, int outer, const std::set<int>& keep, Node* pivot,
           const std::function<Output(Output)>& route) {
  for (Node* n : g->nodes()) {
    if (n->id() < start || keep.count(n->id())) continue;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Output in = n->input(i);
      // A ref input names a variable (the executor lets it cross frames): it stays as it is.
      if (in.node->id() < outer && !IsRefInput(*n, i)) g->UpdateInput(n, i, route(in));
    }
    if (n->num_inputs() == 0 && n->control_inputs().empty()) g->AddControlEdge(pivot, n);
  }
}

std::string Describe(const std::vector<Output>& outs) {
  std::vector<std::string> parts;
  for (const Output& o : outs) parts.push_back(fmt::format("{} {}", DTypeName(o.dtype()), o.shape().ToString()));
  return "(" + fmt::format("{}", fmt::join(parts, ", ")) + ")";
}

// out may replace a loop variable of invariant shape `inv`: as specific as inv or more.
bool ShapeWithin(const TensorShape& out, const TensorShape& inv) {
  if (inv.unknown_rank()) return true;
  if (out.unknown_rank() || out.rank() != inv.rank()) return false;
  for (int i = 0; i < inv.rank(); ++i) {
    if (inv.dim(i) >= 0 && out.dim(i) != inv.dim(i)) return false;
  }
  return true;
}

}  // namespace

std::vector<Output> Cond(const Scope& scope, Output pred, const BranchFn& true_fn, const BranchFn& false_fn) {
  WEFT_REQUIRE(pred.valid() && pred.dtype() == DType::kBool, "cond: pred must be a bool tensor, got {}",
               pred.valid() ? DTypeName(pred.dtype()) : "null");
  Graph* g = scope.graph();
  const Scope s = scope.NewSubScope(g->UniqueName(scope.prefix() + "cond").substr(scope.prefix().size()))
                      .WithNoControlDependencies();
  const int outer = NextId(s);
  std::set<int> keep;
  const SwitchOutputs sp = Switch(s.WithOpName("switch_pred"), pred, pred);
  keep.insert(sp.output_true.node->id());
  Node* pivot_t = Identity(s.WithOpName("switch_t"), sp.output_true).node;
  Node* pivot_f = Identity(s.WithOpName("switch_f"), sp.output_false).node;
  std::map<std::pair<Output, bool>, Output> routed;
  auto route = [&](bool side) {
    return [&, side](Output x) {
      Output& r = routed[{x, side}];
      if (!r.valid()) {
        const SwitchOutputs sw = Switch(s.WithOpName("switch"), x, pred);
        keep.insert(sw.output_true.node->id());
        r = side ? sw.output_true : sw.output_false;
      }
      return r;
    };
  };
  const int start_t = NextId(s);
  std::vector<Output> t = true_fn(s.NewSubScope("true"));
  Adopt(g, start_t, outer, keep, pivot_t, route(true));
  const int start_f = NextId(s);
  std::vector<Output> f = false_fn(s.NewSubScope("false"));
  Adopt(g, start_f, outer, keep, pivot_f, route(false));
  if (t.size() != f.size()) {
    throw Error(errors::InvalidArgument("cond: true_fn returned {} values {} but false_fn returned {} {}", t.size(),
                                        Describe(t), f.size(), Describe(f)));
  }
  std::vector<Output> out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].dtype() != f[i].dtype()) {
      throw Error(errors::InvalidArgument("cond: result {} is {} in true_fn's {} but {} in false_fn's {}", i,
                                          DTypeName(t[i].dtype()), Describe(t), DTypeName(f[i].dtype()), Describe(f)));
    }
    // A branch that returns a tensor from outside still yields it only when taken.
    if (t[i].node->id() < outer) t[i] = route(true)(t[i]);
    if (f[i].node->id() < outer) f[i] = route(false)(f[i]);
    out.push_back(Merge(s.WithOpName("merge"), {f[i], t[i]}).output);
  }
  return out;
}

std::vector<Output> WhileLoop(const Scope& scope, const std::vector<Output>& loop_vars, const LoopCondFn& cond,
                              const LoopBodyFn& body, const WhileOptions& options) {
  Graph* g = scope.graph();
  const std::string name = UniqueFrameName(*g, g->UniqueName(scope.prefix() + "while")).substr(scope.prefix().size());
  const Scope s = scope.NewSubScope(name).WithNoControlDependencies();
  const std::string frame = scope.prefix() + name;
  const size_t n = loop_vars.size();
  WEFT_REQUIRE(n > 0, "while_loop: no loop variables");
  WEFT_REQUIRE(options.shape_invariants.empty() || options.shape_invariants.size() == n,
               "while_loop: {} shape_invariants for {} loop variables", options.shape_invariants.size(), n);
  WEFT_REQUIRE(options.parallel_iterations > 0, "while_loop: parallel_iterations must be positive, got {}",
               options.parallel_iterations);
  auto var_name = [&](size_t i) {
    return i < options.names.size() ? options.names[i] : fmt::format("loop_vars[{}] ('{}')", i, loop_vars[i].name());
  };
  std::vector<Output> vars = loop_vars;
  std::vector<TensorShape> inv;
  for (size_t i = 0; i < n; ++i) {
    WEFT_REQUIRE(vars[i].valid(), "while_loop: {} is null", var_name(i));
    inv.push_back(options.shape_invariants.empty() ? vars[i].shape() : options.shape_invariants[i]);
    WEFT_REQUIRE(ShapeWithin(vars[i].shape(), inv[i]),
                 "while_loop: {} has shape {}, which its shape invariant {} does not allow", var_name(i),
                 vars[i].shape().ToString(), inv[i].ToString());
  }
  const bool counted = options.maximum_iterations.valid();
  if (counted) {  // the iteration counter goes first, as TF's
    const DType ct = options.maximum_iterations.dtype();
    WEFT_REQUIRE(ct == DType::kInt32 || ct == DType::kInt64, "while_loop: maximum_iterations must be int32 or int64, "
                 "got {}", DTypeName(ct));
    vars.insert(vars.begin(), ScalarLike(scope.WithNoControlDependencies(), ct, 0));
    inv.insert(inv.begin(), TensorShape{});
  }
  const int outer = NextId(s);
  std::set<int> keep;
  std::vector<Node*> merges, placeholders;
  for (size_t i = 0; i < vars.size(); ++i) {
    Output enter = s.WithOpName("enter").Op("Enter", {vars[i]}, {{"frame_name", frame},
                                                                  {"parallel_iterations", options.parallel_iterations}});
    keep.insert(enter.node->id());
    // The Merge takes the invariant's shape: its second input is a stand-in of that shape until
    // the NextIteration exists.
    Output stand_in = Placeholder(s.WithOpName("invariant"), vars[i].dtype(), inv[i]);
    keep.insert(stand_in.node->id());
    placeholders.push_back(stand_in.node);
    merges.push_back(Merge(s.WithOpName("merge"), {enter, stand_in}).output.node);
  }
  std::vector<Output> merged;
  for (Node* m : merges) merged.emplace_back(m, 0);
  std::map<Output, Output> invariants;
  auto route = [&](Output x) {
    Output& r = invariants[x];
    if (!r.valid()) {
      r = s.WithOpName("enter_invariant").Op("Enter", {x}, {{"frame_name", frame}, {"is_constant", true},
                                                            {"parallel_iterations", options.parallel_iterations}});
      keep.insert(r.node->id());
    }
    return r;
  };
  const int start_cond = NextId(s);
  const std::vector<Output> user_merged(merged.begin() + (counted ? 1 : 0), merged.end());
  Output c = cond(s.NewSubScope("cond"), user_merged);
  WEFT_REQUIRE(c.valid() && c.dtype() == DType::kBool && (c.shape().unknown_rank() || c.shape().rank() == 0),
               "while_loop: cond must return a scalar bool, got {}",
               c.valid() ? std::string(DTypeName(c.dtype())) + c.shape().ToString() : std::string("null"));
  if (counted) c = LogicalAnd(s, Less(s, merged[0], options.maximum_iterations), c);
  Adopt(g, start_cond, outer, keep, merges[0], route);
  Output lc = s.WithOpName("loop_cond").Op("LoopCond", {c});
  std::vector<Output> exits, body_in;
  for (size_t i = 0; i < vars.size(); ++i) {
    const SwitchOutputs sw = Switch(s.WithOpName("switch"), merged[i], lc);
    exits.push_back(s.WithOpName("exit").Op("Exit", {sw.output_false}));
    body_in.push_back(Identity(s.WithOpName("identity"), sw.output_true));
  }
  const int start_body = NextId(s);
  std::vector<Output> out = body(s.NewSubScope("body"),
                                 std::vector<Output>(body_in.begin() + (counted ? 1 : 0), body_in.end()));
  if (out.size() != n) {
    throw Error(errors::InvalidArgument("while_loop: body returned {} values {} for {} loop variables {}", out.size(),
                                        Describe(out), n, Describe(loop_vars)));
  }
  if (counted) out.insert(out.begin(), Add(s.NewSubScope("body"), body_in[0], ScalarLike(s, vars[0].dtype(), 1)));
  for (size_t i = counted ? 1 : 0; i < out.size(); ++i) {
    const size_t u = i - (counted ? 1 : 0);
    WEFT_REQUIRE(out[i].valid(), "while_loop: body returned null for {}", var_name(u));
    if (out[i].dtype() != vars[i].dtype()) {
      throw Error(errors::InvalidArgument("while_loop: body returned {} for loop variable '{}', which is {}",
                                          DTypeName(out[i].dtype()), var_name(u), DTypeName(vars[i].dtype())));
    }
    if (!ShapeWithin(out[i].shape(), inv[i])) {
      throw Error(errors::InvalidArgument(
          "while_loop: the body changes the shape of loop variable '{}' from {} to {}; give it a shape_invariants "
          "entry that allows both (unknown dims where it changes)",
          var_name(u), inv[i].ToString(), out[i].shape().ToString()));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Output next = s.WithOpName("next_iteration").Op("NextIteration", {out[i]});
    g->UpdateInput(merges[i], 1, next);
    g->RemoveNode(placeholders[i]);
  }
  Adopt(g, start_body, outer, keep, body_in[0].node, route);
  return std::vector<Output>(exits.begin() + (counted ? 1 : 0), exits.end());
}

}  // namespace weft::ops
