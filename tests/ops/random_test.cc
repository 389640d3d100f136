// Random ops: determinism under seeds (op-level and graph-level), statistics within bounds that
// a correct generator meets (the seeds are fixed, so these never flake), truncation, dropout.
#include <algorithm>
#include <cmath>

#include "graph/gradients.h"
#include "ops/framework.h"
#include "ops/random.h"
#include "tests/ops/op_test_util.h"

namespace weft::test {
namespace {

AttrMap RandomAttrs(TensorShape shape, DType dtype, int64_t seed, int64_t seed2, AttrMap extra = {}) {
  extra["shape"] = std::move(shape);
  extra["dtype"] = dtype;
  extra["seed"] = seed;
  extra["seed2"] = seed2;
  return extra;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = t.ElementAsDouble(i);
  return v;
}

struct Stats {
  double mean = 0, stddev = 0, min = INFINITY, max = -INFINITY;
};
Stats StatsOf(const Tensor& t) {
  Stats s;
  std::vector<double> v = Values(t);
  for (double x : v) {
    s.mean += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean /= v.size();
  for (double x : v) s.stddev += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(s.stddev / (v.size() - 1));
  return s;
}

constexpr int64_t kN = 100000;  // samples for the statistical checks

TEST_CASE("RandomUniform: range, mean and stddev, both dtypes") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor t = RunOp("RandomUniform", {}, RandomAttrs({kN}, dt, 7, 3, {{"minval", -2.0}, {"maxval", 3.0}}))[0];
    CHECK(t.dtype() == dt);
    CHECK(t.shape() == TensorShape({kN}));
    Stats s = StatsOf(t);
    CHECK(s.min >= -2.0);
    CHECK(s.max < 3.0);
    CHECK(s.min < -1.99);  // the whole range is covered
    CHECK(s.max > 2.99);
    // mean 0.5, stddev 5/sqrt(12); bounds are 5 standard errors.
    double sd = 5.0 / std::sqrt(12.0);
    ExpectMoments(t, 0.5, sd, 5 * sd / std::sqrt(kN), 0.01);
  }
}

TEST_CASE("RandomNormal: mean, stddev and the one-sigma fraction") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor t = RunOp("RandomNormal", {}, RandomAttrs({100, 1000}, dt, 11, 5, {{"mean", 1.5}, {"stddev", 2.0}}))[0];
    CHECK(t.shape() == TensorShape({100, 1000}));
    ExpectMoments(t, 1.5, 2.0, 5 * 2.0 / std::sqrt(kN), 5 * 2.0 / std::sqrt(2.0 * kN));
    int64_t within = 0;
    for (double x : Values(t)) within += std::abs(x - 1.5) <= 2.0;
    double p = 0.682689, frac = static_cast<double>(within) / kN;
    CHECK(std::abs(frac - p) < 5 * std::sqrt(p * (1 - p) / kN));
  }
}

TEST_CASE("TruncatedNormal: within 2 stddev, truncated-normal stddev") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor t = RunOp("TruncatedNormal", {}, RandomAttrs({kN}, dt, 3, 9, {{"mean", -1.0}, {"stddev", 0.5}}))[0];
    Stats s = StatsOf(t);
    CHECK(s.min >= -1.0 - 2 * 0.5);
    CHECK(s.max <= -1.0 + 2 * 0.5);
    CHECK(s.min < -1.95);  // the tails up to the bound are populated
    CHECK(s.max > -0.05);
    // Var of N(0,1) truncated to [-2, 2]: 1 - 2*2*phi(2) / (Phi(2) - Phi(-2)) = 0.773741.
    ExpectMoments(t, -1.0, 0.5 * std::sqrt(0.773741), 5 * 0.5 / std::sqrt(kN), 0.005);
  }
}

TEST_CASE("random ops: same seeds give the same values, other seeds other values") {
  for (const char* op : {"RandomUniform", "RandomNormal", "TruncatedNormal"}) {
    CAPTURE(op);
    Tensor a = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 1, 2))[0];
    Tensor b = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 1, 2))[0];
    Tensor c = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 1, 3))[0];
    Tensor d = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 2, 2))[0];
    ExpectEqual(a, b);
    CHECK(Values(a) != Values(c));
    CHECK(Values(a) != Values(d));
    // Unseeded (both 0): each kernel draws its own seed.
    Tensor e = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 0, 0))[0];
    Tensor f = RunOp(op, {}, RandomAttrs({64}, DType::kFloat32, 0, 0))[0];
    CHECK(Values(e) != Values(f));
  }
}

TEST_CASE("random ops: successive runs continue the stream; a fresh Session restarts it") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output r = ops::RandomNormal(s, {5000}, DType::kFloat32, 0.0, 1.0, /*seed=*/17);
  std::vector<Tensor> first, second;
  for (auto* out : {&first, &second}) {
    Session sess(&g);
    for (int i = 0; i < 3; ++i) out->push_back(sess.Run({}, {r})[0]);
  }
  CHECK(Values(first[0]) != Values(first[1]));
  CHECK(Values(first[1]) != Values(first[2]));
  for (int i = 0; i < 3; ++i) ExpectEqual(second[i], first[i]);
}

TEST_CASE("random ops: values do not depend on the number of intra-op threads") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output r = ops::TruncatedNormal(s, {300, 100}, DType::kFloat64, 0.0, 1.0, /*seed=*/5);
  Output u = ops::RandomUniform(s, {300, 100}, DType::kFloat32, 0.0, 1.0, /*seed=*/6);
  SessionOptions one, two;
  one.intra_op_threads = 1;
  two.intra_op_threads = 2;
  Session a(&g, one), b(&g, two);
  for (int i = 0; i < 2; ++i) {
    auto ra = a.Run({}, {r, u}), rb = b.Run({}, {r, u});
    ExpectEqual(ra[0], rb[0]);
    ExpectEqual(ra[1], rb[1]);
  }
}

TEST_CASE("graph-level seed: a rebuilt graph reproduces every op, ops differ from each other") {
  auto build_and_run = [](int64_t graph_seed) {
    Graph g;
    g.set_seed(graph_seed);
    Scope s = Scope::Root(&g);
    Output a = ops::RandomNormal(s, {32});
    Output b = ops::RandomNormal(s, {32});
    Output c = ops::Dropout(s, ops::Const(s, Tensor::Zeros(DType::kFloat32, {32})), 0.5);
    Session sess(&g);
    auto out = sess.Run({}, {a, b, Output(c.node, 1)});
    CHECK(a.node->attr<int64_t>("seed") == graph_seed);
    CHECK(a.node->attr<int64_t>("seed2") != b.node->attr<int64_t>("seed2"));
    return out;
  };
  auto x = build_and_run(1234), y = build_and_run(1234), z = build_and_run(99);
  for (int i = 0; i < 3; ++i) ExpectEqual(x[i], y[i]);
  CHECK(Values(x[0]) != Values(x[1]));
  CHECK(Values(x[0]) != Values(z[0]));

  // Op seed without a graph seed: deterministic too; no seed at all: differs per graph.
  auto op_seeded = [](int64_t seed) {
    Graph g;
    Scope s = Scope::Root(&g);
    Output a = ops::RandomUniform(s, {32}, DType::kFloat64, 0.0, 1.0, seed);
    Session sess(&g);
    return sess.Run({}, {a})[0];
  };
  ExpectEqual(op_seeded(3), op_seeded(3));
  CHECK(Values(op_seeded(0)) != Values(op_seeded(0)));
}

TEST_CASE("random ops: empty shapes and bad attrs") {
  Tensor e = RunOp("RandomNormal", {}, RandomAttrs({0, 4}, DType::kFloat64, 1, 1))[0];
  CHECK(e.shape() == TensorShape({0, 4}));
  ExpectOpError("RandomUniform", {}, RandomAttrs({2, -1}, DType::kFloat32, 1, 1), Code::kInvalidArgument,
                "fully defined");
  ExpectOpError("RandomUniform", {}, RandomAttrs({2}, DType::kFloat32, 1, 1, {{"minval", 2.0}, {"maxval", 1.0}}),
                Code::kInvalidArgument, "minval");
  ExpectOpError("RandomNormal", {}, RandomAttrs({2}, DType::kFloat32, 1, 1, {{"stddev", -1.0}}),
                Code::kInvalidArgument, "stddev");
  ExpectOpError("TruncatedNormal", {}, RandomAttrs({2}, DType::kInt32, 1, 1), Code::kInvalidArgument, "int32");
}

TEST_CASE("RandomUniformLike: x's shape, RandomUniform's numbers for the same seeds, float types only") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor x = Rand({3, 5, 7}, -4, 4, 9, dt);
    Tensor like = RunOp("RandomUniformLike", {x}, {{"seed", int64_t{3}}, {"seed2", int64_t{5}}})[0];
    CHECK(like.shape() == x.shape());
    CHECK(like.dtype() == dt);
    ExpectEqual(like, RunOp("RandomUniform", {}, RandomAttrs({3, 5, 7}, dt, 3, 5))[0]);
    Stats st = StatsOf(like);
    CHECK(st.min >= 0.0);
    CHECK(st.max < 1.0);
  }
  CHECK(RunOp("RandomUniformLike", {Rand({0, 4})}, {{"seed", int64_t{1}}, {"seed2", int64_t{1}}})[0].shape() ==
        TensorShape({0, 4}));
  ExpectOpError("RandomUniformLike", {T<int32_t>({1, 2})}, {}, Code::kInvalidArgument, "int32");
  // The shape comes at run time: a placeholder of unknown batch size builds, and each run follows
  // the fed shape.
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat32, TensorShape({-1, 2}));
  Output u = ops::RandomUniformLike(s, x, 7);
  Session sess(&g);
  CHECK(sess.Run({{x, Rand({4, 2}, -1, 1, 1, DType::kFloat32)}}, {u})[0].shape() == TensorShape({4, 2}));
  CHECK(sess.Run({{x, Rand({9, 2}, -1, 1, 2, DType::kFloat32)}}, {u})[0].shape() == TensorShape({9, 2}));
}

TEST_CASE("Dropout: keeps about 1 - rate, scales kept values, mask matches the output") {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    CAPTURE(DTypeName(dt));
    Tensor x = Rand({200, 500}, 0.5, 2.0, 3, dt);  // nonzero, so zeros in y mean dropped
    auto out = RunOp("Dropout", {x}, {{"rate", 0.3}, {"seed", int64_t{4}}, {"seed2", int64_t{8}}});
    std::vector<double> xv = Values(x), y = Values(out[0]), mask = Values(out[1]);
    int64_t kept = 0;
    bool ok = true;
    for (size_t i = 0; i < y.size(); ++i) {
      bool keep = mask[i] != 0;
      kept += keep;
      ok &= keep ? std::abs(mask[i] - 1 / 0.7) < 1e-6 : mask[i] == 0;
      ok &= std::abs(y[i] - xv[i] * mask[i]) <= 1e-6 * std::abs(y[i]);
    }
    CHECK(ok);
    double frac = static_cast<double>(kept) / y.size();
    CHECK(std::abs(frac - 0.7) < 5 * std::sqrt(0.21 / y.size()));
  }
  // rate 0 is the identity.
  Tensor x = Rand({7, 3});
  auto out = RunOp("Dropout", {x}, {{"rate", 0.0}, {"seed", int64_t{1}}, {"seed2", int64_t{1}}});
  ExpectEqual(out[0], x);
  // Empty input.
  auto empty = RunOp("Dropout", {Rand({0, 3})}, {{"rate", 0.5}, {"seed", int64_t{1}}, {"seed2", int64_t{1}}});
  CHECK(empty[0].shape() == TensorShape({0, 3}));
}

TEST_CASE("Dropout: rate must be in [0, 1)") {
  for (double rate : {1.0, -0.1, 1.5}) {
    CAPTURE(rate);
    ExpectOpError("Dropout", {Rand({3})}, {{"rate", rate}}, Code::kInvalidArgument, "rate must be in [0, 1)");
  }
  Graph g;
  Scope s = Scope::Root(&g);
  CHECK_THROWS_AS(ops::Dropout(s, ops::Const(s, 1.0f), 1.0), Error);
}

TEST_CASE("Dropout gradient: dy times the mask of the same step") {
  Graph g;
  Scope s = Scope::Root(&g);
  Output x = ops::Placeholder(s, DType::kFloat64);
  Output w = ops::Placeholder(s, DType::kFloat64);
  Output y = ops::Dropout(s, x, 0.4, /*seed=*/21);
  Output dx = Gradients(s, {y}, {x}, /*grad_ys=*/{w})[0];  // dy = w
  Tensor xv = Rand({40, 30}, 0.5, 1.0, 2), wv = Rand({40, 30}, -1.0, 1.0, 3);
  Session sess(&g);
  for (int step = 0; step < 3; ++step) {  // a new mask every step; the gradient follows it
    auto out = sess.Run({{x, xv}, {w, wv}}, {y, Output(y.node, 1), dx});
    std::vector<double> mask = Values(out[1]), d = Values(out[2]), wvv = Values(wv);
    bool ok = true;
    for (size_t i = 0; i < mask.size(); ++i) ok &= std::abs(d[i] - wvv[i] * mask[i]) < 1e-12;
    CHECK(ok);
  }
}

}  // namespace
}  // namespace weft::test

namespace weft::test {
namespace {

AttrMap SamplerAttrs(int64_t num_true, int64_t num_sampled, bool unique, int64_t range_max) {
  return {{"num_true", num_true}, {"num_sampled", num_sampled}, {"unique", unique}, {"range_max", range_max},
          {"seed", int64_t{3}}, {"seed2", int64_t{4}}};
}

double LogUniformP(int64_t c, int64_t range_max) {
  return (std::log(c + 2.0) - std::log(c + 1.0)) / std::log(range_max + 1.0);
}

TEST_CASE("LogUniformCandidateSampler: the log-uniform law, TF's expected counts, unique draws") {
  const int64_t range = 50, n = 20000;
  Tensor labels = T<int64_t>({0, 7, 49, 3}, {2, 2});
  auto out = RunOp("LogUniformCandidateSampler", {labels}, SamplerAttrs(2, n, false, range));
  CHECK(out[0].shape() == TensorShape({n}));
  // With replacement: expected count = num_sampled * P(c) (closed form).
  std::vector<double> want;
  for (int64_t c : {0, 7, 49, 3}) want.push_back(n * LogUniformP(c, range));
  ExpectNear(out[1], Make(DType::kFloat32, want, TensorShape({2, 2})), 0, 1e-5);
  int64_t zeros = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = out[0].data<int64_t>()[i];
    CHECK((c >= 0 && c < range));
    zeros += c == 0;
  }
  const double p0 = LogUniformP(0, range);
  CHECK(std::abs(static_cast<double>(zeros) / n - p0) < 5 * std::sqrt(p0 * (1 - p0) / n));
  // Unique: distinct classes; drawing every class gives each once, with expected counts in (0, 1].
  auto all = RunOp("LogUniformCandidateSampler", {labels}, SamplerAttrs(2, range, true, range));
  std::vector<int64_t> got(all[0].data<int64_t>(), all[0].data<int64_t>() + range);
  std::sort(got.begin(), got.end());
  for (int64_t c = 0; c < range; ++c) CHECK(got[c] == c);
  for (double v : V(all[2])) CHECK((v > 0.0 && v <= 1.0));
}

TEST_CASE("LogUniformCandidateSampler: bad input") {
  ExpectOpError("LogUniformCandidateSampler", {T<int64_t>({0, 60}, {1, 2})}, SamplerAttrs(2, 4, false, 50),
                Code::kInvalidArgument, "true_classes[1] = 60 is out of range [0, 50)");
  ExpectOpError("LogUniformCandidateSampler", {T<int64_t>({0}, {1, 1})}, SamplerAttrs(1, 60, true, 50),
                Code::kInvalidArgument, "unique sampling needs num_sampled (60) <= range_max (50)");
  ExpectOpError("LogUniformCandidateSampler", {T<int64_t>({0, 1}, {1, 2})}, SamplerAttrs(1, 4, false, 50),
                Code::kInvalidArgument, "num_true");
}

}  // namespace
}  // namespace weft::test
