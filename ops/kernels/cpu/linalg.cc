// CPU kernels of the linear-algebra ops (ops/linalg.cc): one matrix of the batch at a time, in
// double, by LU with partial pivoting (Doolittle, row swaps) and substitution. Small matrices
// are the use (tf.linalg on [..., n, n] with n in the tens); O(n^3) per matrix.
// Shapes: B = batch (product of the leading dims), n = matrix order, k = right-hand sides.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"

namespace weft {

namespace {

// (B, n) of a [..., n, n] input; InvalidArgument naming the op and shape otherwise.
std::pair<int64_t, int64_t> SquareBatch(const Tensor& a, std::string_view op, std::string_view what = "input") {
  WEFT_REQUIRE(a.rank() >= 2 && a.dim(a.rank() - 1) == a.dim(a.rank() - 2),
               "{}: {} must be square matrices [..., n, n], got shape {}", op, what, a.shape().ToString());
  const int64_t n = a.dim(a.rank() - 1);
  return {n == 0 ? 0 : a.num_elements() / (n * n), n};
}

// The LU factors of one n x n matrix (row-major, in double) with its row permutation.
struct Lu {
  std::vector<double> lu;
  std::vector<int64_t> perm;  // row i of the factors is row perm[i] of the input
  int sign = 1;               // of the permutation
  bool singular = false;      // a zero pivot
};

template <typename T>
Lu Factor(const T* a, int64_t n) {
  Lu f;
  f.lu.assign(a, a + n * n);
  f.perm.resize(n);
  for (int64_t i = 0; i < n; ++i) f.perm[i] = i;
  std::vector<double>& m = f.lu;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r) {
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    }
    if (m[p * n + c] == 0.0) {
      f.singular = true;
      continue;
    }
    if (p != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(m[p * n + j], m[c * n + j]);
      std::swap(f.perm[p], f.perm[c]);
      f.sign = -f.sign;
    }
    for (int64_t r = c + 1; r < n; ++r) {
      const double l = m[r * n + c] / m[c * n + c];
      m[r * n + c] = l;
      for (int64_t j = c + 1; j < n; ++j) m[r * n + j] -= l * m[c * n + j];
    }
  }
  return f;
}

// Solves A x = b (or A^T x = b) for the k columns of b [n, k] in place, from A's factors.
void LuSolve(const Lu& f, int64_t n, int64_t k, bool transpose, std::vector<double>& b) {
  const std::vector<double>& m = f.lu;
  std::vector<double> x(n * k);
  if (!transpose) {  // P A = L U:  L y = P b, U x = y
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t c = 0; c < k; ++c) x[i * k + c] = b[f.perm[i] * k + c];
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        for (int64_t c = 0; c < k; ++c) x[i * k + c] -= m[i * n + j] * x[j * k + c];
      }
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      for (int64_t j = i + 1; j < n; ++j) {
        for (int64_t c = 0; c < k; ++c) x[i * k + c] -= m[i * n + j] * x[j * k + c];
      }
      for (int64_t c = 0; c < k; ++c) x[i * k + c] /= m[i * n + i];
    }
    b.swap(x);
    return;
  }
  // A^T = U^T L^T P:  U^T z = b, L^T w = z, x = P^T w
  std::vector<double> z(b);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      for (int64_t c = 0; c < k; ++c) z[i * k + c] -= m[j * n + i] * z[j * k + c];
    }
    for (int64_t c = 0; c < k; ++c) z[i * k + c] /= m[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    for (int64_t j = i + 1; j < n; ++j) {
      for (int64_t c = 0; c < k; ++c) z[i * k + c] -= m[j * n + i] * z[j * k + c];
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < k; ++c) x[f.perm[i] * k + c] = z[i * k + c];
  }
  b.swap(x);
}

void RequireInvertible(const Lu& f, std::string_view op, int64_t batch_index, const TensorShape& shape) {
  WEFT_REQUIRE(!f.singular, "{}: Input is not invertible: matrix {} of the batch of shape {} is singular", op,
               batch_index, shape.ToString());
}

template <typename T>
class MatrixInverseOp : public OpKernel {
 public:
  explicit MatrixInverseOp(const Node& n) : OpKernel(n), adjoint_(n.attr<bool>("adjoint")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    auto [batch, n] = SquareBatch(a, "MatrixInverse");
    Tensor* y = ctx->allocate_output(0, a.shape());
    for (int64_t b = 0; b < batch; ++b) {
      Lu f = Factor(a.data<T>() + b * n * n, n);
      RequireInvertible(f, "MatrixInverse", b, a.shape());
      std::vector<double> id(n * n, 0.0);
      for (int64_t i = 0; i < n; ++i) id[i * n + i] = 1.0;
      LuSolve(f, n, n, adjoint_, id);
      T* out = y->data<T>() + b * n * n;
      for (int64_t i = 0; i < n * n; ++i) out[i] = static_cast<T>(id[i]);
    }
  }

 private:
  bool adjoint_;
};

// det = sign * prod(diag(U)); log|det| = sum(log|diag(U)|).
template <typename T, bool kLog>
class DeterminantOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    auto [batch, n] = SquareBatch(a, kLog ? "LogMatrixDeterminant" : "MatrixDeterminant");
    TensorShape out_shape(std::vector<int64_t>(a.shape().dims().begin(), a.shape().dims().end() - 2));
    Tensor* first = ctx->allocate_output(0, out_shape);
    Tensor* second = kLog ? ctx->allocate_output(1, out_shape) : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      Lu f = Factor(a.data<T>() + b * n * n, n);
      double sign = f.singular ? 0.0 : f.sign, log_abs = 0.0, det = f.sign;
      for (int64_t i = 0; i < n && !f.singular; ++i) {
        const double d = f.lu[i * n + i];
        det *= d;
        log_abs += std::log(std::abs(d));
        if (d < 0) sign = -sign;
      }
      if (kLog) {
        first->data<T>()[b] = static_cast<T>(sign);
        second->data<T>()[b] = static_cast<T>(f.singular ? -std::numeric_limits<double>::infinity() : log_abs);
      } else {
        first->data<T>()[b] = static_cast<T>(f.singular ? 0.0 : det);
      }
    }
  }
};
template <typename T> using MatrixDeterminantOp = DeterminantOp<T, false>;
template <typename T> using LogMatrixDeterminantOp = DeterminantOp<T, true>;

// (B, n, k) of a solve's inputs, checked: matrix [..., n, n], rhs [..., n, k] with equal batch dims.
struct SolveDims {
  int64_t batch, n, k;
};
SolveDims CheckSolve(const Tensor& a, const Tensor& rhs, std::string_view op) {
  auto [batch, n] = SquareBatch(a, op, "matrix");
  bool ok = rhs.rank() == a.rank();
  for (int d = 0; ok && d < a.rank() - 1; ++d) ok = rhs.dim(d) == a.dim(d);
  WEFT_REQUIRE(ok, "{}: rhs of shape {} must be [..., n, k] with the batch dims and n of matrix {}", op,
               rhs.shape().ToString(), a.shape().ToString());
  return {batch, n, rhs.dim(rhs.rank() - 1)};
}

template <typename T>
class MatrixSolveOp : public OpKernel {
 public:
  explicit MatrixSolveOp(const Node& n) : OpKernel(n), adjoint_(n.attr<bool>("adjoint")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor &a = ctx->input(0), &rhs = ctx->input(1);
    const SolveDims d = CheckSolve(a, rhs, "MatrixSolve");
    Tensor* y = ctx->allocate_output(0, rhs.shape());
    for (int64_t b = 0; b < d.batch; ++b) {
      Lu f = Factor(a.data<T>() + b * d.n * d.n, d.n);
      RequireInvertible(f, "MatrixSolve", b, a.shape());
      const T* src = rhs.data<T>() + b * d.n * d.k;
      std::vector<double> x(src, src + d.n * d.k);
      LuSolve(f, d.n, d.k, adjoint_, x);
      T* out = y->data<T>() + b * d.n * d.k;
      for (int64_t i = 0; i < d.n * d.k; ++i) out[i] = static_cast<T>(x[i]);
    }
  }

 private:
  bool adjoint_;
};

// Substitution with the lower (or upper) triangle of each matrix, or its transpose.
template <typename T>
class MatrixTriangularSolveOp : public OpKernel {
 public:
  explicit MatrixTriangularSolveOp(const Node& n)
      : OpKernel(n), lower_(n.attr<bool>("lower")), adjoint_(n.attr<bool>("adjoint")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor &a = ctx->input(0), &rhs = ctx->input(1);
    const SolveDims d = CheckSolve(a, rhs, "MatrixTriangularSolve");
    const int64_t n = d.n, k = d.k;
    Tensor* y = ctx->allocate_output(0, rhs.shape());
    // The effective matrix M (A's triangle, transposed when adjoint) is lower triangular when
    // lower != adjoint: forward substitution; else backward.
    const bool forward = lower_ != adjoint_;
    for (int64_t b = 0; b < d.batch; ++b) {
      const T* m = a.data<T>() + b * n * n;
      auto at = [&](int64_t i, int64_t j) { return static_cast<double>(adjoint_ ? m[j * n + i] : m[i * n + j]); };
      const T* src = rhs.data<T>() + b * n * k;
      std::vector<double> x(src, src + n * k);
      for (int64_t step = 0; step < n; ++step) {
        const int64_t i = forward ? step : n - 1 - step;
        for (int64_t j = forward ? 0 : i + 1; forward ? j < i : j < n; ++j) {
          for (int64_t c = 0; c < k; ++c) x[i * k + c] -= at(i, j) * x[j * k + c];
        }
        for (int64_t c = 0; c < k; ++c) x[i * k + c] /= at(i, i);
      }
      T* out = y->data<T>() + b * n * k;
      for (int64_t i = 0; i < n * k; ++i) out[i] = static_cast<T>(x[i]);
    }
  }

 private:
  bool lower_, adjoint_;
};

template <typename T>
class MatrixBandPartOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    WEFT_REQUIRE(x.rank() >= 2, "MatrixBandPart: input must have rank >= 2, got shape {}", x.shape().ToString());
    const Tensor &lo_t = ctx->input(1), &up_t = ctx->input(2);
    WEFT_REQUIRE(lo_t.num_elements() == 1 && up_t.num_elements() == 1,
                 "MatrixBandPart: num_lower and num_upper must be scalars, got shapes {} and {}",
                 lo_t.shape().ToString(), up_t.shape().ToString());
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
    const int64_t lo = lo_t.ElementAsInt64(0), up = up_t.ElementAsInt64(0);
    WEFT_REQUIRE(lo < rows && up < cols,
                 "MatrixBandPart: num_lower ({}) must be < rows ({}) and num_upper ({}) < cols ({})", lo, rows, up,
                 cols);
    Tensor* y = ctx->allocate_output(0, x.shape());
    const int64_t per = rows * cols, batch = per == 0 ? 0 : x.num_elements() / per;
    const T* in = x.data<T>();
    T* out = y->data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const bool keep = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up);
          out[b * per + i * cols + j] = keep ? in[b * per + i * cols + j] : T(0);
        }
      }
    }
  }
};

}  // namespace

void RegisterLinalgKernels(KernelRegistry& r) {
  RegisterTyped<MatrixInverseOp, float, double>(r, "MatrixInverse");
  RegisterTyped<MatrixDeterminantOp, float, double>(r, "MatrixDeterminant");
  RegisterTyped<LogMatrixDeterminantOp, float, double>(r, "LogMatrixDeterminant");
  RegisterTyped<MatrixSolveOp, float, double>(r, "MatrixSolve");
  RegisterTyped<MatrixTriangularSolveOp, float, double>(r, "MatrixTriangularSolve");
  RegisterTyped<MatrixBandPartOp, float, double, int32_t, int64_t, bool>(r, "MatrixBandPart");
}

}  // namespace weft
