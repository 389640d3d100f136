// cuDNN descriptors for the GPU convolution and pooling kernels (conv.cc, pool.cc): RAII over
// each descriptor type, and weft's NHWC shapes as cuDNN tensor descriptors.
//
//   cudnn_internal::TensorDesc x;
//   cudnn_internal::SetNhwc<float>(x, n, h, w, c);  // throws InvalidArgument past INT32_MAX
#pragma once

#include <cstdint>
#include <type_traits>

#include "ops/kernels/cuda/gpu_kernel.h"

namespace weft {
namespace cudnn_internal {

// RAII over one cuDNN descriptor type.
template <typename D, cudnnStatus_t (*Create)(D*), cudnnStatus_t (*Destroy)(D)>
class Desc {
 public:
  Desc() { WEFT_CUDNN_CHECK(Create(&d_)); }
  ~Desc() { (void)Destroy(d_); }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  D get() const { return d_; }

 private:
  D d_ = nullptr;
};
using TensorDesc = Desc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = Desc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc = Desc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using PoolDesc = Desc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;

template <typename T>
inline cudnnDataType_t CudnnType() {
  return std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
}

// A dimension as cuDNN's int (InvalidArgument when it does not fit).
inline int I(int64_t v) {
  WEFT_REQUIRE(v <= INT32_MAX, "dimension {} is too large for cuDNN", v);
  return static_cast<int>(v);
}

template <typename T>
inline void SetNhwc(const TensorDesc& d, int64_t n, int64_t h, int64_t w, int64_t c) {
  WEFT_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NHWC, CudnnType<T>(), I(n), I(c), I(h), I(w)));
}

}  // namespace cudnn_internal
}  // namespace weft
