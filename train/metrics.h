// Metrics, as Keras names them, computed the way Keras' stateful metrics are: each batch adds
// its sufficient statistics (sums) to running totals, and the value is a function of the totals.
// So an epoch's accuracy is correct / seen over the whole epoch, and AUC, Precision and Recall
// come from the epoch's accumulated confusion counts, never a mean of per-batch values.
//
//   CompileOptions o{.metrics = {"accuracy", AUC(), Precision(0.5, "prec")}};
//   // in Model::Compile: m.Resolved(loss, pred_shape).BuildStats(s, y, pred) -> float32 [num_stats]
//   MetricTotals totals(metrics);
//   totals.Add(stats_of_batch);          // per batch (stats summed over replicas and workers)
//   Logs logs = totals.Results();        // {"accuracy": 0.91, "auc": 0.97, "prec": 0.88}
//
// The statistics are sums, so replicated steps add their replicas' (and workers') statistics
// before the host accumulates them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "train/losses.h"

namespace weft::train {

struct Metric {
  // Order matters: the means of a per-example value come before kAUC, the counts at one
  // threshold after it (is_mean, BuildStats).
  enum class Kind {
    kAccuracy,  // "accuracy" / "acc": binary, categorical or sparse, resolved at compile time
    kExactAccuracy,  // keras.metrics.Accuracy(): how often y_pred equals y_true exactly
    kBinaryAccuracy,
    kCategoricalAccuracy,
    kSparseCategoricalAccuracy,
    kTopKCategoricalAccuracy,
    kSparseTopKCategoricalAccuracy,
    kLoss,  // a loss function's mean as a metric: "mse", "mae", "binary_crossentropy", ...
    kRootMeanSquaredError,  // sqrt of the mean of the per-example MSE
    kAUC,
    kPrecision,
    kRecall,
    kTruePositives,  // counts at `threshold`, summed over the epoch
    kFalsePositives,
    kTrueNegatives,
    kFalseNegatives,
    kR2Score,  // per output: 1 - residual / total sum of squares, then their mean (Keras' uniform_average)
    kFBetaScore,  // per class from tp, fp, fn; averaged by `average`
  };
  Kind kind = Kind::kAccuracy;
  std::string name = "accuracy";  // the log key ("val_" + name for validation)
  double threshold = 0.5;         // binary accuracy, precision, recall: positive when pred > threshold
  int k = 5;                      // top-k accuracies
  int num_thresholds = 200;       // AUC
  bool pr_curve = false;          // AUC: the precision-recall curve (Keras' curve='PR'), else ROC
  Loss loss;                      // kLoss
  int num_outputs = 0;            // kR2Score, kFBetaScore: the predictions' last dim (set by Resolved; 0 before)
  double beta = 1.0;              // kFBetaScore; its threshold < 0 means Keras' None (the row's maximum is positive)
  std::string average;            // kFBetaScore: "micro", "macro", "weighted" ("" = Keras' None: one score per class)

  Metric() = default;
  // By Keras name, so that CompileOptions{.metrics = {"accuracy"}} reads as in Keras. Unknown
  // names list the known ones.
  Metric(const std::string& name);  // NOLINT(google-explicit-constructor)
  Metric(const char* name) : Metric(std::string(name)) {}  // NOLINT(google-explicit-constructor)

  // "accuracy" made concrete for `loss` and predictions of `pred_shape` as Keras does (one
  // output unit: binary; sparse labels: sparse categorical; else categorical); the rest as is.
  // Checks that the metric fits the labels and predictions.
  Metric Resolved(const Loss& loss, const TensorShape& pred_shape) const;
  int num_stats() const;
  // The batch's statistics, summed over its examples: float32 [num_stats()].
  Output BuildStats(const Scope& s, Output y, Output pred) const;
  // Means of a per-example value (the accuracies, loss metrics): is_mean(), and BuildValues
  // gives the values [batch] (float32) whose sum and count BuildStats accumulates.
  bool is_mean() const;
  Output BuildValues(const Scope& s, Output y, Output pred) const;
  // The metric's value from (accumulated) statistics; 0 where a ratio has no denominator.
  double Result(const std::vector<double>& stats) const;
};

Metric ExactAccuracy(std::string name = "accuracy");  // Keras' Accuracy object: y_pred == y_true
Metric BinaryAccuracy(double threshold = 0.5, std::string name = "binary_accuracy");
Metric CategoricalAccuracy(std::string name = "categorical_accuracy");
Metric SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy");
Metric TopKCategoricalAccuracy(int k = 5, std::string name = "top_k_categorical_accuracy");
Metric SparseTopKCategoricalAccuracy(int k = 5, std::string name = "sparse_top_k_categorical_accuracy");
Metric LossMetric(Loss loss, std::string name);  // the mean of a loss function: MeanSquaredError metric
Metric RootMeanSquaredError(std::string name = "root_mean_squared_error");
// Keras' R2Score (class_aggregation "uniform_average", no adjustment): statistics per output of
// (batch, outputs) predictions: the count, sum y, sum y^2 and the residual sum (y - pred)^2.
Metric R2Score(std::string name = "r2_score");
// Keras' FBetaScore / F1Score (beta = 1) over (batch, classes) one-hot or multi-label targets:
// predictions are positive above `threshold`, or (threshold < 0, Keras' None) where they equal
// their row's maximum. Per class (1 + b^2) p r / (b^2 p + r + eps), p = tp / (tp + fp + eps),
// r = tp / (tp + fn + eps), eps = 1e-7; "micro" pools the counts first, "macro" averages the
// classes, "weighted" weights them by their true count. Result needs an average;
// FBetaPerClass gives the per-class scores (average "").
Metric FBetaScore(std::string average = "", double beta = 1.0, double threshold = -1.0, std::string name = "fbeta_score");
std::vector<double> FBetaPerClass(const Metric& m, const std::vector<double>& stats);
// The area under the ROC curve (trapezoids between thresholds, Keras' 'interpolation'), or with
// pr_curve under the precision-recall curve (Keras' interpolation of Davis & Goadrich).
Metric AUC(int num_thresholds = 200, std::string name = "auc", bool pr_curve = false);
Metric Precision(double threshold = 0.5, std::string name = "precision");
Metric Recall(double threshold = 0.5, std::string name = "recall");
// Confusion counts at a threshold: Metric::Kind::kTruePositives ... kFalseNegatives.
Metric ConfusionCount(Metric::Kind kind, double threshold = 0.5, std::string name = "");

// Running totals of each metric's statistics (an epoch's, or one evaluation's).
class MetricTotals {
 public:
  explicit MetricTotals(std::vector<Metric> metrics) : metrics_(std::move(metrics)), totals_(metrics_.size()) {}
  // stats[i]: metric i's statistics of one batch (a float32 vector of num_stats()).
  void Add(const std::vector<Tensor>& stats);
  std::map<std::string, double> Results() const;  // name -> value
  void Reset();

 private:
  std::vector<Metric> metrics_;
  std::vector<std::vector<double>> totals_;
};

// A metric's value over (y, pred), computed by running BuildStats in a one-off graph (the
// Python metric objects' update_state feeds these statistics to their own totals).
std::vector<double> EvaluateMetricStats(const Metric& metric, const Tensor& y, const Tensor& pred);
// The per-example values of a mean metric on arrays: Keras' metric functions
// (keras.metrics.sparse_categorical_accuracy(y_true, y_pred)).
Tensor MetricValues(const Metric& metric, const Tensor& y, const Tensor& pred);

}  // namespace weft::train
