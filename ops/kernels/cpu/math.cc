// CPU kernels for the elementwise math ops: unary and binary arithmetic (numpy broadcasting),
// comparisons, logical ops, Select, Cast and AddN. Reductions are in reduce.cc, products in
// matmul.cc.
//
// Binary ops take one of four paths: same shape (flat vectorised Eigen expression), either operand
// a single element (the other's flat expression with the scalar bound), or the general collapsed
// N-d broadcast (broadcast.h).
#include <type_traits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

namespace ei = Eigen::internal;

// ---- binary ops -----------------------------------------------------------------------------

// F: an Eigen binary functor (derived from binary_op_base, so bind1st_op/bind2nd_op work). If it
// has `static void Validate(const Tensor& a, const Tensor& b)`, that runs first (e.g. the integer
// division-by-zero check).
template <typename T, typename F>
class BinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using OutT = typename F::result_type;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    const BroadcastPlan p = BroadcastPlan::Make(a.shape(), b.shape(), "inputs");
    if constexpr (requires { F::Validate(a, b); }) F::Validate(a, b);
    Tensor* out = ctx->allocate_output(0, p.out_shape);
    if (out->num_elements() == 0) return;
    const auto& d = ctx->eigen_device();
    auto o = out->flat<OutT>();
    if (p.same_shape) {
      o.device(d) = a.flat<T>().binaryExpr(b.flat<T>(), F());
    } else if (p.a_is_scalar) {
      o.device(d) = b.flat<T>().unaryExpr(ei::bind1st_op<F>(a.data<T>()[0]));
    } else if (p.b_is_scalar) {
      o.device(d) = a.flat<T>().unaryExpr(ei::bind2nd_op<F>(b.data<T>()[0]));
    } else {
      BinaryBroadcast<T, OutT>(d, p, a, b, out, F());
    }
  }
};

// Integer division truncating toward zero; the kernel rejects zero divisors first, and
// MIN / -1 wraps instead of trapping.
template <typename T>
struct IntDivF : ei::binary_op_base<T, T> {
  using result_type = T;
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (b == T(-1)) return static_cast<T>(U(0) - static_cast<U>(a));
    }
    return static_cast<T>(a / b);
  }
  static void Validate(const Tensor& /*a*/, const Tensor& b) {
    const T* p = b.data<T>();
    for (int64_t i = 0, n = b.num_elements(); i < n; ++i) {
      WEFT_REQUIRE(p[i] != T(0), "integer division by zero (divisor {} is 0 at flat index {})",
                   b.shape().ToString(), i);
    }
  }
};

// Integer power by repeated squaring (wraps on overflow); negative exponents are rejected.
template <typename T>
struct IntPowF : ei::binary_op_base<T, T> {
  using result_type = T;
  T operator()(const T& a, const T& b) const {
    using U = std::make_unsigned_t<T>;
    U base = static_cast<U>(a), r = 1;
    for (auto e = static_cast<U>(b); e != 0; e >>= 1) {
      if (e & 1) r = static_cast<U>(r * base);
      base = static_cast<U>(base * base);
    }
    return static_cast<T>(r);
  }
  static void Validate(const Tensor& /*a*/, const Tensor& b) {
    if constexpr (std::is_signed_v<T>) {
      const T* p = b.data<T>();
      for (int64_t i = 0, n = b.num_elements(); i < n; ++i) {
        WEFT_REQUIRE(p[i] >= 0, "integers to negative integer powers are not allowed (exponent {} at flat index {})",
                     static_cast<int64_t>(p[i]), i);
      }
    }
  }
};

struct LogicalAndF : ei::binary_op_base<bool, bool> {
  using result_type = bool;
  bool operator()(const bool& a, const bool& b) const { return a && b; }
};
struct LogicalOrF : ei::binary_op_base<bool, bool> {
  using result_type = bool;
  bool operator()(const bool& a, const bool& b) const { return a || b; }
};

template <typename T> using AddOp = BinaryOp<T, ei::scalar_sum_op<T, T>>;
template <typename T> using SubOp = BinaryOp<T, ei::scalar_difference_op<T, T>>;
template <typename T> using MulOp = BinaryOp<T, ei::scalar_product_op<T, T>>;
template <typename T>
using DivOp = BinaryOp<T, std::conditional_t<std::is_integral_v<T>, IntDivF<T>, ei::scalar_quotient_op<T, T>>>;
template <typename T>
using PowOp = BinaryOp<T, std::conditional_t<std::is_integral_v<T>, IntPowF<T>, ei::scalar_pow_op<T, T>>>;
template <typename T> using MaximumOp = BinaryOp<T, ei::scalar_max_op<T, T>>;
template <typename T> using MinimumOp = BinaryOp<T, ei::scalar_min_op<T, T>>;
template <typename T> using EqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_EQ>>;
template <typename T> using NotEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_NEQ>>;
template <typename T> using LessOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_LT>>;
template <typename T> using LessEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_LE>>;
template <typename T> using GreaterOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_GT>>;
template <typename T> using GreaterEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_GE>>;
using LogicalAndOp = BinaryOp<bool, LogicalAndF>;
using LogicalOrOp = BinaryOp<bool, LogicalOrF>;

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
    if (a.num_elements() == 0) return;
    const auto& d = ctx->eigen_device();
    if (cond.shape() == a.shape()) {
      out->flat<T>().device(d) = cond.flat<bool>().select(a.flat<T>(), b.flat<T>());
    } else {
      const int64_t n = a.dim(0), m = a.num_elements() / n;
      const Eigen::array<Eigen::DenseIndex, 2> bc{1, m};
      out->shaped<T, 2>({n, m}).device(d) =
          cond.shaped<bool, 2>({n, 1}).broadcast(bc).select(a.shaped<T, 2>({n, m}), b.shaped<T, 2>({n, m}));
    }
  }
};

// Converts between any two of float32/float64/int32/int64/uint8/bool (C++ conversions; to bool
// means "!= 0"). Same-type casts share the input buffer.
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
    const auto& d = ctx->eigen_device();
    Dispatch<WEFT_ALL_TYPES>(x.dtype(), "Cast source", [&](auto src) {
      using S = typename decltype(src)::type;
      Dispatch<WEFT_ALL_TYPES>(dst, "Cast destination", [&](auto dt) {
        using D = typename decltype(dt)::type;
        y->flat<D>().device(d) = x.flat<S>().template cast<D>();
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
  RegisterTyped<AddOp, WEFT_NUMBER_TYPES>(r, "Add");
  RegisterTyped<SubOp, WEFT_NUMBER_TYPES>(r, "Sub");
  RegisterTyped<MulOp, WEFT_NUMBER_TYPES>(r, "Mul");
  RegisterTyped<DivOp, WEFT_NUMBER_TYPES>(r, "Div");
  RegisterTyped<PowOp, float, double, int32_t, int64_t>(r, "Pow");
  RegisterTyped<MaximumOp, WEFT_NUMBER_TYPES>(r, "Maximum");
  RegisterTyped<MinimumOp, WEFT_NUMBER_TYPES>(r, "Minimum");

  RegisterTyped<NegOp, float, double, int32_t, int64_t>(r, "Neg");
  RegisterTyped<AbsOp, float, double, int32_t, int64_t>(r, "Abs");
  RegisterTyped<SignOp, float, double, int32_t, int64_t>(r, "Sign");
  RegisterTyped<SquareOp, WEFT_NUMBER_TYPES>(r, "Square");
  RegisterTyped<SqrtOp, WEFT_FLOAT_TYPES>(r, "Sqrt");
  RegisterTyped<RsqrtOp, WEFT_FLOAT_TYPES>(r, "Rsqrt");
  RegisterTyped<ReciprocalOp, WEFT_FLOAT_TYPES>(r, "Reciprocal");
  RegisterTyped<ExpOp, WEFT_FLOAT_TYPES>(r, "Exp");
  RegisterTyped<LogOp, WEFT_FLOAT_TYPES>(r, "Log");

  RegisterTyped<EqualOp, WEFT_ALL_TYPES>(r, "Equal");
  RegisterTyped<NotEqualOp, WEFT_ALL_TYPES>(r, "NotEqual");
  RegisterTyped<LessOp, WEFT_NUMBER_TYPES>(r, "Less");
  RegisterTyped<LessEqualOp, WEFT_NUMBER_TYPES>(r, "LessEqual");
  RegisterTyped<GreaterOp, WEFT_NUMBER_TYPES>(r, "Greater");
  RegisterTyped<GreaterEqualOp, WEFT_NUMBER_TYPES>(r, "GreaterEqual");
  RegisterUntyped<LogicalAndOp>(r, "LogicalAnd");
  RegisterUntyped<LogicalOrOp>(r, "LogicalOr");
  RegisterUntyped<LogicalNotOp>(r, "LogicalNot");

  RegisterTyped<SelectOp, WEFT_ALL_TYPES>(r, "Select");
  RegisterUntyped<CastOp>(r, "Cast");
  RegisterTyped<AddNOp, WEFT_NUMBER_TYPES>(r, "AddN");

  RegisterReduceKernels(r);
  RegisterMatMulKernels(r);
}

}  // namespace weft
