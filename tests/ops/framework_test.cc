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

TEST_CASE("EnsureShape passes values through with the merged static shape; a step with another shape fails") {
  const AttrMap any_rows{{"shape", TensorShape({-1, 3})}};
  ExpectEqual(RunOp("EnsureShape", {T<float>({1, 2, 3, 4, 5, 6}, {2, 3})}, any_rows)[0],
              T<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  CheckGradient("EnsureShape", {Rand({2, 3})}, any_rows);
  // Static shapes that cannot agree fail when the node is built, naming both shapes.
  ExpectOpError("EnsureShape", {T<float>({1, 2}, {1, 2})}, any_rows, Code::kInvalidArgument,
                "the input's shape [1,2] is not compatible with [?,3]");
  // An unknown static shape is refined; the step checks the shape it really gets.
  Graph g;
  Scope s = Scope::Root(&g);
  const Output p = ops::Placeholder(s, DType::kFloat32, TensorShape::Unknown());
  const Output e = s.Op("EnsureShape", {p}, {{"shape", TensorShape({-1, 3})}});
  CHECK(e.shape() == TensorShape({-1, 3}));
  Session sess(&g);
  ExpectEqual(Fetch(sess, e, {{p, T<float>({7, 8, 9}, {1, 3})}}), T<float>({7, 8, 9}, {1, 3}));
  CHECK_THROWS_WITH_AS(Fetch(sess, e, {{p, T<float>({7, 8}, {1, 2})}}),
                       doctest::Contains("the tensor's shape [1,2] is not compatible with the ensured [?,3]"), Error);
}

TEST_CASE("Assert passes when every element is true and fails the step naming its message otherwise") {
  CHECK(RunOp("Assert", {T<bool>({1, 1, 1})}, {{"message", std::string("x > 0")}}).empty());
  Graph g;
  Scope s = Scope::Root(&g);
  const Output c = ops::Placeholder(s, DType::kBool, TensorShape({-1}));
  Node* a = s.AddNode("Assert", {c}, {{"message", std::string("x > 0")}});
  Session sess(&g);
  sess.Run({{c, T<bool>({1, 1})}}, {}, {a});
  CHECK_THROWS_WITH_AS(sess.Run({{c, T<bool>({1, 0, 1})}}, {}, {a}),
                       doctest::Contains("assertion failed: x > 0 (element 1 of the condition [3] is false)"), Error);
  ExpectOpError("Assert", {T<bool>({1, 0})}, {{"message", std::string("m")}}, Code::kInvalidArgument,
                "assertion failed: m");
  ExpectOpError("Assert", {T<float>({1})}, {{"message", std::string("m")}}, Code::kInvalidArgument, "bool");
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
