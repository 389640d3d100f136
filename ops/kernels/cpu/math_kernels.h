// Private to the math kernel family: the registration entry points of the files that
// RegisterMathKernels (ops/kernels/cpu/math.cc) calls, and the binary-op kernel they share.
//
// Binary ops (BinaryOp<T, F>) take one of two paths: for float/double ops returning T, the same
// shape and scalar-operand cases are flat Eigen expressions on the thread-pool device (explicitly
// vectorized, e.g. Div/Pow); everything else (general broadcasts, integer and bool types,
// comparisons) is the plain strided loop of broadcast.h. This split keeps compile time low: each
// Eigen device expression is an expensive instantiation, a loop instantiation is cheap.
#pragma once

#include <type_traits>

#include "ops/kernel.h"
#include "ops/kernels/cpu/broadcast.h"

namespace weft {

class KernelRegistry;

// Shape helpers shared with the GPU kernels (reduce.cc); both throw InvalidArgument on a bad axis.
// ArgMax / ArgMin of x over `axis_attr`: the output dims and x's [p, r, s] view (r > 0).
std::vector<int64_t> ArgReduceDims(const TensorShape& x, int64_t axis_attr, int64_t* p, int64_t* r, int64_t* s);
// Which axes of `shape` the reductions' attr `axis` names (empty = all); negative axes count from
// the end. Throws InvalidArgument on an out-of-range or repeated axis.
std::vector<bool> ReducedMask(const TensorShape& shape, const std::vector<int64_t>& axis);
// MatMul's product [m, k] x [k, n] of matrices a and b (transposed as flagged); BatchMatMul's of
// the last two dims of a and b (rank >= 2, adj_x / adj_y). Both throw InvalidArgument naming the
// shapes (a wrong rank, inner dimensions that differ), for the CPU and the GPU kernels alike.
struct MatMulDims {
  int64_t m, n, k;
};
MatMulDims CheckMatMul(const TensorShape& a, const TensorShape& b, bool transpose_a, bool transpose_b);
MatMulDims CheckBatchMatMul(const TensorShape& a, const TensorShape& b, bool adj_x, bool adj_y);
// ReducedShape: `dims` with the axes named by `axis` (empty = all) set to 1.
std::vector<int64_t> ReducedShapeDims(std::vector<int64_t> dims, const std::vector<int64_t>& axis);

void RegisterMathBinaryKernels(KernelRegistry& r);   // math_binary.cc: Add, Sub, Mul, Div, Pow, Maximum, Minimum
void RegisterMathCompareKernels(KernelRegistry& r);  // math_compare.cc: Equal..GreaterEqual, LogicalAnd/Or
void RegisterReduceKernels(KernelRegistry& r);  // reduce.cc: Sum, Mean, Max, Min, Prod, ArgMax, ArgMin, SumToShape, ReducedShape
void RegisterMatMulKernels(KernelRegistry& r);  // matmul.cc: MatMul, BatchMatMul

namespace math_internal {

// out = F(a, b) with numpy broadcasting. F: a binary functor with a scalar operator() and
// `result_type`; for the Eigen flat paths (float/double T, result T) an Eigen functor (derived from
// binary_op_base, so bind1st_op/bind2nd_op work). If F has `static void Validate(const Tensor& a,
// const Tensor& b)`, that runs first (e.g. the integer division-by-zero check).
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
    if constexpr (std::is_floating_point_v<T> && std::is_same_v<OutT, T>) {
      namespace ei = Eigen::internal;
      const auto& d = ctx->eigen_device();
      auto o = out->flat<OutT>();
      if (p.same_shape) {
        o.device(d) = a.flat<T>().binaryExpr(b.flat<T>(), F());
        return;
      }
      if (p.a_is_scalar) {
        o.device(d) = b.flat<T>().unaryExpr(ei::bind1st_op<F>(a.data<T>()[0]));
        return;
      }
      if (p.b_is_scalar) {
        o.device(d) = a.flat<T>().unaryExpr(ei::bind2nd_op<F>(b.data<T>()[0]));
        return;
      }
    }
    BinaryBroadcast<T, OutT>(ctx->intra_op_pool(), p, a, b, out, F());
  }
};

}  // namespace math_internal
}  // namespace weft
