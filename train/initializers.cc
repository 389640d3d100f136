#include "train/initializers.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>

#include <Eigen/Dense>

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

namespace {

// Orthogonal's value, computed on the host (a one-time cost at initialization): the seeds follow
// the random ops' scheme (ops/random.h), so a seeded graph gives the same matrix every build.
Tensor OrthogonalValue(const Scope& s, const TensorShape& shape, double gain, int64_t seed) {
  const int64_t cols = shape.dim(shape.rank() - 1), rows = shape.num_elements() / std::max<int64_t>(cols, 1);
  const int64_t n = std::max(rows, cols), k = std::min(rows, cols);
  uint64_t stream = 0;
  if (seed != 0) {
    stream = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(s.graph()->seed());
  } else if (s.graph()->seed() != 0) {
    stream = static_cast<uint64_t>(s.graph()->seed()) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(s.graph()->NextOpSeed());
  } else {
    stream = std::random_device{}();
  }
  std::mt19937_64 gen(stream);
  std::normal_distribution<double> normal;
  Eigen::MatrixXd a(n, k);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) a(i, j) = normal(gen);
  }
  Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
  Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(n, k);
  const Eigen::MatrixXd r = qr.matrixQR().topRows(k).triangularView<Eigen::Upper>();
  for (int64_t j = 0; j < k; ++j) q.col(j) *= r(j, j) < 0 ? -1.0 : 1.0;  // unique Q: diag(R) > 0
  Tensor t(DType::kFloat32, shape);
  float* out = t.data<float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<float>(gain * (rows >= cols ? q(i, j) : q(j, i)));
  }
  return t;
}

Tensor Filled(const TensorShape& shape, float v) {
  Tensor t = Tensor::Zeros(DType::kFloat32, shape);
  auto flat = t.flat<float>();
  for (int64_t i = 0; i < flat.size(); ++i) flat(i) = v;
  return t;
}

Initializer Random(Initializer::Kind kind, double value, double spread, int64_t seed, std::string name) {
  Initializer init{kind, value, seed};
  init.spread = spread;
  init.keras_name = std::move(name);
  return init;
}

}  // namespace

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
    case Kind::kConstant:
      return ops::Const(s, Filled(shape, kind == Kind::kOnes ? 1.0f : static_cast<float>(value)));
    case Kind::kVarianceScaling: {
      const double n = mode == "fan_in" ? fan_in : mode == "fan_out" ? fan_out : (fan_in + fan_out) / 2.0;
      const double variance = scale / n;
      if (distribution == "uniform") {
        const double limit = std::sqrt(3.0 * variance);
        return ops::RandomUniform(s, shape, DType::kFloat32, -limit, limit, seed);
      }
      if (distribution == "untruncated_normal") {
        return ops::RandomNormal(s, shape, DType::kFloat32, 0.0, std::sqrt(variance), seed);
      }
      return ops::TruncatedNormal(s, shape, DType::kFloat32, 0.0, std::sqrt(variance) / kTruncatedStddev, seed);
    }
    case Kind::kRandomNormal:
      return ops::RandomNormal(s, shape, DType::kFloat32, value, spread, seed);
    case Kind::kTruncatedNormal:
      return ops::TruncatedNormal(s, shape, DType::kFloat32, value, spread, seed);
    case Kind::kRandomUniform:
      return ops::RandomUniform(s, shape, DType::kFloat32, value, spread, seed);
    case Kind::kOrthogonal:
      WEFT_REQUIRE(shape.rank() >= 2, "initializer orthogonal: needs a shape of rank 2 or more, got {}",
                   shape.ToString());
      return ops::Const(s, OrthogonalValue(s, shape, spread, seed));
    case Kind::kIdentity: {
      WEFT_REQUIRE(shape.rank() == 2, "initializer identity: needs a 2-D shape, got {}", shape.ToString());
      Tensor t = Tensor::Zeros(DType::kFloat32, shape);
      for (int64_t i = 0; i < std::min(shape.dim(0), shape.dim(1)); ++i) {
        t.data<float>()[i * shape.dim(1) + i] = static_cast<float>(spread);
      }
      return ops::Const(s, t);
    }
    case Kind::kTensor:
      WEFT_REQUIRE(tensor != nullptr && tensor->shape() == shape && tensor->dtype() == DType::kFloat32,
                   "initializer {}: a float32 value of shape {} is needed", ToString(), shape.ToString());
      return ops::Const(s, *tensor);
  }
  throw Error(errors::Internal("unknown initializer kind"));
}

std::string Initializer::ToString() const {
  std::string text;
  switch (kind) {
    case Kind::kZeros: return "zeros";
    case Kind::kOnes: return "ones";
    case Kind::kConstant: return fmt::format("constant({})", value);
    case Kind::kTensor: return fmt::format("tensor({})", tensor ? tensor->shape().ToString() : "none");
    case Kind::kIdentity: return fmt::format("identity(gain={})", spread);
    case Kind::kVarianceScaling:
      text = !keras_name.empty() ? keras_name
                                 : fmt::format("variance_scaling(scale={}, mode={}, distribution={}", scale, mode,
                                               distribution);
      break;
    case Kind::kRandomNormal: text = fmt::format("random_normal(mean={}, stddev={}", value, spread); break;
    case Kind::kTruncatedNormal: text = fmt::format("truncated_normal(mean={}, stddev={}", value, spread); break;
    case Kind::kRandomUniform: text = fmt::format("random_uniform(minval={}, maxval={}", value, spread); break;
    case Kind::kOrthogonal: text = fmt::format("orthogonal(gain={}", spread); break;
  }
  const bool open = text.back() != ')' && text.find('(') != std::string::npos;
  if (seed != 0) return open ? fmt::format("{}, seed={})", text, seed) : fmt::format("{}(seed={})", text, seed);
  return open ? text + ")" : text;
}

Initializer Zeros() { return {Initializer::Kind::kZeros}; }
Initializer Ones() { return {Initializer::Kind::kOnes}; }
Initializer Constant(double value) { return {Initializer::Kind::kConstant, value}; }

Initializer VarianceScaling(double scale, std::string mode, std::string distribution, int64_t seed) {
  WEFT_REQUIRE(scale > 0.0, "VarianceScaling: scale must be positive, got {}", scale);
  WEFT_REQUIRE(mode == "fan_in" || mode == "fan_out" || mode == "fan_avg",
               "VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', got '{}'", mode);
  if (distribution == "normal") distribution = "truncated_normal";  // Keras 2's name of it
  WEFT_REQUIRE(distribution == "truncated_normal" || distribution == "untruncated_normal" || distribution == "uniform",
               "VarianceScaling: distribution must be 'truncated_normal', 'untruncated_normal' or 'uniform', got '{}'",
               distribution);
  Initializer init{Initializer::Kind::kVarianceScaling, 0.0, seed};
  init.scale = scale;
  init.mode = std::move(mode);
  init.distribution = std::move(distribution);
  return init;
}

namespace {
Initializer Named(Initializer init, std::string name) {
  init.keras_name = std::move(name);
  return init;
}
}  // namespace

Initializer GlorotUniform(int64_t seed) { return Named(VarianceScaling(1.0, "fan_avg", "uniform", seed), "glorot_uniform"); }
Initializer GlorotNormal(int64_t seed) { return Named(VarianceScaling(1.0, "fan_avg", "truncated_normal", seed), "glorot_normal"); }
Initializer HeNormal(int64_t seed) { return Named(VarianceScaling(2.0, "fan_in", "truncated_normal", seed), "he_normal"); }
Initializer HeUniform(int64_t seed) { return Named(VarianceScaling(2.0, "fan_in", "uniform", seed), "he_uniform"); }
Initializer LecunNormal(int64_t seed) { return Named(VarianceScaling(1.0, "fan_in", "truncated_normal", seed), "lecun_normal"); }
Initializer LecunUniform(int64_t seed) { return Named(VarianceScaling(1.0, "fan_in", "uniform", seed), "lecun_uniform"); }
Initializer RandomNormal(double mean, double stddev, int64_t seed) {
  WEFT_REQUIRE(stddev >= 0.0, "RandomNormal: stddev must be >= 0, got {}", stddev);
  return Random(Initializer::Kind::kRandomNormal, mean, stddev, seed, "");
}
Initializer TruncatedNormal(double mean, double stddev, int64_t seed) {
  WEFT_REQUIRE(stddev >= 0.0, "TruncatedNormal: stddev must be >= 0, got {}", stddev);
  return Random(Initializer::Kind::kTruncatedNormal, mean, stddev, seed, "");
}
Initializer RandomUniform(double minval, double maxval, int64_t seed) {
  WEFT_REQUIRE(minval <= maxval, "RandomUniform: minval ({}) must be <= maxval ({})", minval, maxval);
  return Random(Initializer::Kind::kRandomUniform, minval, maxval, seed, "");
}
Initializer Orthogonal(double gain, int64_t seed) { return Random(Initializer::Kind::kOrthogonal, 0.0, gain, seed, ""); }
Initializer IdentityInitializer(double gain) { return Random(Initializer::Kind::kIdentity, 0.0, gain, 0, ""); }

Initializer FromTensor(Tensor value) {
  Initializer init{Initializer::Kind::kTensor};
  init.tensor = std::make_shared<const Tensor>(std::move(value));
  return init;
}

Initializer InitializerByName(const std::string& name, int64_t seed) {
  // Keras' snake_case names; CamelCase class names map onto them.
  std::string key;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (i > 0) key += '_';
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      key += c;
    }
  }
  if (key == "zeros" || key == "zero") return Zeros();
  if (key == "ones" || key == "one") return Ones();
  if (key == "glorot_uniform") return GlorotUniform(seed);
  if (key == "glorot_normal") return GlorotNormal(seed);
  if (key == "he_normal") return HeNormal(seed);
  if (key == "he_uniform") return HeUniform(seed);
  if (key == "lecun_normal") return LecunNormal(seed);
  if (key == "lecun_uniform") return LecunUniform(seed);
  // "normal" / "uniform": Keras' short names of the same two (Embedding's default is "uniform").
  if (key == "random_normal" || key == "normal") return RandomNormal(0.0, 0.05, seed);
  if (key == "random_uniform" || key == "uniform") return RandomUniform(-0.05, 0.05, seed);
  if (key == "truncated_normal") return TruncatedNormal(0.0, 0.05, seed);
  if (key == "variance_scaling") return VarianceScaling(1.0, "fan_in", "truncated_normal", seed);
  if (key == "orthogonal") return Orthogonal(1.0, seed);
  if (key == "identity") return IdentityInitializer();
  throw Error(errors::InvalidArgument(
      "unknown initializer '{}' (known: zeros, ones, glorot_uniform, glorot_normal, he_normal, he_uniform, "
      "lecun_normal, lecun_uniform, random_normal, random_uniform, truncated_normal, variance_scaling, orthogonal, "
      "identity)", name));
}

}  // namespace weft::train
