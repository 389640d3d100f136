#include <doctest/doctest.h>

#include "graph/scope.h"
#include "ops/framework.h"
#include "ops/state.h"

using namespace weft;

TEST_CASE("the builder names nodes uniquely, under sub-scopes") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 3});
  Output x2 = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {-1, 3});
  CHECK(x.node->name() == "x");
  CHECK(x2.node->name() == "x_1");
  Scope layer = s.NewSubScope("dense");
  Output i = ops::Identity(layer, x);
  CHECK(i.node->name() == "dense/Identity");
  CHECK(ops::Identity(layer, x).node->name() == "dense/Identity_1");
  CHECK(i.shape() == TensorShape({-1, 3}));
  CHECK(i.name() == "dense/Identity:0");
  CHECK(g.FindOutput("dense/Identity:0") == i);
  CHECK(g.FindOutput("dense/Identity") == i);
  CHECK(x.node->out_edges().size() == 2);
}

TEST_CASE("device scopes nest, the inner one winning") {
  Graph g;
  Scope s = Scope::Root(&g).WithDevice("/job:worker/task:1");
  Output c = ops::Const(s.WithDevice("/device:CPU:1"), 1.0f);
  CHECK(c.node->requested_device() == "/job:worker/task:1/device:CPU:1");
  CHECK_THROWS_AS(s.WithDevice("/bogus:1"), Error);
}

TEST_CASE("control dependencies from the scope become control edges") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Const(s, 1.0f);
  Node* n = ops::NoOp(s.WithControlDependencies({a}));
  REQUIRE(n->control_inputs().size() == 1);
  CHECK(n->control_inputs()[0] == a.node);
}

TEST_CASE("AddNode rejects bad nodes and names the node") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output f = ops::Const(s, 1.0f);
  Output i = ops::Const(s, int32_t{1});
  CHECK_THROWS_WITH_AS(s.AddNode("NoSuchOp", {}), doctest::Contains("unknown op 'NoSuchOp'"), Error);
  try {
    s.WithOpName("bad").AddNode("Assign", {f, f});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("Assign 'bad': ref input 'ref' must come from a Variable") != std::string::npos);
  }
  Output v = ops::Variable(s.WithOpName("v"), {}, DType::kFloat32);
  CHECK_THROWS_WITH_AS(ops::Assign(s, v, i), doctest::Contains("has dtype int32 but T is float32"), Error);
  CHECK_THROWS_WITH_AS(s.AddNode("Identity", {f}, {{"bogus", true}}), doctest::Contains("unknown attr 'bogus'"), Error);
  CHECK_THROWS_WITH_AS(s.AddNode("Identity", {f, f}), doctest::Contains("expects 1 inputs, got 2"), Error);
  CHECK_THROWS_WITH_AS(s.AddNode("Const", {}), doctest::Contains("missing attr"), Error);
  CHECK_THROWS_WITH_AS(s.AddNode("Placeholder", {}, {{"dtype", DType::kFloat32}, {"shape", std::string("x")}}),
                       doctest::Contains("attr 'shape' must be shape"), Error);
  Graph other;
  Output foreign = ops::Const(Scope::Root(&other), 1.0f);
  CHECK_THROWS_WITH_AS(ops::Identity(s, foreign), doctest::Contains("from another graph"), Error);
  const int before = g.num_nodes();
  CHECK_THROWS_AS(ops::Identity(s, Output()), Error);
  CHECK(g.num_nodes() == before);  // a failed AddNode leaves the graph unchanged
}

TEST_CASE("cycles are found and named") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Identity(s.WithOpName("a"), ops::Const(s, 1.0f));
  Output b = ops::Identity(s.WithOpName("b"), a);
  g.AddControlEdge(b.node, a.node);
  CHECK_THROWS_WITH_AS(TopologicalOrder(g.nodes()), doctest::Contains("cycle through nodes"), Error);
}

TEST_CASE("Clone keeps names, attrs and edges") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output a = ops::Const(s.WithOpName("a"), 2.0);
  ops::Identity(s.WithOpName("b"), a);
  auto c = g.Clone();
  CHECK(c->num_nodes() == 2);
  Node* b = c->FindNode("b");
  REQUIRE(b != nullptr);
  CHECK(b->input(0).node == c->FindNode("a"));
  CHECK(c->FindNode("a")->attr<Tensor>("value").scalar<double>()() == 2.0);
}
