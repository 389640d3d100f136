// CPU kernels for the binary arithmetic ops with numpy broadcasting: Add, Sub, Mul, Div, Pow,
// Maximum, Minimum, Atan2 (the shared kernel and its paths: math_kernels.h).
#include <cmath>
#include <type_traits>

#include "ops/all_ops.h"
#include "ops/kernel.h"
#include "ops/kernels/cpu/math_kernels.h"

namespace weft {
namespace {

namespace ei = Eigen::internal;
using math_internal::BinaryOp;

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

template <typename T> using AddOp = BinaryOp<T, ei::scalar_sum_op<T, T>>;
template <typename T> using SubOp = BinaryOp<T, ei::scalar_difference_op<T, T>>;
template <typename T> using MulOp = BinaryOp<T, ei::scalar_product_op<T, T>>;
template <typename T>
using DivOp = BinaryOp<T, std::conditional_t<std::is_integral_v<T>, IntDivF<T>, ei::scalar_quotient_op<T, T>>>;
template <typename T>
using PowOp = BinaryOp<T, std::conditional_t<std::is_integral_v<T>, IntPowF<T>, ei::scalar_pow_op<T, T>>>;
// A NaN operand gives NaN, as TF's Maximum/Minimum and np.maximum (Eigen's default keeps the
// first operand when one is NaN).
template <typename T> using MaximumOp = BinaryOp<T, ei::scalar_max_op<T, T, Eigen::PropagateNaN>>;
// atan2(a, b) with the quadrant from both signs (float types only).
template <typename T>
struct Atan2F : ei::binary_op_base<T, T> {
  using result_type = T;
  T operator()(const T& a, const T& b) const { return std::atan2(a, b); }
};
template <typename T> using Atan2Op = BinaryOp<T, Atan2F<T>>;
template <typename T> using MinimumOp = BinaryOp<T, ei::scalar_min_op<T, T, Eigen::PropagateNaN>>;

}  // namespace

void RegisterMathBinaryKernels(KernelRegistry& r) {
  RegisterTyped<AddOp, WEFT_NUMBER_TYPES>(r, "Add");
  RegisterTyped<SubOp, WEFT_NUMBER_TYPES>(r, "Sub");
  RegisterTyped<MulOp, WEFT_NUMBER_TYPES>(r, "Mul");
  RegisterTyped<DivOp, WEFT_NUMBER_TYPES>(r, "Div");
  RegisterTyped<PowOp, float, double, int32_t, int64_t>(r, "Pow");
  RegisterTyped<Atan2Op, WEFT_FLOAT_TYPES>(r, "Atan2");
  RegisterTyped<MaximumOp, WEFT_NUMBER_TYPES>(r, "Maximum");
  RegisterTyped<MinimumOp, WEFT_NUMBER_TYPES>(r, "Minimum");
}

}  // namespace weft
