// Activations (and their fused gradient ops), BiasAdd, Softmax / LogSoftmax and the softmax
// cross-entropy losses. Conv, pooling and batch norm kernels live in conv.cc, pool.cc and
// batchnorm.cc; RegisterNnKernels registers them all.
//
// Shape key: C = the last axis (channels / classes), rows = elements / C.
// Elementwise kernels are Eigen expressions on the intra-op pool; row-wise kernels (softmax,
// losses) run one row at a time with Eigen arrays, parallel over rows.
#include <cmath>
#include <mutex>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/forward.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/channel_sums.h"
#include "ops/kernels/cpu/nn_kernels.h"

namespace weft {
namespace {

using Idx = Eigen::DenseIndex;

// ---- Elementwise: y = F(x) and dx = F(a, b) (a, b of one shape).

template <typename T, typename F>
class UnaryKernel : public OpKernel {
 public:
  explicit UnaryKernel(const Node& node) : OpKernel(node), f_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    auto X = x.flat<T>();  // a named map: the expression refers to it
    Tensor* y = ForwardInputOrAllocate(ctx, {0}, 0, x.shape());  // elementwise: may write over x
    if (x.num_elements() == 0) return;
    y->flat<T>().device(ctx->eigen_device()) = f_(X);
  }

 private:
  F f_;
};

template <typename T, typename F>
class BinaryKernel : public OpKernel {
 public:
  explicit BinaryKernel(const Node& node) : OpKernel(node), f_(node) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    WEFT_REQUIRE(a.shape() == b.shape(), "inputs must have one shape, got {} and {}", a.shape().ToString(),
                 b.shape().ToString());
    auto A = a.flat<T>();
    auto B = b.flat<T>();
    // Elementwise: may write over either input.
    Tensor* y = ForwardInputOrAllocate(ctx, {0, 1}, 0, a.shape());
    if (a.num_elements() == 0) return;
    y->flat<T>().device(ctx->eigen_device()) = f_(A, B);
  }

 private:
  F f_;
};

struct NoAttrs {
  explicit NoAttrs(const Node&) {}
};

struct ReluFn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const { return x.cwiseMax(typename X::Scalar(0)); }
};
struct Relu6Fn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const {
    using S = typename X::Scalar;
    return x.cwiseMax(S(0)).cwiseMin(S(6));
  }
};
struct LeakyReluFn {
  double alpha;
  explicit LeakyReluFn(const Node& n) : alpha(n.attr<double>("alpha")) {}
  template <typename X> auto operator()(const X& x) const {
    using S = typename X::Scalar;
    return (x > S(0)).select(x, x * S(alpha));
  }
};
struct EluFn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const {
    using S = typename X::Scalar;
    return (x > S(0)).select(x, x.expm1());
  }
};
struct SigmoidFn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const { return x.sigmoid(); }
};
struct TanhFn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const { return x.tanh(); }
};
// softplus(x) = log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which neither overflows nor loses
// the small values.
struct SoftplusFn : NoAttrs {
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& x) const {
    using S = typename X::Scalar;
    return x.cwiseMax(S(0)) + (-x.abs()).exp().log1p();
  }
};

// Gradient ops, TF's argument order: (gradients, features) or (y, dy) as named.
struct ReluGradFn : NoAttrs {  // (dy, x): dy * (x > 0)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& dy, const X& x) const {
    using S = typename X::Scalar;
    return (x > S(0)).select(dy, dy.constant(S(0)));
  }
};
struct Relu6GradFn : NoAttrs {  // (dy, x): dy * (0 < x < 6)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& dy, const X& x) const {
    using S = typename X::Scalar;
    return (x > S(0)).select((x < S(6)).select(dy, dy.constant(S(0))), dy.constant(S(0)));
  }
};
struct LeakyReluGradFn {  // (dy, x): x > 0 ? dy : alpha * dy
  double alpha;
  explicit LeakyReluGradFn(const Node& n) : alpha(n.attr<double>("alpha")) {}
  template <typename X> auto operator()(const X& dy, const X& x) const {
    using S = typename X::Scalar;
    return (x > S(0)).select(dy, dy * S(alpha));
  }
};
struct EluGradFn : NoAttrs {  // (dy, y): y > 0 ? dy : dy * (y + 1)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& dy, const X& y) const {
    using S = typename X::Scalar;
    return (y > S(0)).select(dy, dy * (y + S(1)));
  }
};
struct SigmoidGradFn : NoAttrs {  // (y, dy): dy * y * (1 - y)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& y, const X& dy) const {
    using S = typename X::Scalar;
    return dy * y * (S(1) - y);
  }
};
struct TanhGradFn : NoAttrs {  // (y, dy): dy * (1 - y^2)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& y, const X& dy) const {
    using S = typename X::Scalar;
    return dy * (S(1) - y * y);
  }
};
struct SoftplusGradFn : NoAttrs {  // (dy, x): dy * sigmoid(x)
  using NoAttrs::NoAttrs;
  template <typename X> auto operator()(const X& dy, const X& x) const { return dy * x.sigmoid(); }
};

// Gelu and GeluGrad: the exact (erf) and the tanh form are different expressions, chosen by the
// node's `approximate`.
constexpr double kSqrtHalf = 0.70710678118654752440, kSqrt2OverPi = 0.79788456080286535588,
                 kInvSqrt2Pi = 0.39894228040143267794, kGeluC = 0.044715;
template <typename T>
class GeluOp : public OpKernel {
 public:
  explicit GeluOp(const Node& node) : OpKernel(node), approximate_(node.attr<bool>("approximate")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    auto X = x.flat<T>();
    Tensor* y = ForwardInputOrAllocate(ctx, {0}, 0, x.shape());
    if (x.num_elements() == 0) return;
    auto Y = y->flat<T>();
    const auto& dev = ctx->eigen_device();
    if (approximate_) {
      Y.device(dev) = T(0.5) * X * (T(1) + (T(kSqrt2OverPi) * (X + T(kGeluC) * X * X * X)).tanh());
    } else {
      Y.device(dev) = T(0.5) * X * (T(1) + (X * T(kSqrtHalf)).erf());
    }
  }

 private:
  bool approximate_;
};
// (dy, x): dy * gelu'(x); exact: Phi(x) + x phi(x); tanh form: 0.5 (1 + t) + 0.5 x (1 - t^2) u
// with t = tanh(k (x + c x^3)), u = k (1 + 3 c x^2).
template <typename T>
class GeluGradOp : public OpKernel {
 public:
  explicit GeluGradOp(const Node& node) : OpKernel(node), approximate_(node.attr<bool>("approximate")) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    const Tensor& x = ctx->input(1);
    WEFT_REQUIRE(dy.shape() == x.shape(), "inputs must have one shape, got {} and {}", dy.shape().ToString(),
                 x.shape().ToString());
    auto D = dy.flat<T>();
    auto X = x.flat<T>();
    Tensor* out = ForwardInputOrAllocate(ctx, {0, 1}, 0, x.shape());
    if (x.num_elements() == 0) return;
    auto O = out->flat<T>();
    const auto& dev = ctx->eigen_device();
    if (approximate_) {
      auto t = (T(kSqrt2OverPi) * (X + T(kGeluC) * X * X * X)).tanh();
      auto u = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * X * X);
      O.device(dev) = D * (T(0.5) * (T(1) + t) + T(0.5) * X * (T(1) - t * t) * u);
    } else {
      O.device(dev) = D * (T(0.5) * (T(1) + (X * T(kSqrtHalf)).erf()) + X * T(kInvSqrt2Pi) * (T(-0.5) * X * X).exp());
    }
  }

 private:
  bool approximate_;
};

template <typename T> using ReluOp = UnaryKernel<T, ReluFn>;
template <typename T> using Relu6Op = UnaryKernel<T, Relu6Fn>;
template <typename T> using LeakyReluOp = UnaryKernel<T, LeakyReluFn>;
template <typename T> using EluOp = UnaryKernel<T, EluFn>;
template <typename T> using SigmoidOp = UnaryKernel<T, SigmoidFn>;
template <typename T> using TanhOp = UnaryKernel<T, TanhFn>;
template <typename T> using SoftplusOp = UnaryKernel<T, SoftplusFn>;
template <typename T> using ReluGradOp = BinaryKernel<T, ReluGradFn>;
template <typename T> using Relu6GradOp = BinaryKernel<T, Relu6GradFn>;
template <typename T> using LeakyReluGradOp = BinaryKernel<T, LeakyReluGradFn>;
template <typename T> using EluGradOp = BinaryKernel<T, EluGradFn>;
template <typename T> using SigmoidGradOp = BinaryKernel<T, SigmoidGradFn>;
template <typename T> using TanhGradOp = BinaryKernel<T, TanhGradFn>;
template <typename T> using SoftplusGradOp = BinaryKernel<T, SoftplusGradFn>;

// ---- BiasAdd: y[..., c] = x[..., c] + bias[c];  BiasAddGrad: db[c] = sum of dy[..., c].

// Both run as direct loops over [rows, C] blocks: Eigen's broadcast and column reduction cost
// several times a plain pass over memory here.
template <typename T>
class BiasAddOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    WEFT_REQUIRE(x.rank() >= 1 && bias.rank() == 1 && bias.dim(0) == x.dim(x.rank() - 1),
                 "bias must be a vector of the last dim of x: x {} vs bias {}", x.shape().ToString(),
                 bias.shape().ToString());
    Tensor* y = ForwardInputOrAllocate(ctx, {0}, 0, x.shape());  // elementwise in x: may write over it
    if (x.num_elements() == 0) return;
    const int64_t C = bias.dim(0);
    const T* xp = x.data<T>();
    const T* bp = bias.data<T>();
    T* yp = y->data<T>();
    ParallelForCost(ctx->intra_op_pool(), x.num_elements() / C, C, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const T* xr = xp + r * C;
        T* yr = yp + r * C;
        for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] + bp[c];
      }
    });
  }
};

template <typename T>
class BiasAddGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& dy = ctx->input(0);
    WEFT_REQUIRE(dy.rank() >= 1, "out_backprop must have rank at least 1, got shape {}", dy.shape().ToString());
    const int64_t C = dy.dim(dy.rank() - 1);
    Tensor* db = ctx->allocate_output(0, TensorShape({C}));
    if (C == 0) return;
    T* out = db->data<T>();
    const T* dp = dy.data<T>();
    // Over blocks fixed by the shape (the same bits on any number of threads), each in T.
    const std::vector<double> sums = ColumnSums<T>(ctx->intra_op_pool(), dp, dy.num_elements() / C, C);
    for (int64_t c = 0; c < C; ++c) out[c] = static_cast<T>(sums[c]);
  }
};

// ---- Row-wise kernels over [rows, C].

template <typename T>
using RowArray = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstRowArray = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// Runs fn(row) for every row of C values, in parallel once the rows are worth a hand-off (a
// row costs about an exp per value).
template <typename Fn>
void ForEachRow(OpKernelContext* ctx, int64_t rows, int64_t C, Fn fn) {
  ParallelForCost(ctx->intra_op_pool(), rows, 16 * C, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) fn(r);
  });
}

// softmax(z) = exp(z - max z) / sum(exp(z - max z)); log_softmax(z) = z - max z - log(sum(...)).
template <typename T, bool kLog>
class SoftmaxKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    WEFT_REQUIRE(x.rank() >= 1, "logits must have rank at least 1, got shape {}", x.shape().ToString());
    Tensor* y = ctx->allocate_output(0, x.shape());
    const int64_t C = x.dim(x.rank() - 1);
    if (x.num_elements() == 0) return;
    const T* xp = x.data<T>();
    T* yp = y->data<T>();
    ForEachRow(ctx, x.num_elements() / C, C, [&](int64_t r) {
      ConstRowArray<T> z(xp + r * C, C);
      RowArray<T> out(yp + r * C, C);
      out = z - z.maxCoeff();
      if constexpr (kLog) {
        out -= std::log(out.exp().sum());
      } else {
        out = out.exp();
        out /= out.sum();
      }
    });
  }
};
// dx = (dy - sum(dy * y)) * y over the last axis: softmax's Jacobian-vector product, one pass.
template <typename T>
class SoftmaxGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(0);
    const Tensor& dy = ctx->input(1);
    WEFT_REQUIRE(y.shape() == dy.shape(), "softmax {} and its gradient {} must have one shape", y.shape().ToString(),
                 dy.shape().ToString());
    WEFT_REQUIRE(y.rank() >= 1, "softmax must have rank at least 1, got shape {}", y.shape().ToString());
    Tensor* dx = ForwardInputOrAllocate(ctx, {1}, 0, y.shape());  // row r reads dy's row r before writing it
    const int64_t C = y.dim(y.rank() - 1);
    if (y.num_elements() == 0) return;
    const T* yp = y.data<T>();
    const T* dp = dy.data<T>();
    T* out = dx->data<T>();
    ForEachRow(ctx, y.num_elements() / C, C, [&](int64_t r) {
      ConstRowArray<T> yr(yp + r * C, C), dr(dp + r * C, C);
      const T s = (dr * yr).sum();
      RowArray<T>(out + r * C, C) = (dr - s) * yr;
    });
  }
};
template <typename T> using SoftmaxOp = SoftmaxKernel<T, false>;
template <typename T> using LogSoftmaxOp = SoftmaxKernel<T, true>;

// Inputs: logits [N, C], labels [N, C] (a distribution per row). Outputs:
//   loss[n] = -sum_c labels[n,c] * log_softmax(logits)[n,c],  backprop = softmax(logits) - labels.
template <typename T>
class SoftmaxCrossEntropyWithLogitsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    CheckSoftmaxXentInputs(logits, labels);
    const int64_t N = logits.dim(0), C = logits.dim(1);
    Tensor* loss = ctx->allocate_output(0, TensorShape({N}));
    Tensor* backprop = ctx->allocate_output(1, logits.shape());
    if (N == 0) return;
    if (C == 0) {
      loss->flat<T>().setZero();
      return;
    }
    const T* zp = logits.data<T>();
    const T* lp = labels.data<T>();
    T* lossp = loss->data<T>();
    T* bp = backprop->data<T>();
    ForEachRow(ctx, N, C, [&](int64_t r) {
      ConstRowArray<T> z(zp + r * C, C), l(lp + r * C, C);
      RowArray<T> b(bp + r * C, C);
      const T m = z.maxCoeff();
      b = (z - m).exp();
      const T sum = b.sum();
      lossp[r] = (l * (std::log(sum) - (z - m))).sum();
      b = b / sum - l;
    });
  }
};

// Inputs: logits [N, C], labels [N] (class ids, int32 or int64, in [0, C)). Outputs:
//   loss[n] = -log_softmax(logits)[n, labels[n]],  backprop = softmax(logits) - one_hot(labels).
template <typename T>
class SparseSoftmaxCrossEntropyWithLogitsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    CheckSparseSoftmaxXentInputs(logits, labels);
    CheckLabels(labels, logits.dim(1));
    const int64_t N = logits.dim(0), C = logits.dim(1);
    std::vector<int64_t> ids(N);
    Dispatch<int32_t, int64_t>(labels.dtype(), "labels", [&](auto tag) {
      using L = typename decltype(tag)::type;
      const L* p = labels.data<L>();
      for (int64_t n = 0; n < N; ++n) ids[n] = p[n];
    });
    Tensor* loss = ctx->allocate_output(0, TensorShape({N}));
    Tensor* backprop = ctx->allocate_output(1, logits.shape());
    if (N == 0) return;
    const T* zp = logits.data<T>();
    T* lossp = loss->data<T>();
    T* bp = backprop->data<T>();
    ForEachRow(ctx, N, C, [&](int64_t r) {
      ConstRowArray<T> z(zp + r * C, C);
      RowArray<T> b(bp + r * C, C);
      const T m = z.maxCoeff();
      b = (z - m).exp();
      const T sum = b.sum();
      lossp[r] = std::log(sum) - (z[ids[r]] - m);
      b /= sum;
      b[ids[r]] -= T(1);
    });
  }
};

}  // namespace

void RegisterNnKernels(KernelRegistry& r) {
  RegisterTyped<ReluOp, float, double>(r, "Relu");
  RegisterTyped<Relu6Op, float, double>(r, "Relu6");
  RegisterTyped<LeakyReluOp, float, double>(r, "LeakyRelu");
  RegisterTyped<EluOp, float, double>(r, "Elu");
  RegisterTyped<SigmoidOp, float, double>(r, "Sigmoid");
  RegisterTyped<TanhOp, float, double>(r, "Tanh");
  RegisterTyped<SoftplusOp, float, double>(r, "Softplus");
  RegisterTyped<GeluOp, float, double>(r, "Gelu");
  RegisterTyped<GeluGradOp, float, double>(r, "GeluGrad");
  RegisterTyped<ReluGradOp, float, double>(r, "ReluGrad");
  RegisterTyped<Relu6GradOp, float, double>(r, "Relu6Grad");
  RegisterTyped<LeakyReluGradOp, float, double>(r, "LeakyReluGrad");
  RegisterTyped<EluGradOp, float, double>(r, "EluGrad");
  RegisterTyped<SigmoidGradOp, float, double>(r, "SigmoidGrad");
  RegisterTyped<TanhGradOp, float, double>(r, "TanhGrad");
  RegisterTyped<SoftplusGradOp, float, double>(r, "SoftplusGrad");
  RegisterTyped<BiasAddOp, float, double>(r, "BiasAdd");
  RegisterTyped<BiasAddGradOp, float, double>(r, "BiasAddGrad");
  RegisterTyped<SoftmaxOp, float, double>(r, "Softmax");
  RegisterTyped<SoftmaxGradOp, float, double>(r, "SoftmaxGrad");
  RegisterTyped<LogSoftmaxOp, float, double>(r, "LogSoftmax");
  RegisterTyped<SoftmaxCrossEntropyWithLogitsOp, float, double>(r, "SoftmaxCrossEntropyWithLogits");
  RegisterTyped<SparseSoftmaxCrossEntropyWithLogitsOp, float, double>(r, "SparseSoftmaxCrossEntropyWithLogits");
  RegisterConvKernels(r);
  RegisterConvPoolKernels(r);
  RegisterPoolKernels(r);
  RegisterBatchNormKernels(r);
  RegisterLayerNormKernels(r);
}

void CheckSoftmaxXentInputs(const Tensor& logits, const Tensor& labels) {
  WEFT_REQUIRE(logits.rank() == 2, "logits must be rank 2 [batch, classes], got shape {}",
               logits.shape().ToString());
  WEFT_REQUIRE(labels.shape() == logits.shape(), "labels must have the shape of logits: logits {} vs labels {}",
               logits.shape().ToString(), labels.shape().ToString());
}

void CheckSparseSoftmaxXentInputs(const Tensor& logits, const Tensor& labels) {
  WEFT_REQUIRE(logits.rank() == 2, "logits must be rank 2 [batch, classes], got shape {}",
               logits.shape().ToString());
  WEFT_REQUIRE(labels.rank() == 1 && labels.dim(0) == logits.dim(0),
               "labels must be a vector of the batch size: logits {} vs labels {}", logits.shape().ToString(),
               labels.shape().ToString());
}

void CheckLabels(const Tensor& labels, int64_t classes) {
  Dispatch<int32_t, int64_t>(labels.dtype(), "labels", [&](auto tag) {
    using L = typename decltype(tag)::type;
    const L* p = labels.data<L>();
    for (int64_t n = 0; n < labels.num_elements(); ++n) {
      WEFT_REQUIRE(p[n] >= 0 && p[n] < classes, "label {} at batch row {} is outside the valid range [0, {})",
                   static_cast<int64_t>(p[n]), n, classes);
    }
  });
}

}  // namespace weft
