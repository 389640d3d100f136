// Control flow in the executor (ops/control.h, graph/executor_frames.h): conditionals run only
// the branch taken, loops run their iterations in frames, dead values cross devices, gradients of
// cond match finite differences (while_loop's: while_gradients_test.cc), infinite loops end on
// Cancel / timeout. Every expected value is a closed form.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "graph/gradients.h"
#include "graph/graph_io.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/state.h"

using namespace weft;

namespace {

using Vars = std::vector<Output>;

const char* kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";

float RunScalar(Session& sess, const std::vector<std::pair<Output, Tensor>>& feeds, Output y) {
  return sess.Run(feeds, {y})[0].scalar<float>()();
}

// x^n by n repeated multiplies: (i, p) = (0, 1); while i < n: (i, p) = (i + 1, p * x).
Output Power(const Scope& s, Output x, Output n, const ops::WhileOptions& options = {}) {
  return ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], n); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(b, v[1], x)}; },
      options)[1];
}

}  // namespace

TEST_CASE("Cond runs only the branch taken, side effects included") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output p = ops::Placeholder(s.WithOpName("p"), DType::kBool, {});
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
  Output v = ops::Variable(s.WithOpName("count"), {}, DType::kFloat32);
  Node* init = ops::Assign(s, v, ops::Const(s, 0.0f)).node;
  Output y = ops::Cond(
      s, p,
      [&](const Scope& b) { return Vars{ops::Mul(b, x, ops::Const(b, 2.0f))}; },
      [&](const Scope& b) {
        Output bumped = ops::AssignAdd(b, v, ops::Const(b, 1.0f));  // runs only when p is false
        return Vars{ops::Add(b, ops::Neg(b, x), ops::Mul(b, bumped, ops::Const(b, 0.0f)))};
      })[0];
  Session sess(&g);
  sess.Run({}, {}, {init});
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(true)}, {x, Tensor::Scalar(3.0f)}}, y) == 6.0f);
  CHECK(sess.Run({}, {v})[0].scalar<float>()() == 0.0f);
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(false)}, {x, Tensor::Scalar(3.0f)}}, y) == -3.0f);
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(false)}, {x, Tensor::Scalar(5.0f)}}, y) == -5.0f);
  CHECK(sess.Run({}, {v})[0].scalar<float>()() == 2.0f);
}

TEST_CASE("a fetch from the branch not taken is InvalidArgument, not a crash") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output p = ops::Placeholder(s.WithOpName("p"), DType::kBool, {});
  Output x = ops::Const(s, 1.0f);
  ops::SwitchOutputs sw = ops::Switch(s.WithOpName("sw"), x, p);
  Output t = ops::Neg(s.WithOpName("taken_if_true"), sw.output_true);
  Session sess(&g);
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(true)}}, t) == -1.0f);
  CHECK_THROWS_WITH_AS(sess.Run({{p, Tensor::Scalar(false)}}, {t}), doctest::Contains("cond branch that was not taken"),
                       Error);
}

TEST_CASE("Cond: branches with different results are an error naming both") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output p = ops::Placeholder(s, DType::kBool, {});
  Output x = ops::Const(s, 1.0f);
  CHECK_THROWS_WITH_AS(ops::Cond(s, p, [&](const Scope&) { return Vars{x, x}; }, [&](const Scope&) { return Vars{x}; }),
                       doctest::Contains("true_fn returned 2 values (float32 [], float32 []) but false_fn returned 1 "
                                         "(float32 [])"),
                       Error);
  Output i = ops::Const(s, 1);
  CHECK_THROWS_WITH_AS(ops::Cond(s, p, [&](const Scope&) { return Vars{x}; }, [&](const Scope&) { return Vars{i}; }),
                       doctest::Contains("float32 in true_fn's (float32 []) but int32 in false_fn's (int32 [])"), Error);
}

TEST_CASE("WhileLoop: x^n by repeated multiplies, every parallel_iterations") {
  for (int64_t parallel : {1, 2, 10}) {
    Graph g;
    Scope s = Scope::Root(&g);
    Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
    Output n = ops::Placeholder(s.WithOpName("n"), DType::kInt32, {});
    Output y = Power(s, x, n, {.parallel_iterations = parallel});
    Session sess(&g);
    for (int k : {0, 1, 5, 12}) {
      CHECK(RunScalar(sess, {{x, Tensor::Scalar(1.5f)}, {n, Tensor::Scalar<int32_t>(k)}}, y) ==
            doctest::Approx(std::pow(1.5, k)).epsilon(1e-6));
    }
  }
}

TEST_CASE("a graph with a loop survives a graph file: the back edge is set after its NextIteration is read") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat32, {});
  Power(s, x, ops::Const(s, 3));
  const std::string name = "while/exit_1:0";  // the power, the loop's second variable
  REQUIRE(g.FindNode("while/exit_1") != nullptr);
  std::unique_ptr<Graph> copy = ParseGraph(SerializeGraph(g), "loop");
  Session sess(copy.get());
  CHECK(sess.Run({{"x:0", Tensor::Scalar(2.0f)}}, {name}, {})[0].scalar<float>()() == 8.0f);
  std::unique_ptr<Graph> clone = copy->Clone();
  Session again(clone.get());
  CHECK(again.Run({{"x:0", Tensor::Scalar(-3.0f)}}, {name}, {})[0].scalar<float>()() == -27.0f);
}

TEST_CASE("WhileLoop: a matmul body, loop invariants and a long loop") {
  Graph g;
  Scope s = Scope::Root(&g);
  // Repeated rotation by 90 degrees: R^4 = I, so 1000 iterations of v <- R v leave v as it was.
  Output r = ops::Const(s, std::vector<float>{0, -1, 1, 0}, {2, 2});
  Output v0 = ops::Const(s, std::vector<float>{3, 4}, {2, 1});
  Vars out = ops::WhileLoop(
      s, {ops::Const(s, 0), v0}, [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 1001)); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::MatMul(b, r, v[1])}; });
  Session sess(&g);
  std::vector<Tensor> got = sess.Run({}, {out[0], out[1]});
  CHECK(got[0].scalar<int32_t>()() == 1001);
  // R^1001 = R: (3, 4) -> (-4, 3).
  CHECK(got[1].data<float>()[0] == -4.0f);
  CHECK(got[1].data<float>()[1] == 3.0f);
}

TEST_CASE("WhileLoop: nested loops, and a cond inside a loop") {
  Graph g;
  Scope s = Scope::Root(&g);
  // sum over i < 4, j < 5 of (i * j) = (0+1+2+3) * (0+1+2+3+4) = 60.
  Vars outer = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0)}, [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 4)); },
      [&](const Scope& b, const Vars& v) {
        Output i = v[0];
        Vars inner = ops::WhileLoop(
            b, {ops::Const(b, 0), v[1]}, [&](const Scope& c, const Vars& w) { return ops::Less(c, w[0], ops::Const(c, 5)); },
            [&](const Scope& c, const Vars& w) {
              return Vars{ops::Add(c, w[0], ops::Const(c, 1)), ops::Add(c, w[1], ops::Mul(c, i, w[0]))};
            });
        return Vars{ops::Add(b, i, ops::Const(b, 1)), inner[1]};
      });
  // The even numbers below 10, summed by a cond in the body: 0 + 2 + 4 + 6 + 8 = 20; the odd
  // ones counted in the other branch: 5.
  Vars evens = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0), ops::Const(s, 0), ops::Const(s, 0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 10)); },
      [&](const Scope& b, const Vars& v) {  // v: i, sum of evens, count of odds, i's parity
        Output even = ops::Equal(b, v[3], ops::Const(b, 0));
        Vars picked = ops::Cond(
            b, even, [&](const Scope& c) { return Vars{ops::Add(c, v[1], v[0]), v[2]}; },
            [&](const Scope& c) { return Vars{v[1], ops::Add(c, v[2], ops::Const(c, 1))}; });
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), picked[0], picked[1], ops::Sub(b, ops::Const(b, 1), v[3])};
      });
  Session sess(&g);
  std::vector<Tensor> got = sess.Run({}, {outer[1], evens[1], evens[2]});
  CHECK(got[0].scalar<int32_t>()() == 60);
  CHECK(got[1].scalar<int32_t>()() == 20);
  CHECK(got[2].scalar<int32_t>()() == 5);
}

TEST_CASE("WhileLoop: maximum_iterations ends a loop whose cond never fails") {
  Graph g;
  Scope s = Scope::Root(&g);
  Vars out = ops::WhileLoop(
      s, {ops::Const(s, 2.0f)}, [&](const Scope& b, const Vars&) { return ops::Const(b, true); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Mul(b, v[0], v[0])}; },
      {.maximum_iterations = ops::Const(s, int64_t{3})});
  Session sess(&g);
  CHECK(RunScalar(sess, {}, out[0]) == 256.0f);  // 2 -> 4 -> 16 -> 256
}

TEST_CASE("WhileLoop: shape invariants") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Const(s, std::vector<float>{1}, {1});
  auto cond = [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 3)); };
  auto grow = [&](const Scope& b, const Vars& v) {
    return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Concat(b, {v[1], v[1]}, 0)};
  };
  CHECK_THROWS_WITH_AS(ops::WhileLoop(s, {ops::Const(s, 0), x}, cond, grow, {.names = {"i", "v"}}),
                       doctest::Contains("changes the shape of loop variable 'v' from [1] to [2]"), Error);
  Vars out = ops::WhileLoop(s, {ops::Const(s, 0), x}, cond, grow, {.shape_invariants = {TensorShape{}, TensorShape({-1})}});
  CHECK(out[1].shape() == TensorShape({-1}));
  Session sess(&g);
  CHECK(sess.Run({}, {out[1]})[0].shape() == TensorShape({8}));
}

TEST_CASE("a loop whose body is pinned to CPU:1 runs from a driver on CPU:0") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DType::kFloat32, {});
  Output n = ops::Const(s.WithDevice("/device:CPU:0"), 6);
  Output y = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0f)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], n); },
      [&](const Scope& b, const Vars& v) {
        const Scope on1 = b.WithDevice("/device:CPU:1");
        return Vars{ops::Add(on1, v[0], ops::Const(on1, 1)), ops::Mul(on1, v[1], x)};
      })[1];
  Output z = ops::Neg(s.WithOpName("z").WithDevice("/device:CPU:0"), y);
  Session sess(&g, {.num_cpu_devices = 2});
  CHECK(RunScalar(sess, {{x, Tensor::Scalar(2.0f)}}, z) == -64.0f);
  // The loop runs on CPU:1; only its inputs and result cross devices.
  for (const auto& [device, part] : sess.Partitions({x}, {z}, {})) {
    for (const Node* node : part->nodes()) {
      if (node->op() == "Merge" || node->op() == "Mul") CHECK(device == kCpu1);
      if (node->op() == "Neg") CHECK(device != kCpu1);
    }
  }
}

TEST_CASE("a loop split across devices: control on CPU:0, body on CPU:1, met by frame:iter keys") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Scope on0 = s.WithDevice("/device:CPU:0");
  Output x = ops::Placeholder(on0.WithOpName("x"), DType::kFloat32, {});
  // (i, p, q) = (0, 1, 0); while i < n: p <- p * x on CPU:1, q <- q + p on CPU:0: p = x^n, q = sum x^k (k < n).
  Output n = ops::Placeholder(on0.WithOpName("n"), DType::kInt32, {});
  Vars out = ops::WhileLoop(
      on0, {ops::Const(on0, 0), ops::Const(on0, 1.0f), ops::Const(on0, 0.0f)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], n); },
      [&](const Scope& b, const Vars& v) {
        const Scope on1 = b.WithDevice("/device:CPU:1");
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(on1.WithOpName("times_x"), v[1], x),
                    ops::Add(b.WithOpName("sum"), v[2], v[1])};
      });
  Session sess(&g, {.num_cpu_devices = 2});
  for (int k : {0, 1, 4}) {
    const std::vector<Tensor> got = sess.Run({{x, Tensor::Scalar(2.0f)}, {n, Tensor::Scalar<int32_t>(k)}}, {out[1], out[2]});
    CHECK(got[0].scalar<float>()() == std::pow(2.0f, k));
    CHECK(got[1].scalar<float>()() == std::pow(2.0f, k) - 1);
  }
  // The multiply runs on CPU:1 inside the loop's frame, driven by a control loop there.
  bool control_loop_on_1 = false;
  for (const auto& [device, part] : sess.Partitions({x, n}, {out[1], out[2]}, {})) {
    for (const Node* node : part->nodes()) {
      if (node->name() == "while/body/times_x") CHECK(device == kCpu1);
      if (node->name() == "while/body/sum") CHECK(device != kCpu1);
      if (device == kCpu1 && node->op() == "Merge") control_loop_on_1 = true;
    }
  }
  CHECK(control_loop_on_1);
}

TEST_CASE("dead values cross devices: a cond whose branch runs on CPU:1") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output p = ops::Placeholder(s.WithOpName("p").WithDevice("/device:CPU:0"), DType::kBool, {});
  Output x = ops::Placeholder(s.WithOpName("x").WithDevice("/device:CPU:0"), DType::kFloat32, {});
  Output v = ops::Variable(s.WithOpName("hits").WithDevice("/device:CPU:1"), {}, DType::kFloat32);
  Node* init = ops::Assign(s, v, ops::Const(s, 0.0f)).node;
  Output y = ops::Cond(
      s.WithDevice("/device:CPU:0"), p,
      [&](const Scope& b) {
        const Scope on1 = b.WithDevice("/device:CPU:1");
        Output hit = ops::AssignAdd(on1, v, ops::Const(on1, 1.0f));
        return Vars{ops::Add(on1, ops::Square(on1, x), ops::Mul(on1, hit, ops::Const(on1, 0.0f)))};
      },
      [&](const Scope& b) { return Vars{ops::Neg(b, x)}; })[0];
  Session sess(&g, {.num_cpu_devices = 2});
  sess.Run({}, {}, {init});
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(true)}, {x, Tensor::Scalar(3.0f)}}, y) == 9.0f);
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(false)}, {x, Tensor::Scalar(3.0f)}}, y) == -3.0f);
  CHECK(RunScalar(sess, {{p, Tensor::Scalar(false)}, {x, Tensor::Scalar(4.0f)}}, y) == -4.0f);
  CHECK(sess.Run({}, {v})[0].scalar<float>()() == 1.0f);  // the CPU:1 branch ran once
}

TEST_CASE("gradients of Cond match finite differences on both branches") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  // y = x > 0 ? x^3 : sin-free -2x + x^2
  Output y = ops::Cond(
      s, ops::Greater(s, x, ops::Const(s, 0.0)),
      [&](const Scope& b) { return Vars{ops::Mul(b, ops::Square(b, x), x)}; },
      [&](const Scope& b) { return Vars{ops::Add(b, ops::Mul(b, x, ops::Const(b, -2.0)), ops::Square(b, x))}; })[0];
  Output dy = Gradients(s, {y}, {x})[0];
  Session sess(&g);
  for (double at : {1.3, -0.7}) {
    auto f = [&](double v) { return sess.Run({{x, Tensor::Scalar(v)}}, {y})[0].scalar<double>()(); };
    const double h = 1e-6;
    const double numeric = (f(at + h) - f(at - h)) / (2 * h);
    const double analytic = sess.Run({{x, Tensor::Scalar(at)}}, {dy})[0].scalar<double>()();
    CHECK(analytic == doctest::Approx(numeric).epsilon(1e-6));
    CHECK(analytic == doctest::Approx(at > 0 ? 3 * at * at : -2 + 2 * at).epsilon(1e-9));
  }
}

TEST_CASE("an infinite loop ends on Session::Cancel and on the step's timeout") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output y = ops::WhileLoop(
      s, {ops::Const(s, 0)}, [&](const Scope& b, const Vars&) { return ops::Const(b, true); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Add(b, v[0], ops::Const(b, 1))}; })[0];
  Session sess(&g);
  // Cancel reaches steps that are running: repeated until this one has started and ended.
  std::atomic<bool> ended{false};
  std::thread canceller([&] {
    while (!ended.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      sess.Cancel();
    }
  });
  CHECK_THROWS_WITH_AS(sess.Run({}, {y}), doctest::Contains("cancelled"), Error);
  ended = true;
  canceller.join();
  RunOptions options;
  options.timeout = std::chrono::milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  try {
    sess.Run({}, {y}, {}, options);
    FAIL("the infinite loop returned");
  } catch (const Error& e) {
    CHECK(e.status().code() == Code::kDeadlineExceeded);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}
