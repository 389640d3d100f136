// The arithmetic of the collectives, vectorized (Eigen arrays): merging two buffers element by
// element and the final division. Every algorithm uses these, so a member's results depend only on
// the order in which it merges, which each algorithm fixes (docs/collectives.md).
#pragma once

#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace weft {

enum class MergeOp { kAdd, kMax, kMin };

// "Add", "Max", "Min"; InvalidArgument naming `what` otherwise.
MergeOp ParseMergeOp(const std::string& name, const std::string& what);

// dst[i] = merge(a[i], b[i]) for i in [0, n); dst may alias a or b. dtype: float32, float64, int32, int64.
void MergeInto(DType dtype, MergeOp op, void* dst, const void* a, const void* b, int64_t n);
// dst[i] /= divisor for i in [0, n) (integer division for integer types).
void DivideInPlace(DType dtype, void* dst, int64_t n, int64_t divisor);

}  // namespace weft
