// Gradients of ops::WhileLoop (graph/while_gradients.h): every gradient is checked against
// central finite differences in float64, and against its closed form where one exists (x^n, a
// geometric series); loops of 0 iterations, maximum_iterations, several loop variables, captured
// tensors, an RNN-style matmul/tanh body, a loop on another device, integer loop variables and
// the constructs not differentiated yet.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "graph/gradients.h"
#include "graph/session.h"
#include "ops/array.h"
#include "ops/control.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

using namespace weft;

namespace {

using Vars = std::vector<Output>;
using Feeds = std::vector<std::pair<Output, Tensor>>;

Tensor Copy(const Tensor& t) {
  Tensor c(t.dtype(), t.shape());
  std::memcpy(c.data<double>(), t.data<double>(), t.bytes());
  return c;
}

// The gradients of the scalar float64 `y` with respect to each fed placeholder, as Gradients
// builds them, checked element by element against central differences of y.
std::vector<Tensor> ExpectFiniteDifferences(Graph& g, Output y, const Feeds& feeds, const SessionOptions& options = {}) {
  Vars xs;
  for (const auto& f : feeds) xs.push_back(f.first);
  const Vars dxs = Gradients(Scope::Root(&g), {y}, xs);
  for (const Output& dx : dxs) REQUIRE(dx.valid());
  Session sess(&g, options);
  const std::vector<Tensor> analytic = sess.Run(feeds, dxs);
  const double h = 1e-6;
  for (size_t i = 0; i < feeds.size(); ++i) {
    REQUIRE(analytic[i].shape() == feeds[i].second.shape());
    for (int64_t e = 0; e < feeds[i].second.num_elements(); ++e) {
      auto at = [&](double delta) {
        Feeds moved = feeds;
        moved[i].second = Copy(feeds[i].second);
        moved[i].second.data<double>()[e] += delta;
        return sess.Run(moved, {y})[0].scalar<double>()();
      };
      const double numeric = (at(h) - at(-h)) / (2 * h);
      INFO("input ", i, " element ", e);
      CHECK(analytic[i].data<double>()[e] == doctest::Approx(numeric).epsilon(1e-6).scale(1.0));
    }
  }
  return analytic;
}

// (i, p) = (0, p0); while i < n: (i, p) = (i + 1, p * x).
Output Power(const Scope& s, Output p0, Output x, Output n, const ops::WhileOptions& options = {}) {
  return ops::WhileLoop(
      s, {ops::Const(s, 0), p0}, [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], n); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(b, v[1], x)}; },
      options)[1];
}

double Scalar(const Tensor& t) { return t.scalar<double>()(); }

}  // namespace

TEST_CASE("while_loop gradient: p0 * x^n with respect to the captured x and the initial p0") {
  for (int64_t parallel : {1, 10}) {
    for (int n : {0, 1, 5}) {
      Graph g;
      Scope s = Scope::Root(&g);
      Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
      Output p0 = ops::Placeholder(s.WithOpName("p0"), DType::kFloat64, {});
      Output y = Power(s, p0, x, ops::Const(s, n), {.parallel_iterations = parallel});
      const double xv = 1.3, pv = -0.7;
      INFO("n = ", n, ", parallel_iterations = ", parallel);
      std::vector<Tensor> d = ExpectFiniteDifferences(g, y, {{x, Tensor::Scalar(xv)}, {p0, Tensor::Scalar(pv)}});
      // d/dx = p0 n x^(n-1) (0 for a loop of 0 iterations, as TF); d/dp0 = x^n (1: passed through).
      CHECK(Scalar(d[0]) == doctest::Approx(n == 0 ? 0.0 : pv * n * std::pow(xv, n - 1)).epsilon(1e-12));
      CHECK(Scalar(d[1]) == doctest::Approx(std::pow(xv, n)).epsilon(1e-12));
    }
  }
}

TEST_CASE("while_loop gradient: each step runs its own stacks, and the count comes from the feed") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Output n = ops::Placeholder(s.WithOpName("n"), DType::kInt32, {});
  Output y = Power(s, ops::Const(s, 1.0), x, n);
  Output dx = Gradients(s, {y}, {x})[0];
  Session sess(&g);
  for (int k : {3, 0, 7, 3}) {
    const std::vector<Tensor> got = sess.Run({{x, Tensor::Scalar(0.9)}, {n, Tensor::Scalar<int32_t>(k)}}, {y, dx});
    CHECK(Scalar(got[0]) == doctest::Approx(std::pow(0.9, k)).epsilon(1e-12));
    CHECK(Scalar(got[1]) == doctest::Approx(k == 0 ? 0.0 : k * std::pow(0.9, k - 1)).epsilon(1e-12));
  }
}

TEST_CASE("while_loop gradient: a geometric series through two loop variables") {
  // (i, p, sum) = (0, 1, 0); while i < 6: (i + 1, p * x, sum + p): sum = 1 + x + ... + x^5,
  // d sum / dx = 1 + 2x + 3x^2 + 4x^3 + 5x^4.
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Vars out = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0), ops::Const(s, 0.0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 6)); },
      [&](const Scope& b, const Vars& v) {
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(b, v[1], x), ops::Add(b, v[2], v[1])};
      });
  const double xv = 0.8;
  std::vector<Tensor> d = ExpectFiniteDifferences(g, out[2], {{x, Tensor::Scalar(xv)}});
  double want = 0;
  for (int k = 1; k <= 5; ++k) want += k * std::pow(xv, k - 1);
  CHECK(Scalar(d[0]) == doctest::Approx(want).epsilon(1e-12));
}

TEST_CASE("while_loop gradient: an RNN-style body over a [batch, hidden] state, with a running sum") {
  // h <- tanh(h W + b) four times; acc <- acc + sum(h) each time; loss = acc + sum(h_final^2).
  Graph g;
  Scope s = Scope::Root(&g);
  // An unknown batch dim: the bias add's gradient reads the pre-activation's shape, which the
  // forward loop pushes instead of the value.
  Output h0 = ops::Placeholder(s.WithOpName("h0"), DType::kFloat64, {TensorShape::kUnknownDim, 3});
  Output w = ops::Placeholder(s.WithOpName("w"), DType::kFloat64, {3, 3});
  Output b = ops::Placeholder(s.WithOpName("b"), DType::kFloat64, {3});
  Vars out = ops::WhileLoop(
      s, {ops::Const(s, 0), h0, ops::Const(s, 0.0)},
      [&](const Scope& c, const Vars& v) { return ops::Less(c, v[0], ops::Const(c, 4)); },
      [&](const Scope& c, const Vars& v) {
        Output h = ops::Tanh(c, ops::Add(c, ops::MatMul(c, v[1], w), b));
        return Vars{ops::Add(c, v[0], ops::Const(c, 1)), h, ops::Add(c, v[2], ops::Sum(c, h))};
      });
  Output loss = ops::Add(s, out[2], ops::Sum(s, ops::Square(s, out[1])));
  const Tensor hv = Tensor::FromVector<double>({0.1, -0.4, 0.3, 0.7, 0.2, -0.5}, {2, 3});
  const Tensor wv = Tensor::FromVector<double>({0.5, -0.3, 0.8, 0.1, 0.9, -0.6, -0.7, 0.4, 0.2}, {3, 3});
  const Tensor bv = Tensor::FromVector<double>({0.05, -0.1, 0.2}, {3});
  ExpectFiniteDifferences(g, loss, {{h0, hv}, {w, wv}, {b, bv}});
  int shape_pushes = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == "LoopStackPush" && n->input(2).node->op() == "Shape") ++shape_pushes;
  }
  CHECK(shape_pushes >= 1);
}

TEST_CASE("while_loop gradient: maximum_iterations ends the backward loop with the forward one") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  // cond never fails; 3 iterations of v <- v * x from v = x: y = x^4, dy/dx = 4 x^3.
  Output y = ops::WhileLoop(
      s, {x}, [&](const Scope& b, const Vars&) { return ops::Const(b, true); },
      [&](const Scope& b, const Vars& v) { return Vars{ops::Mul(b, v[0], x)}; },
      {.maximum_iterations = ops::Const(s, 3)})[0];
  std::vector<Tensor> d = ExpectFiniteDifferences(g, y, {{x, Tensor::Scalar(1.1)}});
  CHECK(Scalar(d[0]) == doctest::Approx(4 * std::pow(1.1, 3)).epsilon(1e-12));
}

TEST_CASE("while_loop gradient: a loop on CPU:1 driven from CPU:0") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Scope on0 = s.WithDevice("/device:CPU:0");
  Output x = ops::Placeholder(on0.WithOpName("x"), DType::kFloat64, {});
  Output y = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 1.0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 4)); },
      [&](const Scope& b, const Vars& v) {
        const Scope on1 = b.WithDevice("/device:CPU:1");
        return Vars{ops::Add(on1, v[0], ops::Const(on1, 1)), ops::Mul(on1, ops::Tanh(on1, v[1]), x)};
      })[1];
  Output z = ops::Neg(on0.WithOpName("z"), y);
  ExpectFiniteDifferences(g, z, {{x, Tensor::Scalar(0.9)}}, {.num_cpu_devices = 2});
}

TEST_CASE("while_loop gradient: a loop split across devices (control on CPU:0, a multiply on CPU:1)") {
  Graph g;
  Scope s = Scope::Root(&g);
  const Scope on0 = s.WithDevice("/device:CPU:0");
  Output x = ops::Placeholder(on0.WithOpName("x"), DType::kFloat64, {});
  Output y = ops::WhileLoop(
      on0, {ops::Const(on0, 0), ops::Const(on0, 1.0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 4)); },
      [&](const Scope& b, const Vars& v) {
        Output scaled = ops::Mul(b.WithDevice("/device:CPU:1"), ops::Tanh(b, v[1]), x);
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Add(b, scaled, v[1])};
      })[1];
  ExpectFiniteDifferences(g, y, {{x, Tensor::Scalar(0.7)}}, {.num_cpu_devices = 2});
}

TEST_CASE("while_loop gradient: integer loop variables have none, float ones of an unused exit are zero") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Output i0 = ops::Placeholder(s.WithOpName("i0"), DType::kInt32, {});
  Vars out = ops::WhileLoop(
      s, {i0, x, x}, [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 3)); },
      [&](const Scope& b, const Vars& v) {
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Mul(b, v[1], v[1]), ops::Add(b, v[2], v[1])};
      });
  Vars d = Gradients(s, {out[1]}, {i0, x});
  CHECK_FALSE(d[0].valid());
  REQUIRE(d[1].valid());
  Session sess(&g);
  // i0 = 1: two iterations, x -> x^2 -> x^4.
  const Feeds feeds{{x, Tensor::Scalar(1.2)}, {i0, Tensor::Scalar<int32_t>(1)}};
  CHECK(Scalar(sess.Run(feeds, {d[1]})[0]) == doctest::Approx(4 * std::pow(1.2, 3)).epsilon(1e-12));
  // out[2] = x + x + x^2 (its own path and out[1]'s): d/dx = 2 + 2x.
  Output d2 = Gradients(s, {out[2]}, {x})[0];
  CHECK(Scalar(sess.Run(feeds, {d2})[0]) == doctest::Approx(2 + 2 * 1.2).epsilon(1e-12));
}

TEST_CASE("while_loop gradient: nested loops, the inner one reading the outer's variable and a captured x") {
  // Outer: 3 iterations of v <- inner(v) + x; inner: j < i + 1 iterations of w <- w * tanh(x + w).
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Output v0 = ops::Placeholder(s.WithOpName("v0"), DType::kFloat64, {});
  auto below = [](const Scope& b, const Vars& v, Output k) { return ops::Less(b, v[0], k); };
  Output y = ops::WhileLoop(
      s, {ops::Const(s, 0), v0}, [&](const Scope& b, const Vars& v) { return below(b, v, ops::Const(b, 3)); },
      [&](const Scope& b, const Vars& v) {
        Output i1 = ops::Add(b, v[0], ops::Const(b, 1));
        Output inner = ops::WhileLoop(
            b, {ops::Const(b, 0), v[1]}, [&](const Scope& c, const Vars& w) { return below(c, w, i1); },
            [&](const Scope& c, const Vars& w) {
              return Vars{ops::Add(c, w[0], ops::Const(c, 1)), ops::Mul(c, w[1], ops::Tanh(c, ops::Add(c, x, w[1])))};
            })[1];
        return Vars{i1, ops::Add(b, inner, x)};
      })[1];
  ExpectFiniteDifferences(g, y, {{x, Tensor::Scalar(0.6)}, {v0, Tensor::Scalar(0.8)}});
}

TEST_CASE("while_loop gradient: a cond in the body, each branch taken in some iterations") {
  // (i, v): v <- v * x on even i, v <- v + x * v^2 on odd i; 5 iterations.
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Output v0 = ops::Placeholder(s.WithOpName("v0"), DType::kFloat64, {});
  Vars out = ops::WhileLoop(
      s, {ops::Const(s, 0), v0, ops::Const(s, 0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 5)); },
      [&](const Scope& b, const Vars& v) {  // v: i, value, i's parity
        Output y = ops::Cond(
            b, ops::Equal(b, v[2], ops::Const(b, 0)), [&](const Scope& c) { return Vars{ops::Mul(c, v[1], x)}; },
            [&](const Scope& c) { return Vars{ops::Add(c, v[1], ops::Mul(c, x, ops::Square(c, v[1])))}; })[0];
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), y, ops::Sub(b, ops::Const(b, 1), v[2])};
      });
  ExpectFiniteDifferences(g, out[1], {{x, Tensor::Scalar(0.7)}, {v0, Tensor::Scalar(0.4)}});
}

TEST_CASE("while_loop gradient: 200 iterations whose work overlaps (parallel_iterations 10)") {
  // acc = sum over k < 200 of (x k)^2: each iteration's square needs only k and x, so up to 10
  // iterations run at once and push in any order. d acc / dx = 2 x sum k^2.
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s.WithOpName("x"), DType::kFloat64, {});
  Output acc = ops::WhileLoop(
      s, {ops::Const(s, 0), ops::Const(s, 0.0)},
      [&](const Scope& b, const Vars& v) { return ops::Less(b, v[0], ops::Const(b, 200)); },
      [&](const Scope& b, const Vars& v) {
        Output term = ops::Square(b, ops::Mul(b, x, ops::Cast(b, v[0], DType::kFloat64)));
        return Vars{ops::Add(b, v[0], ops::Const(b, 1)), ops::Add(b, v[1], term)};
      },
      {.parallel_iterations = 10})[1];
  Output dx = Gradients(s, {acc}, {x})[0];
  Session sess(&g);
  double squares = 0;
  for (int k = 0; k < 200; ++k) squares += static_cast<double>(k) * k;
  for (int run = 0; run < 3; ++run) {
    CHECK(Scalar(sess.Run({{x, Tensor::Scalar(0.3)}}, {dx})[0]) == doctest::Approx(2 * 0.3 * squares).epsilon(1e-12));
  }
}
