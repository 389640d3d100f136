// A Dataset map or filter function that runs a small graph: what tf.data's map(fn) and filter(fn)
// do after tracing `fn` once over symbolic inputs. The pipeline's threads call it without Python.
//
//   auto g = std::make_shared<Graph>();
//   Scope s = Scope::Root(g.get());
//   Output x = ops::Placeholder(s, DType::kUInt8, TensorShape({28, 28}));
//   Output y = ops::Div(s, ops::Cast(s, x, DType::kFloat32), ops::Const(s, 255.0f));
//   Dataset ds = images.Map(GraphMapFn(g, {x}, {y}), /*num_parallel_calls=*/2);
//
// Each input Output is fed element component i (same order); the function returns the fetched
// outputs in order. A component whose dtype or shape does not fit its input fails the element
// with InvalidArgument naming both. The function is thread-safe (Session::Run is); each call is
// one Run of a Session that owns its compiled step (kept for the function's life).
#pragma once

#include <memory>
#include <vector>

#include "data/dataset.h"
#include "graph/graph.h"

namespace weft::train {

data::MapFn GraphMapFn(std::shared_ptr<Graph> graph, std::vector<Output> inputs, std::vector<Output> outputs);
// `output` must be a scalar bool: the element is kept when it is true.
data::PredicateFn GraphPredicate(std::shared_ptr<Graph> graph, std::vector<Output> inputs, Output output);

}  // namespace weft::train
