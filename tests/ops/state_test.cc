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
