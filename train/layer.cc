#include "train/layer.h"

#include <cctype>
#include <map>
#include <set>

#include <fmt/ranges.h>

#include "ops/array.h"
#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"
#include "ops/state.h"

namespace weft::train {

Sym Input(TensorShape shape, std::string name, DType dtype) {
  WEFT_REQUIRE(shape.rank() >= 0, "Input '{}': the per-example shape must have a known rank", name);
  WEFT_REQUIRE(dtype == DType::kFloat32 || dtype == DType::kInt32 || dtype == DType::kInt64,
               "Input '{}': dtype must be float32, int32 or int64, got {}", name, DTypeName(dtype));
  std::vector<int64_t> dims = {-1};
  for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape.dim(i));
  auto node = std::make_shared<SymNode>();
  node->shape = TensorShape(dims);
  node->name = std::move(name);
  node->dtype = dtype;
  return node;
}

// Keras' default layer names: its class name in snake case ("conv2d", "max_pooling1d",
// "leaky_re_lu", "dense_1" for the second), as keras' to_snake_case spells them: "_" before an
// upper-case letter that starts a lower-case run, and between a lower-case and an upper-case letter.
std::string DefaultLayerName(const std::string& type) {
  static const std::map<std::string, std::string> kAliases = {{"MaxPool2D", "MaxPooling2D"},
                                                              {"AvgPool2D", "AveragePooling2D"}};
  auto it = kAliases.find(type);
  const std::string& t = it == kAliases.end() ? type : it->second;
  auto upper = [&](size_t i) { return i < t.size() && std::isupper(static_cast<unsigned char>(t[i])); };
  auto lower = [&](size_t i) { return i < t.size() && std::islower(static_cast<unsigned char>(t[i])); };
  std::string out;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && upper(i) && (lower(i + 1) || lower(i - 1))) out += '_';
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(t[i])));
  }
  return out;
}

std::string Layer::Describe() const { return fmt::format("{} '{}'", type_, name_.empty() ? type_ : name_); }

void Layer::AddWeight(std::string name, TensorShape shape, Initializer init, bool trainable, double l2, double l1,
                      Constraint constraint) {
  declared_trainable_.push_back(trainable);
  weights_.push_back(
      Weight{std::move(name), std::move(shape), init, trainable && trainable_, l2, l1, std::move(constraint)});
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  for (size_t i = 0; i < weights_.size(); ++i) weights_[i].trainable = trainable && declared_trainable_[i];
}

void AddActivityPenalty(CallContext& ctx, Output y, double l1, double l2) {
  if (ctx.losses == nullptr || (l1 == 0.0 && l2 == 0.0)) return;
  const Scope s = ctx.scope.NewSubScope("activity_regularizer");
  auto f = [&](double v) { return ops::ScalarLike(s, DType::kFloat32, v); };
  Output penalty = ops::Add(s, ops::Mul(s, f(l1), ops::Sum(s, ops::Abs(s, y))), ops::Mul(s, f(l2), ops::Sum(s, ops::Square(s, y))));
  // Keras' divide_no_nan by the batch size: an empty batch's penalty (0) stays 0.
  Output batch = ops::Reshape(s, ops::Cast(s, ops::Slice(s, ops::Shape(s, y), {0}, {1}), DType::kFloat32),
                              std::vector<int64_t>{});
  ctx.losses->push_back(ops::Div(s, penalty, ops::Maximum(s, batch, f(1.0))));
}

Output Constraint::Project(const Scope& s, Output w) const {
  if (kind == Kind::kNonNeg) {
    return ops::Mul(s, w, ops::Cast(s, ops::GreaterEqual(s, w, ops::ScalarLike(s, DType::kFloat32, 0.0)), DType::kFloat32));
  }
  const int rank = w.shape().rank();
  std::vector<int64_t> axes;
  for (int64_t a : axis) {
    WEFT_REQUIRE(a >= -rank && a < rank, "{}: axis {} is out of range for a weight of shape {}", ToString(), a,
                 w.shape().ToString());
    axes.push_back(a < 0 ? a + rank : a);
  }
  auto f = [&](double v) { return ops::ScalarLike(s, DType::kFloat32, v); };
  Output norm = ops::Sqrt(s, ops::Sum(s, ops::Square(s, w), axes, /*keep_dims=*/true));
  Output desired = norm;
  switch (kind) {
    case Kind::kMaxNorm: desired = ops::Minimum(s, norm, f(max_value)); break;
    case Kind::kMinMaxNorm:
      desired = ops::Add(s, ops::Mul(s, f(rate), ops::Minimum(s, ops::Maximum(s, norm, f(min_value)), f(max_value))),
                         ops::Mul(s, f(1.0 - rate), norm));
      break;
    case Kind::kUnitNorm: desired = f(1.0); break;
    default: break;
  }
  return ops::Div(s, ops::Mul(s, w, desired), ops::Add(s, norm, f(1e-7)));
}

std::string Constraint::ToString() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kNonNeg: return "non_neg";
    case Kind::kMaxNorm: return fmt::format("max_norm(max_value={}, axis=[{}])", max_value, fmt::join(axis, ", "));
    case Kind::kUnitNorm: return fmt::format("unit_norm(axis=[{}])", fmt::join(axis, ", "));
    case Kind::kMinMaxNorm:
      return fmt::format("min_max_norm(min_value={}, max_value={}, rate={}, axis=[{}])", min_value, max_value, rate,
                         fmt::join(axis, ", "));
  }
  return "?";
}

int64_t Layer::CountParams(bool trainable) const {
  int64_t n = 0;
  for (const Weight& w : weights_) {
    if (w.trainable == trainable) n += w.shape.num_elements();
  }
  return n;
}

Sym Layer::operator()(const Sym& x) { return (*this)(std::vector<Sym>{x}); }

Sym Layer::operator()(const std::vector<Sym>& xs) {
  std::vector<Sym> out = Outputs(xs);
  WEFT_REQUIRE(out.size() == 1, "{}: this call has {} outputs; take them all with Outputs()", Describe(), out.size());
  return out[0];
}

std::vector<Output> Layer::OutputMasks(CallContext& ctx, const std::vector<Output>&,
                                       const std::vector<Output>& outputs) const {
  // Keras' layers with supports_masking = True whose output keeps the input's steps.
  static const std::set<std::string> kPassMask = {
      "Dense", "Dropout", "Activation", "ReLU", "LeakyReLU", "ELU", "PReLU", "Softmax", "LayerNormalization",
      "BatchNormalization", "GaussianNoise", "GaussianDropout", "SpatialDropout1D", "AlphaDropout", "Identity",
      "Rescaling", "ActivityRegularization"};
  // The element-wise merge layers: Keras' Merge.compute_mask keeps a step that any masked input
  // keeps (ops.any over the masks given; checked against TF 2.21 in test_keras_mask.py).
  static const std::set<std::string> kMergeMask = {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"};
  std::vector<Output> out(outputs.size());
  if (out.empty()) return out;
  if (kPassMask.count(type_)) {
    out[0] = ctx.mask(0);
  } else if (kMergeMask.count(type_)) {
    for (const Output& m : ctx.masks) {
      if (m.valid()) out[0] = out[0].valid() ? ops::Maximum(ctx.scope.NewSubScope("mask"), out[0], m) : m;
    }
  }
  return out;
}

Output CastForLayer(const Scope& s, const Layer& layer, Output x) {
  const bool integer = x.dtype() == DType::kInt32 || x.dtype() == DType::kInt64;
  return integer && !layer.takes_integers() ? ops::Cast(s, x, DType::kFloat32) : x;
}

std::vector<Sym> Layer::Outputs(const std::vector<Sym>& xs) {
  WEFT_REQUIRE(accepts_inputs(xs.size()), "{}: takes {} input(s), got {}", Describe(), expected_inputs(), xs.size());
  std::vector<TensorShape> shapes;
  for (const Sym& x : xs) {
    WEFT_REQUIRE(x != nullptr, "{}: an input is null", Describe());
    shapes.push_back(x->shape);
  }
  if (!built_) {
    Build(shapes);
    built_ = true;
  }
  // The output shapes and dtypes, from the ops' own shape functions on a scratch graph.
  Graph scratch;
  Scope s = Scope::Root(&scratch);
  CallContext ctx{s.NewSubScope(name_.empty() ? type_ : name_), /*training=*/false, {}, nullptr};
  // Variable nodes (never run) so that state updates, which take a variable as their ref input,
  // can be built on them.
  for (const Weight& w : weights_) ctx.weights.push_back(ops::Variable(s, w.shape, DType::kFloat32));
  std::vector<Output> inputs;
  for (const Sym& x : xs) inputs.push_back(CastForLayer(s, *this, ops::Placeholder(s, x->dtype, x->shape)));
  std::vector<Output> ys;
  try {
    ys = CallOutputs(ctx, inputs);
  } catch (const Error& e) {
    std::string in;
    for (const TensorShape& shape : shapes) in += (in.empty() ? "" : ", ") + shape.ToString();
    throw Error(Status(e.code(), fmt::format("{} on input shape {}: {}", Describe(), in, e.status().message())));
  }
  std::vector<Sym> out;
  for (size_t i = 0; i < ys.size(); ++i) {
    auto node = std::make_shared<SymNode>();
    node->layer = shared_from_this();
    node->inputs = xs;
    node->shape = ys[i].shape();
    node->dtype = ys[i].dtype();
    node->name = name_;
    node->index = static_cast<int>(i);
    if (i > 0) node->first = out[0];
    out.push_back(node);
  }
  return out;
}

}  // namespace weft::train
