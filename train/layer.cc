#include "train/layer.h"

#include "ops/framework.h"
#include "ops/math.h"
#include "ops/nn.h"

namespace weft::train {

Sym Input(TensorShape shape, std::string name) {
  WEFT_REQUIRE(shape.rank() >= 0, "Input '{}': the per-example shape must have a known rank", name);
  std::vector<int64_t> dims = {-1};
  for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape.dim(i));
  auto node = std::make_shared<SymNode>();
  node->shape = TensorShape(dims);
  node->name = std::move(name);
  return node;
}

std::string Layer::Describe() const { return fmt::format("{} '{}'", type_, name_.empty() ? type_ : name_); }

void Layer::AddWeight(std::string name, TensorShape shape, Initializer init, bool trainable, double l2) {
  weights_.push_back(Weight{std::move(name), std::move(shape), init, trainable, l2});
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
  const int want = num_inputs();
  WEFT_REQUIRE(want < 0 ? xs.size() >= 2 : static_cast<int>(xs.size()) == want, "{}: takes {} input(s), got {}",
               Describe(), want < 0 ? "two or more" : std::to_string(want), xs.size());
  std::vector<TensorShape> shapes;
  for (const Sym& x : xs) {
    WEFT_REQUIRE(x != nullptr, "{}: an input is null", Describe());
    shapes.push_back(x->shape);
  }
  if (!built_) {
    Build(shapes);
    built_ = true;
  }
  // The output shape, from the ops' own shape functions on a scratch graph.
  Graph scratch;
  Scope s = Scope::Root(&scratch);
  CallContext ctx{s.NewSubScope(name_.empty() ? type_ : name_), /*training=*/false, {}, nullptr};
  for (const Weight& w : weights_) ctx.weights.push_back(ops::Placeholder(s, DType::kFloat32, w.shape));
  std::vector<Output> inputs;
  for (const TensorShape& shape : shapes) inputs.push_back(ops::Placeholder(s, DType::kFloat32, shape));
  Output y;
  try {
    y = Call(ctx, inputs);
  } catch (const Error& e) {
    std::string in;
    for (const TensorShape& shape : shapes) in += (in.empty() ? "" : ", ") + shape.ToString();
    throw Error(Status(e.code(), fmt::format("{} on input shape {}: {}", Describe(), in, e.status().message())));
  }
  auto node = std::make_shared<SymNode>();
  node->layer = shared_from_this();
  node->inputs = xs;
  node->shape = y.shape();
  node->name = name_;
  return node;
}

}  // namespace weft::train
