// The .cu kernels' launchers, called by the host-side GPU kernels (ops/kernels/cuda/*.cc). Each
// queues its work on `stream` and returns at once; launch errors come back as a Status naming
// the kernel. Instantiated for float and double (T) unless noted.
//
//   LaunchBinary<float>(BinaryKind::kAdd, a, b, out, n, MakeBroadcastIndexer(sa, sb), stream);
//
// Shapes are row-major; n is the output's element count.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ops/kernels/cuda/launch.h"

namespace weft {

// weft's DType codes for the dtypes the .cu kernels take (kept equal to core/dtype.h's DType by a
// static_assert in ops/kernels/cuda/gpu_kernel.cc; .cu files do not include weft's headers).
enum class DTypeCode { kFloat32 = 1, kFloat64 = 2, kInt32 = 3, kInt64 = 4, kUInt8 = 5, kBool = 6 };

struct Dims4 {
  int64_t d[4] = {};
};

// cudaGetLastError after a launch, as an exception naming `kernel` (check_launch.cc).
void CheckLaunch(const char* kernel);

enum class BinaryKind { kAdd, kSub, kMul, kDiv, kPow, kMaximum, kMinimum, kSquaredDifference };
// kGelu / kGeluTanh: Gelu exact / approximate.
enum class UnaryKind { kNeg, kAbs, kSquare, kSqrt, kRsqrt, kExp, kLog, kReciprocal, kRelu, kSigmoid, kTanh, kErf, kGelu, kGeluTanh };
// dy * f'(...): ReluGrad(dy, y), SigmoidGrad(y, dy), TanhGrad(y, dy), GeluGrad(dy, x) (exact /
// approximate) as the CPU ops take them.
enum class ActivationGradKind { kReluGrad, kSigmoidGrad, kTanhGrad, kGeluGrad, kGeluTanhGrad };
enum class ReduceKind { kSum, kMean, kMax, kMin };
// Binary ops with a bool result; kLogicalAnd / kLogicalOr take bool inputs.
enum class CompareKind { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kLogicalAnd, kLogicalOr };

// T: float, double, int32, int64 (the integer ones for AssignAdd / AssignSub). out may be a.
template <typename T>
void LaunchBinary(BinaryKind kind, const T* a, const T* b, T* out, int64_t n, const BroadcastIndexer& bi,
                  cudaStream_t stream);
// T: float, double, int32, int64, bool (bool: kEqual, kNotEqual and the logical kinds).
template <typename T>
void LaunchCompare(CompareKind kind, const T* a, const T* b, bool* out, int64_t n, const BroadcastIndexer& bi,
                   cudaStream_t stream);
void LaunchLogicalNot(const bool* x, bool* y, int64_t n, cudaStream_t stream);
// y[i] = x[ci.Offset(i)] for n elements of `elem_size` bytes (1, 2, 4 or 8): Transpose, Tile.
void LaunchIndexedCopy(const void* x, void* y, int64_t n, size_t elem_size, const CopyIndexer& ci,
                       cudaStream_t stream);
// out[i] = x[ia] for the broadcast index map of (x's dims, out's dims) (BroadcastTo).
template <typename T>
void LaunchBroadcast(const T* x, T* out, int64_t n, const BroadcastIndexer& bi, cudaStream_t stream);
template <typename T>
void LaunchUnary(UnaryKind kind, const T* x, T* y, int64_t n, cudaStream_t stream);
template <typename T>
void LaunchActivationGrad(ActivationGradKind kind, const T* a, const T* b, T* out, int64_t n, cudaStream_t stream);
// y[i, c] = x[i, c] + bias[c] over rows of `channels`.
template <typename T>
void LaunchBiasAdd(const T* x, const T* bias, T* y, int64_t n, int64_t channels, cudaStream_t stream);
// out[o] = reduce over r of x[ri.Offset(o, r)] (mean divides by the count). `partials`: device
// scratch of num_outputs * ReduceSplits(num_outputs, reduce_count) elements (launch.h) when that
// is more than 1 per output, else unused (may be null).
template <typename T>
void LaunchReduce(ReduceKind kind, const T* x, T* out, const ReduceIndexer& ri, T* partials, cudaStream_t stream);
// ArgMax (is_max) / ArgMin of x viewed as [p, r, s] over r: out[u] for u < p * s, ties to the
// smallest index (T: float, double, int32, int64; Out: int32, int64).
template <typename T, typename Out>
void LaunchArgReduce(const T* x, Out* out, int64_t p, int64_t r, int64_t s, bool is_max, cudaStream_t stream);
// The collectives' merge (kSum, kMax, kMin): dst[i] = a[i] (+|max|min) b[i], dst may alias a or b;
// and the mean's dst[i] /= divisor (integer division for integers). T: float, double, int32, int64.
template <typename T>
void LaunchCollectiveMerge(ReduceKind kind, T* dst, const T* a, const T* b, int64_t n, cudaStream_t stream);
template <typename T>
void LaunchCollectiveDivide(T* dst, int64_t n, int64_t divisor, cudaStream_t stream);
// Row-wise over [rows, cols]: loss[r] = -sum(labels * log_softmax(logits)), backprop = softmax - labels.
template <typename T>
void LaunchSoftmaxXent(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows, int64_t cols,
                       cudaStream_t stream);
// As LaunchSoftmaxXent with labels as class ids (Index: int32, int64); an id outside [0, cols) sets
// *bad (device int32, zeroed by the caller) to 1 + its row; `bad` may be null when the caller
// checked the labels on the host.
template <typename T, typename Index>
void LaunchSparseSoftmaxXent(const T* logits, const Index* labels, T* loss, T* backprop, int64_t rows, int64_t cols,
                             int32_t* bad, cudaStream_t stream);
// Row-wise softmax of [rows, cols].
template <typename T>
void LaunchSoftmax(const T* logits, T* y, int64_t rows, int64_t cols, cudaStream_t stream);
// dx = (dy - sum(dy * y)) * y per row of [rows, cols] (SoftmaxGrad).
template <typename T>
void LaunchSoftmaxGrad(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, cudaStream_t stream);
// FusedBatchNorm over x viewed as [M, C] (channels last), the CPU kernel's formulas
// (ops/kernels/cpu/batchnorm.cc). Training: mean and biased var of the batch are written to
// mean/var; inference: mean_in/var_in are copied there. `scratch` holds 2*C values.
template <typename T>
void LaunchBatchNorm(const T* x, const T* scale, const T* offset, const T* mean_in, const T* var_in, T* y, T* mean,
                     T* var, T* scratch, int64_t M, int64_t C, T epsilon, bool training, cudaStream_t stream);
// FusedBatchNormGrad: dx [M, C] and the per-channel dscale, doffset, dmean_in, dvar_in; `scratch`
// holds 3*C values.
template <typename T>
void LaunchBatchNormGrad(const T* dy, const T* x, const T* scale, const T* mean, const T* var, const T* dmean,
                         const T* dvar, T* dx, T* dscale, T* doffset, T* dmean_in, T* dvar_in, T* scratch, int64_t M,
                         int64_t C, T epsilon, bool training, cudaStream_t stream);
// Every element = value (T: float, double, int32, int64).
template <typename T>
void LaunchFill(T* y, T value, int64_t n, cudaStream_t stream);
// y = (To)x elementwise between float, double, int32, int64, uint8, bool (dtype codes as weft's DType;
// to bool: x != 0).
void LaunchCast(int src_dtype, int dst_dtype, const void* x, void* y, int64_t n, cudaStream_t stream);
// y = transpose(x) for rank-4 x of `dims` with y's dim i = x's dim perm[i].
template <typename T>
void LaunchTranspose4(const T* x, T* y, const int64_t dims[4], const int perm[4], cudaStream_t stream);
// NHWC x [n, h, w, c] into y [n, h + extra_h, w + extra_w, c] (zeros after), or back (crop).
template <typename T>
void LaunchPadNhwc(const T* x, T* y, int64_t n, int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w,
                   cudaStream_t stream);
template <typename T>
void LaunchCropNhwc(const T* y, T* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t extra_h, int64_t extra_w,
                    cudaStream_t stream);
// out[o, i, k] = params[o, indices[i], k] for params [outer, limit, inner]; an index outside
// [0, limit) writes zeros and sets *bad (device int32, zeroed by the caller) to 1 + the index's position.
template <typename T, typename Index>
void LaunchGather(const T* params, const Index* indices, T* out, int64_t outer, int64_t num_indices, int64_t inner,
                  int64_t limit, int32_t* bad, cudaStream_t stream);
// Random values as the CPU kernels make them (ops/kernels/philox.h): element i of the output is
// element base + i of the stream keyed by `key`, so a GPU run and a CPU run of the same seeded op
// produce the same numbers. Uniform in [lo, hi); normal mean + stddev * z (truncated: |z| <= 2).
template <typename T>
void LaunchRandomUniform(T* y, int64_t n, uint64_t key, uint64_t base, T lo, T hi, cudaStream_t stream);
template <typename T>
void LaunchRandomNormal(T* y, int64_t n, uint64_t key, uint64_t base, T mean, T stddev, bool truncated,
                        cudaStream_t stream);
// Dropout: mask[i] = scale when the uniform of stream element base + i (the CPU kernel's
// RandomUniform words) is >= rate, else 0; y = x * mask.
template <typename T>
void LaunchDropout(const T* x, T* y, T* mask, int64_t n, uint64_t key, uint64_t base, T rate, T scale,
                   cudaStream_t stream);
// GatherGrad: out (zeroed by the caller) [outer, limit, inner] += dy [outer, num_indices, inner]
// at the gathered rows; a bad index sets *bad as LaunchGather. Repeated indices accumulate: by
// atomic adds in any order, or, `deterministic`, by one thread per (outer, inner) column adding
// the rows in index order (the same bits every run, less parallel).
template <typename T, typename Index>
void LaunchGatherGrad(const T* dy, const Index* indices, T* out, int64_t outer, int64_t num_indices, int64_t inner,
                      int64_t limit, bool deterministic, int32_t* bad, cudaStream_t stream);
// Optimizer updates in place; scalars (lr, momentum, beta1, ...) are device pointers to one T.
template <typename T>
void LaunchApplyGradientDescent(T* var, const T* lr, const T* grad, int64_t n, cudaStream_t stream);
template <typename T>
void LaunchApplyMomentum(T* var, T* accum, const T* lr, const T* grad, const T* momentum, bool nesterov, int64_t n,
                         cudaStream_t stream);
template <typename T>
void LaunchApplyAdam(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                     const T* beta2, const T* epsilon, const T* grad, int64_t n, cudaStream_t stream);

// FusedCausalAttention (attention.cu): q [B, T, H, K], k [B, S, H, K], v [B, S, H, V] -> out
// [B, T, H, V], lse [B, H, T]; its gradient writes dq, dk, dv (every element). dlse may be null
// (zeros). scale is resolved (never 0). S > 0 where T > 0.
struct AttentionShape {
  int64_t B, T, S, H, K, V;
};
template <typename T>
void LaunchAttentionForward(const T* q, const T* k, const T* v, T* out, T* lse, const AttentionShape& d, T scale,
                            cudaStream_t stream);
template <typename T>
void LaunchAttentionGrad(const T* dout, const T* q, const T* k, const T* v, const T* out, const T* lse, const T* dlse,
                         T* dq, T* dk, T* dv, const AttentionShape& d, T scale, cudaStream_t stream);

}  // namespace weft
