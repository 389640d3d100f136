#include <doctest/doctest.h>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"

using namespace weft;

TEST_CASE("feeds, fetches, names and the compile cache") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output y = ops::Identity(s.WithOpName("y"), x);
  Session sess(&g);
  Tensor v = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  auto out = sess.Run({{x, v}}, {y});
  CHECK(out[0].ToVector<float>() == std::vector<float>{1, 2, 3, 4});
  const int64_t first = sess.last_step_id();
  sess.Run({{x, v}}, {y});
  CHECK(sess.num_compiled() == 1);
  CHECK(sess.last_step_id() == first + 1);
  // By name; a fed tensor can be fetched directly.
  out = sess.Run(std::vector<std::pair<std::string, Tensor>>{{"x:0", v}}, {"y:0", "x"}, {});
  CHECK(out[1].ToVector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(sess.num_compiled() == 2);
}

TEST_CASE("feed and fetch errors name the tensor") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 2});
  Output y = ops::Identity(s.WithOpName("y"), x);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {y}), doctest::Contains("placeholder 'x' (float32[?,2]) must be fed"), Error);
  CHECK_THROWS_WITH_AS(sess.Run({{x, Tensor::FromVector<int32_t>({1, 2})}}, {y}),
                       doctest::Contains("feed for 'x:0' has dtype int32, expected float32"), Error);
  CHECK_THROWS_WITH_AS(sess.Run({{x, Tensor::FromVector<float>({1, 2, 3})}}, {y}),
                       doctest::Contains("feed for 'x:0' has shape [3], expected [?,2]"), Error);
  using Names = std::vector<std::pair<std::string, Tensor>>;
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {"nope:0"}, {}), doctest::Contains("no node named 'nope'"), Error);
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {"y:3"}, {}), doctest::Contains("has 1 outputs"), Error);
  CHECK_THROWS_WITH_AS(sess.Run(Names{}, {}, {"nope"}), doctest::Contains("no target node named 'nope'"), Error);
}

TEST_CASE("variables live across steps; reading one before assigning is an error") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output v = ops::Variable(s.WithOpName("v"), {2}, DType::kFloat64);
  Output init = ops::Assign(s, v, ops::Const(s, Tensor::FromVector<double>({1, 2})));
  Output add = ops::AssignAdd(s, v, ops::Const(s, Tensor::FromVector<double>({10, 10})));
  Output read = ops::Identity(s, v);
  Session sess(&g);
  CHECK_THROWS_WITH_AS(sess.Run({}, {read}), doctest::Contains("uninitialized variable 'v'"), Error);
  sess.Run({}, {}, {init.node});
  sess.Run({}, {}, {add.node});
  CHECK(sess.Run({}, {read})[0].ToVector<double>() == std::vector<double>{11, 12});
  CHECK(sess.vars().Names() == std::vector<std::string>{"v"});
  // A second session has its own state.
  Session other(&g);
  CHECK_THROWS_AS(other.Run({}, {read}), Error);
  // Shape checks on update.
  Output bad = ops::Assign(s, v, ops::Const(s, Tensor::FromVector<double>({1, 2, 3})), /*validate_shape=*/false);
  CHECK_THROWS_WITH_AS(ops::AssignAdd(s.WithOpName("bad_add"), v, ops::Const(s, Tensor::Scalar<double>(1))),
                       doctest::Contains("AssignAdd 'bad_add': value shape [] differs from variable shape [2]"), Error);
  sess.Run({}, {}, {bad.node});  // validate_shape=false replaces the value
  CHECK(sess.Run({}, {read})[0].num_elements() == 3);
  // At run time too: the variable now holds 3 elements, the update has 2.
  CHECK_THROWS_WITH_AS(sess.Run({}, {}, {add.node}), doctest::Contains("update of shape [2] for variable 'v' of shape [3]"),
                       Error);
}
