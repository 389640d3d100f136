#include "train/losses.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "graph/session.h"
#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

namespace weft::train {
namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon(): the clip of probabilities

// p clipped to [eps, 1 - eps], as Keras does before taking logs of probabilities.
Output ClipProbabilities(const Scope& s, Output p) {
  return ops::Minimum(s, ops::Maximum(s, p, ops::ScalarLike(s, p.dtype(), kEpsilon)),
                      ops::ScalarLike(s, p.dtype(), 1.0 - kEpsilon));
}

std::vector<int64_t> NonBatchAxes(const Output& x) {
  std::vector<int64_t> axes;
  for (int i = 1; i < x.shape().rank(); ++i) axes.push_back(i);
  return axes;
}

// Sum over every axis but the batch one (the KL divergence's and cosine similarity's reduction).
Output SumPerExample(const Scope& s, Output x) {
  const std::vector<int64_t> axes = NonBatchAxes(x);
  return axes.empty() ? x : ops::Sum(s, x, axes);
}

void RequireClasses(const Output& pred, const std::string& loss) {
  WEFT_REQUIRE(pred.shape().rank() == 2, "{}: expects predictions of shape (batch, classes), got {}", loss,
               pred.shape().ToString());
}

// y * (1 - ls) + ls / classes: Keras' label smoothing (classes = 2 for the binary loss).
Output Smooth(const Scope& s, Output y, double ls, double classes) {
  if (ls == 0.0) return y;
  return ops::Add(s, ops::Mul(s, y, ops::ScalarLike(s, y.dtype(), 1.0 - ls)), ops::ScalarLike(s, y.dtype(), ls / classes));
}

void RequireSameShape(const TensorShape& a, const TensorShape& b, const std::string& loss) {
  if (a.unknown_rank() || b.unknown_rank()) return;
  bool ok = a.rank() == b.rank();
  for (int i = 0; ok && i < a.rank(); ++i) ok = a.dim(i) < 0 || b.dim(i) < 0 || a.dim(i) == b.dim(i);
  WEFT_REQUIRE(ok, "{}: labels of shape {} do not match predictions of shape {}", loss, a.ToString(), b.ToString());
}

}  // namespace

Output Loss::Build(const Scope& s, Output y, Output pred) const {
  const std::string loss = name();
  if (kind == Kind::kSparseCategoricalCrossentropy) {
    if (y.dtype() != DType::kInt32) y = ops::Cast(s, y, DType::kInt32);
    // On probabilities Keras takes log(clip(p)) as logits: -log(clip(p)_y / sum(clip(p))).
    Output logits = from_logits ? pred : ops::Log(s, ClipProbabilities(s, pred));
    const int rank = pred.shape().rank();
    if (rank <= 2) {
      RequireClasses(pred, loss);
      return ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, y)[0];
    }
    // (batch, ..., classes) against labels (batch, ...), as Keras' sequence losses: the loss of every
    // position, averaged per example (so the batch mean is the mean over all positions).
    std::vector<int64_t> label_dims(pred.shape().dims().begin(), pred.shape().dims().end() - 1);
    label_dims[0] = -1;
    const int64_t classes = pred.shape().dim(rank - 1);
    WEFT_REQUIRE(classes > 0, "{}: predictions {} need a known number of classes (last dim)", loss,
                 pred.shape().ToString());
    RequireSameShape(y.shape(), TensorShape(label_dims), loss);
    Output flat = ops::SparseSoftmaxCrossEntropyWithLogits(
        s, ops::Reshape(s, logits, std::vector<int64_t>{-1, classes}), ops::Reshape(s, y, std::vector<int64_t>{-1}))[0];
    return MeanPerExample(s, ops::Reshape(s, flat, label_dims));
  }
  if (y.dtype() != pred.dtype()) y = ops::Cast(s, y, pred.dtype());
  RequireSameShape(y.shape(), pred.shape(), loss);
  switch (kind) {
    case Kind::kCategoricalCrossentropy: {
      // (batch, classes), or (batch, ..., classes) as Keras' sequence losses: every position's loss,
      // averaged per example.
      const int rank = pred.shape().rank();
      if (rank <= 2) RequireClasses(pred, loss);
      const int64_t classes = pred.shape().dim(rank - 1);
      WEFT_REQUIRE(classes > 0, "{}: predictions {} need a known number of classes (last dim)", loss,
                   pred.shape().ToString());
      y = Smooth(s, y, label_smoothing, static_cast<double>(classes));
      Output per_position;
      if (from_logits && rank == 2) return ops::SoftmaxCrossEntropyWithLogits(s, pred, y)[0];
      if (from_logits) {
        Output flat = ops::SoftmaxCrossEntropyWithLogits(s, ops::Reshape(s, pred, std::vector<int64_t>{-1, classes}),
                                                         ops::Reshape(s, y, std::vector<int64_t>{-1, classes}))[0];
        per_position = ops::Reshape(s, flat, ops::Slice(s, ops::Shape(s, pred), {0}, {rank - 1}));
      } else {
        Output p = ClipProbabilities(s, ops::Div(s, pred, ops::Sum(s, pred, {-1}, /*keep_dims=*/true)));
        per_position = ops::Neg(s, ops::Sum(s, ops::Mul(s, y, ops::Log(s, p)), {-1}));
      }
      return rank <= 2 ? per_position : MeanPerExample(s, per_position);
    }
    case Kind::kBinaryCrossentropy: {
      y = Smooth(s, y, label_smoothing, 2.0);
      Output per_element;
      if (from_logits) {  // max(x, 0) - x * y + log(1 + exp(-|x|)): stable for any logit
        per_element = ops::Add(s, ops::Sub(s, ops::Relu(s, pred), ops::Mul(s, pred, y)),
                               ops::Softplus(s, ops::Neg(s, ops::Abs(s, pred))));
      } else {  // -(y log p + (1 - y) log(1 - p)), p clipped
        Output p = ClipProbabilities(s, pred);
        Output one = ops::ScalarLike(s, pred.dtype(), 1.0);
        per_element = ops::Neg(s, ops::Add(s, ops::Mul(s, y, ops::Log(s, p)),
                                           ops::Mul(s, ops::Sub(s, one, y), ops::Log(s, ops::Sub(s, one, p)))));
      }
      return MeanPerExample(s, per_element);
    }
    case Kind::kMeanSquaredError: return MeanPerExample(s, ops::Square(s, ops::Sub(s, pred, y)));
    case Kind::kMeanAbsoluteError: return MeanPerExample(s, ops::Abs(s, ops::Sub(s, pred, y)));
    case Kind::kHuber: {
      // 0.5 * min(|e|, d)^2 + d * (|e| - min(|e|, d)): 0.5 e^2 inside delta, d |e| - d^2 / 2 outside.
      Output abs = ops::Abs(s, ops::Sub(s, pred, y));
      Output d = ops::ScalarLike(s, pred.dtype(), delta);
      Output quad = ops::Minimum(s, abs, d);
      Output half = ops::ScalarLike(s, pred.dtype(), 0.5);
      return MeanPerExample(s, ops::Add(s, ops::Mul(s, half, ops::Square(s, quad)),
                                        ops::Mul(s, d, ops::Sub(s, abs, quad))));
    }
    case Kind::kSparseCategoricalCrossentropy: break;
    default: return BuildOther(s, y, pred);
  }
  throw Error(errors::Internal("unknown loss kind"));
}

Output Loss::BuildOther(const Scope& s, Output y, Output pred) const {
  auto c = [&](double v) { return ops::ScalarLike(s, pred.dtype(), v); };
  switch (kind) {
    case Kind::kMeanAbsolutePercentageError:
      return ops::Mul(s, c(100.0), MeanPerExample(s, ops::Abs(s, ops::Div(s, ops::Sub(s, y, pred),
                                                                          ops::Maximum(s, ops::Abs(s, y), c(kEpsilon))))));
    case Kind::kMeanSquaredLogarithmicError: {
      auto log1p = [&](Output x) { return ops::Log(s, ops::Add(s, ops::Maximum(s, x, c(kEpsilon)), c(1.0))); };
      return MeanPerExample(s, ops::Square(s, ops::Sub(s, log1p(pred), log1p(y))));
    }
    case Kind::kLogCosh: {  // x + softplus(-2x) - log 2: log(cosh(x)) without overflow
      Output x = ops::Sub(s, pred, y);
      return MeanPerExample(s, ops::Sub(s, ops::Add(s, x, ops::Softplus(s, ops::Mul(s, c(-2.0), x))), c(std::log(2.0))));
    }
    case Kind::kHinge:
    case Kind::kSquaredHinge: {
      // Keras: labels that are all 0 or 1 become -1 / 1.
      Output binary = ops::Min(s, ops::Cast(s, ops::LogicalOr(s, ops::Equal(s, y, c(0.0)), ops::Equal(s, y, c(1.0))),
                                            DType::kFloat32));
      Output signed_y = ops::Add(s, ops::Mul(s, y, ops::Add(s, c(1.0), binary)), ops::Neg(s, binary));  // 2y-1 or y
      Output h = ops::Relu(s, ops::Sub(s, c(1.0), ops::Mul(s, signed_y, pred)));
      return MeanPerExample(s, kind == Kind::kHinge ? h : ops::Square(s, h));
    }
    case Kind::kCategoricalHinge: {
      Output pos = ops::Sum(s, ops::Mul(s, y, pred), {-1});
      Output neg = ops::Max(s, ops::Mul(s, ops::Sub(s, c(1.0), y), pred), {-1});
      return ops::Relu(s, ops::Add(s, ops::Sub(s, neg, pos), c(1.0)));
    }
    case Kind::kKLDivergence: {
      auto clip = [&](Output x) { return ops::Minimum(s, ops::Maximum(s, x, c(kEpsilon)), c(1.0)); };
      Output yc = clip(y);
      return SumPerExample(s, ops::Mul(s, yc, ops::Log(s, ops::Div(s, yc, clip(pred)))));
    }
    case Kind::kPoisson:
      return MeanPerExample(s, ops::Sub(s, pred, ops::Mul(s, y, ops::Log(s, ops::Add(s, pred, c(kEpsilon))))));
    case Kind::kCosineSimilarity: {
      const int64_t last = std::max(pred.shape().rank() - 1, 0);
      auto normalized = [&](Output x) {  // x / sqrt(max(sum(x^2), 1e-12)) over the last axis
        return ops::Mul(s, x, ops::Rsqrt(s, ops::Maximum(s, ops::Sum(s, ops::Square(s, x), {last}, true), c(1e-12))));
      };
      return ops::Neg(s, SumPerExample(s, ops::Mul(s, normalized(y), normalized(pred))));
    }
    default: break;
  }
  throw Error(errors::Internal("unknown loss kind"));
}

DType Loss::label_dtype() const {
  return kind == Kind::kSparseCategoricalCrossentropy ? DType::kInt32 : DType::kFloat32;
}

TensorShape Loss::LabelShape(const TensorShape& pred) const {
  if (kind != Kind::kSparseCategoricalCrossentropy) return pred;
  if (pred.unknown_rank() || pred.rank() <= 2) return TensorShape({-1});
  // (batch, steps, ..., classes) predictions: one class id per position.
  std::vector<int64_t> dims(pred.dims().begin(), pred.dims().end() - 1);
  dims[0] = -1;
  return TensorShape(dims);
}

std::string Loss::name() const {
  switch (kind) {
    case Kind::kSparseCategoricalCrossentropy: return "sparse_categorical_crossentropy";
    case Kind::kCategoricalCrossentropy: return "categorical_crossentropy";
    case Kind::kBinaryCrossentropy: return "binary_crossentropy";
    case Kind::kMeanSquaredError: return "mean_squared_error";
    case Kind::kMeanAbsoluteError: return "mean_absolute_error";
    case Kind::kHuber: return "huber";
    case Kind::kMeanAbsolutePercentageError: return "mean_absolute_percentage_error";
    case Kind::kMeanSquaredLogarithmicError: return "mean_squared_logarithmic_error";
    case Kind::kLogCosh: return "log_cosh";
    case Kind::kHinge: return "hinge";
    case Kind::kSquaredHinge: return "squared_hinge";
    case Kind::kKLDivergence: return "kl_divergence";
    case Kind::kPoisson: return "poisson";
    case Kind::kCosineSimilarity: return "cosine_similarity";
    case Kind::kCategoricalHinge: return "categorical_hinge";
  }
  return "?";
}

Loss SparseCategoricalCrossentropy(bool from_logits) {
  return {.kind = Loss::Kind::kSparseCategoricalCrossentropy, .from_logits = from_logits};
}
Loss CategoricalCrossentropy(bool from_logits, double label_smoothing) {
  WEFT_REQUIRE(label_smoothing >= 0.0 && label_smoothing <= 1.0,
               "CategoricalCrossentropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  return {.kind = Loss::Kind::kCategoricalCrossentropy, .from_logits = from_logits, .label_smoothing = label_smoothing};
}
Loss BinaryCrossentropy(bool from_logits, double label_smoothing) {
  WEFT_REQUIRE(label_smoothing >= 0.0 && label_smoothing <= 1.0,
               "BinaryCrossentropy: label_smoothing must be in [0, 1], got {}", label_smoothing);
  return {.kind = Loss::Kind::kBinaryCrossentropy, .from_logits = from_logits, .label_smoothing = label_smoothing};
}
Loss MeanSquaredError() { return {.kind = Loss::Kind::kMeanSquaredError}; }
Loss MeanAbsoluteError() { return {.kind = Loss::Kind::kMeanAbsoluteError}; }
Loss Huber(double delta) {
  WEFT_REQUIRE(delta > 0.0, "Huber: delta must be positive, got {}", delta);
  return {.kind = Loss::Kind::kHuber, .delta = delta};
}

Loss SimpleLoss(Loss::Kind kind) {
  WEFT_REQUIRE(kind >= Loss::Kind::kMeanAbsolutePercentageError, "SimpleLoss: {} has arguments; use its factory",
               Loss{.kind = kind}.name());
  return {.kind = kind};
}

Loss LossByName(const std::string& name) {
  static const std::map<std::string, Loss (*)()> kByName = {
      {"sparse_categorical_crossentropy", [] { return SparseCategoricalCrossentropy(); }},
      {"categorical_crossentropy", [] { return CategoricalCrossentropy(); }},
      {"binary_crossentropy", [] { return BinaryCrossentropy(); }},
      {"mean_squared_error", [] { return MeanSquaredError(); }},
      {"mse", [] { return MeanSquaredError(); }},
      {"mean_absolute_error", [] { return MeanAbsoluteError(); }},
      {"mae", [] { return MeanAbsoluteError(); }},
      {"huber", [] { return Huber(); }},
      {"mean_absolute_percentage_error", [] { return SimpleLoss(Loss::Kind::kMeanAbsolutePercentageError); }},
      {"mape", [] { return SimpleLoss(Loss::Kind::kMeanAbsolutePercentageError); }},
      {"mean_squared_logarithmic_error", [] { return SimpleLoss(Loss::Kind::kMeanSquaredLogarithmicError); }},
      {"msle", [] { return SimpleLoss(Loss::Kind::kMeanSquaredLogarithmicError); }},
      {"log_cosh", [] { return SimpleLoss(Loss::Kind::kLogCosh); }},
      {"logcosh", [] { return SimpleLoss(Loss::Kind::kLogCosh); }},
      {"hinge", [] { return SimpleLoss(Loss::Kind::kHinge); }},
      {"squared_hinge", [] { return SimpleLoss(Loss::Kind::kSquaredHinge); }},
      {"kl_divergence", [] { return SimpleLoss(Loss::Kind::kKLDivergence); }},
      {"kld", [] { return SimpleLoss(Loss::Kind::kKLDivergence); }},
      {"poisson", [] { return SimpleLoss(Loss::Kind::kPoisson); }},
      {"cosine_similarity", [] { return SimpleLoss(Loss::Kind::kCosineSimilarity); }},
      {"categorical_hinge", [] { return SimpleLoss(Loss::Kind::kCategoricalHinge); }},
  };
  // Keras' class names too: "MeanSquaredError" -> "mean_squared_error", "MSE" -> "mse".
  std::string key;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool boundary = i > 0 && std::isupper(static_cast<unsigned char>(c)) &&
                          std::islower(static_cast<unsigned char>(name[i - 1]));
    if (boundary) key += '_';
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key == "huber_loss") key = "huber";
  if (key == "kldivergence") key = "kl_divergence";  // "KLDivergence"
  if (auto it = kByName.find(key); it != kByName.end()) return it->second();
  std::string known;
  for (const auto& [k, _] : kByName) known += (known.empty() ? "" : ", ") + k;
  throw Error(errors::InvalidArgument("unknown loss '{}' (known: {})", name, known));
}

Output MeanPerExample(const Scope& s, Output x) {
  const std::vector<int64_t> axes = NonBatchAxes(x);
  return axes.empty() ? x : ops::Mean(s, x, axes);
}

Tensor MatchLabelRank(const Tensor& y, const TensorShape& want) {
  if (want.unknown_rank()) return y;
  const TensorShape& have = y.shape();
  if (have.rank() == want.rank() + 1 && have.rank() >= 2 && have.dim(have.rank() - 1) == 1) {
    std::vector<int64_t> dims(have.dims().begin(), have.dims().end() - 1);
    return y.Reshaped(TensorShape(dims));
  }
  if (have.rank() + 1 == want.rank() && want.dim(want.rank() - 1) == 1) {
    std::vector<int64_t> dims(have.dims().begin(), have.dims().end());
    dims.push_back(1);
    return y.Reshaped(TensorShape(dims));
  }
  return y;
}

Tensor RunOnArrays(const Tensor& y, const Tensor& pred,
                   const std::function<Output(const Scope&, Output y, Output pred)>& build) {
  Graph g;
  Scope s = Scope::Root(&g);
  Output yp = ops::Placeholder(s.WithOpName("y_true"), y.dtype(), y.shape());
  Output pp = ops::Placeholder(s.WithOpName("y_pred"), pred.dtype(), pred.shape());
  Output p = pred.dtype() == DType::kFloat32 ? pp : ops::Cast(s, pp, DType::kFloat32);
  Output value = build(s, yp, p);
  Session session(&g, SessionOptions{.inter_op_threads = 1, .intra_op_threads = 1});
  return session.Run({{yp, y}, {pp, pred}}, {value})[0];
}

Tensor LossPerExample(const Loss& loss, const Tensor& y, const Tensor& pred) {
  const Tensor labels = MatchLabelRank(y, loss.LabelShape(pred.shape()));
  return RunOnArrays(labels, pred, [&](const Scope& s, Output yt, Output p) { return loss.Build(s, yt, p); });
}

}  // namespace weft::train
