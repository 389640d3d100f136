// Gradients of a while loop, TensorFlow's (v1) model: a backward loop that runs as many
// iterations as the forward one did, in reverse, reading the forward values it needs from stacks.
//
//   // forward: (i, y) = (0, 1); while i < 3: (i, y) = (i + 1, y * x)
//   std::vector<Output> r = ops::WhileLoop(s, {ops::Const(s, 0), ops::Const(s, 1.0f)}, cond, body);
//   Output dx = Gradients(s, {r[1]}, {x})[0];   // 3 x^2, through the backward loop built here
//
// What Gradients (graph/gradients.h) does with a loop it meets, as one unit:
// - the forward loop gets an iteration counter k (a loop variable of its own) and, for each value
//   of its body that a gradient function reads, a LoopStackPush(stack, k, value); k's next value
//   waits for the iteration's pushes, so the loop's count leaves it only when every push is done
//   (and fetching a gradient runs them);
// - the backward loop's variables are the count n (counting down), the gradient of each floating
//   loop variable (starting from its Exit's gradient, zeros if none) and, per loop-invariant
//   floating input (a captured tensor), a sum of its gradients over the iterations (from zeros);
// - its body is the gradient of one forward iteration (the ordinary gradient functions), where
//   each forward value is a LoopStackPop(stack, n - 1) and each captured tensor enters as a loop
//   invariant; its Exits are the gradients of the loop's initial values and captured tensors.
// A loop of 0 iterations passes its Exits' gradients to the initial values and gives the captured
// tensors zeros, as TF. Memory: every pushed value of every iteration is held until the backward
// loop pops it (docs/control-flow.md).
//
// A cond in the body: a value of a branch the forward iteration did not take is dead, so its push
// keeps nothing and its pop (absent_is_dead) is dead, in a backward branch not taken either.
// Nested loops: an inner loop's gradient is built inside the outer backward body; its stacks are
// made once per outer iteration, and their handles and its counts are forward values the outer
// loop pushes like any other.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "graph/control_flow.h"
#include "graph/scope.h"

namespace weft::internal {

// One iteration of a loop's body: the region a nested Gradients walk stays in.
struct LoopBody {
  const StaticFrames* frames = nullptr;  // not owned: the graph's frames before any gradient node was added
  int frame = 0;                         // the loop
  std::set<const Node*> nodes;           // its body, inner loops included, less its Merges and NextIterations
  std::map<const Node*, int>* forward_added = nullptr;  // not owned: see WhileLoopGradient
};

class Recomputation;

// Gradients (graph/gradients.h) walking only the nodes of `body` (null: the whole graph), through
// the recomputed copies of `recompute`'s blocks (null: none; graph/recompute.h).
std::vector<Output> GradientsWithin(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                                    const std::vector<Output>& grad_ys, const LoopBody* body,
                                    Recomputation* recompute = nullptr);

// Builds the backward loop of static frame `frame` and returns, for each value that enters the
// loop (an Enter's input) and that `wanted` asks for, its gradient (a value may come twice: as an
// initial value and as a captured tensor; the caller adds them). dy has one entry per Exit of the
// frame (frames.frames[frame].exits), invalid where the Exit has none. `frames` describes the
// graph as it was before any gradient node was added. The nodes added to the forward loop (its
// counter, stacks and pushes) go into *forward_added with the frame their value is in: a loop's
// gradient built inside an outer loop's backward body leaves them in the forward frames, and the
// outer loop pushes those it reads (the count, the stack handles) like any forward value.
std::vector<std::pair<Output, Output>> WhileLoopGradient(const Scope& s, const StaticFrames& frames, int frame,
                                                         const std::vector<Output>& dy,
                                                         const std::function<bool(const Output&)>& wanted,
                                                         std::map<const Node*, int>* forward_added);

}  // namespace weft::internal
