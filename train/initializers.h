// Weight initializers, as Keras names them. Each builds the initial value as graph nodes, so
// initialization runs in the session like any op and is reproducible: a nonzero seed fixes
// the values; seed 0 takes one from the graph's seed (deterministic when the graph is seeded).
//
//   Initializer init = GlorotUniform(/*seed=*/7);
//   Output value = init.Build(scope, {3, 3, 1, 32});   // U(-l, l), l = sqrt(6 / (fan_in + fan_out))
#pragma once

#include <memory>
#include <string>

#include "graph/scope.h"

namespace weft::train {

struct Initializer {
  enum class Kind {
    kZeros, kOnes, kConstant, kVarianceScaling, kRandomNormal, kRandomUniform, kTruncatedNormal, kOrthogonal,
    kIdentity, kTensor
  };
  Kind kind = Kind::kZeros;
  double value = 0.0;  // kConstant; the mean of the normals; the minval of kRandomUniform
  int64_t seed = 0;
  std::shared_ptr<const Tensor> tensor;  // kTensor: the value itself (shared, never changed)
  // kVarianceScaling: stddev (or uniform limit) from scale / fan, fan by mode.
  double scale = 1.0;
  std::string mode = "fan_in";                     // "fan_in", "fan_out", "fan_avg"
  std::string distribution = "truncated_normal";   // "truncated_normal", "untruncated_normal", "uniform"
  double spread = 0.05;  // the stddev of the normals; the maxval of kRandomUniform; the gain of kOrthogonal / kIdentity
  std::string keras_name;  // for ToString: "he_normal" is a kVarianceScaling

  // The initial value of a float32 tensor of `shape` (fully known).
  Output Build(const Scope& s, const TensorShape& shape) const;
  std::string ToString() const;  // "glorot_uniform(seed=7)"
};

Initializer Zeros();
Initializer Ones();
Initializer Constant(double value);
// Keras' VarianceScaling: n = fan_in, fan_out or their mean (mode); truncated_normal: normal cut at
// 2 stddev with stddev sqrt(scale / n) / 0.8796... (the cut's loss of variance restored);
// untruncated_normal: stddev sqrt(scale / n); uniform: U(-l, l), l = sqrt(3 scale / n).
Initializer VarianceScaling(double scale = 1.0, std::string mode = "fan_in",
                            std::string distribution = "truncated_normal", int64_t seed = 0);
Initializer GlorotUniform(int64_t seed = 0);  // VarianceScaling(1, fan_avg, uniform)
Initializer GlorotNormal(int64_t seed = 0);   // VarianceScaling(1, fan_avg, truncated_normal)
Initializer HeNormal(int64_t seed = 0);       // VarianceScaling(2, fan_in, truncated_normal)
Initializer HeUniform(int64_t seed = 0);      // VarianceScaling(2, fan_in, uniform)
Initializer LecunNormal(int64_t seed = 0);    // VarianceScaling(1, fan_in, truncated_normal)
Initializer LecunUniform(int64_t seed = 0);   // VarianceScaling(1, fan_in, uniform)
Initializer RandomNormal(double mean = 0.0, double stddev = 0.05, int64_t seed = 0);
Initializer RandomUniform(double minval = -0.05, double maxval = 0.05, int64_t seed = 0);
// Normal values redrawn beyond 2 stddev from the mean (stddev is the untruncated one, as Keras).
Initializer TruncatedNormal(double mean = 0.0, double stddev = 0.05, int64_t seed = 0);
// gain * an orthogonal matrix (rank >= 2, flattened to (prod(shape[:-1]), shape[-1])): the Q of the
// QR decomposition of a normal matrix, its columns' signs fixed by diag(R) (Haar-distributed).
Initializer Orthogonal(double gain = 1.0, int64_t seed = 0);
// gain * the identity (rank 2; non-square shapes get ones on the main diagonal).
Initializer IdentityInitializer(double gain = 1.0);  // Keras' Identity (the layer is Identity())
// A given float32 value (its shape must be the weight's): statistics computed before training.
Initializer FromTensor(Tensor value);
// By Keras name ("zeros", "ones", "glorot_uniform", "he_normal", "lecun_uniform", "orthogonal",
// "identity", "random_normal", ...; CamelCase names too) with Keras' defaults.
Initializer InitializerByName(const std::string& name, int64_t seed = 0);

// Keras' fans: for a kernel (..., in, out) with receptive field r = product of the leading dims,
// fan_in = r * in and fan_out = r * out; a vector has fan_in = fan_out = its size.
void ComputeFans(const TensorShape& shape, double* fan_in, double* fan_out);

}  // namespace weft::train
