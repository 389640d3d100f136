// CUDA, cuBLAS and cuDNN statuses as weft errors (core/cuda/cuda_status.h), and opening a GPU
// where there is none. CUDA builds only; no GPU needed.
#include <doctest/doctest.h>

#include "core/cuda/cuda_status.h"
#include "core/cuda/gpu_context.h"

using namespace weft;

namespace {
bool Has(const Status& s, std::string_view part) { return s.message().find(part) != std::string::npos; }
}  // namespace

TEST_CASE("CUDA statuses carry CUDA's name and string and a fitting code") {
  CHECK(CudaStatus(cudaSuccess, "copy").ok());
  const Status oom = CudaStatus(cudaErrorMemoryAllocation, "cudaMalloc of 4 GiB");
  CHECK(oom.code() == Code::kResourceExhausted);
  CHECK(Has(oom, "cudaMalloc of 4 GiB: CUDA error 2 (cudaErrorMemoryAllocation): out of memory"));
  const Status driver = CudaStatus(cudaErrorInsufficientDriver, "probe");
  CHECK(driver.code() == Code::kUnavailable);
  CHECK(Has(driver, "cudaErrorInsufficientDriver"));
  CHECK(CudaStatus(cudaErrorNoDevice, "probe").code() == Code::kUnavailable);
  CHECK(CudaStatus(cudaErrorInvalidValue, "memcpy").code() == Code::kInvalidArgument);
  CHECK(CudaStatus(cudaErrorLaunchFailure, "kernel").code() == Code::kInternal);
}

TEST_CASE("cuBLAS and cuDNN statuses carry their library's words") {
  CHECK(CublasStatus(CUBLAS_STATUS_SUCCESS, "gemm").ok());
  const Status init = CublasStatus(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate");
  CHECK(init.code() == Code::kUnavailable);
  CHECK(Has(init, "cublasCreate: cuBLAS error 1 (CUBLAS_STATUS_NOT_INITIALIZED)"));
  CHECK(CublasStatus(CUBLAS_STATUS_ALLOC_FAILED, "gemm").code() == Code::kResourceExhausted);
  CHECK(CublasStatus(CUBLAS_STATUS_INVALID_VALUE, "gemm").code() == Code::kInvalidArgument);
  CHECK(CublasStatus(CUBLAS_STATUS_NOT_SUPPORTED, "gemm").code() == Code::kUnimplemented);

  CHECK(CudnnStatus(CUDNN_STATUS_SUCCESS, "conv").ok());
  const Status bad = CudnnStatus(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensor4dDescriptor");
  CHECK(bad.code() == Code::kInvalidArgument);
  CHECK(Has(bad, "cudnnSetTensor4dDescriptor: cuDNN error 2000: CUDNN_STATUS_BAD_PARAM"));
  CHECK(CudnnStatus(CUDNN_STATUS_NOT_SUPPORTED, "conv").code() == Code::kUnimplemented);
  CHECK(CudnnStatus(CUDNN_STATUS_NOT_INITIALIZED, "cudnnCreate").code() == Code::kUnavailable);
  CHECK(CudnnStatus(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, "conv").code() == Code::kResourceExhausted);
}

TEST_CASE("without a GPU, probing says why once and opening one is Unavailable with CUDA's reason") {
  const GpuProbe& p = ProbeGpus();
  CHECK(&p == &ProbeGpus());  // asked once
  CHECK(p.count == static_cast<int>(p.names.size()));
  if (p.count > 0) {
    MESSAGE("SKIPPED (this machine has a GPU): " << p.names[0]);
    return;
  }
  CHECK(!p.reason.empty());
  CHECK(OpenGpus().empty());
  try {
    GpuContext gpu(0);
    FAIL("expected Unavailable");
  } catch (const Error& e) {
    CHECK(e.code() == Code::kUnavailable);
    CHECK(std::string(e.what()).find("GPU:0: cudaSetDevice") != std::string::npos);
  }
}
