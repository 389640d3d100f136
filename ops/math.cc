// The math ops: elementwise arithmetic (numpy broadcasting), comparisons, logical ops, Select,
// Cast, AddN, reductions, ArgMax/ArgMin, MatMul/BatchMatMul and the broadcast-gradient helpers
// SumToShape / ReducedShape. Each op is declared once below with its shape function and
// gradient; kernels are in ops/kernels/cpu/{math,reduce,matmul}.cc.
#include "ops/math.h"

#include <fmt/ranges.h>

#include "ops/all_ops.h"
#include "ops/array.h"
#include "ops/framework.h"

namespace weft {
namespace {

const std::vector<DType> kFloat = {DType::kFloat32, DType::kFloat64};
const std::vector<DType> kSigned = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
const std::vector<DType> kNumber = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8};
const std::vector<DType> kAll = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                 DType::kInt64,   DType::kUInt8,   DType::kBool};

using Grads = std::vector<Output>;
Output Out(const Node& op, int i = 0) { return Output(const_cast<Node*>(&op), i); }
Output Scalar(const Scope& s, const Output& like, double v) { return ops::ScalarLike(s, like.dtype(), v); }

// A shape as an int64 vector: a Const when `x`'s shape is known at build time, else Shape(x).
Output ShapeOf(const Scope& s, const Output& x) {
  const TensorShape& xs = x.shape();
  if (xs.IsFullyDefined()) return ops::Const(s, xs.dims(), TensorShape({xs.rank()}));
  return ops::Shape(s, x, DType::kInt64);
}

// Which of `rank` axes `axis` names (empty = all); negative axes count from the end. Throws on
// an out-of-range or repeated axis, naming it and the shape.
std::vector<bool> ReducedMask(const TensorShape& shape, const std::vector<int64_t>& axis) {
  std::vector<bool> mask(shape.rank(), axis.empty());
  for (int64_t a : axis) {
    const int c = shape.CanonicalAxis(a, "axis");
    WEFT_REQUIRE(!mask[c], "axis {} is listed twice in axis [{}] for input shape {}", a, fmt::join(axis, ","),
                 shape.ToString());
    mask[c] = true;
  }
  return mask;
}

// ---- shape functions ------------------------------------------------------------------------

// Reductions: the reduced axes are dropped (or kept as 1 with keep_dims).
void ReduceShape(InferenceContext& c) {
  const TensorShape& x = c.input(0);
  const auto axis = c.attr<std::vector<int64_t>>("axis");
  const bool keep = c.attr<bool>("keep_dims");
  if (x.unknown_rank()) {
    c.set_output(0, !keep && axis.empty() ? TensorShape{} : TensorShape::Unknown());
    return;
  }
  const std::vector<bool> mask = ReducedMask(x, axis);
  TensorShape out;
  for (int i = 0; i < x.rank(); ++i) {
    if (!mask[i]) out.AddDim(x.dim(i));
    else if (keep) out.AddDim(1);
  }
  c.set_output(0, out);
}

void ArgShape(InferenceContext& c) {
  TensorShape x = c.input(0);
  if (x.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  x.RemoveDim(x.CanonicalAxis(c.attr<int64_t>("axis"), "axis"));
  c.set_output(0, x);
}

void SelectShape(InferenceContext& c) {
  const TensorShape &cond = c.input(0), &a = c.input(1), &b = c.input(2);
  WEFT_REQUIRE(a.IsCompatibleWith(b), "a {} and b {} must have the same shape", a.ToString(), b.ToString());
  const TensorShape out = a.Merge(b);
  if (!cond.unknown_rank() && !out.unknown_rank() && cond.rank() != 0) {
    if (cond.rank() == 1 && out.rank() > 1) {
      c.MergeDim(cond.dim(0), out.dim(0), "cond (a vector selecting rows) and dim 0 of a");
    } else {
      WEFT_REQUIRE(cond.IsCompatibleWith(out), "cond {} must have the shape of a {}, be a scalar, or be a vector of "
                   "length dim 0 of a", cond.ToString(), out.ToString());
    }
  }
  c.set_output(0, out);
}

void AddNShape(InferenceContext& c) {
  TensorShape out = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    WEFT_REQUIRE(out.IsCompatibleWith(c.input(i)), "input {} has shape {} but the others have {}", i,
                 c.input(i).ToString(), out.ToString());
    out = out.Merge(c.input(i));
  }
  c.set_output(0, out);
}

void MatMulShape(InferenceContext& c) {
  const TensorShape a = c.WithRank(c.input(0), 2, "a");
  const TensorShape b = c.WithRank(c.input(1), 2, "b");
  const bool ta = c.attr<bool>("transpose_a"), tb = c.attr<bool>("transpose_b");
  const int64_t k = a.dim(ta ? 0 : 1), kb = b.dim(tb ? 1 : 0);
  WEFT_REQUIRE(k < 0 || kb < 0 || k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.ToString(),
               ta ? " (transposed)" : "", b.ToString(), tb ? " (transposed)" : "", k, kb);
  c.set_output(0, TensorShape({a.dim(ta ? 1 : 0), b.dim(tb ? 0 : 1)}));
}

void BatchMatMulShape(InferenceContext& c) {
  const TensorShape a = c.WithRankAtLeast(c.input(0), 2, "a");
  const TensorShape b = c.WithRankAtLeast(c.input(1), 2, "b");
  if (a.unknown_rank() || b.unknown_rank()) return c.set_output(0, TensorShape::Unknown());
  const bool ax = c.attr<bool>("adj_x"), ay = c.attr<bool>("adj_y");
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = a.dim(ax ? ra - 1 : ra - 2), k = a.dim(ax ? ra - 2 : ra - 1);
  const int64_t kb = b.dim(ay ? rb - 1 : rb - 2), n = b.dim(ay ? rb - 2 : rb - 1);
  WEFT_REQUIRE(k < 0 || kb < 0 || k == kb, "inner dimensions differ: a {}{} and b {}{} ({} vs {})", a.ToString(),
               ax ? " (adj_x)" : "", b.ToString(), ay ? " (adj_y)" : "", k, kb);
  const TensorShape a_batch(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
  const TensorShape b_batch(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2));
  TensorShape out;
  try {
    out = BroadcastShapes(a_batch, b_batch);
  } catch (const Error&) {
    WEFT_REQUIRE(false, "batch dims of a {} and b {} do not broadcast", a.ToString(), b.ToString());
  }
  out.AddDim(m);
  out.AddDim(n);
  c.set_output(0, out);
}

// ---- gradients: elementwise -----------------------------------------------------------------

// y = a + b:  da = sum_to(dy, a),  db = sum_to(dy, b)
Grads AddGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::SumToShapeOf(s, dy[0], op.input(0)), ops::SumToShapeOf(s, dy[0], op.input(1))};
}
// y = a - b:  da = sum_to(dy, a),  db = sum_to(-dy, b)
Grads SubGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::SumToShapeOf(s, dy[0], op.input(0)), ops::SumToShapeOf(s, ops::Neg(s, dy[0]), op.input(1))};
}
// y = a * b:  da = sum_to(dy * b, a),  db = sum_to(a * dy, b)
Grads MulGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1);
  return {ops::SumToShapeOf(s, ops::Mul(s, dy[0], b), a), ops::SumToShapeOf(s, ops::Mul(s, a, dy[0]), b)};
}
// y = a / b:  da = sum_to(dy / b, a),  db = sum_to(-dy * y / b, b)
Grads DivGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1);
  const Output db = ops::Neg(s, ops::Div(s, ops::Mul(s, dy[0], Out(op)), b));
  return {ops::SumToShapeOf(s, ops::Div(s, dy[0], b), a), ops::SumToShapeOf(s, db, b)};
}
// y = a ^ b:  da = sum_to(dy * b * a^(b-1), a),  db = sum_to(dy * y * log(a), b) with log(a) := 0
// where a <= 0 (as TF: the real power is not differentiable in b there).
Grads PowGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1);
  const Output da = ops::Mul(s, dy[0], ops::Mul(s, b, ops::Pow(s, a, ops::Sub(s, b, Scalar(s, b, 1)))));
  const Output pos = ops::Greater(s, a, Scalar(s, a, 0));
  const Output safe_a = ops::Select(s, pos, a, ops::OnesLike(s, a));
  const Output log_a = ops::Select(s, pos, ops::Log(s, safe_a), ops::ZerosLike(s, a));
  const Output db = ops::Mul(s, ops::Mul(s, dy[0], Out(op)), log_a);
  return {ops::SumToShapeOf(s, da, a), ops::SumToShapeOf(s, db, b)};
}
// y = max(a, b):  da = sum_to(dy * [a >= b], a),  db = sum_to(dy - dy * [a >= b], b)  (ties go to a)
// y = min(a, b):  the same with [a <= b].
template <bool kMax>
Grads MaxMinGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1);
  const Output pick_a = kMax ? ops::GreaterEqual(s, a, b) : ops::LessEqual(s, a, b);
  const Output ga = ops::Mul(s, dy[0], ops::Cast(s, pick_a, dy[0].dtype()));
  return {ops::SumToShapeOf(s, ga, a), ops::SumToShapeOf(s, ops::Sub(s, dy[0], ga), b)};
}

// dx = -dy
Grads NegGrad(const Scope& s, const Node&, const Grads& dy) { return {ops::Neg(s, dy[0])}; }
// dx = dy * sign(x)
Grads AbsGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Mul(s, dy[0], ops::Sign(s, op.input(0)))};
}
// dx = dy * 2x
Grads SquareGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Mul(s, dy[0], ops::Mul(s, op.input(0), Scalar(s, dy[0], 2)))};
}
// y = sqrt(x):  dx = dy * 0.5 / y
Grads SqrtGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Div(s, ops::Mul(s, dy[0], Scalar(s, dy[0], 0.5)), Out(op))};
}
// y = x^-1/2:  dx = dy * -0.5 * y^3
Grads RsqrtGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output y = Out(op);
  return {ops::Mul(s, ops::Mul(s, dy[0], Scalar(s, dy[0], -0.5)), ops::Mul(s, y, ops::Square(s, y)))};
}
// y = 1/x:  dx = -dy * y^2
Grads ReciprocalGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Neg(s, ops::Mul(s, dy[0], ops::Square(s, Out(op))))};
}
// y = exp(x):  dx = dy * y
Grads ExpGrad(const Scope& s, const Node& op, const Grads& dy) { return {ops::Mul(s, dy[0], Out(op))}; }
// y = erf(x):  dx = dy * 2/sqrt(pi) * exp(-x^2)
Grads ErfGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  return {ops::Mul(s, ops::Mul(s, dy[0], Scalar(s, dy[0], 1.1283791670955126)), ops::Exp(s, ops::Neg(s, ops::Square(s, x))))};
}
// y = log(x):  dx = dy / x
Grads LogGrad(const Scope& s, const Node& op, const Grads& dy) { return {ops::Div(s, dy[0], op.input(0))}; }
// y = log(1 + x):  dx = dy / (1 + x)
Grads Log1pGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  return {ops::Div(s, dy[0], ops::Add(s, x, Scalar(s, x, 1)))};
}
// y = sin(x):  dx = dy * cos(x)
Grads SinGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Mul(s, dy[0], s.Op("Cos", {op.input(0)}))};
}
// y = cos(x):  dx = -dy * sin(x)
Grads CosGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Neg(s, ops::Mul(s, dy[0], s.Op("Sin", {op.input(0)})))};
}
// y = exp(x) - 1:  dx = dy * (y + 1)
Grads Expm1Grad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Mul(s, dy[0], ops::Add(s, Out(op), Scalar(s, dy[0], 1)))};
}

// y = asin(x):  dx = dy / sqrt(1 - x^2);  y = acos(x): the negation.
template <bool kAcos>
Grads AsinAcosGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  const Output g = ops::Mul(s, dy[0], ops::Rsqrt(s, ops::Sub(s, Scalar(s, x, 1), ops::Square(s, x))));
  return {kAcos ? ops::Neg(s, g) : g};
}
// y = atan(x):  dx = dy / (1 + x^2)
Grads AtanGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  return {ops::Div(s, dy[0], ops::Add(s, Scalar(s, x, 1), ops::Square(s, x)))};
}
// z = atan2(a, b):  da = dy * b / (a^2 + b^2),  db = -dy * a / (a^2 + b^2), summed to each shape.
Grads Atan2Grad(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1);
  const Output q = ops::Div(s, dy[0], ops::Add(s, ops::Square(s, a), ops::Square(s, b)));
  return {ops::SumToShapeOf(s, ops::Mul(s, q, b), a), ops::SumToShapeOf(s, ops::Neg(s, ops::Mul(s, q, a)), b)};
}
// y = lgamma(x):  dx = dy * digamma(x)
Grads LgammaGrad(const Scope& s, const Node& op, const Grads& dy) {
  return {ops::Mul(s, dy[0], s.Op("Digamma", {op.input(0)}))};
}
// y = ndtri(p), the standard normal quantile:  dp = dy * sqrt(2 pi) * exp(y^2 / 2)
Grads NdtriGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output y = Out(op);
  const Output e = ops::Exp(s, ops::Mul(s, ops::Square(s, y), Scalar(s, y, 0.5)));
  return {ops::Mul(s, ops::Mul(s, dy[0], Scalar(s, y, 2.5066282746310002)), e)};
}

// y = cond ? a : b:  da = cond ? dy : 0,  db = cond ? 0 : dy
Grads SelectGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output cond = op.input(0), zeros = ops::ZerosLike(s, dy[0]);
  return {Output{}, ops::Select(s, cond, dy[0], zeros), ops::Select(s, cond, zeros, dy[0])};
}
// float -> float: dx = cast(dy, SrcT); no gradient through integer or bool casts.
Grads CastGrad(const Scope& s, const Node& op, const Grads& dy) {
  const DType src = op.attr<DType>("SrcT"), dst = op.attr<DType>("DstT");
  if (!IsFloating(src) || !IsFloating(dst)) return {Output{}};
  return {src == dst ? dy[0] : ops::Cast(s, dy[0], src)};
}
// y = sum_i x_i:  dx_i = dy
Grads AddNGrad(const Scope&, const Node& op, const Grads& dy) { return Grads(op.num_inputs(), dy[0]); }

// ---- gradients: reductions and products -----------------------------------------------------

// `t` (a reduction's output or its gradient) reshaped to the keep_dims shape, so that it
// broadcasts against the reduction's input.
Output ToKeepDims(const Scope& s, const Node& op, const Output& t) {
  if (op.attr<bool>("keep_dims")) return t;
  const Output x = op.input(0);
  const auto axis = op.attr<std::vector<int64_t>>("axis");
  const TensorShape& xs = x.shape();
  if (xs.IsFullyDefined()) {
    std::vector<int64_t> dims = xs.dims();
    const std::vector<bool> mask = ReducedMask(xs, axis);
    for (int i = 0; i < xs.rank(); ++i)
      if (mask[i]) dims[i] = 1;
    return ops::Reshape(s, t, dims);
  }
  return ops::Reshape(s, t, s.Op("ReducedShape", {ops::Shape(s, x, DType::kInt64)}, {{"axis", axis}}));
}

// y = sum(x, axis):  dx = broadcast(dy as keep_dims, shape(x))
Grads SumGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0), g = ToKeepDims(s, op, dy[0]);
  if (x.shape().IsFullyDefined() && g.shape() == x.shape()) return {g};
  return {ops::BroadcastTo(s, g, ShapeOf(s, x))};
}
// y = mean(x, axis):  dx = broadcast(dy as keep_dims, shape(x)) / (size(x) / size(y))
Grads MeanGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0), y = Out(op);
  Output count;
  if (x.shape().IsFullyDefined() && y.shape().IsFullyDefined()) {
    const int64_t ny = y.shape().num_elements();
    count = Scalar(s, x, ny == 0 ? 1.0 : static_cast<double>(x.shape().num_elements()) / static_cast<double>(ny));
  } else {
    const Output nx = ops::Cast(s, ops::Size(s, x, DType::kInt64), x.dtype());
    const Output ny = ops::Cast(s, ops::Size(s, y, DType::kInt64), x.dtype());
    count = ops::Div(s, nx, ops::Maximum(s, ny, Scalar(s, x, 1)));
  }
  return {ops::Div(s, SumGrad(s, op, dy)[0], count)};
}
// y = max(x, axis) (or min):  dx = dy * [x == y] / count([x == y])  (ties share the gradient evenly)
Grads MaxMinReduceGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  const Output eq = ops::Cast(s, ops::Equal(s, x, ToKeepDims(s, op, Out(op))), x.dtype());
  const Output num = ops::Sum(s, eq, op.attr<std::vector<int64_t>>("axis"), /*keep_dims=*/true);
  return {ops::Div(s, ops::Mul(s, eq, ToKeepDims(s, op, dy[0])), num)};
}
// y = prod(x, axis):  dx = dy * y / x   (REQUIRES: x has no zeros; zeros give NaN/inf)
Grads ProdGrad(const Scope& s, const Node& op, const Grads& dy) {
  const Output x = op.input(0);
  return {ops::Div(s, ops::Mul(s, ToKeepDims(s, op, dy[0]), ToKeepDims(s, op, Out(op))), x)};
}

// y = op(a) @ op(b) with op = transpose or not (tA, tB):
//   F,F: da = dy @ b^T,    db = a^T @ dy
//   F,T: da = dy @ b,      db = dy^T @ a
//   T,F: da = b @ dy^T,    db = a @ dy
//   T,T: da = b^T @ dy^T,  db = dy^T @ a^T
// mm(x, y, tx, ty) builds the product; BatchMatMul also sums broadcast batch dims away.
template <bool kBatch>
Grads MatMulGradImpl(const Scope& s, const Node& op, const Grads& dy) {
  const Output a = op.input(0), b = op.input(1), g = dy[0];
  const bool ta = op.attr<bool>(kBatch ? "adj_x" : "transpose_a");
  const bool tb = op.attr<bool>(kBatch ? "adj_y" : "transpose_b");
  auto mm = [&](Output x, Output y, bool tx, bool ty) {
    return kBatch ? ops::BatchMatMul(s, x, y, tx, ty) : ops::MatMul(s, x, y, tx, ty);
  };
  Output da, db;
  if (!ta && !tb) {
    da = mm(g, b, false, true), db = mm(a, g, true, false);
  } else if (!ta && tb) {
    da = mm(g, b, false, false), db = mm(g, a, true, false);
  } else if (ta && !tb) {
    da = mm(b, g, false, true), db = mm(a, g, false, false);
  } else {
    da = mm(b, g, true, true), db = mm(g, a, true, true);
  }
  if (kBatch) {
    da = ops::SumToShapeOf(s, da, a);
    db = ops::SumToShapeOf(s, db, b);
  }
  return {da, db};
}

void RegisterBinary(OpRegistry& r, const char* name, const std::vector<DType>& types, GradFn grad,
                    std::string doc) {
  auto b = r.Register(name);
  b.Input("a", "T").Input("b", "T").Output("z", "T").TypeAttr("T", types).Shape(BroadcastBinaryShape)
      .Doc(std::move(doc));
  if (grad) b.Grad(std::move(grad));
  else b.NoGradient();
}
void RegisterUnary(OpRegistry& r, const char* name, const std::vector<DType>& types, GradFn grad, std::string doc) {
  auto b = r.Register(name);
  b.Input("x", "T").Output("y", "T").TypeAttr("T", types).Shape(UnchangedShape).Doc(std::move(doc));
  if (grad) b.Grad(std::move(grad));
  else b.NoGradient();
}
void RegisterCompare(OpRegistry& r, const char* name, const std::vector<DType>& types, std::string doc) {
  r.Register(name).Input("a", "T").Input("b", "T").Output("z", "bool").TypeAttr("T", types)
      .Shape(BroadcastBinaryShape).NoGradient().Doc(std::move(doc));
}
void RegisterReduce(OpRegistry& r, const char* name, GradFn grad, std::string doc) {
  r.Register(name).Input("input", "T").Output("output", "T").TypeAttr("T", kNumber)
      .Attr("axis", AttrValue(std::vector<int64_t>{})).Attr("keep_dims", false)
      .Shape(ReduceShape).Grad(std::move(grad)).Doc(std::move(doc));
}

}  // namespace

void RegisterMathOps(OpRegistry& r) {
  RegisterBinary(r, "Add", kNumber, AddGrad, "a + b, broadcasting like numpy.");
  RegisterBinary(r, "Sub", kNumber, SubGrad, "a - b, broadcasting like numpy.");
  RegisterBinary(r, "Mul", kNumber, MulGrad, "a * b, broadcasting like numpy.");
  RegisterBinary(r, "Div", kNumber, DivGrad,
                 "a / b, broadcasting like numpy. Integer division truncates toward zero; a zero integer "
                 "divisor is an InvalidArgument error.");
  RegisterBinary(r, "Pow", kSigned, PowGrad,
                 "a ^ b, broadcasting like numpy. Integer exponents must be non-negative.");
  RegisterBinary(r, "Maximum", kNumber, MaxMinGrad<true>, "max(a, b) elementwise, broadcasting like numpy.");
  RegisterBinary(r, "Minimum", kNumber, MaxMinGrad<false>, "min(a, b) elementwise, broadcasting like numpy.");

  RegisterUnary(r, "Neg", kSigned, NegGrad, "-x.");
  RegisterUnary(r, "Abs", kSigned, AbsGrad, "|x|.");
  RegisterUnary(r, "Sign", kSigned, nullptr, "-1, 0 or 1 by the sign of x (zero gradient).");
  RegisterUnary(r, "Square", kNumber, SquareGrad, "x * x.");
  RegisterUnary(r, "Sqrt", kFloat, SqrtGrad, "sqrt(x).");
  RegisterUnary(r, "Rsqrt", kFloat, RsqrtGrad, "1 / sqrt(x).");
  RegisterUnary(r, "Reciprocal", kFloat, ReciprocalGrad, "1 / x.");
  RegisterUnary(r, "Exp", kFloat, ExpGrad, "e ^ x.");
  RegisterUnary(r, "Log", kFloat, LogGrad, "Natural logarithm of x.");
  RegisterUnary(r, "Log1p", kFloat, Log1pGrad, "log(1 + x), accurate for small x.");
  RegisterUnary(r, "Expm1", kFloat, Expm1Grad, "exp(x) - 1, accurate for small x.");
  RegisterUnary(r, "Sin", kFloat, SinGrad, "sin(x), x in radians.");
  RegisterUnary(r, "Cos", kFloat, CosGrad, "cos(x), x in radians.");
  // As TF: Floor, Ceil and Round have no gradient (it is zero almost everywhere).
  RegisterUnary(r, "Floor", kFloat, nullptr, "The largest integer not greater than x.");
  RegisterUnary(r, "Ceil", kFloat, nullptr, "The smallest integer not less than x.");
  RegisterUnary(r, "Round", kFloat, nullptr, "x rounded to the nearest integer, halves to even (banker's rounding).");
  RegisterUnary(r, "Asin", kFloat, AsinAcosGrad<false>, "arcsin(x) in [-pi/2, pi/2]; NaN outside [-1, 1].");
  RegisterUnary(r, "Acos", kFloat, AsinAcosGrad<true>, "arccos(x) in [0, pi]; NaN outside [-1, 1].");
  RegisterUnary(r, "Atan", kFloat, AtanGrad, "arctan(x) in (-pi/2, pi/2).");
  RegisterBinary(r, "Atan2", kFloat, Atan2Grad,
                 "arctan(a / b) in [-pi, pi] by the signs of a (y) and b (x), broadcasting like numpy.");
  RegisterUnary(r, "Lgamma", kFloat, LgammaGrad, "log |Gamma(x)|.");
  // As TF's Digamma, whose gradient needs polygamma (not in weft): differentiating it is an error.
  RegisterUnary(r, "Digamma", kFloat, nullptr, "The derivative of lgamma (psi(x)); not differentiable here.");
  RegisterUnary(r, "Ndtri", kFloat, NdtriGrad, "The standard normal quantile: Phi^-1(p), -inf at 0, inf at 1.");
  RegisterUnary(r, "Erf", kFloat, ErfGrad, "The error function 2/sqrt(pi) * integral from 0 to x of exp(-t^2) (exact GELU).");

  RegisterCompare(r, "Equal", kAll, "a == b elementwise (bool), broadcasting like numpy.");
  RegisterCompare(r, "NotEqual", kAll, "a != b elementwise (bool), broadcasting like numpy.");
  RegisterCompare(r, "Less", kNumber, "a < b elementwise (bool), broadcasting like numpy.");
  RegisterCompare(r, "LessEqual", kNumber, "a <= b elementwise (bool), broadcasting like numpy.");
  RegisterCompare(r, "Greater", kNumber, "a > b elementwise (bool), broadcasting like numpy.");
  RegisterCompare(r, "GreaterEqual", kNumber, "a >= b elementwise (bool), broadcasting like numpy.");
  r.Register("LogicalAnd").Input("a", "bool").Input("b", "bool").Output("z", "bool")
      .Shape(BroadcastBinaryShape).NoGradient().Doc("a && b elementwise, broadcasting like numpy.");
  r.Register("LogicalOr").Input("a", "bool").Input("b", "bool").Output("z", "bool")
      .Shape(BroadcastBinaryShape).NoGradient().Doc("a || b elementwise, broadcasting like numpy.");
  r.Register("LogicalNot").Input("x", "bool").Output("y", "bool").Shape(UnchangedShape).NoGradient()
      .Doc("!x elementwise.");

  r.Register("Select").Input("condition", "bool").Input("a", "T").Input("b", "T").Output("output", "T")
      .TypeAttr("T", kAll).Shape(SelectShape).Grad(SelectGrad)
      .Doc("condition ? a : b. a and b have one shape; condition has that shape, is a scalar, or is a "
           "vector choosing whole rows (dim 0) as in TF1. No other broadcasting.");
  // float16 is a storage type: Cast is its one kernel (in and out of the computing dtypes).
  std::vector<DType> cast_types = kAll;
  cast_types.push_back(DType::kFloat16);
  r.Register("Cast").Input("x", "SrcT").Output("y", "DstT").TypeAttr("SrcT", cast_types).TypeAttr("DstT", cast_types)
      .Shape(UnchangedShape).Grad(CastGrad)
      .Doc("Converts x to DstT (C++ conversions: float to int truncates, to bool means != 0).");
  r.Register("AddN").InputList("inputs", "T", "N").Output("sum", "T").TypeAttr("T", kNumber)
      .Shape(AddNShape).Grad(AddNGrad).Doc("Sum of N tensors of one shape.");

  RegisterReduce(r, "Sum", SumGrad, "Sum over axis (empty: all axes); keep_dims keeps them as size 1.");
  RegisterReduce(r, "Mean", MeanGrad,
                 "Mean over axis (empty: all axes); integer means truncate. keep_dims keeps them as size 1.");
  RegisterReduce(r, "Max", MaxMinReduceGrad,
                 "Maximum over axis (empty: all axes); the gradient is split evenly between tied maxima.");
  RegisterReduce(r, "Min", MaxMinReduceGrad,
                 "Minimum over axis (empty: all axes); the gradient is split evenly between tied minima.");
  RegisterReduce(r, "Prod", ProdGrad,
                 "Product over axis (empty: all axes). The gradient (y / x) assumes x has no zeros.");
  for (auto [name, what] : {std::pair{"ArgMax", "largest"}, std::pair{"ArgMin", "smallest"}}) {
    r.Register(name).Input("input", "T").Output("output", "output_type").TypeAttr("T", kNumber)
        .TypeAttr("output_type", {DType::kInt32, DType::kInt64}, DType::kInt64).Attr("axis", AttrType::kInt)
        .Shape(ArgShape).NoGradient()
        .Doc(fmt::format("Index of the {} element along axis (the first one on ties).", what));
  }
  r.Register("SumToShape").Input("x", "T").Input("shape", "Tshape").Output("y", "T").TypeAttr("T", kNumber)
      .TypeAttr("Tshape", {DType::kInt32, DType::kInt64})
      .Shape([](InferenceContext& c) { c.set_output(0, c.InputAsShape(1)); })
      .Grad([](const Scope& s, const Node& op, const Grads& dy) -> Grads {
        // y = sum_to(x, shape):  dx = broadcast(dy, shape(x))
        return {ops::BroadcastTo(s, dy[0], ShapeOf(s, op.input(0))), Output{}};
      })
      .Doc("Sums x over the axes that broadcasting would expand to turn `shape` into x's shape (the "
           "gradient of a broadcast).");
  r.Register("ReducedShape").Input("shape", "T").Output("output", "T").TypeAttr("T", {DType::kInt32, DType::kInt64})
      .Attr("axis", AttrValue(std::vector<int64_t>{})).Shape(UnchangedShape).NoGradient().Cheap()
      .Doc("`shape` with the axes in axis (empty: all) set to 1: a reduction's keep_dims shape.");

  // Integer products (TF's int32 / int64 MatMul) wrap around on overflow, as TensorFlow's do.
  r.Register("MatMul").Input("a", "T").Input("b", "T").Output("product", "T").TypeAttr("T", kSigned)
      .Attr("transpose_a", false).Attr("transpose_b", false).Shape(MatMulShape).Grad(MatMulGradImpl<false>)
      .Doc("Matrix product of two rank-2 tensors, optionally transposing either.");
  r.Register("BatchMatMul").Input("a", "T").Input("b", "T").Output("product", "T").TypeAttr("T", kSigned)
      .Attr("adj_x", false).Attr("adj_y", false).Shape(BatchMatMulShape).Grad(MatMulGradImpl<true>)
      .Doc("Matrix products over the last two dims of a [..., m, k] and b [..., k, n]; leading dims broadcast; "
           "adj_x / adj_y transpose a / b's last two dims.");
}

namespace ops {

Output Add(const Scope& s, Output a, Output b) { return s.Op("Add", {a, b}); }
Output Sub(const Scope& s, Output a, Output b) { return s.Op("Sub", {a, b}); }
Output Mul(const Scope& s, Output a, Output b) { return s.Op("Mul", {a, b}); }
Output Div(const Scope& s, Output a, Output b) { return s.Op("Div", {a, b}); }
Output Pow(const Scope& s, Output a, Output b) { return s.Op("Pow", {a, b}); }
Output Maximum(const Scope& s, Output a, Output b) { return s.Op("Maximum", {a, b}); }
Output Minimum(const Scope& s, Output a, Output b) { return s.Op("Minimum", {a, b}); }
Output Neg(const Scope& s, Output x) { return s.Op("Neg", {x}); }
Output Abs(const Scope& s, Output x) { return s.Op("Abs", {x}); }
Output Sign(const Scope& s, Output x) { return s.Op("Sign", {x}); }
Output Square(const Scope& s, Output x) { return s.Op("Square", {x}); }
Output Sqrt(const Scope& s, Output x) { return s.Op("Sqrt", {x}); }
Output Rsqrt(const Scope& s, Output x) { return s.Op("Rsqrt", {x}); }
Output Reciprocal(const Scope& s, Output x) { return s.Op("Reciprocal", {x}); }
Output Exp(const Scope& s, Output x) { return s.Op("Exp", {x}); }
Output Erf(const Scope& s, Output x) { return s.Op("Erf", {x}); }
Output Log(const Scope& s, Output x) { return s.Op("Log", {x}); }
Output Equal(const Scope& s, Output a, Output b) { return s.Op("Equal", {a, b}); }
Output NotEqual(const Scope& s, Output a, Output b) { return s.Op("NotEqual", {a, b}); }
Output Less(const Scope& s, Output a, Output b) { return s.Op("Less", {a, b}); }
Output LessEqual(const Scope& s, Output a, Output b) { return s.Op("LessEqual", {a, b}); }
Output Greater(const Scope& s, Output a, Output b) { return s.Op("Greater", {a, b}); }
Output GreaterEqual(const Scope& s, Output a, Output b) { return s.Op("GreaterEqual", {a, b}); }
Output LogicalAnd(const Scope& s, Output a, Output b) { return s.Op("LogicalAnd", {a, b}); }
Output LogicalOr(const Scope& s, Output a, Output b) { return s.Op("LogicalOr", {a, b}); }
Output LogicalNot(const Scope& s, Output x) { return s.Op("LogicalNot", {x}); }
Output Select(const Scope& s, Output cond, Output a, Output b) { return s.Op("Select", {cond, a, b}); }
Output Cast(const Scope& s, Output x, DType dtype) { return s.Op("Cast", {x}, {{"DstT", dtype}}); }
Output AddN(const Scope& s, const std::vector<Output>& xs) { return s.Op("AddN", xs); }

static Output Reduce(const Scope& s, std::string_view op, Output x, std::vector<int64_t> axis, bool keep_dims) {
  return s.Op(op, {x}, {{"axis", std::move(axis)}, {"keep_dims", keep_dims}});
}
Output Sum(const Scope& s, Output x, std::vector<int64_t> axis, bool keep_dims) { return Reduce(s, "Sum", x, axis, keep_dims); }
Output Mean(const Scope& s, Output x, std::vector<int64_t> axis, bool keep_dims) { return Reduce(s, "Mean", x, axis, keep_dims); }
Output Max(const Scope& s, Output x, std::vector<int64_t> axis, bool keep_dims) { return Reduce(s, "Max", x, axis, keep_dims); }
Output Min(const Scope& s, Output x, std::vector<int64_t> axis, bool keep_dims) { return Reduce(s, "Min", x, axis, keep_dims); }
Output Prod(const Scope& s, Output x, std::vector<int64_t> axis, bool keep_dims) { return Reduce(s, "Prod", x, axis, keep_dims); }
Output ArgMax(const Scope& s, Output x, int64_t axis, DType output_type) {
  return s.Op("ArgMax", {x}, {{"axis", axis}, {"output_type", output_type}});
}
Output ArgMin(const Scope& s, Output x, int64_t axis, DType output_type) {
  return s.Op("ArgMin", {x}, {{"axis", axis}, {"output_type", output_type}});
}
// A no-op when both shapes are known and equal; else a SumToShape node fed the target shape (a
// Const when `like`'s shape is known at build time, Shape(like) otherwise).
Output SumToShapeOf(const Scope& s, Output x, Output like) {
  if (x.shape().IsFullyDefined() && x.shape() == like.shape()) return x;
  return s.Op("SumToShape", {x, ShapeOf(s, like)});
}

Output MatMul(const Scope& s, Output a, Output b, bool transpose_a, bool transpose_b) {
  return s.Op("MatMul", {a, b}, {{"transpose_a", transpose_a}, {"transpose_b", transpose_b}});
}
Output BatchMatMul(const Scope& s, Output a, Output b, bool adj_x, bool adj_y) {
  return s.Op("BatchMatMul", {a, b}, {{"adj_x", adj_x}, {"adj_y", adj_y}});
}

}  // namespace ops
}  // namespace weft
