// Builder functions for the framework ops: sources, identity and the step's arguments.
#pragma once

#include "graph/scope.h"

namespace weft::ops {

Output Const(const Scope& s, const Tensor& value);
template <typename T> Output Const(const Scope& s, T v) { return Const(s, Tensor::Scalar<T>(v)); }
template <typename T> Output Const(const Scope& s, const std::vector<T>& v, TensorShape shape) {
  return Const(s, Tensor::FromVector<T>(v, std::move(shape)));
}
// A scalar of `dtype` with value v (for constants that follow an input's dtype).
Output ScalarLike(const Scope& s, DType dtype, double v);
Output Placeholder(const Scope& s, DType dtype, TensorShape shape = TensorShape::Unknown());
Output Identity(const Scope& s, Output x);
Node* NoOp(const Scope& s);
Output StopGradient(const Scope& s, Output x);
// Groups targets: a NoOp with control edges from all of them.
Node* Group(const Scope& s, const std::vector<Output>& deps, const std::vector<Node*>& nodes = {});

}  // namespace weft::ops
