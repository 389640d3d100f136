// CUDA, cuBLAS and cuDNN statuses as weft Statuses, with the library's own words.
//
//   ThrowIfError(CudaStatus(cudaMemcpyAsync(...), "copy to GPU:0"));
//   WEFT_CUDA_CHECK(cudaStreamSynchronize(s));          // names the call that failed
//
// Out-of-memory becomes ResourceExhausted, a missing driver or device Unavailable, an
// unsupported configuration Unimplemented, a bad parameter InvalidArgument, the rest Internal.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string_view>

#include "core/status.h"

namespace weft {

Status CudaStatus(cudaError_t e, std::string_view what);
Status CublasStatus(cublasStatus_t s, std::string_view what);
Status CudnnStatus(cudnnStatus_t s, std::string_view what);

#define WEFT_CUDA_CHECK(expr) ::weft::ThrowIfError(::weft::CudaStatus((expr), #expr))
#define WEFT_CUBLAS_CHECK(expr) ::weft::ThrowIfError(::weft::CublasStatus((expr), #expr))
#define WEFT_CUDNN_CHECK(expr) ::weft::ThrowIfError(::weft::CudnnStatus((expr), #expr))

}  // namespace weft
