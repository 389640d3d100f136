#include "train/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include <fmt/ranges.h>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"

namespace weft::train {
namespace {

using Kind = Metric::Kind;

Metric Make(Kind kind, std::string name) {
  Metric m;
  m.kind = kind;
  m.name = std::move(name);
  return m;
}

// [sum(values), count(values)]: a Keras MeanMetricWrapper's total and count.
Output MeanStats(const Scope& s, Output values) {
  values = ops::Cast(s, values, DType::kFloat32);
  Output sum = ops::Reshape(s, ops::Sum(s, values), std::vector<int64_t>{1});
  Output count = ops::Reshape(s, ops::Cast(s, ops::Size(s, values), DType::kFloat32), std::vector<int64_t>{1});
  return ops::Concat(s, {sum, count}, 0);
}

// Keras' AUC thresholds: -eps, 1/(n-1), ..., (n-2)/(n-1), 1 + eps (so 0 and 1 predictions land
// inside the curve's ends).
std::vector<float> AucThresholds(int n) {
  constexpr double kEps = 1e-7;
  std::vector<float> t = {static_cast<float>(-kEps)};
  for (int i = 0; i < n - 2; ++i) t.push_back(static_cast<float>((i + 1) * 1.0 / (n - 1)));
  t.push_back(static_cast<float>(1.0 + kEps));
  return t;
}

// [tp(T), fp(T), positives, negatives] at the thresholds: a prediction is positive above a
// threshold; a label is positive when nonzero (Keras casts y_true to bool). Every element counts.
Output ConfusionStats(const Scope& s, Output y, Output pred, const std::vector<float>& thresholds) {
  const int64_t t = static_cast<int64_t>(thresholds.size());
  Output p = ops::Reshape(s, ops::Cast(s, pred, DType::kFloat32), std::vector<int64_t>{-1, 1});
  Output pos = ops::Reshape(s, ops::Cast(s, ops::NotEqual(s, ops::Cast(s, y, DType::kFloat32),
                                                          ops::ScalarLike(s, DType::kFloat32, 0.0)),
                                         DType::kFloat32),
                            std::vector<int64_t>{-1, 1});
  Output neg = ops::Sub(s, ops::ScalarLike(s, DType::kFloat32, 1.0), pos);
  Output th = ops::Const(s, Tensor::FromVector<float>(thresholds, {1, t}));
  Output above = ops::Cast(s, ops::Greater(s, p, th), DType::kFloat32);  // [N, T]
  Output tp = ops::Sum(s, ops::Mul(s, above, pos), {0});
  Output fp = ops::Sum(s, ops::Mul(s, above, neg), {0});
  return ops::Concat(s, {tp, fp, ops::Sum(s, pos, {0}), ops::Sum(s, neg, {0})}, 0);
}

double Ratio(double a, double b) { return b > 0.0 ? a / b : 0.0; }  // Keras' divide_no_nan

// The area under the precision-recall curve from [tp(n), fp(n), positives, negatives], with
// Keras' interpolation (Davis & Goadrich 2006): between neighbouring thresholds precision is
// interpolated along the true positives, integrated in closed form.
double PrAuc(const std::vector<double>& st, size_t n) {
  const double pos = st[2 * n];
  auto tp = [&](size_t i) { return st[i]; };
  auto p = [&](size_t i) { return st[i] + st[n + i]; };  // predicted positives
  double area = 0.0;
  for (size_t i = 0; i + 1 < n; ++i) {
    const double dtp = tp(i) - tp(i + 1);
    const double slope = Ratio(dtp, std::max(p(i) - p(i + 1), 0.0));
    const double intercept = tp(i + 1) - slope * p(i + 1);
    const double p_ratio = p(i) > 0 && p(i + 1) > 0 ? Ratio(p(i), std::max(p(i + 1), 0.0)) : 1.0;
    const double fn_next = pos - tp(i + 1);
    area += Ratio(slope * (dtp + intercept * std::log(p_ratio)), std::max(tp(i + 1) + fn_next, 0.0));
  }
  return area;
}

// "accuracy" for labels of `label_shape` and predictions of `pred_shape` (Keras' rule:
// compile_utils' is_binary_or_sparse_categorical).
Kind AccuracyFor(const TensorShape& label, const TensorShape& pred) {
  WEFT_REQUIRE(!pred.unknown_rank() && pred.rank() >= 1, "metric 'accuracy': predictions of unknown shape {}",
               pred.ToString());
  const int64_t p_last = pred.dim(pred.rank() - 1);
  if (p_last == 1) return Kind::kBinaryAccuracy;
  const bool sparse = !label.unknown_rank() &&
                      (label.rank() < pred.rank() || (label.rank() >= 1 && label.dim(label.rank() - 1) == 1 && p_last > 1));
  return sparse ? Kind::kSparseCategoricalAccuracy : Kind::kCategoricalAccuracy;
}

Metric ResolvedFor(const Metric& m, const TensorShape& label, const TensorShape& pred) {
  Metric out = m;
  if (m.kind == Kind::kAccuracy) out.kind = AccuracyFor(label, pred);
  const bool sparse_labels = out.kind == Kind::kSparseCategoricalAccuracy || out.kind == Kind::kSparseTopKCategoricalAccuracy;
  const bool classes = sparse_labels || out.kind == Kind::kCategoricalAccuracy || out.kind == Kind::kTopKCategoricalAccuracy;
  // Categorical accuracies also take sequences: predictions (batch, ..., classes), labels one rank
  // less (sparse) or the same (one-hot); the top-k ones (batch, classes) only.
  const bool top_k = out.kind == Kind::kTopKCategoricalAccuracy || out.kind == Kind::kSparseTopKCategoricalAccuracy;
  if (classes && !top_k && pred.rank() > 2) {
    WEFT_REQUIRE(label.unknown_rank() || label.rank() == pred.rank() - (sparse_labels ? 1 : 0),
                 "metric '{}': labels of shape {} do not fit predictions {}", m.name, label.ToString(),
                 pred.ToString());
  } else if (classes) {
    WEFT_REQUIRE(pred.rank() == 2, "metric '{}': expects predictions of shape (batch, classes), got {}", m.name,
                 pred.ToString());
    WEFT_REQUIRE(label.unknown_rank() || label.rank() == (sparse_labels ? 1 : 2),
                 "metric '{}': expects {} labels, but the labels have shape {} (predictions {})", m.name,
                 sparse_labels ? "integer class (batch,)" : "one-hot (batch, classes)", label.ToString(),
                 pred.ToString());
  } else if (out.kind == Kind::kR2Score || out.kind == Kind::kFBetaScore) {
    WEFT_REQUIRE(!pred.unknown_rank() && pred.rank() == 2 && pred.dim(1) > 0,
                 "metric '{}': {} expects 2D predictions (batch_size, output_dim) with output_dim known, got {}",
                 m.name, out.kind == Kind::kR2Score ? "R2Score" : "FBetaScore", pred.ToString());
    out.num_outputs = static_cast<int>(pred.dim(1));
  }
  if (!classes && out.kind != Kind::kLoss && out.kind != Kind::kRootMeanSquaredError && !label.unknown_rank()) {
    WEFT_REQUIRE(label.rank() == pred.rank(),
                 "metric '{}': labels of shape {} do not match predictions of shape {} (integer class labels "
                 "need a sparse metric such as 'sparse_categorical_accuracy')",
                 m.name, label.ToString(), pred.ToString());
  }
  return out;
}

// R2Score's statistics of (batch, n) labels and predictions: [count, sum y (n), sum y^2 (n),
// sum (y - pred)^2 (n)].
Output R2Stats(const Scope& s, Output y, Output pred, int n, const std::string& name) {
  WEFT_REQUIRE(n > 0, "metric '{}': resolve it (Metric::Resolved) before building it", name);
  Output yf = ops::Reshape(s, ops::Cast(s, y, DType::kFloat32), std::vector<int64_t>{-1, n});
  Output p = ops::Reshape(s, pred, std::vector<int64_t>{-1, n});
  Output count = ops::Reshape(s, ops::Cast(s, ops::Slice(s, ops::Shape(s, yf), {0}, {1}), DType::kFloat32),
                              std::vector<int64_t>{1});
  return ops::Concat(s, {count, ops::Sum(s, yf, {0}), ops::Sum(s, ops::Square(s, yf), {0}),
                         ops::Sum(s, ops::Square(s, ops::Sub(s, yf, p)), {0})}, 0);
}

// FBetaScore's statistics of (batch, n) targets and predictions: [tp (n), fp (n), fn (n)].
Output FBetaStats(const Scope& s, Output y, Output pred, double threshold) {
  auto f = [&](double v) { return ops::ScalarLike(s, DType::kFloat32, v); };
  Output yf = ops::Cast(s, y, DType::kFloat32);
  // Keras' None: the row's maximum, unless it is 0 (a row of zeros has no positive).
  Output positive = threshold < 0.0 ? ops::LogicalAnd(s, ops::GreaterEqual(s, pred, ops::Max(s, pred, {-1}, true)),
                                                      ops::Greater(s, ops::Abs(s, pred), f(1e-9)))
                                    : ops::Greater(s, pred, f(threshold));
  Output pb = ops::Cast(s, positive, DType::kFloat32);
  Output tp = ops::Sum(s, ops::Mul(s, yf, pb), {0});
  Output fp = ops::Sum(s, ops::Mul(s, ops::Sub(s, f(1.0), yf), pb), {0});
  Output fn = ops::Sum(s, ops::Mul(s, yf, ops::Sub(s, f(1.0), pb)), {0});
  return ops::Concat(s, {tp, fp, fn}, 0);
}

double R2Result(const std::vector<double>& st, int n) {
  const double count = st[0];
  double total_score = 0.0;
  for (int j = 0; j < n; ++j) {
    const double sum = st[1 + j], squares = st[1 + n + j], residual = st[1 + 2 * n + j];
    const double total = squares - sum * (count > 0 ? sum / count : 0.0);
    double score = 1.0 - residual / total;  // Keras: an infinite score (constant labels) counts as 0
    if (std::isinf(score)) score = 0.0;
    total_score += score;
  }
  return n > 0 ? total_score / n : 0.0;
}

}  // namespace

Metric::Metric(const std::string& name) {
  static const std::map<std::string, Metric (*)()> kByName = {
      {"accuracy", [] { return Make(Kind::kAccuracy, "accuracy"); }},
      {"binary_accuracy", [] { return BinaryAccuracy(); }},
      {"categorical_accuracy", [] { return CategoricalAccuracy(); }},
      {"sparse_categorical_accuracy", [] { return SparseCategoricalAccuracy(); }},
      {"top_k_categorical_accuracy", [] { return TopKCategoricalAccuracy(); }},
      {"sparse_top_k_categorical_accuracy", [] { return SparseTopKCategoricalAccuracy(); }},
      {"auc", [] { return AUC(); }},
      {"precision", [] { return Precision(); }},
      {"recall", [] { return Recall(); }},
      {"root_mean_squared_error", [] { return RootMeanSquaredError(); }},
      {"r2_score", [] { return R2Score(); }},
  };
  // Loss functions that Keras also offers as metrics (the mean of the loss, LossByName's names).
  static const std::set<std::string> kLossMetrics = {
      "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
      "mean_squared_logarithmic_error", "log_cosh", "hinge", "squared_hinge", "kl_divergence", "poisson",
      "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy"};
  // Keras logs a string metric under the string itself: "acc" as "acc", "mse" as "mse".
  static const std::map<std::string, std::string> kAliases = {
      {"acc", "accuracy"}, {"mse", "mean_squared_error"}, {"mae", "mean_absolute_error"},
      {"mape", "mean_absolute_percentage_error"}, {"msle", "mean_squared_logarithmic_error"},
      {"logcosh", "log_cosh"}, {"kld", "kl_divergence"}};
  const auto alias = kAliases.find(name);
  const std::string key = alias != kAliases.end() ? alias->second : name;
  if (const auto it = kByName.find(key); it != kByName.end()) {
    *this = it->second();
  } else if (kLossMetrics.count(key) > 0) {
    *this = LossMetric(LossByName(key), key);
  } else {
    std::set<std::string> known(kLossMetrics);
    for (const auto& [k, _] : kByName) known.insert(k);
    for (const auto& [k, _] : kAliases) known.insert(k);
    throw Error(errors::InvalidArgument("unknown metric '{}' (known: {})", name, fmt::join(known, ", ")));
  }
  this->name = name;
}

Metric BinaryAccuracy(double threshold, std::string name) {
  Metric m = Make(Kind::kBinaryAccuracy, std::move(name));
  m.threshold = threshold;
  return m;
}
Metric ExactAccuracy(std::string name) { return Make(Kind::kExactAccuracy, std::move(name)); }
Metric CategoricalAccuracy(std::string name) { return Make(Kind::kCategoricalAccuracy, std::move(name)); }
Metric SparseCategoricalAccuracy(std::string name) { return Make(Kind::kSparseCategoricalAccuracy, std::move(name)); }
Metric TopKCategoricalAccuracy(int k, std::string name) {
  WEFT_REQUIRE(k >= 1, "TopKCategoricalAccuracy: k must be >= 1, got {}", k);
  Metric m = Make(Kind::kTopKCategoricalAccuracy, std::move(name));
  m.k = k;
  return m;
}
Metric SparseTopKCategoricalAccuracy(int k, std::string name) {
  WEFT_REQUIRE(k >= 1, "SparseTopKCategoricalAccuracy: k must be >= 1, got {}", k);
  Metric m = Make(Kind::kSparseTopKCategoricalAccuracy, std::move(name));
  m.k = k;
  return m;
}
Metric LossMetric(Loss loss, std::string name) {
  Metric m = Make(Kind::kLoss, std::move(name));
  m.loss = loss;
  return m;
}
Metric AUC(int num_thresholds, std::string name, bool pr_curve) {
  WEFT_REQUIRE(num_thresholds > 1, "AUC: num_thresholds must be > 1, got {}", num_thresholds);
  Metric m = Make(Kind::kAUC, std::move(name));
  m.num_thresholds = num_thresholds;
  m.pr_curve = pr_curve;
  return m;
}

Metric ConfusionCount(Kind kind, double threshold, std::string name) {
  static const std::map<Kind, const char*> kNames = {{Kind::kTruePositives, "true_positives"},
                                                      {Kind::kFalsePositives, "false_positives"},
                                                      {Kind::kTrueNegatives, "true_negatives"},
                                                      {Kind::kFalseNegatives, "false_negatives"}};
  const auto it = kNames.find(kind);
  WEFT_REQUIRE(it != kNames.end(), "ConfusionCount: not a confusion-count metric kind");
  WEFT_REQUIRE(threshold >= 0.0 && threshold <= 1.0, "{}: threshold must be in [0, 1], got {}", it->second, threshold);
  Metric m = Make(kind, name.empty() ? it->second : std::move(name));
  m.threshold = threshold;
  return m;
}
Metric Precision(double threshold, std::string name) {
  WEFT_REQUIRE(threshold >= 0.0 && threshold <= 1.0, "Precision: threshold must be in [0, 1], got {}", threshold);
  Metric m = Make(Kind::kPrecision, std::move(name));
  m.threshold = threshold;
  return m;
}
Metric Recall(double threshold, std::string name) {
  WEFT_REQUIRE(threshold >= 0.0 && threshold <= 1.0, "Recall: threshold must be in [0, 1], got {}", threshold);
  Metric m = Make(Kind::kRecall, std::move(name));
  m.threshold = threshold;
  return m;
}

Metric RootMeanSquaredError(std::string name) {
  Metric m = Make(Kind::kRootMeanSquaredError, std::move(name));
  m.loss = MeanSquaredError();
  return m;
}

Metric R2Score(std::string name) { return Make(Kind::kR2Score, std::move(name)); }

Metric FBetaScore(std::string average, double beta, double threshold, std::string name) {
  WEFT_REQUIRE(average.empty() || average == "micro" || average == "macro" || average == "weighted",
               "FBetaScore: average must be None, 'micro', 'macro' or 'weighted', got '{}'", average);
  WEFT_REQUIRE(beta > 0.0, "FBetaScore: beta must be positive, got {}", beta);
  WEFT_REQUIRE(threshold < 0.0 || (threshold > 0.0 && threshold <= 1.0),
               "FBetaScore: threshold must be None or in (0, 1], got {}", threshold);
  Metric m = Make(Kind::kFBetaScore, std::move(name));
  m.average = std::move(average);
  m.beta = beta;
  m.threshold = threshold;
  return m;
}

std::vector<double> FBetaPerClass(const Metric& m, const std::vector<double>& st) {
  WEFT_REQUIRE(m.kind == Kind::kFBetaScore && !st.empty() && st.size() % 3 == 0, "metric '{}': {} statistics", m.name,
               st.size());
  const size_t n = st.size() / 3;
  constexpr double kEps = 1e-7;
  const double b2 = m.beta * m.beta;
  auto score = [&](double tp, double fp, double fn) {
    const double p = tp / (tp + fp + kEps), r = tp / (tp + fn + kEps);
    return (1.0 + b2) * p * r / (b2 * p + r + kEps);
  };
  if (m.average == "micro") {
    double tp = 0, fp = 0, fn = 0;
    for (size_t j = 0; j < n; ++j) tp += st[j], fp += st[n + j], fn += st[2 * n + j];
    return {score(tp, fp, fn)};
  }
  std::vector<double> out;
  for (size_t j = 0; j < n; ++j) out.push_back(score(st[j], st[n + j], st[2 * n + j]));
  return out;
}

Metric Metric::Resolved(const Loss& l, const TensorShape& pred_shape) const {
  WEFT_REQUIRE(kind != Kind::kFBetaScore || !average.empty(), "metric '{}': average=None gives one score per class; "
               "compile's metrics need one number: pass average='micro', 'macro' or 'weighted'", name);
  return ResolvedFor(*this, l.LabelShape(pred_shape), pred_shape);
}

int Metric::num_stats() const {
  switch (kind) {
    case Kind::kAUC: return 2 * num_thresholds + 2;
    case Kind::kR2Score: return 1 + 3 * num_outputs;
    case Kind::kFBetaScore: return 3 * num_outputs;
    default: return is_mean() ? 2 : 4;
  }
}

// "accuracy" always resolves to one of the mean kinds.
bool Metric::is_mean() const { return kind < Kind::kAUC; }

Output Metric::BuildValues(const Scope& s, Output y, Output pred) const {
  WEFT_REQUIRE(kind != Kind::kAccuracy, "metric '{}': resolve 'accuracy' (Metric::Resolved) before building it", name);
  WEFT_REQUIRE(is_mean(), "metric '{}' has no per-example values (it is a ratio of accumulated counts)", name);
  switch (kind) {
    case Kind::kBinaryAccuracy: {
      Output predicted = ops::Cast(s, ops::Greater(s, pred, ops::ScalarLike(s, pred.dtype(), threshold)), DType::kFloat32);
      return MeanPerExample(s, ops::Cast(s, ops::Equal(s, ops::Cast(s, y, DType::kFloat32), predicted), DType::kFloat32));
    }
    case Kind::kExactAccuracy:
      return MeanPerExample(s, ops::Cast(s, ops::Equal(s, ops::Cast(s, y, DType::kFloat32), pred), DType::kFloat32));
    case Kind::kCategoricalAccuracy:
    case Kind::kSparseCategoricalAccuracy: {
      // Over the last axis; predictions (batch, steps, classes) give the mean over the steps.
      const int64_t axis = pred.shape().rank() - 1;
      Output predicted = ops::ArgMax(s, pred, axis, DType::kInt32);
      Output truth = kind == Kind::kSparseCategoricalAccuracy ? ops::Cast(s, y, DType::kInt32)
                                                              : ops::ArgMax(s, y, axis, DType::kInt32);
      return MeanPerExample(s, ops::Cast(s, ops::Equal(s, predicted, truth), DType::kFloat32));
    }
    case Kind::kTopKCategoricalAccuracy:
    case Kind::kSparseTopKCategoricalAccuracy: {
      // In the top k when fewer than k classes score strictly higher than the true one (TF's
      // in_top_k: ties at the boundary count as in).
      const int64_t classes = pred.shape().dim(1);
      Output onehot = kind == Kind::kTopKCategoricalAccuracy
                          ? ops::OneHot(s, ops::ArgMax(s, y, 1, DType::kInt32), classes, 1.0, 0.0, pred.dtype())
                          : ops::OneHot(s, ops::Cast(s, y, DType::kInt32), classes, 1.0, 0.0, pred.dtype());
      Output true_score = ops::Sum(s, ops::Mul(s, onehot, pred), {1}, /*keep_dims=*/true);
      Output higher = ops::Sum(s, ops::Cast(s, ops::Greater(s, pred, true_score), DType::kFloat32), {1});
      return ops::Cast(s, ops::Less(s, higher, ops::ScalarLike(s, DType::kFloat32, static_cast<double>(k))),
                       DType::kFloat32);
    }
    case Kind::kLoss:
    case Kind::kRootMeanSquaredError: return loss.Build(s, y, pred);
    default: break;
  }
  throw Error(errors::Internal("metric '{}': unknown kind", name));
}

Output Metric::BuildStats(const Scope& s, Output y, Output pred) const {
  if (kind == Kind::kAUC) return ConfusionStats(s, y, pred, AucThresholds(num_thresholds));
  if (kind == Kind::kR2Score) return R2Stats(s, y, pred, num_outputs, name);
  if (kind == Kind::kFBetaScore) return FBetaStats(s, y, pred, threshold);
  if (kind > Kind::kAUC) return ConfusionStats(s, y, pred, {static_cast<float>(threshold)});
  return MeanStats(s, BuildValues(s, y, pred));
}

double Metric::Result(const std::vector<double>& st) const {
  if (kind == Kind::kR2Score) {  // (standalone objects keep the unresolved metric: n from the statistics)
    WEFT_REQUIRE(st.size() > 1 && (st.size() - 1) % 3 == 0, "metric '{}': {} statistics", name, st.size());
    return R2Result(st, static_cast<int>((st.size() - 1) / 3));
  }
  if (kind == Kind::kFBetaScore) {
    WEFT_REQUIRE(!average.empty(), "metric '{}': average=None gives one score per class; compile's metrics need one "
                 "number: pass average='micro', 'macro' or 'weighted'", name);
    const std::vector<double> scores = FBetaPerClass(*this, st);
    if (average != "weighted") return std::accumulate(scores.begin(), scores.end(), 0.0) / static_cast<double>(scores.size());
    const size_t n = scores.size();
    double weighted = 0.0, support = 0.0;  // true count of class j: tp + fn
    for (size_t j = 0; j < n; ++j) {
      weighted += scores[j] * (st[j] + st[2 * n + j]);
      support += st[j] + st[2 * n + j];
    }
    return weighted / (support + 1e-7);
  }
  WEFT_REQUIRE(static_cast<int>(st.size()) == num_stats(), "metric '{}': {} statistics, expected {}", name, st.size(),
               num_stats());
  switch (kind) {
    case Kind::kPrecision: return Ratio(st[0], st[0] + st[1]);  // tp / (tp + fp)
    case Kind::kRecall: return Ratio(st[0], st[2]);             // tp / positives
    case Kind::kTruePositives: return st[0];
    case Kind::kFalsePositives: return st[1];
    case Kind::kTrueNegatives: return st[3] - st[1];   // negatives - fp
    case Kind::kFalseNegatives: return st[2] - st[0];  // positives - tp
    case Kind::kRootMeanSquaredError: return std::sqrt(Ratio(st[0], st[1]));
    case Kind::kR2Score: return R2Result(st, num_outputs);
    case Kind::kAUC: {
      if (pr_curve) return PrAuc(st, static_cast<size_t>(num_thresholds));
      // ROC: x = fp rate, y = tp rate at each threshold (ascending thresholds: descending rates);
      // the area is the sum of trapezoids between neighbours (Keras' 'interpolation').
      const size_t n = static_cast<size_t>(num_thresholds);
      const double pos = st[2 * n], neg = st[2 * n + 1];
      double area = 0.0;
      for (size_t i = 0; i + 1 < n; ++i) {
        const double tpr0 = Ratio(st[i], pos), tpr1 = Ratio(st[i + 1], pos);
        const double fpr0 = Ratio(st[n + i], neg), fpr1 = Ratio(st[n + i + 1], neg);
        area += (fpr0 - fpr1) * (tpr0 + tpr1) / 2.0;
      }
      return area;
    }
    default: return Ratio(st[0], st[1]);  // total / count
  }
}

void MetricTotals::Add(const std::vector<Tensor>& stats) {
  WEFT_REQUIRE(stats.size() == metrics_.size(), "MetricTotals: {} statistics for {} metrics", stats.size(),
               metrics_.size());
  for (size_t i = 0; i < stats.size(); ++i) {
    std::vector<double>& t = totals_[i];
    const int64_t n = stats[i].num_elements();
    if (t.empty()) t.assign(static_cast<size_t>(n), 0.0);
    WEFT_REQUIRE(static_cast<int64_t>(t.size()) == n, "metric '{}': {} statistics, expected {}", metrics_[i].name, n,
                 t.size());
    const float* v = stats[i].data<float>();
    for (int64_t j = 0; j < n; ++j) t[static_cast<size_t>(j)] += v[j];
  }
}

std::map<std::string, double> MetricTotals::Results() const {
  std::map<std::string, double> out;
  for (size_t i = 0; i < metrics_.size(); ++i) {
    out[metrics_[i].name] = totals_[i].empty() ? 0.0 : metrics_[i].Result(totals_[i]);
  }
  return out;
}

void MetricTotals::Reset() {
  for (auto& t : totals_) t.clear();
}

namespace {

// The metric resolved for arrays y and pred, with y reshaped as its kind expects.
std::pair<Metric, Tensor> ForArrays(const Metric& metric, const Tensor& y_in, const Tensor& pred) {
  Metric m = metric;
  if (m.kind == Kind::kAccuracy) m.kind = AccuracyFor(y_in.shape(), pred.shape());
  const bool sparse = m.kind == Kind::kSparseCategoricalAccuracy || m.kind == Kind::kSparseTopKCategoricalAccuracy;
  Tensor y = MatchLabelRank(y_in, sparse ? TensorShape({-1})
                                  : m.kind == Kind::kLoss ? m.loss.LabelShape(pred.shape()) : pred.shape());
  m = ResolvedFor(m, y.shape(), pred.shape());
  return {m, y};
}

}  // namespace

std::vector<double> EvaluateMetricStats(const Metric& metric, const Tensor& y_in, const Tensor& pred) {
  const auto [m, y] = ForArrays(metric, y_in, pred);
  Tensor out = RunOnArrays(y, pred, [&](const Scope& s, Output yt, Output p) { return m.BuildStats(s, yt, p); });
  return std::vector<double>(out.data<float>(), out.data<float>() + out.num_elements());
}

Tensor MetricValues(const Metric& metric, const Tensor& y_in, const Tensor& pred) {
  const auto [m, y] = ForArrays(metric, y_in, pred);
  return RunOnArrays(y, pred, [&](const Scope& s, Output yt, Output p) { return m.BuildValues(s, yt, p); });
}

}  // namespace weft::train
