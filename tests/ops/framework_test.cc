#include "tests/ops/op_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("Identity passes values through, of every dtype, and has gradient dy") {
  ExpectEqual(RunOp("Identity", {T<float>({1, 2, 3})})[0], T<float>({1, 2, 3}));
  ExpectEqual(RunOp("Identity", {T<bool>({1, 0}, {2, 1})})[0], T<bool>({1, 0}, {2, 1}));
  ExpectEqual(RunOp("Identity", {T<int64_t>({}, {0, 3})})[0], T<int64_t>({}, {0, 3}));
  CheckGradient("Identity", {Rand({2, 3})});
}

TEST_CASE("StopGradient passes values through") {
  ExpectEqual(RunOp("StopGradient", {T<double>({4, 5})})[0], T<double>({4, 5}));
}

TEST_CASE("Const holds its value; its dtype must match") {
  ExpectEqual(RunOp("Const", {}, {{"value", T<int32_t>({7, 8})}, {"dtype", DType::kInt32}})[0], T<int32_t>({7, 8}));
  ExpectOpError("Const", {}, {{"value", T<int32_t>({7})}, {"dtype", DType::kFloat32}}, Code::kInvalidArgument,
                "value is int32[1] but dtype is float32");
}

TEST_CASE("NoOp runs") { CHECK(RunOp("NoOp", {}).empty()); }
