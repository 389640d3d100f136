// Stateless random ops (tf.random.stateless_*): the values are a pure function of (shape, seed),
// the same at any thread count, for int32 and int64 seeds; statistics within bounds a correct
// generator meets (fixed seeds: these never flake); binomial by both of its algorithms; bad input.
#include <cmath>

#include "graph/session.h"
#include "ops/framework.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

Tensor Shape(const std::vector<int64_t>& dims) { return T<int64_t>(std::vector<double>(dims.begin(), dims.end())); }
Tensor Seed(int64_t a, int64_t b) { return T<int64_t>({static_cast<double>(a), static_cast<double>(b)}); }
template <typename E>
Tensor Scalar(E v) {
  Tensor t = T<E>({0}, {});
  *t.data<E>() = v;
  return t;
}
AttrMap Dtype(DType dt) { return {{"dtype", dt}}; }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsDouble(i);
  return v;
}

constexpr int64_t kN = 100000;  // samples for the statistical checks

TEST_CASE("StatelessRandomUniform / Normal / TruncatedNormal: moments and ranges, both dtypes") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor u = RunOp("StatelessRandomUniform", {Shape({kN}), Seed(1, 2)}, Dtype(dt))[0];
    CHECK(u.dtype() == dt);
    CHECK(u.shape() == TensorShape({kN}));
    std::vector<double> v = Values(u);
    CHECK(*std::min_element(v.begin(), v.end()) >= 0.0);
    CHECK(*std::max_element(v.begin(), v.end()) < 1.0);
    double sd = 1 / std::sqrt(12.0);
    ExpectMoments(u, 0.5, sd, 5 * sd / std::sqrt(kN), 0.005);

    Tensor z = RunOp("StatelessRandomNormal", {Shape({100, 1000}), Seed(3, 4)}, Dtype(dt))[0];
    CHECK(z.shape() == TensorShape({100, 1000}));
    ExpectMoments(z, 0.0, 1.0, 5 / std::sqrt(kN), 5 / std::sqrt(2.0 * kN));

    Tensor t = RunOp("StatelessTruncatedNormal", {Shape({kN}), Seed(5, 6)}, Dtype(dt))[0];
    v = Values(t);
    CHECK(*std::min_element(v.begin(), v.end()) >= -2.0);
    CHECK(*std::max_element(v.begin(), v.end()) <= 2.0);
    CHECK(*std::min_element(v.begin(), v.end()) < -1.95);  // the tails up to the cut are populated
    // Var of N(0,1) truncated to [-2, 2]: 1 - 2*2*phi(2) / (Phi(2) - Phi(-2)) = 0.773741.
    ExpectMoments(t, 0.0, std::sqrt(0.773741), 5 / std::sqrt(kN), 0.005);
  }
}

TEST_CASE("Stateless ops: a pure function of (shape, seed); int32 and int64 seeds agree") {
  for (const char* op : {"StatelessRandomUniform", "StatelessRandomNormal", "StatelessTruncatedNormal"}) {
    CAPTURE(op);
    Tensor a = RunOp(op, {Shape({64}), Seed(7, 8)})[0];
    ExpectEqual(RunOp(op, {Shape({64}), Seed(7, 8)})[0], a);
    ExpectEqual(RunOp(op, {T<int32_t>({64}), T<int32_t>({7, 8})}, {{"Tseed", DType::kInt32}, {"Tshape", DType::kInt32}})[0],
                a);
    CHECK(Values(RunOp(op, {Shape({64}), Seed(7, 9)})[0]) != Values(a));
    CHECK(Values(RunOp(op, {Shape({64}), Seed(8, 8)})[0]) != Values(a));
    // A larger shape starts with the same values: element e depends on (seed, e) only.
    Tensor big = RunOp(op, {Shape({2, 64}), Seed(7, 8)})[0];
    for (int64_t i = 0; i < 64; ++i) CHECK(big.ElementAsDouble(i) == a.ElementAsDouble(i));
  }
}

TEST_CASE("Stateless ops: every run and every intra-op thread count gives the same values") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output shape = ops::Const(s, Shape({300, 70}));
  Output seed = ops::Const(s, Seed(11, 12));
  Output n = s.Op("StatelessTruncatedNormal", {shape, seed}, {{"dtype", DType::kFloat64}});
  Output u = s.Op("StatelessRandomUniform", {shape, seed}, {});
  CHECK(n.node->output_shape(0) == TensorShape({300, 70}));  // a constant shape is known at build time
  SessionOptions one, two;
  one.intra_op_threads = 1;
  two.intra_op_threads = 2;
  Session a(&g, one), b(&g, two);
  auto first = a.Run({}, {n, u});
  for (int i = 0; i < 2; ++i) {
    auto ra = a.Run({}, {n, u}), rb = b.Run({}, {n, u});
    ExpectEqual(ra[0], first[0]);
    ExpectEqual(rb[0], first[0]);
    ExpectEqual(ra[1], first[1]);
    ExpectEqual(rb[1], first[1]);
  }
}

TEST_CASE("StatelessRandomUniformInt / FullInt: ranges and moments") {
  for (DType dt : {DType::kInt32, DType::kInt64}) {
    CAPTURE(DTypeName(dt));
    Tensor lo = dt == DType::kInt32 ? Scalar<int32_t>(-3) : Scalar<int64_t>(-3);
    Tensor hi = dt == DType::kInt32 ? Scalar<int32_t>(7) : Scalar<int64_t>(7);
    Tensor t = RunOp("StatelessRandomUniformInt", {Shape({kN}), Seed(1, 1), lo, hi}, Dtype(dt))[0];
    CHECK(t.dtype() == dt);
    std::vector<double> v = Values(t);
    CHECK(*std::min_element(v.begin(), v.end()) == -3);
    CHECK(*std::max_element(v.begin(), v.end()) == 6);
    // Discrete uniform over 10 values: mean 1.5, variance (10^2 - 1) / 12.
    double sd = std::sqrt(99.0 / 12);
    ExpectMoments(t, 1.5, sd, 5 * sd / std::sqrt(kN), 0.02);

    Tensor f = RunOp("StatelessRandomUniformFullInt", {Shape({kN}), Seed(2, 1)}, Dtype(dt))[0];
    CHECK(f.dtype() == dt);
    double range = dt == DType::kInt32 ? std::ldexp(1.0, 32) : std::ldexp(1.0, 64);
    ExpectMoments(f, 0.0, range / std::sqrt(12.0), 5 * range / std::sqrt(12.0 * kN), 0.01 * range);
  }
  // The whole int64 range as [minval, maxval): no overflow in the span.
  Tensor w = RunOp("StatelessRandomUniformInt",
                   {Shape({1000}), Seed(3, 3), Scalar<int64_t>(INT64_MIN), Scalar<int64_t>(INT64_MAX)},
                   Dtype(DType::kInt64))[0];
  CHECK(w.num_elements() == 1000);
}

TEST_CASE("StatelessRandomBinomial: mean and variance by inversion, BTRS and symmetry; broadcasting") {
  struct Case {
    double n, p;
  };
  for (Case c : {Case{5, 0.3}, Case{100, 0.4}, Case{50, 0.8}, Case{1000, 0.05}}) {
    CAPTURE(c.n);
    CAPTURE(c.p);
    Tensor t = RunOp("StatelessRandomBinomial", {Shape({kN}), Seed(4, 5), Scalar<double>(c.n), Scalar<double>(c.p)})[0];
    CHECK(t.dtype() == DType::kInt64);
    std::vector<double> v = Values(t);
    CHECK(*std::min_element(v.begin(), v.end()) >= 0);
    CHECK(*std::max_element(v.begin(), v.end()) <= c.n);
    double sd = std::sqrt(c.n * c.p * (1 - c.p));
    ExpectMoments(t, c.n * c.p, sd, 5 * sd / std::sqrt(kN), 5 * sd / std::sqrt(2.0 * kN));
  }
  // counts [3] and probs [3] broadcast over a [rows, 3] output: per column n p.
  Tensor t = RunOp("StatelessRandomBinomial",
                   {Shape({20000, 3}), Seed(6, 7), T<float>({10.f, 0.f, 40.f}), T<float>({0.5f, 0.5f, 1.f})},
                   {{"dtype", DType::kFloat32}})[0];
  double sum[3] = {0, 0, 0};
  for (int64_t i = 0; i < t.num_elements(); ++i) sum[i % 3] += t.ElementAsDouble(i);
  CHECK(std::abs(sum[0] / 20000 - 5.0) < 5 * std::sqrt(2.5 / 20000));
  CHECK(sum[1] == 0);
  CHECK(sum[2] == 40.0 * 20000);
}

TEST_CASE("Stateless ops: bad input names the op, the shape or the value") {
  ExpectOpError("StatelessRandomUniform", {Shape({4}), T<int64_t>({1, 2, 3})}, {}, Code::kInvalidArgument,
                "seed must have shape [2]; its dim 0: dimensions differ (3 vs 2)");
  ExpectOpError("StatelessRandomNormal", {Shape({4, -2}), Seed(1, 2)}, {}, Code::kInvalidArgument,
                "StatelessRandomNormal: shape");
  ExpectOpError("StatelessTruncatedNormal", {Shape({4}), T<int64_t>({1})}, {}, Code::kInvalidArgument,
                "seed must have shape [2]");
  ExpectOpError("StatelessTruncatedNormal", {Shape({4}), Seed(1, 2)}, Dtype(DType::kInt32), Code::kInvalidArgument,
                "int32");
  ExpectOpError("StatelessRandomUniformInt", {Shape({4}), Seed(1, 2), Scalar<int32_t>(5), Scalar<int32_t>(5)},
                Dtype(DType::kInt32), Code::kInvalidArgument, "Need minval < maxval, got minval=5 maxval=5");
  ExpectOpError("StatelessRandomUniformInt", {Shape({4}), Seed(1, 2), T<int32_t>({0, 1}), Scalar<int32_t>(5)},
                Dtype(DType::kInt32), Code::kInvalidArgument, "minval must have rank 0, got shape [2]");
  ExpectOpError("StatelessRandomUniformFullInt", {Shape({4}), T<int64_t>({1, 2, 3, 4})}, {}, Code::kInvalidArgument,
                "StatelessRandomUniformFullInt 'op': seed must have shape [2]");
  ExpectOpError("StatelessRandomBinomial", {Shape({4}), Seed(1, 2), Scalar<double>(3), Scalar<double>(1.5)}, {},
                Code::kInvalidArgument, "probs must be in [0, 1], got 1.5");
  ExpectOpError("StatelessRandomBinomial", {Shape({4}), Seed(1, 2), Scalar<double>(-1), Scalar<double>(0.5)}, {},
                Code::kInvalidArgument, "counts must be finite and >= 0");
  ExpectOpError("StatelessRandomBinomial", {Shape({4, 2}), Seed(1, 2), T<double>({1, 2, 3}), Scalar<double>(0.5)},
                {}, Code::kInvalidArgument, "counts of shape [3] must be a scalar or a trailing part of the output "
                                            "shape [4,2]");
}

}  // namespace
}  // namespace weft::test
