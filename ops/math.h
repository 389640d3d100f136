// Builder functions for the math ops (declared in ops/math.cc). Binary ops broadcast like numpy.
//
//   Graph g;                                    // Placeholder, Const: ops/framework.h
//   Scope s = Scope::Root(&g);
//   Output x = ops::Placeholder(s, DType::kFloat32, {-1, 3});
//   Output w = ops::Const(s, Tensor::FromVector<float>({1, 2, 3}, {3, 1}));
//   Output y = ops::Add(s, ops::MatMul(s, x, w), ops::Const(s, 0.5f));   // [?,1] + [] -> [?,1]
//   Output loss = ops::Mean(s, ops::Square(s, y));                       // all axes: a scalar
//   Output per_row = ops::Sum(s, x, {-1}, /*keep_dims=*/true);           // [?,1]
#pragma once

#include "graph/scope.h"

namespace weft::ops {

Output Add(const Scope& s, Output a, Output b);
Output Sub(const Scope& s, Output a, Output b);
Output Mul(const Scope& s, Output a, Output b);
Output Div(const Scope& s, Output a, Output b);
Output Pow(const Scope& s, Output a, Output b);
Output Maximum(const Scope& s, Output a, Output b);
Output Minimum(const Scope& s, Output a, Output b);
Output Neg(const Scope& s, Output x);
Output Abs(const Scope& s, Output x);
Output Sign(const Scope& s, Output x);
Output Square(const Scope& s, Output x);
Output Sqrt(const Scope& s, Output x);
Output Rsqrt(const Scope& s, Output x);
Output Reciprocal(const Scope& s, Output x);
Output Exp(const Scope& s, Output x);
Output Erf(const Scope& s, Output x);
Output Log(const Scope& s, Output x);
Output Equal(const Scope& s, Output a, Output b);
Output NotEqual(const Scope& s, Output a, Output b);
Output Less(const Scope& s, Output a, Output b);
Output LessEqual(const Scope& s, Output a, Output b);
Output Greater(const Scope& s, Output a, Output b);
Output GreaterEqual(const Scope& s, Output a, Output b);
Output LogicalAnd(const Scope& s, Output a, Output b);
Output LogicalOr(const Scope& s, Output a, Output b);
Output LogicalNot(const Scope& s, Output x);
Output Select(const Scope& s, Output cond, Output a, Output b);
Output Cast(const Scope& s, Output x, DType dtype);
Output AddN(const Scope& s, const std::vector<Output>& xs);

// Reductions over `axis` (empty: all axes; negative counts from the end).
Output Sum(const Scope& s, Output x, std::vector<int64_t> axis = {}, bool keep_dims = false);
Output Mean(const Scope& s, Output x, std::vector<int64_t> axis = {}, bool keep_dims = false);
Output Max(const Scope& s, Output x, std::vector<int64_t> axis = {}, bool keep_dims = false);
Output Min(const Scope& s, Output x, std::vector<int64_t> axis = {}, bool keep_dims = false);
Output Prod(const Scope& s, Output x, std::vector<int64_t> axis = {}, bool keep_dims = false);
Output ArgMax(const Scope& s, Output x, int64_t axis, DType output_type = DType::kInt64);
Output ArgMin(const Scope& s, Output x, int64_t axis, DType output_type = DType::kInt64);
// Sums `x` down to the shape of `like` (the gradient of a broadcast): reduces the leading and
// the size-1 axes that broadcasting expanded. Works with shapes known only at run time.
Output SumToShapeOf(const Scope& s, Output x, Output like);

Output MatMul(const Scope& s, Output a, Output b, bool transpose_a = false, bool transpose_b = false);
// Batched over leading dims (which broadcast); adj_x / adj_y transpose the last two dims.
Output BatchMatMul(const Scope& s, Output a, Output b, bool adj_x = false, bool adj_y = false);

}  // namespace weft::ops
