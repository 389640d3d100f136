#include "core/dtype.h"

namespace weft {

std::string_view DTypeName(DType dt) {
  switch (dt) {
    case DType::kInvalid: return "invalid";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
  }
  return "invalid";
}

DType ParseDType(std::string_view name) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8,
                   DType::kBool, DType::kFloat16, DType::kBFloat16}) {
    if (DTypeName(dt) == name) return dt;
  }
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  throw Error(errors::InvalidArgument("unknown dtype '{}'", name));
}

size_t DTypeSize(DType dt) {
  switch (dt) {
    case DType::kInvalid: return 0;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
    case DType::kBool: return 1;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
  }
  return 0;
}

bool IsFloating(DType dt) {
  return dt == DType::kFloat32 || dt == DType::kFloat64 || dt == DType::kFloat16 ||
         dt == DType::kBFloat16;
}

bool IsInteger(DType dt) {
  return dt == DType::kInt32 || dt == DType::kInt64 || dt == DType::kUInt8;
}

}  // namespace weft
