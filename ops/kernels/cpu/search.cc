// CPU kernels for Range, Where, TopK, TopKGrad and Cumsum (declared in ops/search.cc).
// Shape key: x [..., n] is viewed as rows [R, n]; TopK writes [R, k].
#include <algorithm>
#include <numeric>

#include "core/checked.h"
#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cuda/launch.h"  // ReplacesExtreme: NaN-aware comparison (plain C++)
#include "ops/search.h"

namespace weft {
namespace {

template <typename T>
class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < 3; ++i) {
      WEFT_REQUIRE(ctx->input(i).rank() == 0, "Range: {} must be a scalar, got shape {}",
                   i == 0 ? "start" : i == 1 ? "limit" : "delta", ctx->input(i).shape().ToString());
    }
    const T start = *ctx->input(0).data<T>(), limit = *ctx->input(1).data<T>(), delta = *ctx->input(2).data<T>();
    const int64_t n = RangeLength(static_cast<double>(start), static_cast<double>(limit), static_cast<double>(delta),
                                  std::is_integral_v<T>);
    T* out = ctx->allocate_output(0, TensorShape({n}))->data<T>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }
};

template <typename T>
class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const T* v = x.data<T>();
    const int64_t total = x.num_elements();
    int64_t count = 0;
    for (int64_t i = 0; i < total; ++i) count += v[i] != T(0);
    const int r = x.rank();
    int64_t* out = ctx->allocate_output(0, TensorShape({count, int64_t{r}}))->data<int64_t>();
    for (int64_t i = 0; i < total; ++i) {
      if (v[i] == T(0)) continue;
      int64_t rest = i;
      for (int d = r - 1; d >= 0; --d) {
        out[d] = rest % x.dim(d);
        rest /= x.dim(d);
      }
      out += r;
    }
  }
};

template <typename T>
class TopKOp : public OpKernel {
 public:
  explicit TopKOp(const Node& n) : OpKernel(n), k_(n.attr<int64_t>("k")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    WEFT_REQUIRE(x.rank() >= 1, "TopK: input must have rank at least 1, got shape {}", x.shape().ToString());
    const int64_t n = x.dim(x.rank() - 1);
    const int64_t k = k_ < 0 ? n : k_;
    WEFT_REQUIRE(k <= n, "TopK: k {} is more than the last dim of input {}", k, x.shape().ToString());
    CheckedNarrow<int32_t>(n, "TopK: the last dim (its int32 indices)");
    std::vector<int64_t> dims = x.shape().dims();
    dims.back() = k;
    T* values = ctx->allocate_output(0, TensorShape(dims))->data<T>();
    int32_t* indices = ctx->allocate_output(1, TensorShape(dims))->data<int32_t>();
    if (n == 0) return;
    const int64_t rows = x.num_elements() / n;
    std::vector<int32_t> order(n);
    for (int64_t r = 0; r < rows; ++r) {
      const T* v = x.data<T>() + r * n;
      std::iota(order.begin(), order.end(), 0);
      // Larger first; equal values keep their index order (TF's contract). NaN ranks above every
      // number (as ArgMax's first NaN): the order must be strict and weak for partial_sort,
      // which a plain `>` is not once a NaN is in the row.
      auto before = [v](int32_t a, int32_t b) {
        if (ReplacesExtreme(v[a], v[b], true)) return true;
        if (ReplacesExtreme(v[b], v[a], true)) return false;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        values[r * k + j] = v[order[j]];
        indices[r * k + j] = order[j];
      }
    }
  }

 private:
  const int64_t k_;
};

template <typename T>
class TopKGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor &dy = ctx->input(0), &idx = ctx->input(1), &x = ctx->input(2);
    WEFT_REQUIRE(dy.shape() == idx.shape() && x.rank() == dy.rank() && x.rank() >= 1,
                 "TopKGrad: dy {} and indices {} must have one shape, of the rank of input {}", dy.shape().ToString(),
                 idx.shape().ToString(), x.shape().ToString());
    Tensor* dx = ctx->allocate_output(0, x.shape());
    T* out = dx->data<T>();
    std::fill(out, out + dx->num_elements(), T(0));
    const int64_t n = x.dim(x.rank() - 1), k = dy.dim(dy.rank() - 1);
    if (n == 0 || k == 0) return;
    const int64_t rows = x.num_elements() / n;
    WEFT_REQUIRE(dy.num_elements() == rows * k, "TopKGrad: dy {} does not match input {} row for row",
                 dy.shape().ToString(), x.shape().ToString());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        const int32_t i = idx.data<int32_t>()[r * k + j];
        WEFT_REQUIRE(i >= 0 && i < n, "TopKGrad: index {} out of range [0, {})", i, n);
        out[r * n + i] += dy.data<T>()[r * k + j];
      }
    }
  }
};

// x viewed as [outer, n, inner] around axis; one running sum per (outer, inner) column.
template <typename T>
class CumsumOp : public OpKernel {
 public:
  explicit CumsumOp(const Node& n)
      : OpKernel(n), axis_(n.attr<int64_t>("axis")), exclusive_(n.attr<bool>("exclusive")),
        reverse_(n.attr<bool>("reverse")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const int axis = x.shape().CanonicalAxis(axis_, "Cumsum: axis");
    T* y = ctx->allocate_output(0, x.shape())->data<T>();
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const int64_t n = x.dim(axis);
    const T* v = x.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        T acc = T(0);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t at = (o * n + (reverse_ ? n - 1 - j : j)) * inner + i;
          if (exclusive_) {
            y[at] = acc;
            acc += v[at];
          } else {
            acc += v[at];
            y[at] = acc;
          }
        }
      }
    }
  }

 private:
  const int64_t axis_;
  const bool exclusive_, reverse_;
};

}  // namespace

void RegisterSearchKernels(KernelRegistry& r) {
  RegisterTyped<RangeOp, float, double, int32_t, int64_t>(r, "Range", "Tidx");
  RegisterTyped<WhereOp, WEFT_ALL_TYPES>(r, "Where");
  RegisterTyped<TopKOp, WEFT_NUMBER_TYPES>(r, "TopK");
  RegisterTyped<TopKGradOp, float, double>(r, "TopKGrad");
  RegisterTyped<CumsumOp, WEFT_NUMBER_TYPES>(r, "Cumsum");
}

}  // namespace weft
