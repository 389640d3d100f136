// Control flow in the graph: conditionals and while loops, built from TensorFlow's primitives
// (Switch, Merge, Enter, Exit, NextIteration, LoopCond; graph/control_flow.h). Only the branch
// taken runs, and a loop runs as many iterations as its predicate says, inside one step.
//
//   Graph g;
//   Scope s = Scope::Root(&g);
//   Output x = ops::Placeholder(s, DType::kFloat32, {});
//   // y = x > 0 ? x * 2 : -x
//   Output y = ops::Cond(s, ops::Greater(s, x, ops::Const(s, 0.0f)),
//                        [&](const Scope& b) { return std::vector<Output>{ops::Mul(b, x, ops::Const(b, 2.0f))}; },
//                        [&](const Scope& b) { return std::vector<Output>{ops::Neg(b, x)}; })[0];
//   // (i, p) = (0, 1); while i < 10: (i, p) = (i + 1, p * x)
//   std::vector<Output> r = ops::WhileLoop(
//       s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
//       [&](const Scope& b, const std::vector<Output>& v) { return ops::Less(b, v[0], ops::Const(b, 10)); },
//       [&](const Scope& b, const std::vector<Output>& v) {
//         return std::vector<Output>{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(b, v[1], x)};
//       });
//
// Branch and body functions may use any tensor built before the call (the builder routes it in
// through a Switch or a constant Enter) and build nodes without inputs (constants: the builder
// gives them a control input inside the branch or loop). Gradients flow through Cond; a
// WhileLoop is not differentiable yet (Gradients reports it). See docs/control-flow.md.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/scope.h"

namespace weft {

// The shape that covers both: equal dims kept, others unknown (unknown rank if ranks differ).
TensorShape MostSpecificCommonShape(const TensorShape& a, const TensorShape& b);
// True for a Merge with an input from NextIteration (a loop's Merge rather than a cond's).
bool IsLoopMerge(const Node& merge);

namespace ops {

struct SwitchOutputs {
  Output output_false, output_true;
};
struct MergeOutputs {
  Output output, value_index;
};
SwitchOutputs Switch(const Scope& s, Output data, Output pred);
MergeOutputs Merge(const Scope& s, const std::vector<Output>& inputs);

// The stacks a while loop's gradient keeps the forward values in (graph/while_gradients.h): a
// handle made by LoopStack (one stack per step); Push keeps `value` under `index` (nothing when
// the value is dead), Pop removes and returns it (dead if absent and absent_is_dead). Each index
// is pushed once and popped at most once.
Output LoopStack(const Scope& s);
Output LoopStackPush(const Scope& s, Output handle, Output index, Output value);
Output LoopStackPop(const Scope& s, Output handle, Output index, DType dtype, TensorShape elem_shape,
                    bool absent_is_dead = false);

using BranchFn = std::function<std::vector<Output>(const Scope& s)>;

// true_fn() if the scalar bool `pred` is true, else false_fn(). The branches return the same
// number of tensors with the same dtypes (InvalidArgument naming both branches' results if not);
// each result's shape is what the two branches' shapes have in common.
std::vector<Output> Cond(const Scope& s, Output pred, const BranchFn& true_fn, const BranchFn& false_fn);

using LoopCondFn = std::function<Output(const Scope& s, const std::vector<Output>& vars)>;
using LoopBodyFn = std::function<std::vector<Output>(const Scope& s, const std::vector<Output>& vars)>;

struct WhileOptions {
  // Iterations that may run at once (independent work of later iterations overlaps).
  int64_t parallel_iterations = 10;
  // A scalar int32/int64: the loop stops after this many iterations whatever cond says
  // (invalid Output: no limit).
  Output maximum_iterations;
  // One per loop variable (or empty: each variable's own shape): the shape each variable keeps
  // through the iterations; unknown dims let the body change them.
  std::vector<TensorShape> shape_invariants;
  // Names of the loop variables for error messages (default "loop_vars[i]").
  std::vector<std::string> names;
};

// Runs `body` while `cond` (a scalar bool) holds and returns the loop variables' final values.
// The body returns one tensor per loop variable, with its dtype and a shape its invariant
// allows: otherwise InvalidArgument naming the variable and both shapes.
std::vector<Output> WhileLoop(const Scope& s, const std::vector<Output>& loop_vars, const LoopCondFn& cond,
                              const LoopBodyFn& body, const WhileOptions& options = {});

}  // namespace ops
}  // namespace weft
