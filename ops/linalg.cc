// Dense linear algebra on batches of small matrices (tf.linalg): MatrixInverse, MatrixDeterminant,
// LogMatrixDeterminant, MatrixSolve, MatrixTriangularSolve, MatrixBandPart, TF's ops of those names. Inputs are
// [..., n, n] (and right-hand sides [..., n, k]) with equal batch dims; the CPU kernels
// (ops/kernels/cpu/linalg.cc) factor each matrix by LU with partial pivoting in double.
// A singular matrix is InvalidArgument for Inverse and Solve, as TF's "Input is not invertible".
#include "ops/all_ops.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"

namespace weft {

namespace {

const std::vector<DType> kLinalgTypes = {DType::kFloat32, DType::kFloat64};

// [..., n, n]: returns the shape, checking the last two dims agree.
TensorShape SquareMatrices(InferenceContext& c, int i, std::string_view what) {
  TensorShape a = c.WithRankAtLeast(c.input(i), 2, what);
  if (a.unknown_rank()) return a;
  c.MergeDim(a.dim(a.rank() - 2), a.dim(a.rank() - 1),
             fmt::format("{} must be square matrices [..., n, n], got {}; its last two dims", what, a.ToString()));
  return a;
}

void SquareShape(InferenceContext& c) { c.set_output(0, SquareMatrices(c, 0, "input")); }

void BatchShape(InferenceContext& c) {
  TensorShape a = SquareMatrices(c, 0, "input");
  if (a.unknown_rank()) {
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, TensorShape::Unknown());
    return;
  }
  TensorShape batch(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, batch);
}

void SolveShape(InferenceContext& c) {
  TensorShape a = SquareMatrices(c, 0, "matrix");
  TensorShape b = c.WithRankAtLeast(c.input(1), 2, "rhs");
  if (a.unknown_rank() || b.unknown_rank()) return c.set_output(0, b);
  WEFT_REQUIRE(a.rank() == b.rank(), "matrix {} and rhs {} must have the same rank", a.ToString(), b.ToString());
  for (int k = 0; k < a.rank() - 1; ++k) {
    c.MergeDim(a.dim(k), b.dim(k), fmt::format("matrix {} and rhs {}: dim {}", a.ToString(), b.ToString(), k));
  }
  c.set_output(0, b);
}

Output Out(const Node& op, int i) { return Output(const_cast<Node*>(&op), i); }

// y = inv(A):  dA = -y^T dy y^T;  adjoint (y = inv(A^T)):  dA = -y dy^T y
std::vector<Output> InverseGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Output y = Out(op, 0);
  if (op.attr<bool>("adjoint")) {
    return {ops::Neg(s, ops::BatchMatMul(s, ops::BatchMatMul(s, y, dy[0], false, true), y))};
  }
  return {ops::Neg(s, ops::BatchMatMul(s, y, ops::BatchMatMul(s, dy[0], y, false, true), true, false))};
}

// Adds two trailing unit dims to a batch of scalars (to scale a batch of matrices).
Output PerMatrix(const Scope& s, Output x) { return ops::ExpandDims(s, ops::ExpandDims(s, x, -1), -1); }

// d = det(A):  dA = dy * d * inv(A)^T
std::vector<Output> DeterminantGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Output inv_t = s.Op("MatrixInverse", {op.input(0)}, {{"adjoint", true}});
  return {ops::Mul(s, PerMatrix(s, ops::Mul(s, dy[0], Out(op, 0))), inv_t)};
}

// (sign, log|det A|):  dA = dy_log * inv(A)^T (sign is piecewise constant)
std::vector<Output> LogDeterminantGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  Output inv_t = s.Op("MatrixInverse", {op.input(0)}, {{"adjoint", true}});
  return {ops::Mul(s, PerMatrix(s, dy[1]), inv_t)};
}

// x = A^-1 b (adjoint: A^-T b):  db = A^-T dy (adjoint: A^-1 dy);  dA = -db x^T (adjoint: -x db^T)
std::vector<Output> SolveGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const bool adjoint = op.attr<bool>("adjoint");
  Output x = Out(op, 0);
  Output db = s.Op("MatrixSolve", {op.input(0), dy[0]}, {{"adjoint", !adjoint}});
  Output da = adjoint ? ops::BatchMatMul(s, x, db, false, true) : ops::BatchMatMul(s, db, x, false, true);
  return {ops::Neg(s, da), db};
}

void BandPartShape(InferenceContext& c) {
  c.WithRank(c.input(1), 0, "num_lower");
  c.WithRank(c.input(2), 0, "num_upper");
  c.set_output(0, c.WithRankAtLeast(c.input(0), 2, "input"));
}

// y = band(x):  dx = band(dy)
std::vector<Output> BandPartGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  return {s.Op("MatrixBandPart", {dy[0], op.input(1), op.input(2)}), Output{}, Output{}};
}

// Solving with the triangle of A:  db = solve(A, dy, !adjoint);  dA = band(-db x^T) (adjoint:
// band(-x db^T)), the band being the triangle the forward pass read.
std::vector<Output> TriangularSolveGrad(const Scope& s, const Node& op, const std::vector<Output>& dy) {
  const bool adjoint = op.attr<bool>("adjoint"), lower = op.attr<bool>("lower");
  Output x = Out(op, 0);
  Output db = s.Op("MatrixTriangularSolve", {op.input(0), dy[0]}, {{"lower", lower}, {"adjoint", !adjoint}});
  Output da = ops::Neg(s, adjoint ? ops::BatchMatMul(s, x, db, false, true) : ops::BatchMatMul(s, db, x, false, true));
  Output all = ops::ScalarLike(s, DType::kInt64, -1), none = ops::ScalarLike(s, DType::kInt64, 0);
  return {s.Op("MatrixBandPart", {da, lower ? all : none, lower ? none : all}), db};
}

}  // namespace

void RegisterLinalgOps(OpRegistry& r) {
  r.Register("MatrixInverse").Input("input", "T").Output("output", "T").TypeAttr("T", kLinalgTypes)
      .Attr("adjoint", false).Shape(SquareShape).Grad(InverseGrad)
      .Doc("The inverse of each matrix [..., n, n] (of its transpose when adjoint); InvalidArgument when singular.");
  r.Register("MatrixDeterminant").Input("input", "T").Output("output", "T").TypeAttr("T", kLinalgTypes)
      .Shape(BatchShape).Grad(DeterminantGrad).Doc("The determinant of each matrix [..., n, n]: shape [...].");
  r.Register("LogMatrixDeterminant").Input("input", "T").Output("sign", "T").Output("log_abs_determinant", "T")
      .TypeAttr("T", kLinalgTypes).Shape(BatchShape).Grad(LogDeterminantGrad)
      .Doc("(sign, log |det|) of each matrix [..., n, n]: sign 0 and log -inf for a singular matrix.");
  r.Register("MatrixSolve").Input("matrix", "T").Input("rhs", "T").Output("output", "T").TypeAttr("T", kLinalgTypes)
      .Attr("adjoint", false).Shape(SolveShape).Grad(SolveGrad)
      .Doc("x with matrix x = rhs (matrix^T x = rhs when adjoint), per batch: [..., n, n] and [..., n, k]; "
           "InvalidArgument when a matrix is singular.");
  r.Register("MatrixTriangularSolve").Input("matrix", "T").Input("rhs", "T").Output("output", "T")
      .TypeAttr("T", kLinalgTypes).Attr("lower", true).Attr("adjoint", false).Shape(SolveShape)
      .Grad(TriangularSolveGrad)
      .Doc("x with triangular(matrix) x = rhs by substitution, reading only the lower (or upper) triangle; "
           "adjoint solves with its transpose. A zero on the diagonal gives inf / nan, as TF.");
  r.Register("MatrixBandPart").Input("input", "T").Input("num_lower", "Tindex").Input("num_upper", "Tindex")
      .Output("band", "T").TypeAttr("T", {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool})
      .TypeAttr("Tindex", {DType::kInt32, DType::kInt64}, DType::kInt64).Shape(BandPartShape).Grad(BandPartGrad)
      .Doc("Each inner matrix with entry (i, j) kept where (num_lower < 0 or i - j <= num_lower) and "
           "(num_upper < 0 or j - i <= num_upper), zero elsewhere.");
}

}  // namespace weft
