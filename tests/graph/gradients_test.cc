#include <doctest/doctest.h>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "tests/graph/test_ops.h"

using namespace weft;

namespace {
double Scalar(Session& sess, Output o, std::vector<std::pair<Output, Tensor>> feeds = {}) {
  return sess.Run(feeds, {o})[0].scalar<double>()();
}
}  // namespace

TEST_CASE("gradients of a polynomial, summing over paths") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  // y = x*x + 3x: x reaches y along three paths.
  Output y = ops::Add(s, ops::Mul(s, x, x), ops::Mul(s, ops::Const(s, 3.0), x));
  auto dx = Gradients(s, {y}, {x});
  REQUIRE(dx[0].valid());
  Session sess(&g);
  CHECK(Scalar(sess, dx[0], {{x, Tensor::Scalar(2.0)}}) == doctest::Approx(7.0));
  CHECK(Scalar(sess, dx[0], {{x, Tensor::Scalar(-1.0)}}) == doctest::Approx(1.0));
  // Gradient nodes live under "gradients/".
  CHECK(dx[0].node->name().rfind("gradients/", 0) == 0);
}

TEST_CASE("grad_ys weight the ys; several ys add up") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat64, {});
  Output y1 = ops::Mul(s, x, x);
  Output y2 = ops::Mul(s, ops::Const(s, 5.0), x);
  auto dx = Gradients(s, {y1, y2}, {x}, {ops::Const(s, 2.0), ops::Const(s, 1.0)});
  Session sess(&g);
  CHECK(Scalar(sess, dx[0], {{x, Tensor::Scalar(3.0)}}) == doctest::Approx(2 * 6.0 + 5.0));
}

TEST_CASE("StopGradient blocks a path; unconnected xs get no gradient") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat64, {});
  Output z = ops::Placeholder(s, DType::kFloat64, {});
  Output y = ops::Add(s, ops::Mul(s, x, ops::StopGradient(s, x)), x);  // d/dx = stop(x) + 1
  auto d = Gradients(s, {y}, {x, z});
  CHECK_FALSE(d[1].valid());
  Session sess(&g);
  CHECK(Scalar(sess, d[0], {{x, Tensor::Scalar(4.0)}}) == doctest::Approx(5.0));
}

TEST_CASE("an op without a gradient on the path is reported by name") {
  test::RegisterTestOps();
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat64, {});
  Output r = s.WithOpName("opaque").Op("TestRecord", {x});
  Output y = ops::Mul(s, r, r);
  CHECK_THROWS_WITH_AS(Gradients(s, {y}, {x}), doctest::Contains("no gradient defined for TestRecord 'opaque'"), Error);
  // Off the path it does not matter.
  Output y2 = ops::Add(s, ops::Mul(s, x, x), ops::Identity(s, ops::Const(s, 1.0)));
  CHECK_NOTHROW(Gradients(s, {y2}, {x}));
}

TEST_CASE("integer ys cannot be differentiated") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output i = ops::Placeholder(s, DType::kInt32, {});
  CHECK_THROWS_WITH_AS(Gradients(s, {i}, {i}), doctest::Contains("only floating tensors"), Error);
}
