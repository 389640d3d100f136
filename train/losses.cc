#include "train/losses.h"

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

namespace weft::train {
namespace {

// log(p) with p clipped away from 0, for losses on probabilities (Keras clips at 1e-7).
Output SafeLog(const Scope& s, Output p) {
  return ops::Log(s, ops::Maximum(s, p, ops::ScalarLike(s, p.dtype(), 1e-7)));
}

void RequireClasses(const Output& pred, const char* loss) {
  WEFT_REQUIRE(pred.shape().rank() == 2, "{}: expects predictions of shape (batch, classes), got {}", loss,
               pred.shape().ToString());
}

}  // namespace

Output Loss::Build(const Scope& s, Output y, Output pred) const {
  switch (kind) {
    case Kind::kSparseCategoricalCrossentropy: {
      RequireClasses(pred, "sparse_categorical_crossentropy");
      if (y.dtype() != DType::kInt32) y = ops::Cast(s, y, DType::kInt32);
      if (from_logits) return ops::SparseSoftmaxCrossEntropyWithLogits(s, pred, y)[0];
      Output onehot = ops::OneHot(s, y, pred.shape().dim(1), 1.0, 0.0, pred.dtype());
      return ops::Neg(s, ops::Sum(s, ops::Mul(s, onehot, SafeLog(s, pred)), {-1}));
    }
    case Kind::kCategoricalCrossentropy: {
      RequireClasses(pred, "categorical_crossentropy");
      if (from_logits) return ops::SoftmaxCrossEntropyWithLogits(s, pred, y)[0];
      return ops::Neg(s, ops::Sum(s, ops::Mul(s, y, SafeLog(s, pred)), {-1}));
    }
    case Kind::kMeanSquaredError: {
      Output d = ops::Square(s, ops::Sub(s, pred, y));
      std::vector<int64_t> axes;
      for (int i = 1; i < pred.shape().rank(); ++i) axes.push_back(i);
      return axes.empty() ? d : ops::Mean(s, d, axes);
    }
  }
  throw Error(errors::Internal("unknown loss kind"));
}

DType Loss::label_dtype() const {
  return kind == Kind::kSparseCategoricalCrossentropy ? DType::kInt32 : DType::kFloat32;
}

TensorShape Loss::LabelShape(const TensorShape& pred) const {
  if (kind == Kind::kSparseCategoricalCrossentropy) return TensorShape({-1});
  return pred;
}

std::string Loss::name() const {
  switch (kind) {
    case Kind::kSparseCategoricalCrossentropy: return "sparse_categorical_crossentropy";
    case Kind::kCategoricalCrossentropy: return "categorical_crossentropy";
    case Kind::kMeanSquaredError: return "mean_squared_error";
  }
  return "?";
}

Loss SparseCategoricalCrossentropy(bool from_logits) {
  return {Loss::Kind::kSparseCategoricalCrossentropy, from_logits};
}
Loss CategoricalCrossentropy(bool from_logits) { return {Loss::Kind::kCategoricalCrossentropy, from_logits}; }
Loss MeanSquaredError() { return {Loss::Kind::kMeanSquaredError, false}; }

Loss LossByName(const std::string& name) {
  if (name == "sparse_categorical_crossentropy") return SparseCategoricalCrossentropy();
  if (name == "categorical_crossentropy") return CategoricalCrossentropy();
  if (name == "mse" || name == "mean_squared_error") return MeanSquaredError();
  throw Error(errors::InvalidArgument(
      "unknown loss '{}' (known: sparse_categorical_crossentropy, categorical_crossentropy, mean_squared_error)",
      name));
}

std::string CanonicalMetricName(const std::string& name) {
  if (name == "accuracy" || name == "acc") return "accuracy";
  if (name == "sparse_categorical_accuracy" || name == "categorical_accuracy") return name;
  if (name == "mse" || name == "mean_squared_error") return "mean_squared_error";
  throw Error(errors::InvalidArgument(
      "unknown metric '{}' (known: accuracy, sparse_categorical_accuracy, categorical_accuracy, mse)", name));
}

Output BuildMetric(const Scope& s, const std::string& metric, const Loss& loss, Output y, Output pred) {
  const std::string name = CanonicalMetricName(metric);
  if (name == "mean_squared_error") return MeanSquaredError().Build(s, y, pred);
  bool sparse = name == "sparse_categorical_accuracy";
  if (name == "accuracy") {
    WEFT_REQUIRE(loss.kind != Loss::Kind::kMeanSquaredError,
                 "metric 'accuracy' needs a classification loss, not {}", loss.name());
    sparse = loss.kind == Loss::Kind::kSparseCategoricalCrossentropy;
  }
  RequireClasses(pred, name.c_str());
  Output predicted = ops::ArgMax(s, pred, 1, DType::kInt32);
  Output truth = sparse ? (y.dtype() == DType::kInt32 ? y : ops::Cast(s, y, DType::kInt32))
                        : ops::ArgMax(s, y, 1, DType::kInt32);
  return ops::Cast(s, ops::Equal(s, predicted, truth), DType::kFloat32);
}

}  // namespace weft::train
