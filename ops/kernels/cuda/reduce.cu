// Row and axis reductions: Sum / Mean / Max / Min over any axes, softmax, and the softmax
// cross-entropy losses. One block per output (or row); its threads stride over the terms and
// combine through shared memory. A reduction with few outputs of many terms (a global Sum) splits
// each output's terms over several blocks and combines their partials (ReduceSplits, launch.h).
#include <cuda_runtime.h>

#include <cmath>

#include "ops/kernels/cuda/cuda_kernels.h"

namespace weft {
namespace {

constexpr int kReduceThreads = 256;

#define WEFT_GRID_LOOP_R(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

// The identity of Max (and, negated, of Min): -infinity, so that a Max over values that are all
// -inf is -inf (as on the CPU), not the lowest finite value.
template <typename T>
__device__ T Lowest() {
  return -static_cast<T>(HUGE_VAL);
}

template <typename T>
__device__ T Combine(ReduceKind k, T a, T b) {
  switch (k) {
    case ReduceKind::kMax: return MaxPropagateNaN(a, b);  // NaN wins, as the CPU kernel and TF
    case ReduceKind::kMin: return MinPropagateNaN(a, b);
    default: return a + b;
  }
}

// The block's threads combine `v` into one value, returned to every thread.
template <typename T>
__device__ T BlockCombine(ReduceKind k, T v) {
  __shared__ T shared[kReduceThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) shared[threadIdx.x] = Combine(k, shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  T out = shared[0];
  __syncthreads();  // shared is reused by the caller's next combine
  return out;
}

template <typename T>
__device__ T Identity(ReduceKind k) {
  if (k == ReduceKind::kMax) return Lowest<T>();
  if (k == ReduceKind::kMin) return -Lowest<T>();
  return T(0);
}

template <typename T>
__global__ void ReduceKernel(ReduceKind kind, const T* x, T* out, ReduceIndexer ri) {
  for (int64_t o = blockIdx.x; o < ri.num_outputs; o += gridDim.x) {
    T acc = Identity<T>(kind);
    for (int64_t r = threadIdx.x; r < ri.reduce_count; r += blockDim.x) acc = Combine(kind, acc, x[ri.Offset(o, r)]);
    acc = BlockCombine(kind, acc);
    if (threadIdx.x == 0) out[o] = kind == ReduceKind::kMean ? acc / static_cast<T>(ri.reduce_count) : acc;
  }
}

// Block (o, s) of a split reduction: the terms of output o in range s of `splits` equal contiguous
// ranges, into partials[o * splits + s] (a mean's partials are sums).
template <typename T>
__global__ void ReducePartialKernel(ReduceKind kind, const T* x, T* partials, ReduceIndexer ri, int64_t splits) {
  const int64_t o = blockIdx.x, s = blockIdx.y;
  const int64_t per = (ri.reduce_count + splits - 1) / splits;
  const int64_t begin = s * per, end = begin + per < ri.reduce_count ? begin + per : ri.reduce_count;
  T acc = Identity<T>(kind);
  for (int64_t r = begin + threadIdx.x; r < end; r += blockDim.x) acc = Combine(kind, acc, x[ri.Offset(o, r)]);
  acc = BlockCombine(kind, acc);
  if (threadIdx.x == 0) partials[o * splits + s] = acc;
}

// The second pass: output o combines its `splits` partials in order (a mean divides by `count`).
template <typename T>
__global__ void ReduceFinishKernel(ReduceKind kind, const T* partials, T* out, int64_t num_outputs, int64_t splits,
                                   int64_t count) {
  for (int64_t o = blockIdx.x; o < num_outputs; o += gridDim.x) {
    T acc = Identity<T>(kind);
    for (int64_t s = threadIdx.x; s < splits; s += blockDim.x) acc = Combine(kind, acc, partials[o * splits + s]);
    acc = BlockCombine(kind, acc);
    if (threadIdx.x == 0) out[o] = kind == ReduceKind::kMean ? acc / static_cast<T>(count) : acc;
  }
}

// One thread per output u of the [p, r, s] view: the first k with the extreme value, as the CPU kernel.
template <typename T, typename Out>
__global__ void ArgReduceKernel(const T* x, Out* out, int64_t n, int64_t r, int64_t s, bool is_max) {
  for (int64_t u = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; u < n; u += int64_t{blockDim.x} * gridDim.x) {
    out[u] = static_cast<Out>(ArgExtreme(x + (u / s) * r * s + u % s, r, s, is_max));
  }
}

// Row r of [rows, cols]: its max and sum(exp(z - max)), every thread of the block gets both.
template <typename T>
__device__ void RowStats(const T* z, int64_t cols, T* max_out, T* sum_out) {
  T m = Lowest<T>();
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = z[c] > m ? z[c] : m;
  m = BlockCombine(ReduceKind::kMax, m);
  T s = 0;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += exp(z[c] - m);
  *sum_out = BlockCombine(ReduceKind::kSum, s);
  *max_out = m;
}

template <typename T>
__global__ void SoftmaxKernel(const T* logits, T* y, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* z = logits + r * cols;
    T m, sum;
    RowStats(z, cols, &m, &sum);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) y[r * cols + c] = exp(z[c] - m) / sum;
  }
}

// dx = (dy - sum(dy * y)) * y per row (SoftmaxGrad).
template <typename T>
__global__ void SoftmaxGradKernel(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* yr = y + r * cols;
    const T* dr = dy + r * cols;
    T s = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += dr[c] * yr[c];
    s = BlockCombine(ReduceKind::kSum, s);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dx[r * cols + c] = (dr[c] - s) * yr[c];
  }
}

// loss = sum_c labels * (log(sum) - (z - m)), backprop = exp(z - m) / sum - labels
template <typename T>
__global__ void SoftmaxXentKernel(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows, int64_t cols) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* z = logits + r * cols;
    const T* l = labels + r * cols;
    T m, sum;
    RowStats(z, cols, &m, &sum);
    const T log_sum = log(sum);
    T acc = 0;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      acc += l[c] * (log_sum - (z[c] - m));
      backprop[r * cols + c] = exp(z[c] - m) / sum - l[c];
    }
    acc = BlockCombine(ReduceKind::kSum, acc);
    if (threadIdx.x == 0) loss[r] = acc;
  }
}

template <typename T, typename Index>
__global__ void SparseSoftmaxXentKernel(const T* logits, const Index* labels, T* loss, T* backprop, int64_t rows,
                                        int64_t cols, int32_t* bad) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* z = logits + r * cols;
    const int64_t id = static_cast<int64_t>(labels[r]);
    const bool ok = id >= 0 && id < cols;
    T m, sum;
    RowStats(z, cols, &m, &sum);
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      backprop[r * cols + c] = exp(z[c] - m) / sum - (c == id ? T(1) : T(0));
    }
    if (threadIdx.x == 0) {
      loss[r] = ok ? log(sum) - (z[id] - m) : T(0);
      if (!ok && bad != nullptr) atomicCAS(bad, 0, static_cast<int32_t>(r + 1));
    }
  }
}

// Batch norm, x as [M, C]: one block per channel for the column sums, then per-channel
// coefficients, then one elementwise pass (the CPU kernel's a/b and k1/k2/k3 folding).
template <typename T>
__global__ void ColumnStatsKernel(const T* x, T* mean, T* var, int64_t M, int64_t C) {
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    T s = 0;
    for (int64_t m = threadIdx.x; m < M; m += blockDim.x) s += x[m * C + c];
    const T mu = BlockCombine(ReduceKind::kSum, s) / static_cast<T>(M);
    T q = 0;
    for (int64_t m = threadIdx.x; m < M; m += blockDim.x) q += (x[m * C + c] - mu) * (x[m * C + c] - mu);
    q = BlockCombine(ReduceKind::kSum, q);
    if (threadIdx.x == 0) {
      mean[c] = mu;
      var[c] = q / static_cast<T>(M);
    }
  }
}

template <typename T>
__global__ void BatchNormCoefKernel(const T* scale, const T* offset, const T* mean, const T* var, T* a, T* b, int64_t C,
                                    T eps) {
  WEFT_GRID_LOOP_R(c, C) {
    a[c] = scale[c] / sqrt(var[c] + eps);
    b[c] = offset[c] - mean[c] * a[c];
  }
}

template <typename T>
__global__ void BatchNormApplyKernel(const T* x, const T* a, const T* b, T* y, int64_t n, int64_t C) {
  WEFT_GRID_LOOP_R(i, n) { y[i] = x[i] * a[i % C] + b[i % C]; }
}

// doffset = sum(dy), dscale (raw) = sum(dy * (x - mean)) per channel.
template <typename T>
__global__ void BatchNormGradSumsKernel(const T* dy, const T* x, const T* mean, T* doffset, T* dscale, int64_t M,
                                        int64_t C) {
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    T so = 0, ss = 0;
    for (int64_t m = threadIdx.x; m < M; m += blockDim.x) {
      so += dy[m * C + c];
      ss += dy[m * C + c] * (x[m * C + c] - mean[c]);
    }
    so = BlockCombine(ReduceKind::kSum, so);
    ss = BlockCombine(ReduceKind::kSum, ss);
    if (threadIdx.x == 0) {
      doffset[c] = so;
      dscale[c] = ss;
    }
  }
}

template <typename T>
__global__ void BatchNormGradCoefKernel(const T* scale, const T* var, const T* dmean, const T* dvar, const T* doffset,
                                        T* dscale, T* dmean_in, T* dvar_in, T* k, int64_t M, int64_t C, T eps,
                                        bool training) {
  WEFT_GRID_LOOP_R(c, C) {
    const T inv = T(1) / sqrt(var[c] + eps), s = scale[c], off = doffset[c], dsc = dscale[c] * inv;
    const T m = static_cast<T>(M);
    dscale[c] = dsc;
    k[c] = s * inv;
    k[C + c] = training ? (-s * inv * inv * dsc + T(2) * dvar[c]) / m : T(0);
    k[2 * C + c] = training ? (-s * inv * off + dmean[c]) / m : T(0);
    dmean_in[c] = training ? T(0) : dmean[c] - s * inv * off;
    dvar_in[c] = training ? T(0) : dvar[c] - T(0.5) * s * inv * inv * dsc;
  }
}

template <typename T>
__global__ void BatchNormGradApplyKernel(const T* dy, const T* x, const T* mean, const T* k, T* dx, int64_t n,
                                         int64_t C) {
  WEFT_GRID_LOOP_R(i, n) {
    const int64_t c = i % C;
    dx[i] = dy[i] * k[c] + (x[i] - mean[c]) * k[C + c] + k[2 * C + c];
  }
}

int Blocks(int64_t n) { return static_cast<int>(n < kMaxBlocks ? n : kMaxBlocks); }

}  // namespace

template <typename T>
void LaunchReduce(ReduceKind kind, const T* x, T* out, const ReduceIndexer& ri, T* partials, cudaStream_t stream) {
  if (ri.num_outputs == 0) return;
  const int64_t splits = ReduceSplits(ri.num_outputs, ri.reduce_count);
  if (splits <= 1) {
    ReduceKernel<T><<<Blocks(ri.num_outputs), kReduceThreads, 0, stream>>>(kind, x, out, ri);
    CheckLaunch("reduce");
    return;
  }
  // num_outputs < kReduceBlocksWanted and splits <= kReduceMaxSplits: both fit a grid dimension.
  const dim3 grid(static_cast<unsigned>(ri.num_outputs), static_cast<unsigned>(splits));
  ReducePartialKernel<T><<<grid, kReduceThreads, 0, stream>>>(kind, x, partials, ri, splits);
  CheckLaunch("reduce (partials)");
  ReduceFinishKernel<T><<<Blocks(ri.num_outputs), kReduceThreads, 0, stream>>>(kind, partials, out, ri.num_outputs,
                                                                                splits, ri.reduce_count);
  CheckLaunch("reduce (combine)");
}

template <typename T>
void LaunchSoftmax(const T* logits, T* y, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  SoftmaxKernel<T><<<Blocks(rows), kReduceThreads, 0, stream>>>(logits, y, rows, cols);
  CheckLaunch("softmax");
}

template <typename T>
void LaunchSoftmaxGrad(const T* y, const T* dy, T* dx, int64_t rows, int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  SoftmaxGradKernel<T><<<Blocks(rows), kReduceThreads, 0, stream>>>(y, dy, dx, rows, cols);
  CheckLaunch("softmax gradient");
}

template <typename T>
void LaunchSoftmaxXent(const T* logits, const T* labels, T* loss, T* backprop, int64_t rows, int64_t cols,
                       cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  SoftmaxXentKernel<T><<<Blocks(rows), kReduceThreads, 0, stream>>>(logits, labels, loss, backprop, rows, cols);
  CheckLaunch("softmax cross-entropy");
}

template <typename T, typename Index>
void LaunchSparseSoftmaxXent(const T* logits, const Index* labels, T* loss, T* backprop, int64_t rows, int64_t cols,
                             int32_t* bad, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  SparseSoftmaxXentKernel<T, Index>
      <<<Blocks(rows), kReduceThreads, 0, stream>>>(logits, labels, loss, backprop, rows, cols, bad);
  CheckLaunch("sparse softmax cross-entropy");
}

template <typename T>
void LaunchBatchNorm(const T* x, const T* scale, const T* offset, const T* mean_in, const T* var_in, T* y, T* mean,
                     T* var, T* scratch, int64_t M, int64_t C, T epsilon, bool training, cudaStream_t stream) {
  if (C == 0) return;
  if (training) {
    ColumnStatsKernel<T><<<Blocks(C), kReduceThreads, 0, stream>>>(x, mean, var, M, C);
  } else {
    (void)cudaMemcpyAsync(mean, mean_in, C * sizeof(T), cudaMemcpyDeviceToDevice, stream);  // errors: CheckLaunch
    (void)cudaMemcpyAsync(var, var_in, C * sizeof(T), cudaMemcpyDeviceToDevice, stream);
  }
  const LaunchShape lc = LaunchShapeFor(C);
  BatchNormCoefKernel<T><<<lc.blocks, lc.threads, 0, stream>>>(scale, offset, mean, var, scratch, scratch + C, C, epsilon);
  const LaunchShape ln = LaunchShapeFor(M * C);
  if (ln.blocks > 0) BatchNormApplyKernel<T><<<ln.blocks, ln.threads, 0, stream>>>(x, scratch, scratch + C, y, M * C, C);
  CheckLaunch("batch norm");
}

template <typename T>
void LaunchBatchNormGrad(const T* dy, const T* x, const T* scale, const T* mean, const T* var, const T* dmean,
                         const T* dvar, T* dx, T* dscale, T* doffset, T* dmean_in, T* dvar_in, T* scratch, int64_t M,
                         int64_t C, T epsilon, bool training, cudaStream_t stream) {
  if (C == 0) return;
  BatchNormGradSumsKernel<T><<<Blocks(C), kReduceThreads, 0, stream>>>(dy, x, mean, doffset, dscale, M, C);
  const LaunchShape lc = LaunchShapeFor(C);
  BatchNormGradCoefKernel<T><<<lc.blocks, lc.threads, 0, stream>>>(scale, var, dmean, dvar, doffset, dscale, dmean_in,
                                                                    dvar_in, scratch, M, C, epsilon, training);
  const LaunchShape ln = LaunchShapeFor(M * C);
  if (ln.blocks > 0) BatchNormGradApplyKernel<T><<<ln.blocks, ln.threads, 0, stream>>>(dy, x, mean, scratch, dx, M * C, C);
  CheckLaunch("batch norm gradient");
}

template <typename T, typename Out>
void LaunchArgReduce(const T* x, Out* out, int64_t p, int64_t r, int64_t s, bool is_max, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(p * s);
  if (ls.blocks == 0 || r == 0) return;
  ArgReduceKernel<T, Out><<<ls.blocks, ls.threads, 0, stream>>>(x, out, p * s, r, s, is_max);
  CheckLaunch(is_max ? "ArgMax" : "ArgMin");
}

#define WEFT_INSTANTIATE_ARG(T)                                                                      \
  template void LaunchArgReduce<T, int32_t>(const T*, int32_t*, int64_t, int64_t, int64_t, bool, cudaStream_t); \
  template void LaunchArgReduce<T, int64_t>(const T*, int64_t*, int64_t, int64_t, int64_t, bool, cudaStream_t);
WEFT_INSTANTIATE_ARG(float)
WEFT_INSTANTIATE_ARG(double)
WEFT_INSTANTIATE_ARG(int32_t)
WEFT_INSTANTIATE_ARG(int64_t)
#undef WEFT_INSTANTIATE_ARG

// The collectives' merge step (runtime/collectives/reduce.h) on the device: element-wise, so
// every member's result depends only on its merge order, as on the host.
template <typename T>
__global__ void CollectiveMergeKernel(ReduceKind kind, T* dst, const T* a, const T* b, int64_t n) {
  WEFT_GRID_LOOP_R(i, n) { dst[i] = Combine(kind, a[i], b[i]); }
}

template <typename T>
__global__ void CollectiveDivideKernel(T* dst, int64_t n, T divisor) {
  WEFT_GRID_LOOP_R(i, n) { dst[i] = dst[i] / divisor; }
}

template <typename T>
void LaunchCollectiveMerge(ReduceKind kind, T* dst, const T* a, const T* b, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  CollectiveMergeKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(kind, dst, a, b, n);
  CheckLaunch("collective merge");
}

template <typename T>
void LaunchCollectiveDivide(T* dst, int64_t n, int64_t divisor, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  CollectiveDivideKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(dst, n, static_cast<T>(divisor));
  CheckLaunch("collective divide");
}

#define WEFT_INSTANTIATE_COLLECTIVE(T)                                                                 \
  template void LaunchCollectiveMerge<T>(ReduceKind, T*, const T*, const T*, int64_t, cudaStream_t); \
  template void LaunchCollectiveDivide<T>(T*, int64_t, int64_t, cudaStream_t);
WEFT_INSTANTIATE_COLLECTIVE(float)
WEFT_INSTANTIATE_COLLECTIVE(double)
WEFT_INSTANTIATE_COLLECTIVE(int32_t)
WEFT_INSTANTIATE_COLLECTIVE(int64_t)
#undef WEFT_INSTANTIATE_COLLECTIVE

#define WEFT_INSTANTIATE(T)                                                                                          \
  template void LaunchBatchNorm<T>(const T*, const T*, const T*, const T*, const T*, T*, T*, T*, T*, int64_t,       \
                                   int64_t, T, bool, cudaStream_t);                                                 \
  template void LaunchBatchNormGrad<T>(const T*, const T*, const T*, const T*, const T*, const T*, const T*, T*, T*, \
                                       T*, T*, T*, T*, int64_t, int64_t, T, bool, cudaStream_t);                    \
  template void LaunchReduce<T>(ReduceKind, const T*, T*, const ReduceIndexer&, T*, cudaStream_t);                   \
  template void LaunchSoftmax<T>(const T*, T*, int64_t, int64_t, cudaStream_t);                                      \
  template void LaunchSoftmaxGrad<T>(const T*, const T*, T*, int64_t, int64_t, cudaStream_t);                        \
  template void LaunchSoftmaxXent<T>(const T*, const T*, T*, T*, int64_t, int64_t, cudaStream_t);                    \
  template void LaunchSparseSoftmaxXent<T, int32_t>(const T*, const int32_t*, T*, T*, int64_t, int64_t, int32_t*,    \
                                                    cudaStream_t);                                                   \
  template void LaunchSparseSoftmaxXent<T, int64_t>(const T*, const int64_t*, T*, T*, int64_t, int64_t, int32_t*,    \
                                                    cudaStream_t);
WEFT_INSTANTIATE(float)
WEFT_INSTANTIATE(double)
#undef WEFT_INSTANTIATE

}  // namespace weft
