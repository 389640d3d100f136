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
  enum class Kind { kZeros, kOnes, kConstant, kGlorotUniform, kGlorotNormal, kHeNormal, kHeUniform, kTensor };
  Kind kind = Kind::kZeros;
  double value = 0.0;  // kConstant
  int64_t seed = 0;
  std::shared_ptr<const Tensor> tensor;  // kTensor: the value itself (shared, never changed)

  // The initial value of a float32 tensor of `shape` (fully known).
  Output Build(const Scope& s, const TensorShape& shape) const;
  std::string ToString() const;  // "glorot_uniform(seed=7)"
};

Initializer Zeros();
Initializer Ones();
Initializer Constant(double value);
Initializer GlorotUniform(int64_t seed = 0);
Initializer GlorotNormal(int64_t seed = 0);  // truncated normal, stddev sqrt(2 / (fan_in + fan_out))
Initializer HeNormal(int64_t seed = 0);      // truncated normal, stddev sqrt(2 / fan_in)
Initializer HeUniform(int64_t seed = 0);     // U(-l, l), l = sqrt(6 / fan_in)
// A given float32 value (its shape must be the weight's): statistics computed before training.
Initializer FromTensor(Tensor value);
// By Keras name: "zeros", "ones", "glorot_uniform", "glorot_normal", "he_normal", "he_uniform".
Initializer InitializerByName(const std::string& name, int64_t seed = 0);

// Keras' fans: for a kernel (..., in, out) with receptive field r = product of the leading dims,
// fan_in = r * in and fan_out = r * out; a vector has fan_in = fan_out = its size.
void ComputeFans(const TensorShape& shape, double* fan_in, double* fan_out);

}  // namespace weft::train
