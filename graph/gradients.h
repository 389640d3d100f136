// Symbolic differentiation: adds nodes to the graph that compute gradients.
//
//   Output loss = ...;
//   std::vector<Output> g = Gradients(s, {loss}, {w, b});   // dloss/dw, dloss/db
//
// Gradients of ys are summed (each y weighted by its grad_ys entry, ones by default); where
// several paths reach a tensor their gradients are added (AddN). StopGradient and ops declared
// NoGradient stop the walk. Gradient nodes go under the name scope "gradients/" and carry their
// forward op's device. An op on a path from ys to xs without a gradient function is reported
// by node and op name (NotFound). An x that ys do not depend on gets a null Output.
#pragma once

#include <vector>

#include "graph/recompute.h"
#include "graph/scope.h"

namespace weft {

std::vector<Output> Gradients(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys = {});
// The same, with activation recomputation of options.recompute's blocks (graph/recompute.h): equal
// gradients, the blocks' inner activations dropped after the forward pass.
std::vector<Output> Gradients(const Scope& s, const std::vector<Output>& ys, const std::vector<Output>& xs,
                              const std::vector<Output>& grad_ys, const GradientOptions& options);

}  // namespace weft
