#include "core/cuda/cuda_status.h"
#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {

void CheckLaunch(const char* kernel) { ThrowIfError(CudaStatus(cudaGetLastError(), fmt::format("launch of the {} kernel", kernel))); }

}  // namespace weft
