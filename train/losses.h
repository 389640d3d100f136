// Losses, as Keras names them. Each builds graph nodes from the labels and the model's output;
// the model averages the per-example values over the batch (Keras' "sum over batch size").
//
//   Loss loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
//   Output per_example = loss.Build(scope, labels, logits);        // [batch]
//   Tensor v = LossPerExample(BinaryCrossentropy(), y_true, y_pred);  // one-off, on arrays: [batch]
//
// Keras' numerics: on probabilities (from_logits=false) the predictions are clipped to
// [1e-7, 1 - 1e-7] before the log, and categorical ones are first renormalized to sum to 1;
// on logits the fused, stable forms are used (softmax / sigmoid cross-entropy).
// Metrics (metrics=["accuracy"], AUC, ...) are in train/metrics.h.
#pragma once

#include <functional>
#include <string>

#include "core/tensor.h"
#include "graph/scope.h"

namespace weft::train {

struct Loss {
  enum class Kind {
    kSparseCategoricalCrossentropy,
    kCategoricalCrossentropy,
    kBinaryCrossentropy,
    kMeanSquaredError,
    kMeanAbsoluteError,
    kHuber,
    kMeanAbsolutePercentageError,
    kMeanSquaredLogarithmicError,
    kLogCosh,
    kHinge,
    kSquaredHinge,
    kKLDivergence,
    kPoisson,
    kCosineSimilarity,
    kCategoricalHinge,
  };
  Kind kind = Kind::kSparseCategoricalCrossentropy;
  bool from_logits = false;     // cross-entropies: predictions are logits, not probabilities
  double label_smoothing = 0.0;  // categorical / binary cross-entropy: y * (1 - ls) + ls / classes (binary: 2)
  double delta = 1.0;            // Huber: quadratic below |error| <= delta, linear above

  // Per-example loss [batch] of labels `y` and predictions `pred` [batch, ...] (the mean over the
  // last axis for the element-wise losses, as Keras' loss functions).
  Output Build(const Scope& s, Output y, Output pred) const;
  // The labels' dtype and shape for predictions of `pred_shape` (sparse: int32 [batch]).
  DType label_dtype() const;
  TensorShape LabelShape(const TensorShape& pred_shape) const;
  std::string name() const;  // Keras' function name: "sparse_categorical_crossentropy"

 private:
  Output BuildOther(const Scope& s, Output y, Output pred) const;  // the losses of SimpleLoss
};

Loss SparseCategoricalCrossentropy(bool from_logits = false);
Loss CategoricalCrossentropy(bool from_logits = false, double label_smoothing = 0.0);
Loss BinaryCrossentropy(bool from_logits = false, double label_smoothing = 0.0);
Loss MeanSquaredError();
Loss MeanAbsoluteError();
Loss Huber(double delta = 1.0);
// Keras' other regression / probabilistic losses (per example, over the last axis):
// mape 100 * mean(|y - p| / max(|y|, eps)); msle mean((log1p(max(p, eps)) - log1p(max(y, eps)))^2);
// logcosh mean(log(cosh(p - y))); hinge mean(max(1 - y p, 0)) and squared_hinge its square, with
// 0/1 labels taken as -1/1 (when every label is 0 or 1, as Keras); kl_divergence
// sum(y log(y / p)), y and p clipped to [eps, 1]; poisson mean(p - y log(p + eps));
// cosine_similarity -sum(y / |y| * p / |p|); categorical_hinge max(max((1 - y) p) - sum(y p) + 1, 0).
Loss SimpleLoss(Loss::Kind kind);
// By Keras name (probabilities, not logits, as Keras assumes for a string):
// "sparse_categorical_crossentropy", "categorical_crossentropy", "binary_crossentropy",
// "mse" / "mean_squared_error", "mae" / "mean_absolute_error", "huber", "mape", "msle",
// "logcosh", "hinge", "squared_hinge", "kld" / "kl_divergence", "poisson", "cosine_similarity"
// (and Keras' class names: "MeanSquaredError", ...). Unknown names list the known ones.
Loss LossByName(const std::string& name);

// Mean over every axis but the batch one (Keras' mean over the last axis, then the batch mean:
// the same total); rank-1 values are already per example.
Output MeanPerExample(const Scope& s, Output x);

// Labels as the loss expects them, the way Keras squeezes or expands y_true to y_pred's rank: a
// trailing axis of 1 is dropped ([n, 1] -> [n] for sparse labels) or added ([n] -> [n, 1] for a
// one-unit output). Shares the buffer; other shapes come back unchanged (checked by the caller).
Tensor MatchLabelRank(const Tensor& y, const TensorShape& want);

// The per-example loss [batch] (float32) of arrays, by running Build in a one-off graph:
// keras.losses.X()(y_true, y_pred) is its mean (Keras' "sum over batch size").
Tensor LossPerExample(const Loss& loss, const Tensor& y, const Tensor& pred);

// Runs `build(scope, y_true, y_pred)` once over arrays (placeholders of their dtypes and shapes,
// the predictions cast to float32) and returns its value: the one-off evaluations above and in
// train/metrics.h.
Tensor RunOnArrays(const Tensor& y, const Tensor& pred,
                   const std::function<Output(const Scope&, Output y, Output pred)>& build);

}  // namespace weft::train
