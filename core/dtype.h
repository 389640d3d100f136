// Element types and compile-time dispatch over them.
//
//   DType dt = DTypeOf<float>();                       // DType::kFloat32
//   Dispatch<float, double>(dt, "MatMul", [&](auto tag) {
//     using T = typename decltype(tag)::type;          // runs with T = float
//   });
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace weft {

enum class DType : uint8_t {
  kInvalid = 0,
  kFloat32,
  kFloat64,
  kInt32,
  kInt64,
  kUInt8,
  kBool,
  kFloat16,   // storage only for now: no kernels yet
  kBFloat16,  // storage only for now: no kernels yet
};

std::string_view DTypeName(DType dt);       // "float32", ...
DType ParseDType(std::string_view name);     // throws InvalidArgument naming `name`
size_t DTypeSize(DType dt);                  // bytes per element; 0 for kInvalid
bool IsFloating(DType dt);
bool IsInteger(DType dt);

template <typename T> struct DTypeTraits;
template <> struct DTypeTraits<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeTraits<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeTraits<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeTraits<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeTraits<uint8_t> { static constexpr DType value = DType::kUInt8; };
template <> struct DTypeTraits<bool> { static constexpr DType value = DType::kBool; };

template <typename T> constexpr DType DTypeOf() { return DTypeTraits<T>::value; }

template <typename T> struct TypeTag { using type = T; };

// Calls f(TypeTag<T>{}) for the T in Ts whose DType equals `dt`; otherwise throws
// InvalidArgument naming `what` and the supported types.
template <typename... Ts, typename F>
void Dispatch(DType dt, std::string_view what, F&& f) {
  bool done = ((dt == DTypeOf<Ts>() ? (f(TypeTag<Ts>{}), true) : false) || ...);
  if (!done) {
    std::string supported;
    ((supported += (supported.empty() ? "" : ", "), supported += DTypeName(DTypeOf<Ts>())), ...);
    throw Error(errors::InvalidArgument("{}: unsupported dtype {} (supported: {})", what,
                                        DTypeName(dt), supported));
  }
}

// Type lists used across kernels.
#define WEFT_FLOAT_TYPES float, double
#define WEFT_NUMBER_TYPES float, double, int32_t, int64_t, uint8_t
#define WEFT_ALL_TYPES float, double, int32_t, int64_t, uint8_t, bool

}  // namespace weft
