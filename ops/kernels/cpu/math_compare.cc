// CPU kernels for the comparisons (Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual) and
// LogicalAnd/LogicalOr, with numpy broadcasting; all run the plain loop of broadcast.h (their
// result type is bool, which Eigen does not vectorize anyway).
#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

namespace ei = Eigen::internal;
using math_internal::BinaryOp;

struct LogicalAndF {
  using result_type = bool;
  bool operator()(const bool& a, const bool& b) const { return a && b; }
};
struct LogicalOrF {
  using result_type = bool;
  bool operator()(const bool& a, const bool& b) const { return a || b; }
};

template <typename T> using EqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_EQ>>;
template <typename T> using NotEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_NEQ>>;
template <typename T> using LessOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_LT>>;
template <typename T> using LessEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_LE>>;
template <typename T> using GreaterOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_GT>>;
template <typename T> using GreaterEqualOp = BinaryOp<T, ei::scalar_cmp_op<T, T, ei::cmp_GE>>;
using LogicalAndOp = BinaryOp<bool, LogicalAndF>;
using LogicalOrOp = BinaryOp<bool, LogicalOrF>;

}  // namespace

void RegisterMathCompareKernels(KernelRegistry& r) {
  RegisterTyped<EqualOp, WEFT_ALL_TYPES>(r, "Equal");
  RegisterTyped<NotEqualOp, WEFT_ALL_TYPES>(r, "NotEqual");
  RegisterTyped<LessOp, WEFT_NUMBER_TYPES>(r, "Less");
  RegisterTyped<LessEqualOp, WEFT_NUMBER_TYPES>(r, "LessEqual");
  RegisterTyped<GreaterOp, WEFT_NUMBER_TYPES>(r, "Greater");
  RegisterTyped<GreaterEqualOp, WEFT_NUMBER_TYPES>(r, "GreaterEqual");
  RegisterUntyped<LogicalAndOp>(r, "LogicalAnd");
  RegisterUntyped<LogicalOrOp>(r, "LogicalOr");
}

}  // namespace weft
