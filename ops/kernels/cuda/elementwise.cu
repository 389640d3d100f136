// Elementwise CUDA kernels: binary ops with broadcasting, BroadcastTo, unary ops and activation gradients,
// BiasAdd, Fill, Cast, and the layout helpers of the cuDNN kernels (transpose, pad, crop).
// Every kernel is a grid-stride loop over the output (launch.h's LaunchShapeFor).
#include <cuda_runtime.h>

#include <type_traits>

#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {
namespace {

#define WEFT_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

template <typename T>
__device__ T Apply(BinaryKind k, T a, T b) {
  switch (k) {
    case BinaryKind::kAdd: return a + b;
    case BinaryKind::kSub: return a - b;
    case BinaryKind::kMul: return a * b;
    case BinaryKind::kDiv: return a / b;
    case BinaryKind::kPow:
      if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(pow(static_cast<double>(a), static_cast<double>(b)));
      } else {
        return pow(a, b);
      }
    case BinaryKind::kMaximum: return MaxPropagateNaN(a, b);  // NaN wins, as the CPU kernel and TF
    case BinaryKind::kMinimum: return MinPropagateNaN(a, b);
    case BinaryKind::kSquaredDifference: return (a - b) * (a - b);
  }
  return T(0);
}

template <typename T>
__global__ void BinaryKernel(BinaryKind kind, const T* a, const T* b, T* out, int64_t n, BroadcastIndexer bi) {
  WEFT_GRID_LOOP(i, n) {
    int64_t ia, ib;
    bi.Map(i, &ia, &ib);
    out[i] = Apply(kind, a[ia], b[ib]);
  }
}

template <typename T>
__device__ bool Apply(CompareKind k, T a, T b) {
  switch (k) {
    case CompareKind::kEqual: return a == b;
    case CompareKind::kNotEqual: return a != b;
    case CompareKind::kLess: return a < b;
    case CompareKind::kLessEqual: return a <= b;
    case CompareKind::kGreater: return a > b;
    case CompareKind::kGreaterEqual: return a >= b;
    case CompareKind::kLogicalAnd: return a && b;
    case CompareKind::kLogicalOr: return a || b;
  }
  return false;
}

template <typename T>
__global__ void CompareKernel(CompareKind kind, const T* a, const T* b, bool* out, int64_t n, BroadcastIndexer bi) {
  WEFT_GRID_LOOP(i, n) {
    int64_t ia, ib;
    bi.Map(i, &ia, &ib);
    out[i] = Apply(kind, a[ia], b[ib]);
  }
}

__global__ void LogicalNotKernel(const bool* x, bool* y, int64_t n) {
  WEFT_GRID_LOOP(i, n) { y[i] = !x[i]; }
}

// E: an unsigned integer of the element's size (the copy moves bytes, whatever the dtype).
template <typename E>
__global__ void IndexedCopyKernel(const E* x, E* y, int64_t n, CopyIndexer ci) {
  WEFT_GRID_LOOP(i, n) { y[i] = x[ci.Offset(i)]; }
}

template <typename T>
__global__ void BroadcastKernel(const T* x, T* out, int64_t n, BroadcastIndexer bi) {
  WEFT_GRID_LOOP(i, n) {
    int64_t ix, unused;
    bi.Map(i, &ix, &unused);
    out[i] = x[ix];
  }
}

template <typename T>
__device__ T Apply(UnaryKind k, T x) {
  switch (k) {
    case UnaryKind::kNeg: return -x;
    case UnaryKind::kAbs: return x < T(0) ? -x : x;
    case UnaryKind::kSquare: return x * x;
    case UnaryKind::kSqrt: return sqrt(x);
    case UnaryKind::kRsqrt: return T(1) / sqrt(x);
    case UnaryKind::kExp: return exp(x);
    case UnaryKind::kLog: return log(x);
    case UnaryKind::kReciprocal: return T(1) / x;
    case UnaryKind::kRelu: return MaxPropagateNaN(x, T(0));  // relu(NaN) = NaN, as TF
    case UnaryKind::kSigmoid: return T(1) / (T(1) + exp(-x));
    case UnaryKind::kTanh: return tanh(x);
    case UnaryKind::kErf: return erf(x);
    case UnaryKind::kGelu: return T(0.5) * x * (T(1) + erf(x * T(0.70710678118654752440)));
    case UnaryKind::kGeluTanh:
      return T(0.5) * x * (T(1) + tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
  }
  return x;
}

template <typename T>
__global__ void UnaryKernel(UnaryKind kind, const T* x, T* y, int64_t n) {
  WEFT_GRID_LOOP(i, n) { y[i] = Apply(kind, x[i]); }
}

template <typename T>
__global__ void ActivationGradKernel(ActivationGradKind kind, const T* a, const T* b, T* out, int64_t n) {
  WEFT_GRID_LOOP(i, n) {
    switch (kind) {
      case ActivationGradKind::kReluGrad: out[i] = b[i] > T(0) ? a[i] : T(0); break;        // (dy, x)
      case ActivationGradKind::kSigmoidGrad: out[i] = b[i] * a[i] * (T(1) - a[i]); break;  // (y, dy)
      case ActivationGradKind::kTanhGrad: out[i] = b[i] * (T(1) - a[i] * a[i]); break;     // (y, dy)
      case ActivationGradKind::kGeluGrad: {  // (dy, x): dy * (Phi(x) + x phi(x))
        const T x = b[i];
        out[i] = a[i] * (T(0.5) * (T(1) + erf(x * T(0.70710678118654752440))) +
                         x * T(0.39894228040143267794) * exp(T(-0.5) * x * x));
        break;
      }
      case ActivationGradKind::kGeluTanhGrad: {  // (dy, x), the tanh form's derivative
        const T x = b[i];
        const T t = tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x));
        const T u = T(0.79788456080286535588) * (T(1) + T(3 * 0.044715) * x * x);
        out[i] = a[i] * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * u);
        break;
      }
    }
  }
}

template <typename T>
__global__ void BiasAddKernel(const T* x, const T* bias, T* y, int64_t n, int64_t channels) {
  WEFT_GRID_LOOP(i, n) { y[i] = x[i] + bias[i % channels]; }
}

template <typename T>
__global__ void FillKernel(T* y, T value, int64_t n) {
  WEFT_GRID_LOOP(i, n) { y[i] = value; }
}

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  WEFT_GRID_LOOP(i, n) { y[i] = static_cast<To>(x[i]); }
}

template <typename T>
__global__ void Transpose4Kernel(const T* x, T* y, int64_t n, Dims4 in, Dims4 out_strides_in) {
  // y is row-major over the permuted dims; out_strides_in.d[k] is the x stride of y's dim k.
  WEFT_GRID_LOOP(i, n) {
    int64_t r = i, off = 0;
    for (int k = 3; k >= 0; --k) {
      off += (r % in.d[k]) * out_strides_in.d[k];
      r /= in.d[k];
    }
    y[i] = x[off];
  }
}

template <typename T>
__global__ void PadKernel(const T* x, T* y, int64_t total, int64_t h, int64_t w, int64_t c, int64_t ph, int64_t pw,
                          bool crop) {
  // Over the padded tensor [n, ph, pw, c]; (crop: y is the padded one, x the cropped result).
  WEFT_GRID_LOOP(i, total) {
    const int64_t ch = i % c, col = (i / c) % pw, row = (i / (c * pw)) % ph, b = i / (c * pw * ph);
    const bool inside = row < h && col < w;
    const int64_t j = ((b * h + row) * w + col) * c + ch;
    if (!crop) {
      y[i] = inside ? x[j] : T(0);
    } else if (inside) {
      const_cast<T*>(x)[j] = y[i];
    }
  }
}

}  // namespace

template <typename T>
void LaunchBinary(BinaryKind kind, const T* a, const T* b, T* out, int64_t n, const BroadcastIndexer& bi,
                  cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  BinaryKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(kind, a, b, out, n, bi);
  CheckLaunch("binary elementwise");
}

template <typename T>
void LaunchCompare(CompareKind kind, const T* a, const T* b, bool* out, int64_t n, const BroadcastIndexer& bi,
                   cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  CompareKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(kind, a, b, out, n, bi);
  CheckLaunch("comparison");
}

void LaunchLogicalNot(const bool* x, bool* y, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  LogicalNotKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, y, n);
  CheckLaunch("LogicalNot");
}

template <typename E>
static void IndexedCopy(const void* x, void* y, int64_t n, const CopyIndexer& ci, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  IndexedCopyKernel<E><<<ls.blocks, ls.threads, 0, stream>>>(static_cast<const E*>(x), static_cast<E*>(y), n, ci);
  CheckLaunch("indexed copy");
}

void LaunchIndexedCopy(const void* x, void* y, int64_t n, size_t elem_size, const CopyIndexer& ci,
                       cudaStream_t stream) {
  switch (elem_size) {
    case 1: IndexedCopy<uint8_t>(x, y, n, ci, stream); break;
    case 2: IndexedCopy<uint16_t>(x, y, n, ci, stream); break;
    case 4: IndexedCopy<uint32_t>(x, y, n, ci, stream); break;
    case 8: IndexedCopy<uint64_t>(x, y, n, ci, stream); break;
    default: break;  // the host side accepts only these sizes
  }
}

template <typename T>
void LaunchBroadcast(const T* x, T* out, int64_t n, const BroadcastIndexer& bi, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  BroadcastKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, out, n, bi);
  CheckLaunch("broadcast");
}

template <typename T>
void LaunchUnary(UnaryKind kind, const T* x, T* y, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  UnaryKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(kind, x, y, n);
  CheckLaunch("unary elementwise");
}

template <typename T>
void LaunchActivationGrad(ActivationGradKind kind, const T* a, const T* b, T* out, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  ActivationGradKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(kind, a, b, out, n);
  CheckLaunch("activation gradient");
}

template <typename T>
void LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t n, int64_t channels, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0 || channels == 0) return;
  BiasAddKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, bias, y, n, channels);
  CheckLaunch("BiasAdd");
}

template <typename T>
void LaunchFill(T* y, T value, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  FillKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(y, value, n);
  CheckLaunch("fill");
}

template <typename From>
static void CastFrom(int dst, const From* x, void* y, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  switch (static_cast<DTypeCode>(dst)) {
    case DTypeCode::kFloat32: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<float*>(y), n); break;
    case DTypeCode::kFloat64: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<double*>(y), n); break;
    case DTypeCode::kInt32: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<int32_t*>(y), n); break;
    case DTypeCode::kInt64: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<int64_t*>(y), n); break;
    case DTypeCode::kUInt8: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<uint8_t*>(y), n); break;
    case DTypeCode::kBool: CastKernel<<<ls.blocks, ls.threads, 0, stream>>>(x, static_cast<bool*>(y), n); break;
  }
  CheckLaunch("cast");
}

void LaunchCast(int src, int dst, const void* x, void* y, int64_t n, cudaStream_t stream) {
  switch (static_cast<DTypeCode>(src)) {
    case DTypeCode::kFloat32: CastFrom(dst, static_cast<const float*>(x), y, n, stream); break;
    case DTypeCode::kFloat64: CastFrom(dst, static_cast<const double*>(x), y, n, stream); break;
    case DTypeCode::kInt32: CastFrom(dst, static_cast<const int32_t*>(x), y, n, stream); break;
    case DTypeCode::kInt64: CastFrom(dst, static_cast<const int64_t*>(x), y, n, stream); break;
    case DTypeCode::kUInt8: CastFrom(dst, static_cast<const uint8_t*>(x), y, n, stream); break;
    case DTypeCode::kBool: CastFrom(dst, static_cast<const bool*>(x), y, n, stream); break;
  }
}

template <typename T>
void LaunchTranspose4(const T* x, T* y, const int64_t dims[4], const int perm[4], cudaStream_t stream) {
  const int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
  Dims4 out_dims, out_strides;
  int64_t n = 1;
  for (int k = 0; k < 4; ++k) {
    out_dims.d[k] = dims[perm[k]];
    out_strides.d[k] = strides[perm[k]];
    n *= dims[k];
  }
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  Transpose4Kernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, y, n, out_dims, out_strides);
  CheckLaunch("transpose");
}

template <typename T>
void LaunchPadNhwc(const T* x, T* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w,
                   cudaStream_t stream) {
  const int64_t total = n * (h + extra_h) * (w + extra_w) * c;
  const LaunchShape ls = LaunchShapeFor(total);
  if (ls.blocks == 0) return;
  PadKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, y, total, h, w, c, h + extra_h, w + extra_w, false);
  CheckLaunch("pad");
}

template <typename T>
void LaunchCropNhwc(const T* y, T* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w,
                    cudaStream_t stream) {
  const int64_t total = n * (h + extra_h) * (w + extra_w) * c;
  const LaunchShape ls = LaunchShapeFor(total);
  if (ls.blocks == 0) return;
  PadKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, const_cast<T*>(y), total, h, w, c, h + extra_h, w + extra_w,
                                                     true);
  CheckLaunch("crop");
}

#define WEFT_INSTANTIATE_INT(T)                                                                                     \
  template void LaunchBinary<T>(BinaryKind, const T*, const T*, T*, int64_t, const BroadcastIndexer&, cudaStream_t); \
  template void LaunchCompare<T>(CompareKind, const T*, const T*, bool*, int64_t, const BroadcastIndexer&,         \
                                 cudaStream_t);
WEFT_INSTANTIATE_INT(int32_t)
WEFT_INSTANTIATE_INT(int64_t)
#undef WEFT_INSTANTIATE_INT
template void LaunchCompare<bool>(CompareKind, const bool*, const bool*, bool*, int64_t, const BroadcastIndexer&,
                                  cudaStream_t);

#define WEFT_INSTANTIATE(T)                                                                                         \
  template void LaunchBinary<T>(BinaryKind, const T*, const T*, T*, int64_t, const BroadcastIndexer&, cudaStream_t); \
  template void LaunchCompare<T>(CompareKind, const T*, const T*, bool*, int64_t, const BroadcastIndexer&,         \
                                 cudaStream_t);                                                                     \
  template void LaunchUnary<T>(UnaryKind, const T*, T*, int64_t, cudaStream_t);                                      \
  template void LaunchBroadcast<T>(const T*, T*, int64_t, const BroadcastIndexer&, cudaStream_t);                    \
  template void LaunchActivationGrad<T>(ActivationGradKind, const T*, const T*, T*, int64_t, cudaStream_t);          \
  template void LaunchBiasAdd<T>(const T*, const T*, T*, int64_t, int64_t, cudaStream_t);                            \
  template void LaunchTranspose4<T>(const T*, T*, const int64_t[4], const int[4], cudaStream_t);                     \
  template void LaunchPadNhwc<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);  \
  template void LaunchCropNhwc<T>(const T*, T*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, cudaStream_t);
WEFT_INSTANTIATE(float)
WEFT_INSTANTIATE(double)
#undef WEFT_INSTANTIATE
template void LaunchFill<float>(float*, float, int64_t, cudaStream_t);
template void LaunchFill<double>(double*, double, int64_t, cudaStream_t);
template void LaunchFill<int32_t>(int32_t*, int32_t, int64_t, cudaStream_t);
template void LaunchFill<int64_t>(int64_t*, int64_t, int64_t, cudaStream_t);

}  // namespace weft
