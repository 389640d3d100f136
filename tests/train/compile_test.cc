// Losses, metrics, schedules and optimizers (train/losses.h, metrics.h, schedules.h,
// optimizers.h) on arrays, against closed forms and Keras' documented examples.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "graph/session.h"
#include "ops/framework.h"
#include "ops/state.h"
#include "train/metrics.h"
#include "train/optimizers.h"

using namespace weft;
using namespace weft::train;

namespace {

double Mean(const Tensor& t) {
  double s = 0;
  for (int64_t i = 0; i < t.num_elements(); ++i) s += t.data<float>()[i];
  return s / static_cast<double>(t.num_elements());
}

double MetricValue(const Metric& m, const Tensor& y, const Tensor& pred) { return m.Result(EvaluateMetricStats(m, y, pred)); }

Tensor F(std::vector<float> v, std::vector<int64_t> shape) { return Tensor::FromVector<float>(v, TensorShape(shape)); }

}  // namespace

TEST_CASE("losses: Keras' docstring examples and closed forms") {
  const Tensor bt = F({0, 1, 0, 0}, {2, 2}), bp = F({0.6f, 0.4f, 0.4f, 0.6f}, {2, 2});
  // BCE: mean over the last axis of -(y log p + (1 - y) log(1 - p)).
  const double bce = (-(std::log(0.4) + std::log(0.4)) / 2 - (std::log(0.6) + std::log(0.4)) / 2) / 2;
  CHECK(Mean(LossPerExample(BinaryCrossentropy(), bt, bp)) == doctest::Approx(bce).epsilon(1e-6));
  CHECK(bce == doctest::Approx(0.815).epsilon(1e-3));  // Keras' docstring
  // From logits: log(1 + exp(-x)) for y = 1, log(1 + exp(x)) for y = 0.
  const Tensor logits = F({2.0f, -1.0f}, {2, 1});
  const Tensor yl = F({1, 0}, {2, 1});
  const double want = (std::log1p(std::exp(-2.0)) + std::log1p(std::exp(-1.0))) / 2;
  CHECK(Mean(LossPerExample(BinaryCrossentropy(true), yl, logits)) == doctest::Approx(want).epsilon(1e-6));
  // A logit of 100 stays finite (the stable form).
  CHECK(std::isfinite(Mean(LossPerExample(BinaryCrossentropy(true), yl, F({-100.0f, 100.0f}, {2, 1})))));
  // Huber (delta 1): 0.5 e^2 inside, |e| - 0.5 outside.
  const Tensor h = LossPerExample(Huber(), F({0, 0}, {1, 2}), F({0.5f, 3.0f}, {1, 2}));
  CHECK(Mean(h) == doctest::Approx((0.125 + 2.5) / 2).epsilon(1e-6));
  CHECK(Mean(LossPerExample(MeanAbsoluteError(), F({0, 1}, {1, 2}), F({1, 1}, {1, 2}))) == doctest::Approx(0.5));
  // Label smoothing 0.1 over 2 classes: targets 0.05 / 0.95.
  const Tensor ls = LossPerExample(CategoricalCrossentropy(false, 0.1), F({0, 1}, {1, 2}), F({0.25f, 0.75f}, {1, 2}));
  CHECK(Mean(ls) == doctest::Approx(-(0.05 * std::log(0.25) + 0.95 * std::log(0.75))).epsilon(1e-6));
  // Sparse labels of shape (n, 1) are squeezed, as Keras does.
  const Tensor sp = LossPerExample(SparseCategoricalCrossentropy(), Tensor::FromVector<int32_t>({1}, {1, 1}),
                                   F({0.25f, 0.75f}, {1, 2}));
  CHECK(Mean(sp) == doctest::Approx(-std::log(0.75)).epsilon(1e-6));
  // Sequences: logits (batch 1, 2 steps, 2 classes), one label per step; each example's loss is
  // the mean over its steps of -log softmax(logits)[label] (Keras' per-position losses, averaged).
  const Tensor seq = LossPerExample(SparseCategoricalCrossentropy(true), Tensor::FromVector<int32_t>({1, 0}, {1, 2}),
                                    F({0, 1, 2, 0}, {1, 2, 2}));
  REQUIRE(seq.shape() == TensorShape({1}));
  CHECK(seq.data<float>()[0] ==
        doctest::Approx((std::log1p(std::exp(-1.0)) + std::log1p(std::exp(-2.0))) / 2).epsilon(1e-6));
  // Sequence accuracy: the fraction of steps whose argmax is the label (1 of 2 here).
  CHECK(MetricValue(Metric("accuracy").Resolved(SparseCategoricalCrossentropy(), TensorShape({-1, 2, 2})),
                    Tensor::FromVector<int32_t>({1, 1}, {1, 2}), F({0, 1, 2, 0}, {1, 2, 2})) == doctest::Approx(0.5));
  // Hinge with 0/1 labels takes them as -1/1: mean(max(1 - y p, 0)) = (max(1 + 0.5, 0) + max(1 - 2, 0)) / 2.
  CHECK(Mean(LossPerExample(LossByName("hinge"), F({0, 1}, {1, 2}), F({0.5f, 2.0f}, {1, 2}))) == doctest::Approx(0.75));
  // log cosh stays finite far from 0 (|x| - log 2 there).
  CHECK(Mean(LossPerExample(LossByName("logcosh"), F({0}, {1, 1}), F({200.0f}, {1, 1}))) ==
        doctest::Approx(200 - std::log(2.0)).epsilon(1e-6));
  CHECK(LossByName("KLDivergence").kind == Loss::Kind::kKLDivergence);
  CHECK(LossByName("MeanAbsoluteError").name() == "mean_absolute_error");
  CHECK(LossByName("huber_loss").kind == Loss::Kind::kHuber);
  CHECK_THROWS_WITH_AS(LossByName("focal"), doctest::Contains("known: binary_crossentropy"), Error);
  CHECK_THROWS_WITH_AS(LossPerExample(MeanSquaredError(), F({0, 0, 0}, {1, 3}), F({0, 0}, {1, 2})),
                       doctest::Contains("do not match predictions"), Error);
}

TEST_CASE("metrics: accumulated statistics, Keras' docstring examples") {
  // AUC(num_thresholds=3) on Keras' example: 0.75.
  CHECK(MetricValue(AUC(3), F({0, 0, 1, 1}, {4}), F({0, 0.5f, 0.3f, 0.9f}, {4})) == doctest::Approx(0.75));
  // Precision / recall: y = [0, 1, 1, 1], pred = [1, 0, 1, 1] -> 2/3 each.
  const Tensor y = F({0, 1, 1, 1}, {4}), p = F({1, 0, 1, 1}, {4});
  CHECK(MetricValue(Precision(), y, p) == doctest::Approx(2.0 / 3));
  CHECK(MetricValue(Recall(), y, p) == doctest::Approx(2.0 / 3));
  // Confusion counts at 0.5: tp 2 (0.9, 0.7 on positives), fp 1, tn 1, fn 1.
  const Tensor cy = F({1, 1, 1, 0, 0}, {5}), cp = F({0.9f, 0.7f, 0.2f, 0.6f, 0.1f}, {5});
  CHECK(MetricValue(ConfusionCount(Metric::Kind::kTruePositives), cy, cp) == 2);
  CHECK(MetricValue(ConfusionCount(Metric::Kind::kFalsePositives), cy, cp) == 1);
  CHECK(MetricValue(ConfusionCount(Metric::Kind::kTrueNegatives), cy, cp) == 1);
  CHECK(MetricValue(ConfusionCount(Metric::Kind::kFalseNegatives), cy, cp) == 1);
  CHECK(ConfusionCount(Metric::Kind::kFalseNegatives).name == "false_negatives");
  // A perfect ranking has PR AUC 1.
  CHECK(MetricValue(AUC(200, "prc", true), F({0, 0, 1, 1}, {4}), F({0.1f, 0.2f, 0.8f, 0.9f}, {4})) ==
        doctest::Approx(1.0).epsilon(1e-6));
  // Totals over two batches are the counts of both, not the mean of two ratios.
  MetricTotals totals({Precision()});
  totals.Add({Tensor::FromVector<float>({1, 1, 1, 1}, {4})});  // tp 1, fp 1 (and positives, negatives)
  totals.Add({Tensor::FromVector<float>({3, 0, 3, 1}, {4})});  // tp 3, fp 0
  CHECK(totals.Results().at("precision") == doctest::Approx(4.0 / 5));
  // "accuracy" resolves from the labels' and predictions' shapes (Keras' rule).
  const Tensor probs = F({0.1f, 0.9f, 0.8f, 0.05f, 0.95f, 0.0f}, {2, 3});
  CHECK(MetricValue(Metric("accuracy"), Tensor::FromVector<int32_t>({2, 1}, {2}), probs) == doctest::Approx(0.5));
  CHECK(MetricValue(Metric("acc"), F({0, 0, 1, 0, 1, 0}, {2, 3}), probs) == doctest::Approx(0.5));
  CHECK(MetricValue(Metric("accuracy"), F({1, 1, 0, 0}, {4, 1}), F({0.98f, 1, 0, 0.6f}, {4, 1})) ==
        doctest::Approx(0.75));
  CHECK(Metric("accuracy").Resolved(BinaryCrossentropy(), TensorShape({-1, 1})).kind == Metric::Kind::kBinaryAccuracy);
  CHECK(Metric("acc").Resolved(SparseCategoricalCrossentropy(), TensorShape({-1, 4})).kind ==
        Metric::Kind::kSparseCategoricalAccuracy);
  CHECK(Metric("accuracy").Resolved(MeanSquaredError(), TensorShape({-1, 4})).kind ==
        Metric::Kind::kCategoricalAccuracy);
  CHECK(Metric("acc").name == "acc");
  CHECK(MetricValue(TopKCategoricalAccuracy(1), F({0, 0, 1, 0, 1, 0}, {2, 3}), probs) == doctest::Approx(0.5));
  CHECK_THROWS_WITH_AS(Metric("f1"), doctest::Contains("known: acc, accuracy, auc"), Error);
  CHECK_THROWS_WITH_AS(AUC().Resolved(SparseCategoricalCrossentropy(), TensorShape({-1, 4})),
                       doctest::Contains("labels of shape"), Error);
}

TEST_CASE("schedules: Keras' formulas") {
  Schedule e = ExponentialDecay(0.1, 10, 0.5);
  CHECK((*e)(5) == doctest::Approx(0.1 * std::pow(0.5, 0.5)));
  CHECK((*ExponentialDecay(0.1, 10, 0.5, true))(25) == doctest::Approx(0.025));
  Schedule p = PiecewiseConstantDecay({10, 20}, {1.0, 0.5, 0.1});
  CHECK((*p)(10) == 1.0);
  CHECK((*p)(11) == 0.5);
  CHECK((*p)(20) == 0.5);
  CHECK((*p)(21) == doctest::Approx(0.1));
  Schedule c = CosineDecay(0.0, 100, 0.0, 0.1, 10);
  CHECK((*c)(5) == doctest::Approx(0.05));
  CHECK((*c)(60) == doctest::Approx(0.05));
  CHECK((*c)(500) == doctest::Approx(0.0));
  CHECK(ConstantLR(0.1)->constant());
  CHECK_FALSE(e->constant());
  CHECK_THROWS_WITH_AS(PiecewiseConstantDecay({1, 2}, {1.0}), doctest::Contains("one more entry"), Error);
  CHECK_THROWS_WITH_AS(CosineDecay(0.1, 10, 0.0, 0.2, 0), doctest::Contains("warmup_steps"), Error);
}

// One step of `opt` on w = [1, -2] with the gradient g = [0.5, -3] fed directly.
std::vector<float> OneStep(const Optimizer& opt, int steps = 1) {
  Graph g;
  Scope s = Scope::Root(&g);
  Output w = ops::Variable(s.WithOpName("w"), TensorShape({2}), DType::kFloat32);
  Output step = ops::Variable(s.WithOpName("step"), TensorShape{}, DType::kInt64);
  std::vector<Output> inits = {ops::Assign(s, w, ops::Const(s, F({1, -2}, {2}))),
                               ops::Assign(s, step, ops::Const(s, int64_t{0}))};
  Output grad = ops::Const(s, F({0.5f, -3.0f}, {2}));
  Output lr = ops::Placeholder(s.WithOpName("lr"), DType::kFloat32, TensorShape{});
  auto slot = [&](const Output& var, const std::string& name) {
    Output v = ops::Variable(s.WithOpName(var.node->name() + "/" + name), var.shape(), DType::kFloat32);
    inits.push_back(ops::Assign(s, v, ops::Const(s, Tensor::Zeros(DType::kFloat32, var.shape()))));
    return v;
  };
  std::vector<Output> updates = opt.Apply(s, {w}, {grad}, lr, step, slot);
  Output inc = ops::AssignAdd(s.WithControlDependencies(updates), step, ops::Const(s, int64_t{1}));
  Session sess(&g, SessionOptions{.inter_op_threads = 1, .intra_op_threads = 1});
  std::vector<Node*> init_nodes;
  for (const Output& i : inits) init_nodes.push_back(i.node);
  sess.Run({}, {}, init_nodes);
  for (int i = 0; i < steps; ++i) sess.Run({{lr, Tensor::Scalar<float>(0.1f)}}, {}, {inc.node});
  Tensor out = sess.Run({}, {w})[0];
  return {out.data<float>()[0], out.data<float>()[1]};
}

TEST_CASE("optimizers: one step against the closed-form update") {
  const double g0 = 0.5, g1 = -3.0, lr = 0.1;
  auto check = [](const std::vector<float>& got, double w0, double w1) {
    CHECK(got[0] == doctest::Approx(w0).epsilon(1e-5));
    CHECK(got[1] == doctest::Approx(w1).epsilon(1e-5));
  };
  check(OneStep(SGD(lr)), 1 - lr * g0, -2 - lr * g1);
  // Adam's first step: m_hat / sqrt(v_hat) = sign(g): w -= lr * g / (|g| + eps * sqrt(1 - b2)).
  check(OneStep(Adam(lr)), 1 - lr, -2 + lr);
  // RMSprop: v = 0.1 g^2, w -= lr g / sqrt(v + eps).
  check(OneStep(RMSprop(ConstantLR(lr))), 1 - lr * g0 / std::sqrt(0.1 * g0 * g0 + 1e-7),
        -2 - lr * g1 / std::sqrt(0.1 * g1 * g1 + 1e-7));
  // Adagrad: acc = 0.1 + g^2.
  check(OneStep(Adagrad(ConstantLR(lr))), 1 - lr * g0 / std::sqrt(0.1 + g0 * g0 + 1e-7),
        -2 - lr * g1 / std::sqrt(0.1 + g1 * g1 + 1e-7));
  // AdamW: w -= lr * wd * w, then Adam's step.
  check(OneStep(AdamW(ConstantLR(lr), 0.5)), 1 * (1 - lr * 0.5) - lr, -2 * (1 - lr * 0.5) + lr);
  // clipnorm 1: g scaled to unit norm; clipvalue 1: each element into [-1, 1].
  Optimizer cn = SGD(lr);
  cn.clipnorm = 1.0;
  const double norm = std::sqrt(g0 * g0 + g1 * g1);
  check(OneStep(cn), 1 - lr * g0 / norm, -2 - lr * g1 / norm);
  Optimizer cv = SGD(lr);
  cv.clipvalue = 1.0;
  check(OneStep(cv), 1 - lr * g0, -2 + lr);
  // SGD momentum 0.9, two steps: m1 = -lr g, m2 = 0.9 m1 - lr g: w += m1 + m2.
  check(OneStep(SGD(lr, 0.9), 2), 1 - lr * g0 * 2.9, -2 - lr * g1 * 2.9);
  CHECK(OptimizerByName("RMSprop").kind == Optimizer::Kind::kRMSprop);
  CHECK_THROWS_WITH_AS(OptimizerByName("lbfgs"), doctest::Contains("known: adadelta, adafactor, adagrad, adam, adamax"), Error);
  Optimizer both = SGD(lr);
  both.clipnorm = both.clipvalue = 1.0;
  CHECK_THROWS_WITH_AS(both.Validate(), doctest::Contains("only one of clipnorm"), Error);
}

TEST_CASE("optimizers Lamb, Adafactor: the first step's closed form (Keras 3's update_step)") {
  const double g[2] = {0.5, -3.0}, w[2] = {1.0, -2.0}, lr = 0.1, eps = 1e-7;
  const std::vector<float> lamb = OneStep(Lamb(ConstantLR(lr)));
  const std::vector<float> ada = OneStep(Adafactor(ConstantLR(lr)));
  // Lamb at t = 1: m_hat = g, v_hat = g^2, u = g / (|g| + eps); trust ratio |w| / |u|.
  double u[2], u_norm = 0.0;
  for (int i = 0; i < 2; ++i) u_norm += (u[i] = g[i] / (std::abs(g[i]) + eps)) * u[i];
  const double ratio = std::sqrt(w[0] * w[0] + w[1] * w[1]) / std::sqrt(u_norm);
  // Adafactor on a vector at t = 1: b2t = 1 - 1^-0.8 = 0, so v = g^2 + 1e-30; u = g / sqrt(v) has
  // rms 1 (no clipping at threshold 1); alpha = max(1e-3, rms(w)) * min(lr, 1 / sqrt(1)).
  const double alpha = std::sqrt((w[0] * w[0] + w[1] * w[1]) / 2) * lr;
  for (size_t i = 0; i < 2; ++i) {
    CHECK(lamb[i] == doctest::Approx(w[i] - lr * ratio * u[i]).epsilon(1e-5));
    CHECK(ada[i] == doctest::Approx(w[i] - alpha * g[i] / std::sqrt(g[i] * g[i] + 1e-30)).epsilon(1e-5));
  }
  CHECK(OptimizerByName("adafactor").kind == Optimizer::Kind::kAdafactor);
  CHECK(OptimizerByName("Lamb").name() == "Lamb");
  CHECK_THROWS_WITH_AS(Adafactor(ConstantLR(lr), 0.5), doctest::Contains("beta_2_decay must be negative"), Error);
}

TEST_CASE("optimizers Nadam, Adamax, Adadelta, Ftrl, Lion: the first step's closed form") {
  const double g[2] = {0.5, -3.0}, w[2] = {1.0, -2.0}, lr = 0.1, eps = 1e-7;
  auto check = [&](const std::vector<float>& got, auto expected) {
    for (int i = 0; i < 2; ++i) CHECK(got[static_cast<size_t>(i)] == doctest::Approx(expected(w[i], g[i])).epsilon(1e-5));
  };
  // Adamax: m = 0.1 g, u = |g|: w -= lr * m / (0.1 * (u + eps)).
  check(OneStep(Adamax(ConstantLR(lr))), [&](double w0, double g0) { return w0 - lr * g0 / (std::abs(g0) + eps); });
  // Lion: w -= lr * sign((1 - b1) g).
  check(OneStep(Lion(ConstantLR(lr))), [&](double w0, double g0) { return w0 - lr * (g0 > 0 ? 1 : -1); });
  // Adadelta: a = (1 - rho) g^2; delta = -sqrt(eps) g / sqrt(a + eps).
  check(OneStep(Adadelta(ConstantLR(lr))), [&](double w0, double g0) {
    return w0 - lr * std::sqrt(eps) * g0 / std::sqrt(0.05 * g0 * g0 + eps);
  });
  // Nadam at t = 1: u1 = 0.9 (1 - 0.5 * 0.96), u2 = 0.9 (1 - 0.5 * 0.96^2), u_prod = u1.
  const double u1 = 0.9 * (1 - 0.5 * 0.96), u2 = 0.9 * (1 - 0.5 * 0.96 * 0.96);
  check(OneStep(Nadam(ConstantLR(lr))), [&](double w0, double g0) {
    const double m_hat = u2 * 0.1 * g0 / (1 - u1 * u2) + (1 - u1) * g0 / (1 - u1);
    return w0 - lr * m_hat / (std::abs(g0) + eps);  // v_hat = g^2
  });
  // Ftrl, no regularization: linear = g - (sqrt(0.1 + g^2) - sqrt(0.1)) / lr * w; w = -linear / (sqrt(0.1 + g^2) / lr).
  check(OneStep(Ftrl(ConstantLR(lr))), [&](double w0, double g0) {
    const double n = std::sqrt(0.1 + g0 * g0), linear = g0 - (n - std::sqrt(0.1)) / lr * w0;
    return -linear / (n / lr);
  });
  CHECK(OptimizerByName("Nadam").name() == "Nadam");
  CHECK_THROWS_WITH_AS(Ftrl(ConstantLR(lr), 0.5), doctest::Contains("learning_rate_power must be <= 0"), Error);
}

TEST_CASE("schedules InverseTimeDecay, PolynomialDecay, CosineDecayRestarts: Keras' formulas") {
  CHECK((*InverseTimeDecay(0.1, 10, 0.5))(5) == doctest::Approx(0.1 / 1.25));
  CHECK((*InverseTimeDecay(0.1, 10, 0.5, true))(15) == doctest::Approx(0.1 / 1.5));
  CHECK((*PolynomialDecay(0.5, 10, 0.1))(5) == doctest::Approx(0.3));
  CHECK((*PolynomialDecay(0.5, 10, 0.1, 2.0))(50) == doctest::Approx(0.1));
  // cycle: at step 15 the decay runs over 20 steps.
  CHECK((*PolynomialDecay(0.5, 10, 0.1, 1.0, true))(15) == doctest::Approx(0.4 * 0.25 + 0.1));
  Schedule r = CosineDecayRestarts(1.0, 10);  // periods of 10, 20, 40 steps
  CHECK((*r)(5) == doctest::Approx(0.5));
  CHECK((*r)(10) == doctest::Approx(1.0));
  CHECK((*r)(20) == doctest::Approx(0.5));
  CHECK((*CosineDecayRestarts(1.0, 10, 1.0, 0.5))(10) == doctest::Approx(0.5));
  CHECK_THROWS_WITH_AS(PolynomialDecay(0.1, 0), doctest::Contains("decay_steps must be positive"), Error);
}
