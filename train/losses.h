// Losses and metrics, as Keras names them. Each builds graph nodes from the labels and the
// model's output; the model averages the per-example values over the batch.
//
//   Loss loss = SparseCategoricalCrossentropy(/*from_logits=*/true);
//   Output per_example = loss.Build(scope, labels, logits);        // [batch]
//   Output correct = BuildMetric(scope, "accuracy", loss, labels, logits);  // [batch] of 0/1
#pragma once

#include <string>

#include "graph/scope.h"

namespace weft::train {

struct Loss {
  enum class Kind { kSparseCategoricalCrossentropy, kCategoricalCrossentropy, kMeanSquaredError };
  Kind kind = Kind::kSparseCategoricalCrossentropy;
  bool from_logits = false;

  // Per-example loss [batch] of labels `y` and predictions `pred` [batch, ...].
  Output Build(const Scope& s, Output y, Output pred) const;
  // The labels' dtype and shape for predictions of `pred_shape` (sparse: int32 [batch]).
  DType label_dtype() const;
  TensorShape LabelShape(const TensorShape& pred_shape) const;
  std::string name() const;  // "sparse_categorical_crossentropy"
};

Loss SparseCategoricalCrossentropy(bool from_logits = false);
Loss CategoricalCrossentropy(bool from_logits = false);
Loss MeanSquaredError();
// By Keras name: "sparse_categorical_crossentropy", "categorical_crossentropy", "mse" /
// "mean_squared_error" (probabilities, not logits, as Keras assumes for a string).
Loss LossByName(const std::string& name);

// A metric's per-example value [batch]: "accuracy" (resolved against the loss as Keras does:
// sparse or categorical), "sparse_categorical_accuracy", "categorical_accuracy", "mse".
// The name the model logs it under is CanonicalMetricName.
Output BuildMetric(const Scope& s, const std::string& name, const Loss& loss, Output y, Output pred);
std::string CanonicalMetricName(const std::string& name);  // checks it, keeps "accuracy" as is

}  // namespace weft::train
