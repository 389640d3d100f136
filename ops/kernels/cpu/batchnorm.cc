// FusedBatchNorm and FusedBatchNormGrad, channels last.
//
// Shape key: C = channels (last axis), M = number of values per channel (N*H*W for NHWC).
// x is viewed as a [M, C] matrix; per-channel statistics are column reductions, run as Eigen
// expressions on the intra-op pool. Per-channel coefficients are folded first so the big passes
// are a single multiply-add each: y = x * a + b with a = scale / sqrt(var + eps),
// b = offset - mean * a.
#include <cmath>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {
namespace {

using Idx = Eigen::DenseIndex;

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
      : OpKernel(node), epsilon_(node.attr<double>("epsilon")), is_training_(node.attr<bool>("is_training")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    const auto [M, C] = CheckBatchNorm(x, {{"scale", &scale}, {"offset", &offset}, {"mean", &ctx->input(3)},
                                           {"variance", &ctx->input(4)}});
    const auto& d = ctx->eigen_device();
    Tensor* y = ctx->allocate_output(0, x.shape());
    Tensor* mean = ctx->allocate_output(1, TensorShape({C}));
    Tensor* var = ctx->allocate_output(2, TensorShape({C}));
    if (C == 0) return;
    auto X = x.shaped<T, 2>({M, C});
    const Eigen::array<Idx, 1> rows{0};
    const Eigen::DSizes<Idx, 2> one_by_c(1, C);
    const Eigen::array<Idx, 2> bcast{M, 1};
    if (is_training_) {
      // Two passes (mean, then squared deviations) for accuracy. M == 0 gives NaN statistics.
      const T inv_m = T(1) / static_cast<T>(M);
      mean->vec<T>().device(d) = X.sum(rows) * inv_m;
      var->vec<T>().device(d) = (X - mean->vec<T>().reshape(one_by_c).broadcast(bcast)).square().sum(rows) * inv_m;
    } else {
      mean->vec<T>() = ctx->input(3).vec<T>();
      var->vec<T>() = ctx->input(4).vec<T>();
    }
    Tensor a(DTypeOf<T>(), TensorShape({C})), b(DTypeOf<T>(), TensorShape({C}));
    const T* sp = scale.data<T>();
    const T* op = offset.data<T>();
    const T* mp = mean->data<T>();
    const T* vp = var->data<T>();
    for (int64_t c = 0; c < C; ++c) {
      a.data<T>()[c] = sp[c] / std::sqrt(vp[c] + static_cast<T>(epsilon_));
      b.data<T>()[c] = op[c] - mp[c] * a.data<T>()[c];
    }
    if (M == 0) return;
    y->shaped<T, 2>({M, C}).device(d) =
        X * a.vec<T>().reshape(one_by_c).broadcast(bcast) + b.vec<T>().reshape(one_by_c).broadcast(bcast);
  }

 private:
  double epsilon_;
  bool is_training_;
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
      : OpKernel(node), epsilon_(node.attr<double>("epsilon")), is_training_(node.attr<bool>("is_training")) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& scale = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& var = ctx->input(4);
    const Tensor& dmean = ctx->input(5);
    const Tensor& dvar = ctx->input(6);
    WEFT_REQUIRE(dy.shape() == x.shape(), "y_backprop has shape {}, x has shape {}", dy.shape().ToString(),
                 x.shape().ToString());
    const auto [M, C] = CheckBatchNorm(x, {{"scale", &scale}, {"mean", &mean}, {"variance", &var},
                                           {"mean_backprop", &dmean}, {"variance_backprop", &dvar}});
    const auto& d = ctx->eigen_device();
    Tensor* dx = ctx->allocate_output(0, x.shape());
    Tensor* dscale = ctx->allocate_output(1, TensorShape({C}));
    Tensor* doffset = ctx->allocate_output(2, TensorShape({C}));
    Tensor* dmean_in = ctx->allocate_output(3, TensorShape({C}));
    Tensor* dvar_in = ctx->allocate_output(4, TensorShape({C}));
    if (C == 0) return;
    auto X = x.shaped<T, 2>({M, C});
    auto DY = dy.shaped<T, 2>({M, C});
    const Eigen::array<Idx, 1> rows{0};
    const Eigen::DSizes<Idx, 2> one_by_c(1, C);
    const Eigen::array<Idx, 2> bcast{M, 1};
    // dscale holds sum(dy * (x - mean)) until scaled by inv below.
    doffset->vec<T>().device(d) = DY.sum(rows);
    dscale->vec<T>().device(d) = (DY * (X - mean.vec<T>().reshape(one_by_c).broadcast(bcast))).sum(rows);

    // dx = dy * k1 + (x - mean) * k2 + k3 per channel.
    Tensor k1(DTypeOf<T>(), TensorShape({C})), k2(DTypeOf<T>(), TensorShape({C})), k3(DTypeOf<T>(), TensorShape({C}));
    const T m = static_cast<T>(M);
    for (int64_t c = 0; c < C; ++c) {
      const T inv = T(1) / std::sqrt(var.data<T>()[c] + static_cast<T>(epsilon_));
      const T s = scale.data<T>()[c], off = doffset->data<T>()[c];
      const T dsc = dscale->data<T>()[c] * inv;
      dscale->data<T>()[c] = dsc;
      k1.data<T>()[c] = s * inv;
      if (is_training_) {
        const T kx = (-s * inv * inv * dsc + T(2) * dvar.data<T>()[c]) / m;
        const T k0 = (-s * inv * off + dmean.data<T>()[c]) / m;
        k2.data<T>()[c] = kx;
        k3.data<T>()[c] = k0;
        dmean_in->data<T>()[c] = 0;
        dvar_in->data<T>()[c] = 0;
      } else {
        k2.data<T>()[c] = 0;
        k3.data<T>()[c] = 0;
        dmean_in->data<T>()[c] = dmean.data<T>()[c] - s * inv * off;
        dvar_in->data<T>()[c] = dvar.data<T>()[c] - T(0.5) * s * inv * inv * dsc;
      }
    }
    if (M == 0) return;
    auto DX = dx->shaped<T, 2>({M, C});
    // Named maps: the expressions below refer to them.
    auto K1 = k1.vec<T>(), K2 = k2.vec<T>(), K3 = k3.vec<T>(), MU = mean.vec<T>();
    if (is_training_) {
      DX.device(d) = DY * K1.reshape(one_by_c).broadcast(bcast) +
                     (X - MU.reshape(one_by_c).broadcast(bcast)) * K2.reshape(one_by_c).broadcast(bcast) +
                     K3.reshape(one_by_c).broadcast(bcast);
    } else {
      DX.device(d) = DY * k1.vec<T>().reshape(one_by_c).broadcast(bcast);
    }
  }

 private:
  double epsilon_;
  bool is_training_;
};

}  // namespace

void RegisterBatchNormKernels(KernelRegistry& r) {
  RegisterTyped<FusedBatchNormOp, float, double>(r, "FusedBatchNorm");
  RegisterTyped<FusedBatchNormGradOp, float, double>(r, "FusedBatchNormGrad");
}

}  // namespace weft
