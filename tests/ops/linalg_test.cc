// Linear-algebra ops: forward against closed forms written here (2x2 inverse and Cramer's rule,
// the 3x3 rule of Sarrus, substitution checked as L x = b), batches and the 0x0 / 1x1 edge cases,
// finite-difference gradients in float64, singular and mis-shaped inputs.
#include <cmath>

#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

// A batch [B, n, n] of well-conditioned matrices: random entries plus n on the diagonal.
Tensor Conditioned(int64_t batch, int64_t n, uint64_t seed) {
  std::vector<double> v = V(Rand({batch, n, n}, -1, 1, seed));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i) v[(b * n + i) * n + i] += static_cast<double>(n);
  }
  return Make(DType::kFloat64, v, TensorShape({batch, n, n}));
}

// out = a @ b for one [n, n] @ [n, k] pair of row-major vectors.
std::vector<double> MatMulRef(const std::vector<double>& a, const std::vector<double>& b, int64_t n, int64_t k) {
  std::vector<double> out(n * k, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t c = 0; c < k; ++c) out[i * k + c] += a[i * n + j] * b[j * k + c];
    }
  }
  return out;
}

double Sarrus(const std::vector<double>& m) {
  return m[0] * m[4] * m[8] + m[1] * m[5] * m[6] + m[2] * m[3] * m[7] - m[2] * m[4] * m[6] - m[0] * m[5] * m[7] -
         m[1] * m[3] * m[8];
}

TEST_CASE("MatrixInverse / MatrixDeterminant / LogMatrixDeterminant: closed forms, batches, adjoint") {
  for (DType dt : {DType::kFloat64, DType::kFloat32}) {
    CAPTURE(DTypeName(dt));
    const double tol = dt == DType::kFloat32 ? 1e-5 : 1e-12;
    // 2x2: inv = [[d, -b], [-c, a]] / (ad - bc).
    Tensor a = Make(dt, {4, 7, 2, 6, 1, 2, 3, 4}, TensorShape({2, 2, 2}));
    Tensor inv = RunOp("MatrixInverse", {a})[0];
    ExpectNear(inv, Make(dt, {0.6, -0.7, -0.2, 0.4, -2, 1, 1.5, -0.5}, TensorShape({2, 2, 2})), tol, tol);
    ExpectNear(RunOp("MatrixInverse", {a}, {{"adjoint", true}})[0],
               Make(dt, {0.6, -0.2, -0.7, 0.4, -2, 1.5, 1, -0.5}, TensorShape({2, 2, 2})), tol, tol);
    ExpectNear(RunOp("MatrixDeterminant", {a})[0], Make(dt, {10, -2}, TensorShape({2})), tol, tol);
    auto sl = RunOp("LogMatrixDeterminant", {a});
    ExpectNear(sl[0], Make(dt, {1, -1}, TensorShape({2})));
    ExpectNear(sl[1], Make(dt, {std::log(10.0), std::log(2.0)}, TensorShape({2})), tol, tol);
  }
  // 3x3 determinants by Sarrus over a batch [2, 3] of matrices; the inverse times the matrix is I.
  Tensor m = Rand({2, 3, 3, 3}, -2, 2, 3);
  std::vector<double> v = V(m), dets, logs, signs;
  for (int b = 0; b < 6; ++b) {
    double d = Sarrus(std::vector<double>(v.begin() + b * 9, v.begin() + b * 9 + 9));
    dets.push_back(d);
    logs.push_back(std::log(std::abs(d)));
    signs.push_back(d < 0 ? -1 : 1);
  }
  ExpectNear(RunOp("MatrixDeterminant", {m})[0], Make(DType::kFloat64, dets, TensorShape({2, 3})), 1e-12, 1e-12);
  auto sl = RunOp("LogMatrixDeterminant", {m});
  ExpectNear(sl[0], Make(DType::kFloat64, signs, TensorShape({2, 3})));
  ExpectNear(sl[1], Make(DType::kFloat64, logs, TensorShape({2, 3})), 1e-12, 1e-12);
  Tensor c = Conditioned(3, 5, 4);
  std::vector<double> ci = V(RunOp("MatrixInverse", {c})[0]), cv = V(c);
  for (int b = 0; b < 3; ++b) {
    std::vector<double> p = MatMulRef(std::vector<double>(cv.begin() + b * 25, cv.begin() + b * 25 + 25),
                                      std::vector<double>(ci.begin() + b * 25, ci.begin() + b * 25 + 25), 5, 5);
    for (int i = 0; i < 25; ++i) CHECK(std::abs(p[i] - (i % 6 == 0 ? 1.0 : 0.0)) < 1e-12);
  }
  // Edge cases: 1x1 and an empty batch.
  ExpectNear(RunOp("MatrixInverse", {T<double>({4}, {1, 1})})[0], T<double>({0.25}, {1, 1}));
  CHECK(RunOp("MatrixDeterminant", {Rand({0, 3, 3})})[0].shape() == TensorShape({0}));
  // A singular matrix: determinant 0, log |det| -inf with sign 0 (as TF).
  auto sing = RunOp("LogMatrixDeterminant", {T<double>({1, 2, 2, 4}, {2, 2})});
  CHECK(sing[0].ElementAsDouble(0) == 0.0);
  CHECK(std::isinf(sing[1].ElementAsDouble(0)));
}

TEST_CASE("MatrixSolve: Cramer's rule, residuals of a batch, adjoint") {
  // [[3, 2], [1, 2]] x = [[7, 1], [5, 3]]: x = [[1, -1], [2, 2]] (Cramer).
  Tensor a = T<double>({3, 2, 1, 2}, {2, 2});
  ExpectNear(RunOp("MatrixSolve", {a, T<double>({7, 1, 5, 3}, {2, 2})})[0], T<double>({1, -1, 2, 2}, {2, 2}));
  // adjoint: [[3, 1], [2, 2]] x = [5, 6]: x = [1, 2].
  ExpectNear(RunOp("MatrixSolve", {a, T<double>({5, 6}, {2, 1})}, {{"adjoint", true}})[0], T<double>({1, 2}, {2, 1}));
  Tensor c = Conditioned(2, 4, 5), rhs = Rand({2, 4, 3}, -1, 1, 6);
  std::vector<double> x = V(RunOp("MatrixSolve", {c, rhs})[0]), cv = V(c), bv = V(rhs);
  for (int b = 0; b < 2; ++b) {
    std::vector<double> r = MatMulRef(std::vector<double>(cv.begin() + b * 16, cv.begin() + b * 16 + 16),
                                      std::vector<double>(x.begin() + b * 12, x.begin() + b * 12 + 12), 4, 3);
    for (int i = 0; i < 12; ++i) CHECK(std::abs(r[i] - bv[b * 12 + i]) < 1e-12);
  }
  Tensor f = RunOp("MatrixSolve", {Cast(a, DType::kFloat32), Cast(T<double>({7, 1, 5, 3}, {2, 2}), DType::kFloat32)})[0];
  ExpectNear(f, Cast(T<double>({1, -1, 2, 2}, {2, 2}), DType::kFloat32), 1e-6, 1e-6);
}

TEST_CASE("MatrixTriangularSolve: lower / upper, adjoint, reads only its triangle") {
  // L (lower, with junk above the diagonal that must be ignored) and x; rhs = L x.
  const std::vector<double> full = {2, 9, 9, 1, 3, 9, -1, 2, 4};
  const std::vector<double> lower = {2, 0, 0, 1, 3, 0, -1, 2, 4}, upper = {2, 9, 9, 0, 3, 9, 0, 0, 4};
  const std::vector<double> x = {1, -2, 0.5, 3, 2, 1};  // [3, 2]
  auto transpose = [](const std::vector<double>& m) {
    return std::vector<double>{m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]};
  };
  struct Case {
    bool lower, adjoint;
    std::vector<double> effective;
  };
  for (const Case& k : {Case{true, false, lower}, Case{false, false, upper}, Case{true, true, transpose(lower)},
                        Case{false, true, transpose(upper)}}) {
    CAPTURE(k.lower);
    CAPTURE(k.adjoint);
    Tensor rhs = T<double>(MatMulRef(k.effective, x, 3, 2), {3, 2});
    ExpectNear(RunOp("MatrixTriangularSolve", {T<double>(full, {3, 3}), rhs},
                     {{"lower", k.lower}, {"adjoint", k.adjoint}})[0],
               T<double>(x, {3, 2}), 1e-12, 1e-12);
  }
}

TEST_CASE("MatrixBandPart: against the band rule, ints and a batch") {
  Tensor x = Rand({2, 3, 4}, -1, 1, 9);
  std::vector<double> v = V(x);
  for (auto [lo, up] : {std::pair<int, int>{-1, 0}, {0, -1}, {1, 1}, {0, 0}, {-1, -1}}) {
    std::vector<double> want(v.size());
    for (int b = 0; b < 2; ++b) {
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) {
          const bool keep = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up);
          want[b * 12 + i * 4 + j] = keep ? v[b * 12 + i * 4 + j] : 0.0;
        }
      }
    }
    ExpectEqual(RunOp("MatrixBandPart", {x, T<int64_t>({static_cast<double>(lo)}, {}),
                                         T<int64_t>({static_cast<double>(up)}, {})})[0],
                Make(DType::kFloat64, want, x.shape()));
  }
  ExpectEqual(RunOp("MatrixBandPart", {T<int32_t>({1, 2, 3, 4}, {2, 2}), T<int32_t>({0}, {}), T<int32_t>({-1}, {})})[0],
              T<int32_t>({1, 2, 0, 4}, {2, 2}));
}

TEST_CASE("Linear-algebra ops: finite-difference gradients") {
  Tensor a = Conditioned(2, 3, 11);
  CheckGradient("MatrixInverse", {a});
  CheckGradient("MatrixInverse", {a}, {{"adjoint", true}});
  CheckGradient("MatrixDeterminant", {a});
  CheckGradient("LogMatrixDeterminant", {a});
  Tensor rhs = Rand({2, 3, 2}, -1, 1, 12);
  CheckGradient("MatrixSolve", {a, rhs});
  CheckGradient("MatrixSolve", {a, rhs}, {{"adjoint", true}});
  for (bool lower : {true, false}) {
    for (bool adjoint : {false, true}) {
      CheckGradient("MatrixTriangularSolve", {a, rhs}, {{"lower", lower}, {"adjoint", adjoint}});
    }
  }
  CheckGradient("MatrixBandPart", {Rand({3, 4}), T<int64_t>({1}, {}), T<int64_t>({0}, {})});
}

TEST_CASE("Linear-algebra ops: bad input") {
  ExpectOpError("MatrixInverse", {T<double>({1, 2, 2, 4}, {2, 2})}, {}, Code::kInvalidArgument,
                "MatrixInverse: Input is not invertible: matrix 0 of the batch of shape [2,2] is singular");
  ExpectOpError("MatrixSolve", {T<double>({1, 2, 2, 4}, {2, 2}), Rand({2, 1})}, {}, Code::kInvalidArgument,
                "Input is not invertible");
  ExpectOpError("MatrixDeterminant", {Rand({2, 3})}, {}, Code::kInvalidArgument,
                "input must be square matrices [..., n, n], got [2,3]");
  ExpectOpError("LogMatrixDeterminant", {Rand({3})}, {}, Code::kInvalidArgument, "rank");
  ExpectOpError("MatrixSolve", {Rand({2, 2}), Rand({3, 1})}, {}, Code::kInvalidArgument, "matrix [2,2] and rhs [3,1]");
  ExpectOpError("MatrixTriangularSolve", {Rand({2, 2, 2}), Rand({2, 1})}, {}, Code::kInvalidArgument,
                "must have the same rank");
  ExpectOpError("MatrixInverse", {T<int32_t>({1, 0, 0, 1}, {2, 2})}, {}, Code::kInvalidArgument, "int32");
  ExpectOpError("MatrixBandPart", {Rand({2, 2}), T<int64_t>({3}, {}), T<int64_t>({0}, {})}, {},
                Code::kInvalidArgument, "num_lower (3) must be < rows (2)");
}

}  // namespace
}  // namespace weft::test
