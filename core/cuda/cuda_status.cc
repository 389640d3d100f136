#include "core/cuda/cuda_status.h"

namespace weft {

Status CudaStatus(cudaError_t e, std::string_view what) {
  if (e == cudaSuccess) return Status();
  Code code = Code::kInternal;
  switch (e) {
    case cudaErrorMemoryAllocation: code = Code::kResourceExhausted; break;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable: code = Code::kUnavailable; break;
    case cudaErrorInvalidValue:
    case cudaErrorInvalidConfiguration: code = Code::kInvalidArgument; break;
    default: break;
  }
  return Status(code, fmt::format("{}: CUDA error {} ({}): {}", what, static_cast<int>(e), cudaGetErrorName(e),
                                  cudaGetErrorString(e)));
}

Status CublasStatus(cublasStatus_t s, std::string_view what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status();
  Code code = Code::kInternal;
  switch (s) {
    case CUBLAS_STATUS_ALLOC_FAILED: code = Code::kResourceExhausted; break;
    case CUBLAS_STATUS_NOT_INITIALIZED: code = Code::kUnavailable; break;
    case CUBLAS_STATUS_INVALID_VALUE: code = Code::kInvalidArgument; break;
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH: code = Code::kUnimplemented; break;
    default: break;
  }
  return Status(code, fmt::format("{}: cuBLAS error {} ({}): {}", what, static_cast<int>(s), cublasGetStatusName(s),
                                  cublasGetStatusString(s)));
}

Status CudnnStatus(cudnnStatus_t s, std::string_view what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status();
  Code code = Code::kInternal;
  // cuDNN 9 groups its codes by thousands: 1xxx not initialized, 2xxx bad parameter, 3xxx not
  // supported, 4xxx internal (host or device allocation failures among them), 5xxx execution failed.
  if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED || s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    code = Code::kResourceExhausted;
  } else if (s / 1000 == 1) {
    code = Code::kUnavailable;
  } else if (s / 1000 == 2) {
    code = Code::kInvalidArgument;
  } else if (s / 1000 == 3) {
    code = Code::kUnimplemented;
  }
  return Status(code, fmt::format("{}: cuDNN error {}: {}", what, static_cast<int>(s), cudnnGetErrorString(s)));
}

}  // namespace weft
