// Helpers shared by the index-producing ops' declarations (ops/search.cc) and kernels.
#pragma once

#include <cstdint>

namespace weft {

// The length of Range(start, limit, delta), as TF: ceil(|limit - start| / |delta|) for integer
// dtypes, ceil(|(limit - start) / delta|) for floats. Throws InvalidArgument for delta == 0 or a
// delta pointing away from limit.
int64_t RangeLength(double start, double limit, double delta, bool integer);

}  // namespace weft
