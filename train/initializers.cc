#include "train/initializers.h"

#include <cmath>

#include "ops/framework.h"
#include "ops/math.h"
#include "ops/random.h"

namespace weft::train {

void ComputeFans(const TensorShape& shape, double* fan_in, double* fan_out) {
  const int rank = shape.rank();
  if (rank == 0) {
    *fan_in = *fan_out = 1;
  } else if (rank == 1) {
    *fan_in = *fan_out = static_cast<double>(shape.dim(0));
  } else {
    double receptive = 1;
    for (int i = 0; i < rank - 2; ++i) receptive *= static_cast<double>(shape.dim(i));
    *fan_in = receptive * static_cast<double>(shape.dim(rank - 2));
    *fan_out = receptive * static_cast<double>(shape.dim(rank - 1));
  }
}

Output Initializer::Build(const Scope& s, const TensorShape& shape) const {
  WEFT_REQUIRE(shape.IsFullyDefined(), "initializer {}: the shape {} must be fully known", ToString(),
               shape.ToString());
  double fan_in, fan_out;
  ComputeFans(shape, &fan_in, &fan_out);
  fan_in = std::max(fan_in, 1.0);
  fan_out = std::max(fan_out, 1.0);
  // Keras' truncated normals are cut at 2 stddev; this constant restores the intended variance.
  constexpr double kTruncatedStddev = 0.87962566103423978;
  switch (kind) {
    case Kind::kZeros:
      return ops::Const(s, Tensor::Zeros(DType::kFloat32, shape));
    case Kind::kOnes:
    case Kind::kConstant: {
      Tensor t = Tensor::Zeros(DType::kFloat32, shape);
      const float v = kind == Kind::kOnes ? 1.0f : static_cast<float>(value);
      auto flat = t.flat<float>();
      for (int64_t i = 0; i < flat.size(); ++i) flat(i) = v;
      return ops::Const(s, t);
    }
    case Kind::kGlorotUniform: {
      const double limit = std::sqrt(6.0 / (fan_in + fan_out));
      return ops::RandomUniform(s, shape, DType::kFloat32, -limit, limit, seed);
    }
    case Kind::kHeUniform: {
      const double limit = std::sqrt(6.0 / fan_in);
      return ops::RandomUniform(s, shape, DType::kFloat32, -limit, limit, seed);
    }
    case Kind::kGlorotNormal:
      return ops::TruncatedNormal(s, shape, DType::kFloat32, 0.0,
                                  std::sqrt(2.0 / (fan_in + fan_out)) / kTruncatedStddev, seed);
    case Kind::kHeNormal:
      return ops::TruncatedNormal(s, shape, DType::kFloat32, 0.0, std::sqrt(2.0 / fan_in) / kTruncatedStddev, seed);
    case Kind::kTensor:
      WEFT_REQUIRE(tensor != nullptr && tensor->shape() == shape && tensor->dtype() == DType::kFloat32,
                   "initializer {}: a float32 value of shape {} is needed", ToString(), shape.ToString());
      return ops::Const(s, *tensor);
  }
  throw Error(errors::Internal("unknown initializer kind"));
}

std::string Initializer::ToString() const {
  std::string name;
  switch (kind) {
    case Kind::kZeros: return "zeros";
    case Kind::kOnes: return "ones";
    case Kind::kConstant: return fmt::format("constant({})", value);
    case Kind::kTensor: return fmt::format("tensor({})", tensor ? tensor->shape().ToString() : "none");
    case Kind::kGlorotUniform: name = "glorot_uniform"; break;
    case Kind::kGlorotNormal: name = "glorot_normal"; break;
    case Kind::kHeNormal: name = "he_normal"; break;
    case Kind::kHeUniform: name = "he_uniform"; break;
  }
  return seed == 0 ? name : fmt::format("{}(seed={})", name, seed);
}

Initializer Zeros() { return {Initializer::Kind::kZeros}; }
Initializer Ones() { return {Initializer::Kind::kOnes}; }
Initializer Constant(double value) { return {Initializer::Kind::kConstant, value}; }
Initializer GlorotUniform(int64_t seed) { return {Initializer::Kind::kGlorotUniform, 0.0, seed}; }
Initializer GlorotNormal(int64_t seed) { return {Initializer::Kind::kGlorotNormal, 0.0, seed}; }
Initializer HeNormal(int64_t seed) { return {Initializer::Kind::kHeNormal, 0.0, seed}; }
Initializer HeUniform(int64_t seed) { return {Initializer::Kind::kHeUniform, 0.0, seed}; }

Initializer FromTensor(Tensor value) {
  Initializer init{Initializer::Kind::kTensor};
  init.tensor = std::make_shared<const Tensor>(std::move(value));
  return init;
}

Initializer InitializerByName(const std::string& name, int64_t seed) {
  if (name == "zeros") return Zeros();
  if (name == "ones") return Ones();
  if (name == "glorot_uniform") return GlorotUniform(seed);
  if (name == "glorot_normal") return GlorotNormal(seed);
  if (name == "he_normal") return HeNormal(seed);
  if (name == "he_uniform") return HeUniform(seed);
  throw Error(errors::InvalidArgument(
      "unknown initializer '{}' (known: zeros, ones, glorot_uniform, glorot_normal, he_normal, he_uniform)", name));
}

}  // namespace weft::train
