// Builder functions for random ops. Seeds: with op seed 0 the op takes one from the graph's
// seed (deterministic when the graph is seeded), else from a random device.
#pragma once

#include "graph/scope.h"

namespace weft::ops {

Output RandomUniform(const Scope& s, TensorShape shape, DType dtype = DType::kFloat32, double minval = 0.0,
                     double maxval = 1.0, int64_t seed = 0);
Output RandomNormal(const Scope& s, TensorShape shape, DType dtype = DType::kFloat32, double mean = 0.0,
                    double stddev = 1.0, int64_t seed = 0);
// Normal values redrawn when more than 2 stddev from the mean.
Output TruncatedNormal(const Scope& s, TensorShape shape, DType dtype = DType::kFloat32, double mean = 0.0,
                       double stddev = 1.0, int64_t seed = 0);
// Uniform values in [0, 1) with x's shape (taken at run time; x's values are not read).
Output RandomUniformLike(const Scope& s, Output x, int64_t seed = 0);
// Keeps each element with probability 1 - rate, scaled by 1 / (1 - rate); identity when rate is 0.
Output Dropout(const Scope& s, Output x, double rate, int64_t seed = 0);

}  // namespace weft::ops
