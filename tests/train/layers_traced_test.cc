// Traced layers (train/layers_traced.h): what Keras' custom layers and TF ops on KerasTensors run
// as. A trace with an own weight and a Dense applied twice is copied into a graph with the
// layer's weights; outputs and gradients against closed forms; bad traces are errors naming what.
#include <doctest/doctest.h>

#include <string>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"
#include "tests/ops/op_test_util.h"
#include "tests/train/layer_test_util.h"
#include "train/layers_traced.h"

namespace weft::train {
namespace {

using namespace weft::test::layers;
using weft::test::ExpectNear;
using weft::test::T;

// y = dense(dense(x @ w)) + loss term sum(w): w (2, 3) is the layer's own weight, the Dense(3)
// is applied twice (one kernel and bias).
std::shared_ptr<TracedLayer> TwoDense(const LayerPtr& dense) {
  TraceRecorder rec("Custom 'custom'");
  for (bool training : {false, true}) {
    auto g = std::make_shared<Graph>();
    Scope s = Scope::Root(g.get());
    Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 2}));
    rec.Begin(g);
    Output w = rec.OwnWeight(0, Weight{"w", TensorShape({2, 3}), Ones()});
    Output h = rec.Apply(dense, {ops::MatMul(s, x, w)}, training);
    Output y = rec.Apply(dense, {h}, training);
    rec.AddLoss(ops::Sum(s, w));
    rec.Finish(training, {x}, y);
  }
  auto layer = std::make_shared<TracedLayer>("Custom");
  layer->SetTraces(rec, 1);
  return layer;
}

}  // namespace

TEST_CASE("TracedLayer: own and sublayer weights, shared once; output and gradient in closed form") {
  LayerPtr dense = Dense(3);
  std::shared_ptr<TracedLayer> layer = TwoDense(dense);
  CHECK(ShapeOf(LayerPtr(layer)(Input({2}))) == "[?,3]");
  REQUIRE(layer->weights().size() == 3);  // w, then the Dense's kernel and bias (declared once)
  CHECK(layer->weights()[0].name == "w");
  CHECK(layer->weights()[1].name == "dense/kernel");
  CHECK(layer->weights()[2].name == "dense/bias");
  CHECK(layer->CountParams(true) == 6 + 9 + 3);

  const Tensor x = T<float>({1, 2, -1, 0.5}, {2, 2});
  const Tensor w = T<float>({1, 0, 2, 0, 1, -1}, {2, 3});
  const Tensor k = T<float>({1, 0, 0, 0, 2, 0, 1, 0, 1}, {3, 3});
  const Tensor b = T<float>({0.5, -1, 0}, {3});
  // xw = [[1, 2, 0], [-1, 0.5, -2.5]]; h = xw @ k + b = [[1.5, 3, 0], [-3, 0, -2.5]];
  // y = h @ k + b = [[2, 5, 0], [-5, -1, -2.5]].
  ExpectNear(Apply(layer, {x}, {w, k, b}), T<float>({2, 5, 0, -5, -1, -2.5}, {2, 3}));

  // Copied into a graph over variables' stand-ins: d sum(y) / dw = x^T @ (1 @ (k @ k)^T), and the
  // add_loss term sum(w) arrives in ctx.losses.
  Graph g;
  Scope s = Scope::Root(&g);
  Output wv = ops::Placeholder(s, DType::kFloat32, TensorShape({2, 3}));
  std::vector<Output> losses;
  CallContext ctx{s.NewSubScope("custom"), true, {wv, ops::Const(s, k), ops::Const(s, b)}, nullptr, &losses};
  Output y = layer->Call(ctx, {ops::Const(s, x)});
  REQUIRE(losses.size() == 1);
  Session sess(&g);
  const auto out = sess.Run({{wv, w}}, {Gradients(s, {ops::Sum(s, y)}, {wv})[0], losses[0]});
  // k @ k = [[1, 0, 0], [0, 4, 0], [2, 0, 1]]; its row sums (k @ k) @ 1 = [1, 4, 3]; x^T @ 1 = [0, 2.5].
  ExpectNear(out[0], T<float>({0, 0, 0, 2.5, 10, 7.5}, {2, 3}));
  ExpectNear(out[1], T<float>({3}, {}));
}

TEST_CASE("TracedLayer: state updates run with the output; bad traces name what is wrong") {
  // y = x + (total += sum(x, 0)), where total is a non-trainable own weight.
  TraceRecorder rec("Sum 'sum'");
  auto g = std::make_shared<Graph>();
  Scope s = Scope::Root(g.get());
  Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 2}));
  rec.Begin(g);
  Output total = rec.OwnWeight(0, Weight{"total", TensorShape({2}), Zeros(), /*trainable=*/false});
  Output updated = ops::AssignAdd(s, total, ops::Sum(s, x, {0}));
  rec.AddUpdate(updated);
  rec.Finish(false, {x}, ops::Add(s, x, updated));
  auto layer = std::make_shared<TracedLayer>("Sum");
  layer->SetTraces(rec, 1);
  (*layer)(Input({2}));
  CHECK(layer->CountParams(false) == 2);
  Graph run;
  Scope rs = Scope::Root(&run);
  Output var = ops::Variable(rs, TensorShape({2}), DType::kFloat32);
  Output init = ops::Assign(rs, var, ops::Const(rs, T<float>({0, 0}, {2})));
  CallContext ctx{rs.NewSubScope("sum"), false, {var}, nullptr, nullptr};
  Output y = layer->Call(ctx, {ops::Const(rs, T<float>({1, 2, 3, 4}, {2, 2}))});
  Session sess(&run);
  sess.Run({}, {init});
  ExpectNear(sess.Run({}, {y})[0], T<float>({5, 8, 7, 10}, {2, 2}));
  ExpectNear(sess.Run({}, {y})[0], T<float>({9, 14, 11, 16}, {2, 2}));  // the second call sees the first's sum

  // A tensor from outside the call, a variable that is not a weight, a non-float output, no trace.
  auto bad = [](auto make) {
    TraceRecorder r("Bad 'bad'");
    auto bg = std::make_shared<Graph>();
    Scope bs = Scope::Root(bg.get());
    Output in = ops::Placeholder(bs, DType::kFloat32, TensorShape({-1, 2}));
    r.Begin(bg);
    Output out = make(bs, in);
    r.Finish(false, {in}, out);
    auto l = std::make_shared<TracedLayer>("Bad");
    l->SetTraces(r, 1);
    return ErrorOf([&] { Apply(l, {T<float>({1, 2}, {1, 2})}); });
  };
  CHECK(bad([](const Scope& bs, Output in) {
          return ops::Add(bs, in, ops::Placeholder(bs, DType::kFloat32, TensorShape({2})));
        }).find("Bad 'Bad': the function reads the tensor 'Placeholder_1'") != std::string::npos);
  CHECK(bad([](const Scope& bs, Output in) {
          return ops::Add(bs, in, ops::Variable(bs, TensorShape({2}), DType::kFloat32));
        }).find("is not one of its weights") != std::string::npos);
  CHECK(ErrorOf([] {
          TraceRecorder r("Ints 'ints'");
          auto bg = std::make_shared<Graph>();
          Scope bs = Scope::Root(bg.get());
          Output in = ops::Placeholder(bs, DType::kFloat32, TensorShape({-1, 2}));
          r.Begin(bg);
          r.Finish(false, {in}, ops::Cast(bs, in, DType::kInt32));
        }).find("Ints 'ints': call must return float32 values") != std::string::npos);
  CHECK(ErrorOf([] { LayerPtr(std::make_shared<TracedLayer>("Raw"))(Input({2})); })
            .find("its call has not been traced") != std::string::npos);
}

// A trace holding a while loop (tf.while_loop in a custom layer's call): (i, p, q) = (0, x, x);
// while i < 3: (i, p, q) = (i + 1, p * w, p * w); y = p. Copied twice into one graph (two calls)
// each copy is a loop of its own (its own frame name), q's unread Exit is copied with the loop
// (its gradient needs every variable's), and d sum(y) / dw = sum over the batch of 3 x w^2.
TEST_CASE("TracedLayer: a while loop in the trace is copied whole, per call, and differentiates") {
  TraceRecorder rec("Loop 'loop'");
  auto g = std::make_shared<Graph>();
  Scope ts = Scope::Root(g.get());
  Output x = ops::Placeholder(ts, DType::kFloat32, TensorShape({-1, 3}));
  rec.Begin(g);
  Output w = rec.OwnWeight(0, Weight{"w", TensorShape({3}), Ones()});
  std::vector<Output> r = ops::WhileLoop(
      ts, {ops::Const(ts, 0), x, x},
      [&](const Scope& b, const std::vector<Output>& v) { return ops::Less(b, v[0], ops::Const(b, 3)); },
      [&](const Scope& b, const std::vector<Output>& v) {
        Output p = ops::Mul(b, v[1], w);
        return std::vector<Output>{ops::Add(b, v[0], ops::Const(b, 1)), p, p};
      });
  rec.Finish(false, {x}, r[1]);
  auto layer = std::make_shared<TracedLayer>("Loop");
  layer->SetTraces(rec, 1);
  CHECK(ShapeOf(LayerPtr(layer)(Input({3}))) == "[?,3]");

  Graph graph;
  Scope s = Scope::Root(&graph);
  Output wv = ops::Placeholder(s, DType::kFloat32, TensorShape({3}));
  const Tensor xv = T<float>({1, 2, -1, 0.5, 0, 3}, {2, 3});
  std::vector<Output> ys;
  for (int call = 0; call < 2; ++call) {
    CallContext ctx{s.NewSubScope("loop"), false, {wv}, nullptr};
    ys.push_back(layer->Call(ctx, {ops::Const(s, xv)}));
  }
  Output total = ops::Add(s, ops::Sum(s, ys[0]), ops::Sum(s, ys[1]));
  Session sess(&graph);
  const auto out = sess.Run({{wv, T<float>({2, -1, 0.5}, {3})}}, {ys[0], ys[1], Gradients(s, {total}, {wv})[0]});
  // w^3 = [8, -1, 0.125]; 3 w^2 = [12, 3, 0.75]; the batch sums of x: [1.5, 2, 2], twice.
  const Tensor want = T<float>({8, -2, -0.125, 4, 0, 0.375}, {2, 3});
  ExpectNear(out[0], want);
  ExpectNear(out[1], want);
  ExpectNear(out[2], T<float>({36, 12, 3}, {3}));
}

}  // namespace weft::train
