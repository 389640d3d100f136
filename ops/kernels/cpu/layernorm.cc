// LayerNorm and LayerNormGrad: normalization over the last axis (Keras' LayerNormalization with
// the default axis=-1, the transformer's norm), one op each way instead of the ~10 elementwise and
// reduction ops the composition takes.
//
// Shape key: x is viewed as [M, C]: M rows (every leading dim), C = the last dim. Per row r:
//   mean_r = sum_c x / C,  rstd_r = 1 / sqrt(sum_c (x - mean_r)^2 / C + epsilon)
//   y = (x - mean_r) * rstd_r * gamma + beta
// Backward, with xhat = (x - mean_r) * rstd_r and g = dy * gamma:
//   dbeta = sum_r dy,  dgamma = sum_r dy * xhat
//   dx = rstd_r * (g - mean_c(g) - xhat * mean_c(g * xhat))
//
// Passes: forward reads a row twice (the statistics in double, then y) while it is in cache;
// backward reads x and dy once per row for dx and once for the per-channel sums, which are
// ChannelSums (channel_sums.h: the same bits on any number of threads).
#include <cmath>
#include <vector>

#include "ops/kernel.h"
#include "ops/kernels/cpu/channel_sums.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {
namespace {

// Checks x (rank >= 1) and the per-channel vectors; returns {M, C}.
std::pair<int64_t, int64_t> CheckLayerNorm(const Tensor& x, const Tensor& gamma, const char* gamma_name,
                                           const Tensor* beta) {
  WEFT_REQUIRE(x.rank() >= 1, "x must have rank at least 1 (normalized over the last axis), got a scalar");
  const int64_t C = x.dim(x.rank() - 1);
  WEFT_REQUIRE(gamma.rank() == 1 && gamma.dim(0) == C, "{} must have shape [{}] (the last dim of x {}), got {}",
               gamma_name, C, x.shape().ToString(), gamma.shape().ToString());
  if (beta != nullptr) {
    WEFT_REQUIRE(beta->rank() == 1 && beta->dim(0) == C, "beta must have shape [{}] (the last dim of x {}), got {}",
                 C, x.shape().ToString(), beta->shape().ToString());
  }
  return {C == 0 ? 0 : x.num_elements() / C, C};
}

TensorShape RowsShape(const TensorShape& x) {
  std::vector<int64_t> dims(x.dims().begin(), x.dims().end() - 1);
  return TensorShape(dims);
}

// Inputs: x [..., C], gamma [C], beta [C]. Outputs: y (x's shape), mean and rstd (x's shape
// without the last dim: the statistics LayerNormGrad needs).
// The sum of f(c) for c in [0, C), kept in kLanes interleaved partial sums added pairwise at the
// end: independent add chains the compiler vectorizes, where one accumulator is a serial chain of
// dependent adds. The order depends on C alone, so results do not depend on the thread count.
template <typename Acc, typename F>
inline Acc LaneSum(int64_t C, const F& f) {
  constexpr int kLanes = 8;
  Acc s[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= C; c += kLanes) {
    for (int k = 0; k < kLanes; ++k) s[k] += f(c + k);
  }
  for (int k = 0; c < C; ++c, ++k) s[k] += f(c);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

template <typename T>
class LayerNormOp : public OpKernel {
 public:
  explicit LayerNormOp(const Node& node) : OpKernel(node), epsilon_(node.attr<double>("epsilon")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& gamma = ctx->input(1);
    const Tensor& beta = ctx->input(2);
    const auto [M, C] = CheckLayerNorm(x, gamma, "gamma", &beta);
    Tensor* y = ctx->allocate_output(0, x.shape());
    Tensor* mean = ctx->allocate_output(1, RowsShape(x.shape()));
    Tensor* rstd = ctx->allocate_output(2, RowsShape(x.shape()));
    if (M == 0) {  // no rows; rows of no values get NaN statistics, as the mean of nothing
      if (C == 0) {
        std::fill_n(mean->data<T>(), mean->num_elements(), std::numeric_limits<T>::quiet_NaN());
        std::fill_n(rstd->data<T>(), rstd->num_elements(), std::numeric_limits<T>::quiet_NaN());
      }
      return;
    }
    const T* xp = x.data<T>();
    const T* gp = gamma.data<T>();
    const T* bp = beta.data<T>();
    T* yp = y->data<T>();
    T* mp = mean->data<T>();
    T* rp = rstd->data<T>();
    const double eps = epsilon_;
    ForChannelRows(ctx->intra_op_pool(), M, C, [&](int64_t r) {
      const T* __restrict xr = xp + r * C;
      T* __restrict yr = yp + r * C;
      const double mu = LaneSum<double>(C, [&](int64_t c) { return static_cast<double>(xr[c]); }) /
                        static_cast<double>(C);
      const double sq = LaneSum<double>(C, [&](int64_t c) {
        const double d = xr[c] - mu;
        return d * d;
      });
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(C) + eps);
      mp[r] = static_cast<T>(mu);
      rp[r] = static_cast<T>(inv);
      const T m = static_cast<T>(mu), k = static_cast<T>(inv);
      for (int64_t c = 0; c < C; ++c) yr[c] = (xr[c] - m) * k * gp[c] + bp[c];
    });
  }

 private:
  double epsilon_;
};

// Inputs: dy [..., C], x, gamma [C], mean, rstd (LayerNorm's outputs 1 and 2). Outputs: dx,
// dgamma [C], dbeta [C].
template <typename T>
class LayerNormGradOp : public OpKernel {
 public:
  explicit LayerNormGradOp(const Node& node) : OpKernel(node) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& gamma = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& rstd = ctx->input(4);
    WEFT_REQUIRE(dy.shape() == x.shape(), "dy has shape {}, x has shape {}", dy.shape().ToString(),
                 x.shape().ToString());
    const auto [M, C] = CheckLayerNorm(x, gamma, "gamma", nullptr);
    const TensorShape rows = RowsShape(x.shape());
    WEFT_REQUIRE(mean.shape() == rows && rstd.shape() == rows,
                 "mean {} and rstd {} must have x's shape without its last dim, {}", mean.shape().ToString(),
                 rstd.shape().ToString(), rows.ToString());
    Tensor* dx = ctx->allocate_output(0, x.shape());
    Tensor* dgamma = ctx->allocate_output(1, TensorShape({C}));
    Tensor* dbeta = ctx->allocate_output(2, TensorShape({C}));
    T* dgp = dgamma->data<T>();
    T* dbp = dbeta->data<T>();
    if (M == 0 || C == 0) {
      std::fill_n(dgp, C, T(0));
      std::fill_n(dbp, C, T(0));
      return;
    }
    const T* dyp = dy.data<T>();
    const T* xp = x.data<T>();
    const T* gp = gamma.data<T>();
    const T* mp = mean.data<T>();
    const T* rp = rstd.data<T>();
    T* dxp = dx->data<T>();
    const T inv_c = T(1) / static_cast<T>(C);
    ForChannelRows(ctx->intra_op_pool(), M, C, [&](int64_t r) {
      const T* __restrict dr = dyp + r * C;
      const T* __restrict xr = xp + r * C;
      T* __restrict out = dxp + r * C;
      const T m = mp[r], k = rp[r];
      const T sum_g = LaneSum<T>(C, [&](int64_t c) { return dr[c] * gp[c]; });
      const T sum_gx = LaneSum<T>(C, [&](int64_t c) { return dr[c] * gp[c] * (xr[c] - m) * k; });
      const T a = sum_g * inv_c, b = sum_gx * inv_c;
      for (int64_t c = 0; c < C; ++c) {
        const T xhat = (xr[c] - m) * k;
        out[c] = k * (dr[c] * gp[c] - a - xhat * b);
      }
    });
    const std::vector<double> sums = ChannelSums(ctx->intra_op_pool(), M, C, 2, [&](int64_t r, double* acc) {
      const T* dr = dyp + r * C;
      const T* xr = xp + r * C;
      const double m = mp[r], k = rp[r];
      double* q = acc + C;
      for (int64_t c = 0; c < C; ++c) {
        const double d = dr[c];
        acc[c] += d;
        q[c] += d * (xr[c] - m) * k;
      }
    });
    for (int64_t c = 0; c < C; ++c) {
      dbp[c] = static_cast<T>(sums[c]);
      dgp[c] = static_cast<T>(sums[C + c]);
    }
  }
};

}  // namespace

void RegisterLayerNormKernels(KernelRegistry& r) {
  RegisterTyped<LayerNormOp, float, double>(r, "LayerNorm");
  RegisterTyped<LayerNormGradOp, float, double>(r, "LayerNormGrad");
}

}  // namespace weft
