// CPU kernels for the elementwise math ops other than the binary ones: unary arithmetic, Select,
// Cast and AddN, plus RegisterMathKernels, which registers the whole family. Binary arithmetic is
// in math_binary.cc, comparisons and logical ops in math_compare.cc, reductions in reduce.cc,
// products in matmul.cc.
#include <Eigen/Core>

#include <cmath>
#include <type_traits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

// ---- unary ops ------------------------------------------------------------------------------

// Fn::Apply(x) returns the Eigen expression for the op (x: the input's flat TensorMap).
template <typename T, typename Fn>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = ctx->allocate_output(0, x.shape());
    if (x.num_elements() == 0) return;
    const auto in = x.flat<T>();
    y->flat<T>().device(ctx->eigen_device()) = Fn::Apply(in);
  }
};

#define WEFT_UNARY_FN(NAME, EXPR) \
  struct NAME {                   \
    template <typename X>         \
    static auto Apply(const X& x) { return EXPR; } \
  };
WEFT_UNARY_FN(NegFn, -x)
WEFT_UNARY_FN(AbsFn, x.abs())
WEFT_UNARY_FN(SignFn, x.sign())
WEFT_UNARY_FN(SquareFn, x.square())
WEFT_UNARY_FN(SqrtFn, x.sqrt())
WEFT_UNARY_FN(RsqrtFn, x.rsqrt())
WEFT_UNARY_FN(ReciprocalFn, x.inverse())
WEFT_UNARY_FN(ExpFn, x.exp())
WEFT_UNARY_FN(LogFn, x.log())
WEFT_UNARY_FN(ErfFn, x.erf())
WEFT_UNARY_FN(Log1pFn, x.log1p())
WEFT_UNARY_FN(SinFn, x.unaryExpr([](auto v) { return std::sin(v); }))
WEFT_UNARY_FN(CosFn, x.unaryExpr([](auto v) { return std::cos(v); }))
WEFT_UNARY_FN(Expm1Fn, x.expm1())
WEFT_UNARY_FN(AsinFn, x.unaryExpr([](auto v) { return std::asin(v); }))
WEFT_UNARY_FN(AcosFn, x.unaryExpr([](auto v) { return std::acos(v); }))
WEFT_UNARY_FN(AtanFn, x.unaryExpr([](auto v) { return std::atan(v); }))
WEFT_UNARY_FN(LgammaFn, x.lgamma())
WEFT_UNARY_FN(DigammaFn, x.digamma())
WEFT_UNARY_FN(NdtriFn, x.ndtri())
WEFT_UNARY_FN(FloorFn, x.floor())
WEFT_UNARY_FN(CeilFn, x.ceil())
// Half to even, as TF's Round (Eigen's round() takes halves away from zero).
WEFT_UNARY_FN(RoundFn, x.unaryExpr([](auto v) { return std::nearbyint(v); }))
WEFT_UNARY_FN(LogicalNotFn, x.unaryExpr([](bool v) { return !v; }))
#undef WEFT_UNARY_FN

template <typename T> using NegOp = UnaryOp<T, NegFn>;
template <typename T> using AbsOp = UnaryOp<T, AbsFn>;
template <typename T> using SignOp = UnaryOp<T, SignFn>;
template <typename T> using SquareOp = UnaryOp<T, SquareFn>;
template <typename T> using SqrtOp = UnaryOp<T, SqrtFn>;
template <typename T> using RsqrtOp = UnaryOp<T, RsqrtFn>;
template <typename T> using ReciprocalOp = UnaryOp<T, ReciprocalFn>;
template <typename T> using ExpOp = UnaryOp<T, ExpFn>;
template <typename T> using LogOp = UnaryOp<T, LogFn>;
template <typename T> using ErfOp = UnaryOp<T, ErfFn>;
template <typename T> using Log1pOp = UnaryOp<T, Log1pFn>;
template <typename T> using SinOp = UnaryOp<T, SinFn>;
template <typename T> using CosOp = UnaryOp<T, CosFn>;
template <typename T> using Expm1Op = UnaryOp<T, Expm1Fn>;
template <typename T> using AsinOp = UnaryOp<T, AsinFn>;
template <typename T> using AcosOp = UnaryOp<T, AcosFn>;
template <typename T> using AtanOp = UnaryOp<T, AtanFn>;
template <typename T> using LgammaOp = UnaryOp<T, LgammaFn>;
template <typename T> using DigammaOp = UnaryOp<T, DigammaFn>;
template <typename T> using NdtriOp = UnaryOp<T, NdtriFn>;
template <typename T> using FloorOp = UnaryOp<T, FloorFn>;
template <typename T> using CeilOp = UnaryOp<T, CeilFn>;
template <typename T> using RoundOp = UnaryOp<T, RoundFn>;
using LogicalNotOp = UnaryOp<bool, LogicalNotFn>;

// ---- Select, Cast, AddN ---------------------------------------------------------------------

// out = cond ? a : b. a and b have one shape; cond has that shape, is a scalar, or is a vector
// of length a.dim(0) choosing whole rows (the shape function checks this too; re-checked here
// because shapes may have been unknown at build time).
template <typename T>
class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& cond = ctx->input(0);
    const Tensor& a = ctx->input(1);
    const Tensor& b = ctx->input(2);
    WEFT_REQUIRE(a.shape() == b.shape(), "a {} and b {} must have the same shape", a.shape().ToString(),
                 b.shape().ToString());
    const bool rows = cond.rank() == 1 && a.rank() > 1;
    WEFT_REQUIRE(cond.shape() == a.shape() || cond.rank() == 0 || (rows && cond.dim(0) == a.dim(0)),
                 "cond {} must have the shape of a {}, be a scalar, or be a vector of length dim 0 of a",
                 cond.shape().ToString(), a.shape().ToString());
    if (cond.rank() == 0 && a.rank() != 0) {
      ctx->set_output(0, cond.data<bool>()[0] ? a : b);
      return;
    }
    Tensor* out = ctx->allocate_output(0, a.shape());
    const int64_t total = a.num_elements();
    if (total == 0) return;
    const bool* c = cond.data<bool>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out->data<T>();
    // Per-element cond, or one cond per row of m elements.
    const int64_t m = cond.shape() == a.shape() ? 1 : total / a.dim(0);
    ParallelForCost(ctx->intra_op_pool(), total, 1, [&](int64_t begin, int64_t end) {
      if (m == 1) {
        for (int64_t i = begin; i < end; ++i) po[i] = c[i] ? pa[i] : pb[i];
      } else {
        for (int64_t i = begin; i < end; ++i) po[i] = c[i / m] ? pa[i] : pb[i];
      }
    });
  }
};

// Converts between any two of float32/float64/int32/int64/uint8/bool/float16 (C++ conversions; to
// bool means "!= 0"). Same-type casts share the input buffer.
class CastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const DType dst = node().output_dtype(0);
    if (x.dtype() == dst) {
      ctx->set_output(0, x);
      return;
    }
    Tensor* y = ctx->allocate_output(0, x.shape());
    if (x.num_elements() == 0) return;
    if (x.dtype() == DType::kFloat16 || dst == DType::kFloat16) return CastHalf(ctx, x, dst, y);
    Dispatch<WEFT_ALL_TYPES>(x.dtype(), "Cast source", [&](auto src) {
      using S = typename decltype(src)::type;
      Dispatch<WEFT_ALL_TYPES>(dst, "Cast destination", [&](auto dt) {
        using D = typename decltype(dt)::type;
        const S* in = x.data<S>();
        D* o = y->data<D>();
        ParallelForCost(ctx->intra_op_pool(), x.num_elements(), 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) o[i] = static_cast<D>(in[i]);
        });
      });
    });
  }

 private:
  // float16 (stored as IEEE binary16 bits, no kernels of its own) to or from the other dtypes,
  // through float32 as TF's CPU Cast does: to half rounds to nearest even (Eigen::half), from
  // half is exact in float32, then a C++ conversion as above.
  static void CastHalf(OpKernelContext* ctx, const Tensor& x, DType dst, Tensor* y) {
    const int64_t n = x.num_elements();
    if (x.dtype() == DType::kFloat16) {
      const auto* in = static_cast<const uint16_t*>(x.raw_data());
      if (dst == DType::kFloat16) return;  // same-type casts returned before
      Dispatch<WEFT_ALL_TYPES>(dst, "Cast destination", [&](auto dt) {
        using D = typename decltype(dt)::type;
        D* o = y->data<D>();
        ParallelForCost(ctx->intra_op_pool(), n, 1, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i)
            o[i] = static_cast<D>(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(in[i])));
        });
      });
      return;
    }
    auto* o = static_cast<uint16_t*>(y->raw_data());
    Dispatch<WEFT_ALL_TYPES>(x.dtype(), "Cast source", [&](auto src) {
      using S = typename decltype(src)::type;
      const S* in = x.data<S>();
      ParallelForCost(ctx->intra_op_pool(), n, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          o[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::half(static_cast<float>(in[i])));
      });
    });
  }
};

// out = sum of the N same-shaped inputs.
template <typename T>
class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const int n = ctx->num_inputs();
    const Tensor& x0 = ctx->input(0);
    for (int i = 1; i < n; ++i) {
      WEFT_REQUIRE(ctx->input(i).shape() == x0.shape(), "input {} has shape {} but input 0 has {}", i,
                   ctx->input(i).shape().ToString(), x0.shape().ToString());
    }
    if (n == 1) {
      ctx->set_output(0, x0);
      return;
    }
    Tensor* out = ctx->allocate_output(0, x0.shape());
    if (x0.num_elements() == 0) return;
    const auto& d = ctx->eigen_device();
    auto o = out->flat<T>();
    auto in = [&](int i) { return ctx->input(i).flat<T>(); };
    o.device(d) = in(0) + in(1);
    int i = 2;
    for (; i + 2 < n; i += 3) o.device(d) = o + in(i) + in(i + 1) + in(i + 2);
    for (; i < n; ++i) o.device(d) = o + in(i);
  }
};

}  // namespace

void RegisterMathKernels(KernelRegistry& r) {
  RegisterMathBinaryKernels(r);
  RegisterMathCompareKernels(r);

  RegisterTyped<NegOp, float, double, int32_t, int64_t>(r, "Neg");
  RegisterTyped<AbsOp, float, double, int32_t, int64_t>(r, "Abs");
  RegisterTyped<SignOp, float, double, int32_t, int64_t>(r, "Sign");
  RegisterTyped<SquareOp, WEFT_NUMBER_TYPES>(r, "Square");
  RegisterTyped<SqrtOp, WEFT_FLOAT_TYPES>(r, "Sqrt");
  RegisterTyped<RsqrtOp, WEFT_FLOAT_TYPES>(r, "Rsqrt");
  RegisterTyped<ReciprocalOp, WEFT_FLOAT_TYPES>(r, "Reciprocal");
  RegisterTyped<ExpOp, WEFT_FLOAT_TYPES>(r, "Exp");
  RegisterTyped<LogOp, WEFT_FLOAT_TYPES>(r, "Log");
  RegisterTyped<ErfOp, WEFT_FLOAT_TYPES>(r, "Erf");
  RegisterTyped<Log1pOp, WEFT_FLOAT_TYPES>(r, "Log1p");
  RegisterTyped<SinOp, WEFT_FLOAT_TYPES>(r, "Sin");
  RegisterTyped<CosOp, WEFT_FLOAT_TYPES>(r, "Cos");
  RegisterTyped<Expm1Op, WEFT_FLOAT_TYPES>(r, "Expm1");
  RegisterTyped<AsinOp, WEFT_FLOAT_TYPES>(r, "Asin");
  RegisterTyped<AcosOp, WEFT_FLOAT_TYPES>(r, "Acos");
  RegisterTyped<AtanOp, WEFT_FLOAT_TYPES>(r, "Atan");
  RegisterTyped<LgammaOp, WEFT_FLOAT_TYPES>(r, "Lgamma");
  RegisterTyped<DigammaOp, WEFT_FLOAT_TYPES>(r, "Digamma");
  RegisterTyped<NdtriOp, WEFT_FLOAT_TYPES>(r, "Ndtri");
  RegisterTyped<FloorOp, WEFT_FLOAT_TYPES>(r, "Floor");
  RegisterTyped<CeilOp, WEFT_FLOAT_TYPES>(r, "Ceil");
  RegisterTyped<RoundOp, WEFT_FLOAT_TYPES>(r, "Round");
  RegisterUntyped<LogicalNotOp>(r, "LogicalNot");

  RegisterTyped<SelectOp, WEFT_ALL_TYPES>(r, "Select");
  RegisterUntyped<CastOp>(r, "Cast");
  RegisterTyped<AddNOp, WEFT_NUMBER_TYPES>(r, "AddN");

  RegisterReduceKernels(r);
  RegisterMatMulKernels(r);
}

}  // namespace weft
