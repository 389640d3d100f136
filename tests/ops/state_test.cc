#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "tests/ops/op_test_util.h"

using namespace weft;
using namespace weft::test;

TEST_CASE("Assign copies: later changes to the source do not leak into the variable") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("v"), {3}, DType::kInt32);
  Output x = ops::Placeholder(s, DType::kInt32, {3});
  Output assign = ops::Assign(s, v, x);
  Output sub = ops::AssignSub(s, v, ops::Const(s, Tensor::FromVector<int32_t>({1, 1, 1})));
  Session sess(&g);
  Tensor src = T<int32_t>({5, 6, 7});
  sess.Run({{x, src}}, {}, {assign.node});
  src.data<int32_t>()[0] = 100;
  ExpectEqual(sess.Run({}, {sub})[0], T<int32_t>({4, 5, 6}));
  ExpectEqual(sess.Run({{x, T<int32_t>({1, 2, 3})}}, {assign})[0], T<int32_t>({1, 2, 3}));
}

TEST_CASE("Assign validates the declared shape") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("w"), {2}, DType::kFloat32);
  Output x = ops::Placeholder(s, DType::kFloat32);
  Output assign = ops::Assign(s, v, x);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({{x, T<float>({1, 2, 3})}}, {assign}),
                       doctest::Contains("assigning shape [3] to variable 'w' declared [2]"), Error);
}

TEST_CASE("AssignAdd on an uninitialized variable is FailedPrecondition naming it") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("acc"), {}, DType::kFloat64);
  Output add = ops::AssignAdd(s, v, ops::Const(s, 1.0));
  Session sess(&g);
  try {
    sess.Run({}, {add});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kFailedPrecondition);
    CHECK(std::string(e.what()).find("uninitialized variable 'acc'") != std::string::npos);
  }
}

TEST_CASE("Variable reads what Assign, AssignAdd and AssignSub wrote; the ops output the new value") {
  ExpectEqual(RunOp("Assign", {T<float>({1, 2}), T<float>({5, 7})})[0], T<float>({5, 7}));
  ExpectEqual(RunOp("AssignAdd", {T<int64_t>({1, 2}), T<int64_t>({5, 7})})[0], T<int64_t>({6, 9}));
  ExpectEqual(RunOp("AssignSub", {T<double>({1, 2}), T<double>({5, 7})})[0], T<double>({-4, -5}));
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("v"), {2}, DType::kFloat32);
  Output init = ops::Assign(s, v, ops::Const(s, T<float>({3, 4})));
  Session sess(&g);
  sess.Run({}, {}, {init.node});
  ExpectEqual(Fetch(sess, v), T<float>({3, 4}));
}

TEST_CASE("state ops: uninitialized reads and mismatched shapes") {
  ExpectOpError("Variable", {}, {{"shape", TensorShape({2})}, {"dtype", DType::kFloat32}}, Code::kFailedPrecondition,
                "uninitialized");
  ExpectOpError("Assign", {T<float>({1, 2}), T<float>({1, 2, 3})}, {}, Code::kInvalidArgument, "[3]");
  ExpectOpError("AssignAdd", {T<float>({1, 2}), T<float>({1, 2, 3})}, {}, Code::kInvalidArgument, "[3]");
  ExpectOpError("AssignSub", {T<int32_t>({1, 2}), T<int32_t>({1})}, {}, Code::kInvalidArgument, "[1]");
}
