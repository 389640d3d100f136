// FusedBatchNorm and FusedBatchNormGrad, channels last.
//
// Shape key: C = channels (last axis), M = number of values per channel (N*H*W for NHWC).
// x is viewed as a [M, C] matrix. Per-channel coefficients are folded first so the big passes
// are a single multiply-add each: y = x * a + b with a = scale / sqrt(var + eps),
// b = offset - mean * a.
//
// Passes over the data (the op is memory-bound: the number of passes is its cost): training
// forward reads x once for the statistics (sum and sum of squares together) and once more to
// write y; backward reads x and dy once for sum(dy) and sum(dy * x), and once more to write dx.
//
// Determinism: the per-channel sums are ChannelSums (channel_sums.h), the same bits on any number
// of threads. Their double accumulators also keep E[x^2] - mean^2 accurate for float data.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/channel_sums.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {
namespace {

// Checks x (rank >= 2, channels last) and the per-channel vectors; returns {M, C}.
std::pair<int64_t, int64_t> CheckBatchNorm(const Tensor& x,
                                           std::initializer_list<std::pair<const char*, const Tensor*>> vecs) {
  WEFT_REQUIRE(x.rank() >= 2, "x must have rank at least 2 (channels last), got shape {}", x.shape().ToString());
  const int64_t C = x.dim(x.rank() - 1);
  for (const auto& [name, t] : vecs) {
    WEFT_REQUIRE(t->rank() == 1 && t->dim(0) == C, "{} must have shape [{}] (the channels of x {}), got {}", name, C,
                 x.shape().ToString(), t->shape().ToString());
  }
  return {C == 0 ? 0 : x.num_elements() / C, C};
}

// Inputs: x [..., C], scale, offset, mean, variance [C]. Outputs: y (x's shape), batch_mean,
// batch_variance [C] (training: the biased batch statistics used to normalize; inference: the
// given mean and variance).
template <typename T>
class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(const Node& node)
      : OpKernel(node), epsilon_(node.attr<double>("epsilon")), is_training_(node.attr<bool>("is_training")),
        relu_(node.op() == "_FusedBatchNormRelu") {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    const auto [M, C] = CheckBatchNorm(x, {{"scale", &scale}, {"offset", &offset}, {"mean", &ctx->input(3)},
                                           {"variance", &ctx->input(4)}});
    Tensor* y = ctx->allocate_output(0, x.shape());
    Tensor* mean = ctx->allocate_output(1, TensorShape({C}));
    Tensor* var = ctx->allocate_output(2, TensorShape({C}));
    if (C == 0) return;
    const T* xp = x.data<T>();
    T* mp = mean->data<T>();
    T* vp = var->data<T>();
    if (is_training_) {
      // One pass for sum and sum of squares. M == 0 gives NaN statistics.
      const std::vector<double> sums = ChannelSums(ctx->intra_op_pool(), M, C, 2, [&](int64_t r, double* acc) {
        const T* xr = xp + r * C;
        double* q = acc + C;
        for (int64_t c = 0; c < C; ++c) {
          const double v = xr[c];
          acc[c] += v;
          q[c] += v * v;
        }
      });
      const double* sum = sums.data();
      const double* sumsq = sum + C;
      const double inv_m = 1.0 / static_cast<double>(M);
      for (int64_t c = 0; c < C; ++c) {
        const double mu = sum[c] * inv_m;
        mp[c] = static_cast<T>(mu);
        vp[c] = static_cast<T>(M == 0 ? sumsq[c] * inv_m : std::max(0.0, sumsq[c] * inv_m - mu * mu));
      }
    } else {
      std::copy_n(ctx->input(3).data<T>(), C, mp);
      std::copy_n(ctx->input(4).data<T>(), C, vp);
    }
    std::vector<T> a(C), b(C);
    const T* sp = scale.data<T>();
    const T* op = offset.data<T>();
    for (int64_t c = 0; c < C; ++c) {
      a[c] = sp[c] / std::sqrt(vp[c] + static_cast<T>(epsilon_));
      b[c] = op[c] - mp[c] * a[c];
    }
    if (M == 0) return;
    T* yp = y->data<T>();
    const T* ap = a.data();
    const T* bp = b.data();
    ForChannelRows(ctx->intra_op_pool(), M, C, [&](int64_t r) {
      const T* xr = xp + r * C;
      T* yr = yp + r * C;
      if (relu_) {  // std::max(v, 0) keeps a NaN, as Relu does
        for (int64_t c = 0; c < C; ++c) yr[c] = std::max(xr[c] * ap[c] + bp[c], T(0));
      } else {
        for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] * ap[c] + bp[c];
      }
    });
  }

 private:
  double epsilon_;
  bool is_training_;
  bool relu_;  // _FusedBatchNormRelu: y = max(batchnorm(x), 0)
};

// Inputs: y_backprop [..., C], x, scale [C], mean [C], variance [C] (the forward op's outputs 1
// and 2, i.e. the statistics it normalized with), mean_backprop [C], variance_backprop [C] (the
// gradients reaching those outputs). Outputs: x_backprop, scale_backprop, offset_backprop,
// mean_input_backprop, variance_input_backprop (the last two are zero in training mode, where
// the mean and variance inputs are not used).
//
// With inv = 1/sqrt(var + eps), xhat = (x - mean) * inv, dy = y_backprop:
//   doffset = sum(dy), dscale = sum(dy * xhat)
//   training:  dx = scale*inv * (dy - doffset/M - xhat*dscale/M) + dmean/M + 2*dvar*(x - mean)/M
//   inference: dx = scale*inv * dy, dmean_in = dmean - scale*inv*doffset,
//              dvar_in = dvar - scale*inv^2*dscale/2
template <typename T>
class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(const Node& node)
      : OpKernel(node), epsilon_(node.attr<double>("epsilon")), is_training_(node.attr<bool>("is_training")),
        relu_(node.op() == "_FusedBatchNormGradRelu") {}

  void Compute(OpKernelContext* ctx) override {
    if (relu_) return Run<true>(ctx);
    Run<false>(ctx);
  }

 private:
  // kRelu: _FusedBatchNormGradRelu, whose input 1 is the Relu's output y; the batch-norm gradient
  // is then taken of y_backprop * (y > 0), computed as the data is read.
  template <bool kRelu>
  void Run(OpKernelContext* ctx) {
    constexpr int k = kRelu ? 1 : 0;
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1 + k);
    const Tensor& scale = ctx->input(2 + k);
    const Tensor& mean = ctx->input(3 + k);
    const Tensor& var = ctx->input(4 + k);
    const Tensor& dmean = ctx->input(5 + k);
    const Tensor& dvar = ctx->input(6 + k);
    WEFT_REQUIRE(dy.shape() == x.shape(), "y_backprop has shape {}, x has shape {}", dy.shape().ToString(),
                 x.shape().ToString());
    const T* yp = nullptr;  // the Relu's output (kRelu)
    if constexpr (kRelu) {
      const Tensor& y = ctx->input(1);
      WEFT_REQUIRE(y.shape() == x.shape(), "y has shape {}, x has shape {}", y.shape().ToString(), x.shape().ToString());
      yp = y.data<T>();
    }

    const auto [M, C] = CheckBatchNorm(x, {{"scale", &scale}, {"mean", &mean}, {"variance", &var},
                                           {"mean_backprop", &dmean}, {"variance_backprop", &dvar}});
    Tensor* dx = ctx->allocate_output(0, x.shape());
    Tensor* dscale = ctx->allocate_output(1, TensorShape({C}));
    Tensor* doffset = ctx->allocate_output(2, TensorShape({C}));
    Tensor* dmean_in = ctx->allocate_output(3, TensorShape({C}));
    Tensor* dvar_in = ctx->allocate_output(4, TensorShape({C}));
    if (C == 0) return;
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    const T* mu = mean.data<T>();
    // Row r of the gradient reaching the batch norm's output: dy's row, or (kRelu) that row where
    // the Relu's output is > 0, masked into a per-thread row buffer first so that the loops below
    // stay the plain, vectorized ones.
    auto grad_row = [&](int64_t r) -> const T* {
      const T* dr = dyp + r * C;
      if constexpr (kRelu) {
        thread_local std::vector<T> row;
        row.resize(static_cast<size_t>(C));
        const T* __restrict yr = yp + r * C;
        T* __restrict out = row.data();
        for (int64_t c = 0; c < C; ++c) out[c] = yr[c] > T(0) ? dr[c] : T(0);
        return out;
      }
      return dr;
    };
    // One pass: sum(dy) and sum(dy * x); sum(dy * (x - mean)) = sum(dy * x) - mean * sum(dy).
    const std::vector<double> sums = ChannelSums(ctx->intra_op_pool(), M, C, 2, [&](int64_t r, double* acc) {
      const T* xr = xp + r * C;
      const T* dr = grad_row(r);
      double* q = acc + C;
      for (int64_t c = 0; c < C; ++c) {
        const double g = dr[c];
        acc[c] += g;
        q[c] += g * static_cast<double>(xr[c]);
      }
    });
    const double* sum_dy = sums.data();
    const double* sum_dyx = sum_dy + C;

    // dx = dy * k1 + (x - mean) * k2 + k3 per channel.
    std::vector<T> k1(C), k2(C), k3(C);
    const T m = static_cast<T>(M);
    for (int64_t c = 0; c < C; ++c) {
      const T inv = T(1) / std::sqrt(var.data<T>()[c] + static_cast<T>(epsilon_));
      const T s = scale.data<T>()[c];
      const T off = static_cast<T>(sum_dy[c]);
      const T dsc = static_cast<T>(sum_dyx[c] - static_cast<double>(mu[c]) * sum_dy[c]) * inv;
      doffset->data<T>()[c] = off;
      dscale->data<T>()[c] = dsc;
      k1[c] = s * inv;
      if (is_training_) {
        k2[c] = (-s * inv * inv * dsc + T(2) * dvar.data<T>()[c]) / m;
        k3[c] = (-s * inv * off + dmean.data<T>()[c]) / m;
        dmean_in->data<T>()[c] = 0;
        dvar_in->data<T>()[c] = 0;
      } else {
        k2[c] = 0;
        k3[c] = 0;
        dmean_in->data<T>()[c] = dmean.data<T>()[c] - s * inv * off;
        dvar_in->data<T>()[c] = dvar.data<T>()[c] - T(0.5) * s * inv * inv * dsc;
      }
    }
    if (M == 0) return;
    T* dxp = dx->data<T>();
    const T *k1p = k1.data(), *k2p = k2.data(), *k3p = k3.data();
    ForChannelRows(ctx->intra_op_pool(), M, C, [&](int64_t r) {
      const T* xr = xp + r * C;
      const T* dr = grad_row(r);
      T* out = dxp + r * C;
      if (!is_training_) {  // x does not enter: an inf or NaN in x stays out of dx
        for (int64_t c = 0; c < C; ++c) out[c] = dr[c] * k1p[c];
        return;
      }
      for (int64_t c = 0; c < C; ++c) out[c] = dr[c] * k1p[c] + (xr[c] - mu[c]) * k2p[c] + k3p[c];
    });
  }

  double epsilon_;
  bool is_training_;
  bool relu_;
};

}  // namespace

void RegisterBatchNormKernels(KernelRegistry& r) {
  RegisterTyped<FusedBatchNormOp, float, double>(r, "FusedBatchNorm");
  RegisterTyped<FusedBatchNormGradOp, float, double>(r, "FusedBatchNormGrad");
  RegisterTyped<FusedBatchNormOp, float, double>(r, "_FusedBatchNormRelu");
  RegisterTyped<FusedBatchNormGradOp, float, double>(r, "_FusedBatchNormGradRelu");
}

}  // namespace weft
