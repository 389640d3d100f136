#include "ops/framework.h"
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

TEST_CASE("NoOp runs and takes no inputs") {
  CHECK(RunOp("NoOp", {}).empty());
  ExpectOpError("NoOp", {T<float>({1})}, {}, Code::kInvalidArgument, "expects 0 inputs, got 1");
}

TEST_CASE("Identity and StopGradient take one input; a Placeholder must be fed its dtype") {
  ExpectOpError("Identity", {}, {}, Code::kInvalidArgument, "expects 1 inputs, got 0");
  ExpectOpError("StopGradient", {T<float>({1}), T<float>({2})}, {}, Code::kInvalidArgument, "expects 1 inputs, got 2");
  ExpectOpError("Placeholder", {}, {{"dtype", DType::kFloat32}}, Code::kInvalidArgument, "must be fed");
  Graph g;
  Scope s = Scope::Root(&g);
  const Output p = ops::Placeholder(s, DType::kInt64, TensorShape({2}));
  Session sess(&g);
  ExpectEqual(Fetch(sess, p, {{p, T<int64_t>({3, 4})}}), T<int64_t>({3, 4}));
}
