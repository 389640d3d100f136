#include <doctest/doctest.h>

#include "graph/passes.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/random.h"
#include "tests/graph/test_ops.h"

using namespace weft;

namespace {
int CountOp(const Graph& g, std::string_view op) {
  int n = 0;
  for (Node* node : g.nodes()) n += node->op() == op;
  return n;
}
}  // namespace

TEST_CASE("prune keeps only what the fetches need and swaps feeds for _Arg") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
  Output y = ops::Identity(s, x);
  s.Op("TestFail", {x});  // not needed: never runs
  auto step = PruneForStep(g, {x}, {y}, {});
  CHECK(CountOp(*step, "_Arg") == 1);
  CHECK(CountOp(*step, "_Retval") == 1);
  CHECK(CountOp(*step, "Placeholder") == 0);
  CHECK(CountOp(*step, "TestFail") == 0);
  Session sess(&g);
  CHECK(sess.Run({{x, Tensor::Scalar(2.0f)}}, {y})[0].scalar<float>()() == 2.0f);
}

TEST_CASE("constant folding evaluates constant subgraphs and static shapes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Add(s, ops::Const(s, 2.0), ops::Const(s, 3.0));
  Output x = ops::Placeholder(s, DType::kFloat64, {4, 5});
  Output shape = ops::Shape(s, x);
  auto step = PruneForStep(g, {x}, {a, shape}, {});
  ThreadPool pool(1);
  CHECK(FoldConstants(step.get(), &pool) == 2);
  CHECK(CountOp(*step, "Add") == 0);
  CHECK(CountOp(*step, "Shape") == 0);
  Session sess(&g);
  auto out = sess.Run({{x, Tensor::Zeros(DType::kFloat64, {4, 5})}}, {a, shape});
  CHECK(out[0].scalar<double>()() == 5.0);
  CHECK(out[1].ToVector<int32_t>() == std::vector<int32_t>{4, 5});
}

TEST_CASE("folding leaves failing constant expressions for run time, where they name the node") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output d = ops::Div(s.WithOpName("div"), ops::Const(s, int32_t{1}), ops::Const(s, int32_t{0}));
  auto step = PruneForStep(g, {}, {d}, {});
  ThreadPool pool(1);
  CHECK(FoldConstants(step.get(), &pool) == 0);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {d}), doctest::Contains("'div'"), Error);
}

TEST_CASE("CSE merges identical pure nodes, never stateful ones") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, {3});
  Output a = ops::Mul(s, x, x);
  Output b = ops::Mul(s, x, x);
  Output r1 = ops::RandomUniform(s, {3}, DType::kFloat32, 0.0, 1.0, 7);
  Output r2 = ops::RandomUniform(s, {3}, DType::kFloat32, 0.0, 1.0, 7);
  auto step = PruneForStep(g, {x}, {ops::Add(s, a, b), r1, r2}, {});
  CHECK(CountOp(*step, "Mul") == 2);
  CHECK(EliminateCommonSubexpressions(step.get()) == 1);
  CHECK(CountOp(*step, "Mul") == 1);
  CHECK(CountOp(*step, "RandomUniform") == 2);
}
