#include <doctest/doctest.h>

#include "core/dtype.h"

using namespace weft;

TEST_CASE("dtype names, sizes and parsing round-trip") {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kBool,
                   DType::kFloat16, DType::kBFloat16}) {
    CHECK(ParseDType(DTypeName(dt)) == dt);
    CHECK(DTypeSize(dt) > 0);
  }
  CHECK(DTypeSize(DType::kFloat64) == 8);
  CHECK(DTypeSize(DType::kBFloat16) == 2);
  CHECK(IsFloating(DType::kFloat32));
  CHECK_FALSE(IsFloating(DType::kInt32));
  CHECK(IsInteger(DType::kUInt8));
  CHECK_THROWS_WITH_AS(ParseDType("complex64"), doctest::Contains("unknown dtype 'complex64'"), Error);
}

TEST_CASE("Dispatch runs the matching type and names unsupported ones") {
  int size = 0;
  Dispatch<float, double>(DType::kFloat64, "test", [&](auto tag) { size = sizeof(typename decltype(tag)::type); });
  CHECK(size == 8);
  auto bad = [] { Dispatch<float, double>(DType::kInt32, "MyOp", [](auto) {}); };
  CHECK_THROWS_WITH_AS(bad(),
                       doctest::Contains("MyOp: unsupported dtype int32 (supported: float32, float64)"), Error);
}
