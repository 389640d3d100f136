// Gather and GatherGrad, the random ops and Dropout (Philox, as on the CPU), and the optimizer updates (SGD, momentum, Adam) as CUDA
// kernels; the formulas are the CPU kernels' (ops/kernels/cpu/optimizer.cc).
#include <cuda_runtime.h>

#include "ops/kernels/cuda/cuda_kernels.h"
#include "ops/kernels/philox.h"

namespace weft {
namespace {

#define WEFT_GRID_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{blockDim.x} * gridDim.x)

template <typename T, typename Index>
__global__ void GatherKernel(const T* params, const Index* indices, T* out, int64_t n, int64_t num_indices,
                             int64_t inner, int64_t limit, int32_t* bad) {
  WEFT_GRID_LOOP(i, n) {
    const int64_t k = i % inner, j = (i / inner) % num_indices, o = i / (inner * num_indices);
    const int64_t id = static_cast<int64_t>(indices[j]);
    if (id < 0 || id >= limit) {
      out[i] = T(0);
      if (bad != nullptr) atomicCAS(bad, 0, static_cast<int32_t>(j + 1));
    } else {
      out[i] = params[(o * limit + id) * inner + k];
    }
  }
}

// Element e reads Philox block e / kPer at word (e % kPer) * (4 / kPer), as the CPU kernels do.
template <typename T>
__global__ void UniformKernel(T* y, int64_t n, uint64_t key, uint64_t base, T lo, T hi) {
  constexpr int kPer = 4 / philox::kWords<T>;
  const T range = hi - lo;
  WEFT_GRID_LOOP(i, n) {
    const uint64_t e = base + static_cast<uint64_t>(i);
    uint32_t w[4];
    philox::Block(key, e / kPer, 0, 0, w);
    const T v = lo + range * philox::Uniform01<T>(w + (e % kPer) * (4 / kPer));
    y[i] = v < hi || range == T(0) ? v : lo;  // rounding can reach hi
  }
}

// Dropout's mask from the uniform words of UniformKernel (same element-to-word map as the CPU).
template <typename T>
__global__ void DropoutKernel(const T* x, T* y, T* mask, int64_t n, uint64_t key, uint64_t base, T rate, T scale) {
  constexpr int kPer = 4 / philox::kWords<T>;
  WEFT_GRID_LOOP(i, n) {
    const uint64_t e = base + static_cast<uint64_t>(i);
    uint32_t w[4];
    philox::Block(key, e / kPer, 0, 0, w);
    const T m = philox::Uniform01<T>(w + (e % kPer) * (4 / kPer)) >= rate ? scale : T(0);
    mask[i] = m;
    y[i] = x[i] * m;
  }
}

template <typename T, typename Index>
__global__ void GatherGradKernel(const T* dy, const Index* indices, T* out, int64_t n, int64_t num_indices,
                                 int64_t inner, int64_t limit, int32_t* bad) {
  WEFT_GRID_LOOP(i, n) {
    const int64_t k = i % inner, j = (i / inner) % num_indices, o = i / (inner * num_indices);
    const int64_t id = static_cast<int64_t>(indices[j]);
    if (id < 0 || id >= limit) {
      if (bad != nullptr) atomicCAS(bad, 0, static_cast<int32_t>(j + 1));
    } else {
      atomicAdd(out + (o * limit + id) * inner + k, dy[i]);
    }
  }
}

// One thread per column (o, k) of out: dy's rows added in index order, so the sums' rounding is the
// same every run.
template <typename T, typename Index>
__global__ void GatherGradOrderedKernel(const T* dy, const Index* indices, T* out, int64_t columns,
                                        int64_t num_indices, int64_t inner, int64_t limit, int32_t* bad) {
  WEFT_GRID_LOOP(c, columns) {
    const int64_t k = c % inner, o = c / inner;
    for (int64_t j = 0; j < num_indices; ++j) {
      const int64_t id = static_cast<int64_t>(indices[j]);
      if (id < 0 || id >= limit) {
        if (bad != nullptr) atomicCAS(bad, 0, static_cast<int32_t>(j + 1));
      } else {
        out[(o * limit + id) * inner + k] += dy[(o * num_indices + j) * inner + k];
      }
    }
  }
}

// Truncated: each element redraws from its own blocks (e, draw = 1, 2, ...) until |z| <= 2.
template <typename T>
__global__ void NormalKernel(T* y, int64_t n, uint64_t key, uint64_t base, T mean, T stddev, bool truncated) {
  WEFT_GRID_LOOP(i, n) {
    const uint64_t e = base + static_cast<uint64_t>(i);
    uint32_t w[4];
    T z;
    if (truncated) {
      philox::Block(key, e, 0, 0, w);
      z = philox::StandardNormal<T>(w);
      for (uint32_t draw = 1; (z < T(0) ? -z : z) > T(2); ++draw) {
        philox::Block(key, e, draw, 0, w);
        z = philox::StandardNormal<T>(w);
      }
    } else {
      constexpr int kPer = 2 / philox::kWords<T>;
      philox::Block(key, e / kPer, 0, 0, w);
      z = philox::StandardNormal<T>(w + (e % kPer) * (4 / kPer));
    }
    y[i] = mean + stddev * z;
  }
}

template <typename T>
__global__ void GradientDescentKernel(T* var, const T* lr, const T* grad, int64_t n) {
  WEFT_GRID_LOOP(i, n) { var[i] -= grad[i] * *lr; }
}

template <typename T>
__global__ void MomentumKernel(T* var, T* accum, const T* lr, const T* grad, const T* momentum, bool nesterov,
                               int64_t n) {
  WEFT_GRID_LOOP(i, n) {
    const T a = accum[i] * *momentum + grad[i];
    accum[i] = a;
    var[i] -= nesterov ? grad[i] * *lr + a * (*momentum * *lr) : a * *lr;
  }
}

template <typename T>
__global__ void AdamKernel(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                           const T* beta2, const T* epsilon, const T* grad, int64_t n) {
  const T lr_t = *lr * sqrt(T(1) - *beta2_power) / (T(1) - *beta1_power);
  WEFT_GRID_LOOP(i, n) {
    const T g = grad[i];
    m[i] += (g - m[i]) * (T(1) - *beta1);
    v[i] += (g * g - v[i]) * (T(1) - *beta2);
    var[i] -= (m[i] * lr_t) / (sqrt(v[i]) + *epsilon);
  }
}

}  // namespace

template <typename T, typename Index>
void LaunchGather(const T* params, const Index* indices, T* out, int64_t outer, int64_t num_indices, int64_t inner,
                  int64_t limit, int32_t* bad, cudaStream_t stream) {
  const int64_t n = outer * num_indices * inner;
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  GatherKernel<T, Index><<<ls.blocks, ls.threads, 0, stream>>>(params, indices, out, n, num_indices, inner, limit, bad);
  CheckLaunch("gather");
}

template <typename T, typename Index>
void LaunchGatherGrad(const T* dy, const Index* indices, T* out, int64_t outer, int64_t num_indices, int64_t inner,
                      int64_t limit, bool deterministic, int32_t* bad, cudaStream_t stream) {
  if (deterministic) {
    const LaunchShape ls = LaunchShapeFor(outer * inner);
    if (ls.blocks == 0) return;
    GatherGradOrderedKernel<T, Index>
        <<<ls.blocks, ls.threads, 0, stream>>>(dy, indices, out, outer * inner, num_indices, inner, limit, bad);
    CheckLaunch("GatherGrad (deterministic)");
    return;
  }
  const int64_t n = outer * num_indices * inner;
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  GatherGradKernel<T, Index><<<ls.blocks, ls.threads, 0, stream>>>(dy, indices, out, n, num_indices, inner, limit, bad);
  CheckLaunch("GatherGrad");
}

template <typename T>
void LaunchDropout(const T* x, T* y, T* mask, int64_t n, uint64_t key, uint64_t base, T rate, T scale,
                   cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  DropoutKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(x, y, mask, n, key, base, rate, scale);
  CheckLaunch("Dropout");
}

template <typename T>
void LaunchRandomUniform(T* y, int64_t n, uint64_t key, uint64_t base, T lo, T hi, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  UniformKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(y, n, key, base, lo, hi);
  CheckLaunch("random uniform");
}

template <typename T>
void LaunchRandomNormal(T* y, int64_t n, uint64_t key, uint64_t base, T mean, T stddev, bool truncated,
                        cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  NormalKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(y, n, key, base, mean, stddev, truncated);
  CheckLaunch("random normal");
}

template <typename T>
void LaunchApplyGradientDescent(T* var, const T* lr, const T* grad, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  GradientDescentKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, lr, grad, n);
  CheckLaunch("ApplyGradientDescent");
}

template <typename T>
void LaunchApplyMomentum(T* var, T* accum, const T* lr, const T* grad, const T* momentum, bool nesterov, int64_t n,
                         cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  MomentumKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, accum, lr, grad, momentum, nesterov, n);
  CheckLaunch("ApplyMomentum");
}

template <typename T>
void LaunchApplyAdam(T* var, T* m, T* v, const T* beta1_power, const T* beta2_power, const T* lr, const T* beta1,
                     const T* beta2, const T* epsilon, const T* grad, int64_t n, cudaStream_t stream) {
  const LaunchShape ls = LaunchShapeFor(n);
  if (ls.blocks == 0) return;
  AdamKernel<T><<<ls.blocks, ls.threads, 0, stream>>>(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon,
                                                      grad, n);
  CheckLaunch("ApplyAdam");
}

#define WEFT_INSTANTIATE(T)                                                                                       \
  template void LaunchGather<T, int32_t>(const T*, const int32_t*, T*, int64_t, int64_t, int64_t, int64_t,         \
                                         int32_t*, cudaStream_t);                                                  \
  template void LaunchGather<T, int64_t>(const T*, const int64_t*, T*, int64_t, int64_t, int64_t, int64_t,         \
                                         int32_t*, cudaStream_t);                                                  \
  template void LaunchGatherGrad<T, int32_t>(const T*, const int32_t*, T*, int64_t, int64_t, int64_t, int64_t,     \
                                             bool, int32_t*, cudaStream_t);                                        \
  template void LaunchGatherGrad<T, int64_t>(const T*, const int64_t*, T*, int64_t, int64_t, int64_t, int64_t,     \
                                             bool, int32_t*, cudaStream_t);                                        \
  template void LaunchDropout<T>(const T*, T*, T*, int64_t, uint64_t, uint64_t, T, T, cudaStream_t);               \
  template void LaunchRandomUniform<T>(T*, int64_t, uint64_t, uint64_t, T, T, cudaStream_t);                       \
  template void LaunchRandomNormal<T>(T*, int64_t, uint64_t, uint64_t, T, T, bool, cudaStream_t);                  \
  template void LaunchApplyGradientDescent<T>(T*, const T*, const T*, int64_t, cudaStream_t);                      \
  template void LaunchApplyMomentum<T>(T*, T*, const T*, const T*, const T*, bool, int64_t, cudaStream_t);         \
  template void LaunchApplyAdam<T>(T*, T*, T*, const T*, const T*, const T*, const T*, const T*, const T*,         \
                                   const T*, int64_t, cudaStream_t);
WEFT_INSTANTIATE(float)
WEFT_INSTANTIATE(double)
#undef WEFT_INSTANTIATE

}  // namespace weft
