// Checked integer arithmetic and the limits on what attributes and shapes may ask for: the one
// place the shape functions, kernels and builders take them from, so that an attribute such as
// dilations = 2^62 or num_split = 10^7 is a clear InvalidArgument naming it, never a wrapped
// product, a wrong result or a huge allocation.
//
//   const int64_t k_eff = CheckedAdd(CheckedMul(k - 1, dilation, "dilated window"), 1, "dilated window");
//   CheckAttrRange(c.attr<int64_t>("num_split"), 1, kMaxListArity, "num_split");
//   const int32_t n = CheckedNarrow<int32_t>(value, "element count");
//
// Every helper throws Error(InvalidArgument) naming `what`, the operands and the bound; the
// graph builder and the executor prefix the node and op.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/status.h"

namespace weft {

// The most list inputs or outputs one node may have (attrs such as N, num_split, num): enough
// for any real Concat or Split, small enough that a node's bookkeeping stays a few MiB.
inline constexpr int64_t kMaxListArity = int64_t{1} << 16;
// The largest window, stride or dilation an op accepts (ksize, strides, dilations, block
// sizes): int32's range, as TensorFlow's kernels assume, so every product in window arithmetic
// (checked besides) fits int64.
inline constexpr int64_t kMaxWindowAttr = std::numeric_limits<int32_t>::max();
// The longest timeout attr (seconds) an op accepts: about 68 years, and finite, so that it
// converts to milliseconds without overflow.
inline constexpr double kMaxTimeoutSeconds = 2147483648.0;
// (Shapes carry their own limits: TensorShape::kMaxRank and kMaxElements, core/shape.h.)

// a * b, a + b, a - b; InvalidArgument naming `what` and both operands when the result leaves
// int64.
inline int64_t CheckedMul(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw Error(errors::InvalidArgument("{}: {} * {} overflows int64", what, a, b));
  }
  return r;
}
inline int64_t CheckedAdd(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw Error(errors::InvalidArgument("{}: {} + {} overflows int64", what, a, b));
  }
  return r;
}
inline int64_t CheckedSub(int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    throw Error(errors::InvalidArgument("{}: {} - {} overflows int64", what, a, b));
  }
  return r;
}

// `v` as the narrower integer type To; InvalidArgument naming `what`, the value and To's range
// when it does not fit.
template <typename To, typename From>
To CheckedNarrow(From v, std::string_view what) {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>);
  if (!std::in_range<To>(v)) {
    throw Error(errors::InvalidArgument("{}: {} is out of range [{}, {}]", what, v,
                                        int64_t{std::numeric_limits<To>::min()},
                                        uint64_t{std::numeric_limits<To>::max()}));
  }
  return static_cast<To>(v);
}

// Returns `v` when lo <= v <= hi; else InvalidArgument "attr 'what' = v must be in [lo, hi]".
inline int64_t CheckAttrRange(int64_t v, int64_t lo, int64_t hi, std::string_view what) {
  if (v < lo || v > hi) {
    throw Error(errors::InvalidArgument("attr '{}' = {} must be in [{}, {}]", what, v, lo, hi));
  }
  return v;
}

}  // namespace weft
